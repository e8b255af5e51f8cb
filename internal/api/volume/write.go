package volume

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/apiutil/respond"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// The steps connector and target creation and patching take alike, as
// upstream's volume_connector.py and volume_target.py repeat them; the
// record's own fields stay with its kind.

// recordIdent is the record's UUID from the path, refused as upstream's
// args.uuid refuses it.
func recordIdent(rc *api.RequestContext, k *kind) (string, error) {
	ident := rc.Param(k.param)
	if _, err := collection.UUID(k.arg, &ident); err != nil {
		return "", err
	}
	return ident, nil
}

// validateBody is CONNECTOR_VALIDATOR and TARGET_VALIDATOR: the kind's
// schema, then node_uuid and uuid, where set, must be UUIDs.
func validateBody(k *kind, arg string, m map[string]any) error {
	if err := apiutil.MustSchema(k.schema).Validate(arg, m); err != nil {
		return err
	}
	for _, f := range []string{"node_uuid", "uuid"} {
		if v, ok := m[f]; ok && v != nil {
			if err := apiutil.BodyUUID(f, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// createBody is a POST's checked body, without node_uuid, and the node
// it names; a record without a uuid gets a new one.
func (h *handlers) createBody(r *http.Request, k *kind) (map[string]any, *model.Node, error) {
	_, m, err := apiutil.DecodeObject(r, k.schema, k.name)
	if err != nil {
		return nil, nil, err
	}
	if err := validateBody(k, k.name, m); err != nil {
		return nil, nil, err
	}
	node, err := h.createNode(r, m)
	if err != nil {
		return nil, nil, err
	}
	if u, _ := m["uuid"].(string); u == "" {
		m["uuid"] = uuid.NewString()
	}
	return m, node, nil
}

// patchRequest is a PATCH's record UUID and JSON patch.
func patchRequest(r *http.Request, rc *api.RequestContext, k *kind) (string, []apiutil.PatchOp, error) {
	ident, err := recordIdent(rc, k)
	if err != nil {
		return "", nil, err
	}
	ops, err := apiutil.DecodePatchBody(r)
	if err != nil {
		return "", nil, err
	}
	return ident, ops, nil
}

// patchNode is the node the patched record will belong to: the update
// rule on its current node, the fields the patch may touch, and the node
// a node_uuid in the patch links it to.
func (h *handlers) patchNode(r *http.Request, rc *api.RequestContext, k *kind, ident string, nodeID *int64,
	allowed []string, ops []apiutil.PatchOp) (*model.Node, error) {
	node, err := h.Retrieve(r, "baremetal:volume:update", nodeID, func() error { return k.notFound(ident) })
	if err != nil {
		return nil, err
	}
	if _, err := apiutil.ValidateAllowedFields(ops, allowed, rc.Version); err != nil {
		return nil, err
	}
	if node, err = h.linkNode(r, rc, node, ops); err != nil {
		return nil, err
	}
	if node == nil {
		return nil, errs.NodeNotFound(fmt.Sprint(model.Deref(nodeID)))
	}
	return node, nil
}

// patchedDoc applies ops to the record's API document, then checks what
// the schema knows of it, with node_uuid the node's.
func patchedDoc(k *kind, doc map[string]any, ops []apiutil.PatchOp, node *model.Node) (map[string]any, error) {
	doc, err := apiutil.ApplyPatch(apiutil.CopyJSON(doc), ops)
	if err != nil {
		return nil, err
	}
	doc["node_uuid"] = node.UUID
	props := apiutil.MustSchema(k.schema).Properties()
	for f := range doc {
		if !slices.Contains(props, f) {
			delete(doc, f)
		}
	}
	if err := validateBody(k, "patch", doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// writeRecord answers status with the record as the API shows it.
func (h *handlers) writeRecord(w http.ResponseWriter, r *http.Request, rc *api.RequestContext, status int, k *kind, rec *record) error {
	return respond.JSON(w, status)(h.convert(r, rc, k, rec, nil))
}
