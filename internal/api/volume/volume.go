// Package volume serves the /v1/volume routes (the root with its links,
// volume connectors and volume targets) and their read side under a node,
// as upstream's ironic/api/controllers/v1/volume.py, volume_connector.py
// and volume_target.py do: reads and creations go to the store, changes
// and deletions go through the conductor of the node, which refuses them
// unless the node is powered off.
package volume

import (
	"fmt"
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
)

// Deps is what the volume handlers need.
type Deps struct {
	Store     store.Store
	Conductor rpc.ConductorAPI
	Topics    apiutil.NodeTopics
	// Authorize checks a policy rule against the node a connector or
	// target belongs to (nil node for rules without a target). A refusal
	// of "baremetal:node:get" conceals the record as not found. nil
	// refuses every rule.
	Authorize func(r *http.Request, rule string, node *model.Node) error
	// ListProject is check_volume_list_policy's answer: nil when the
	// caller may list everything ("baremetal:volume:list_all"), else the
	// project whose nodes' records it may list. nil means everything.
	ListProject func(r *http.Request, resource string) (*string, error)
	// ViewTargetProperties is the soft check of
	// "baremetal:volume:view_target_properties": false redacts the
	// properties of targets. nil shows them.
	ViewTargetProperties func(r *http.Request) bool
	// Notifier sends the connector and target notifications; nil sends
	// none.
	Notifier *notify.Notifier
}

type handlers struct {
	apiutil.NodeBound
	viewTargetProperties func(r *http.Request) bool
}

// Register adds the handlers of every volume route to m, including the
// volume resources of a node.
func Register(m map[string]api.HandlerFunc, d Deps) {
	h := &handlers{NodeBound: apiutil.NodeBound{Store: d.Store, Conductor: d.Conductor, Topics: d.Topics,
		Authorize: d.Authorize, ListProject: d.ListProject, Notifier: d.Notifier}.FailClosed(), viewTargetProperties: d.ViewTargetProperties}
	for id, f := range map[string]api.HandlerFunc{
		"GET /v1/volume":                                     h.root(false),
		"GET /v1/nodes/{node_ident}/volume":                  h.root(true),
		"GET /v1/volume/connectors":                          h.list(connectors, false),
		"GET /v1/nodes/{node_ident}/volume/connectors":       h.list(connectors, true),
		"POST /v1/volume/connectors":                         h.createConnector,
		"GET /v1/volume/connectors/{volume_connector_id}":    h.getOne(connectors),
		"PATCH /v1/volume/connectors/{volume_connector_id}":  h.patchConnector,
		"DELETE /v1/volume/connectors/{volume_connector_id}": h.delete(connectors),
		"GET /v1/volume/targets":                             h.list(targets, false),
		"GET /v1/nodes/{node_ident}/volume/targets":          h.list(targets, true),
		"POST /v1/volume/targets":                            h.createTarget,
		"GET /v1/volume/targets/{volume_target_id}":          h.getOne(targets),
		"PATCH /v1/volume/targets/{volume_target_id}":        h.patchTarget,
		"DELETE /v1/volume/targets/{volume_target_id}":       h.delete(targets),
	} {
		m[id] = f
	}
}

// root is VolumeController.get: links to the volume resources, of a node
// when under one.
func (h *handlers) root(underNode bool) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
		if err := h.Authorize(r, "baremetal:volume:get", nil); err != nil {
			return err
		}
		resource, args := "volume", ""
		if underNode {
			resource, args = "nodes", rc.Param("node_ident")+"/volume/"
		}
		d := apiutil.NewDict()
		d.Set("links", collection.SelfAndBookmark(rc.PublicURL, resource, args))
		d.Set("connectors", collection.SelfAndBookmark(rc.PublicURL, resource, args+"connectors"))
		d.Set("targets", collection.SelfAndBookmark(rc.PublicURL, resource, args+"targets"))
		return api.WriteJSON(w, http.StatusOK, d)
	}
}

// createNode is replace_node_uuid_with_id and the owner check of a
// creation: a missing or hidden node is InvalidInput on node_uuid, after
// the create rule.
func (h *handlers) createNode(r *http.Request, m map[string]any) (*model.Node, error) {
	nodeUUID, _ := m["node_uuid"].(string)
	n, err := h.CreationNode(r, "baremetal:volume:create", nodeUUID)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, errs.InvalidInput("node_uuid", nodeUUID, "")
	}
	delete(m, "node_uuid")
	return n, nil
}

// linkNode is authorize_node_link_patch: a node_uuid a patch sets must be
// a UUID (InvalidUUID), then name a node LinkNode accepts.
func (h *handlers) linkNode(r *http.Request, rc *api.RequestContext, orig *model.Node, ops []apiutil.PatchOp) (*model.Node, error) {
	vals := apiutil.PatchValues(ops, "/node_uuid")
	for _, v := range vals {
		if s, ok := v.(string); !ok || !collection.IsUUIDLike(s) {
			return nil, errs.NewMessage(errs.ClassInvalidUUID, fmt.Sprintf("Expected a UUID for node_uuid, but received %s.", apiutil.PyStr(v)))
		}
	}
	if len(vals) == 0 {
		return orig, nil
	}
	return h.LinkNode(r, rc.Version, orig, vals[0])
}
