package node

import (
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// nodeAndTopic is GetNodeAndTopicMixin._get_node_and_topic.
func (h *handlers) nodeAndTopic(r *http.Request, rc *api.RequestContext, rule string) (*model.Node, string, error) {
	n, err := h.node(r, rc, rule, rc.Param("node_ident"))
	if err != nil {
		return nil, "", err
	}
	topic, err := h.topic(r.Context(), n)
	if err != nil {
		return nil, "", err
	}
	return n, topic, nil
}

func (h *handlers) listVIFs(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	if _, err := apiutil.ParseQuery(r); err != nil {
		return err
	}
	n, topic, err := h.nodeAndTopic(r, rc, "baremetal:node:vif:list")
	if err != nil {
		return err
	}
	vifs, err := h.Conductor.VifList(r.Context(), topic, n.UUID)
	if err != nil {
		return err
	}
	if vifs == nil {
		vifs = []map[string]any{}
	}
	d := apiutil.NewDict()
	d.Set("vifs", vifs)
	return api.WriteJSON(w, http.StatusOK, d)
}

// attachVIF is NodeVIFController.post: the body must be an object with a
// string "id" that is a UUID or a valid name.
func (h *handlers) attachVIF(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	if err := apiutil.MustSchema("vif").ValidateBody("vif", body); err != nil {
		return err
	}
	vif := apiutil.Plain(body).(map[string]any)
	if err := apiutil.UUIDOrName("id", vif["id"].(string)); err != nil {
		return err
	}
	n, topic, err := h.nodeAndTopic(r, rc, "baremetal:node:vif:attach")
	if err != nil {
		return err
	}
	if rc.Version.Minor >= microversion.Minor67NodeVifAttachPort {
		_, port := vif["port_uuid"]
		_, pg := vif["portgroup_uuid"]
		if port && pg {
			return errs.NewMessage(errs.ClassInvalid, "Cannot specify both port_uuid and portgroup_uuid")
		}
	}
	if err := h.Conductor.VifAttach(r.Context(), topic, n.UUID, vif); err != nil {
		return err
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}

func (h *handlers) detachVIF(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	vifID := rc.Param("node_vif_ident")
	if err := apiutil.UUIDOrName("vif_id", vifID); err != nil {
		return err
	}
	n, topic, err := h.nodeAndTopic(r, rc, "baremetal:node:vif:detach")
	if err != nil {
		return err
	}
	if err := h.Conductor.VifDetach(r.Context(), topic, n.UUID, vifID); err != nil {
		return err
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}
