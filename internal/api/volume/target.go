package volume

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/apiutil/respond"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
)

// targetPatchAllowed are volume_target.PATCH_ALLOWED_FIELDS.
var targetPatchAllowed = []string{"boot_index", "extra", "node_uuid", "properties", "volume_id", "volume_type"}

// redactedProperties is what _redact_target_properties puts in place of
// the properties of a caller without view_target_properties.
var redactedProperties = map[string]any{"redacted_contents": "** Value redacted: Requires permission " +
	"baremetal:volume:view_target_properties access. Permission denied. **"}

func targetRecord(t *model.VolumeTarget) *record {
	return &record{uuid: t.UUID, nodeID: t.NodeID, payload: func(n *notify.Notifier, nodeUUID string) notify.Object {
		return n.VolumeTargetCRUDPayload(t, nodeUUID)
	}, dict: func(rc *api.RequestContext, nodeUUID any, redact bool) *apiutil.Dict {
		props := apiutil.CopyEmptyMap(t.Properties)
		if redact {
			props = apiutil.CopyJSON(redactedProperties)
		}
		var boot any
		if t.BootIndex != nil {
			boot = *t.BootIndex
		}
		d := apiutil.RecordDict(t.UUID, t.CreatedAt, t.UpdatedAt)
		d.Set("boot_index", boot)
		d.Set("extra", apiutil.CopyEmptyMap(t.Extra))
		d.Set("properties", props)
		d.Set("volume_id", apiutil.OptString(t.VolumeID))
		d.Set("volume_type", apiutil.OptString(t.VolumeType))
		d.Set("links", collection.SelfAndBookmark(rc.PublicURL, "volume/targets", t.UUID))
		d.Set("node_uuid", nodeUUID)
		return d
	}}
}

func getTarget(h *handlers, r *http.Request, ident string) (*model.VolumeTarget, error) {
	return fetch(h, r, store.Store.GetVolumeTargetByUUID, targetNotFound, "target", ident)
}

func targetNotFound(ident string) error {
	return errs.New(errs.ClassVolumeTargetNotFound, map[string]any{"target": ident})
}

func targetKind() *kind {
	return bind(&kind{
		item: "targets", object: "volumetarget", param: "volume_target_id", arg: "target_uuid",
		schema: "volume_target", name: "target",
		invalidSortKeys: []string{"extra", "properties"},
		defaultFields:   []string{"uuid", "node_uuid", "volume_type", "boot_index", "volume_id"},
		masked:          true,
		notFound:        targetNotFound,
	}, getTarget, store.Store.ListVolumeTargets, rpc.ConductorAPI.DestroyVolumeTarget, targetRecord)
}

// intOf is the integer a validated boot_index holds.
func intOf(v any) (*int, error) {
	var f float64
	switch x := v.(type) {
	case nil:
		return nil, nil
	case json.Number:
		p, err := x.Float64()
		if err != nil {
			return nil, errs.InvalidParameterValue(fmt.Sprintf("Invalid boot_index: %s", x))
		}
		f = p
	case float64:
		f = x
	case int:
		return &x, nil
	default:
		return nil, errs.InvalidParameterValue(fmt.Sprintf("Invalid boot_index: %v", x))
	}
	if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return nil, errs.InvalidParameterValue(fmt.Sprintf("Invalid boot_index: %v", v))
	}
	i := int(f)
	return &i, nil
}

func setTargetFields(t *model.VolumeTarget, m map[string]any) error {
	for k, v := range m {
		switch k {
		case "uuid":
			if s := apiutil.StringOf(v); s != nil {
				t.UUID = *s
			}
		case "volume_type":
			t.VolumeType = apiutil.StringOf(v)
		case "volume_id":
			t.VolumeID = apiutil.StringOf(v)
		case "properties":
			t.Properties = apiutil.MapOf(v)
		case "extra":
			t.Extra = apiutil.MapOf(v)
		case "boot_index":
			i, err := intOf(v)
			if err != nil {
				return err
			}
			t.BootIndex = i
		}
	}
	return nil
}

func (h *handlers) createTarget(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	m, node, err := h.createBody(r, targets)
	if err != nil {
		return err
	}
	t := &model.VolumeTarget{NodeID: &node.ID}
	if err := setTargetFields(t, m); err != nil {
		return err
	}
	h.Notify(r.Context(), "volumetarget", "create", notify.StatusStart, targetRecord(t).payloadFor(node.UUID))
	created, err := h.Store.CreateVolumeTarget(r.Context(), t)
	if err != nil {
		h.NotifyOutcome(r.Context(), "volumetarget", "create", err, targetRecord(t).payloadFor(node.UUID))
	} else {
		h.NotifyOutcome(r.Context(), "volumetarget", "create", nil, targetRecord(created).payloadFor(node.UUID))
	}
	if err != nil {
		return apiutil.CreateErr(err, "volume target "+t.UUID, t)
	}
	rc.SetLocation(w, "volume/targets", created.UUID)
	// Upstream's create does not redact: the caller just sent the
	// properties.
	return respond.JSON(w, http.StatusCreated)(h.convertUnredacted(r, rc, created))
}

func (h *handlers) convertUnredacted(r *http.Request, rc *api.RequestContext, t *model.VolumeTarget) (*apiutil.Dict, error) {
	hh := *h
	hh.viewTargetProperties = nil
	return hh.convert(r, rc, targets, targetRecord(t), nil)
}

func (h *handlers) patchTarget(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident, ops, err := patchRequest(r, rc, targets)
	if err != nil {
		return err
	}
	t, err := getTarget(h, r, ident)
	if err != nil {
		return err
	}
	node, err := h.patchNode(r, rc, targets, ident, t.NodeID, targetPatchAllowed, ops)
	if err != nil {
		return err
	}
	var boot any
	if t.BootIndex != nil {
		boot = *t.BootIndex
	}
	doc, err := patchedDoc(targets, map[string]any{
		"id": t.ID, "uuid": t.UUID, "created_at": apiutil.ISOTime(t.CreatedAt), "updated_at": apiutil.OptISOTime(t.UpdatedAt),
		"volume_type": apiutil.OptString(t.VolumeType), "properties": apiutil.CopyEmptyMap(t.Properties), "boot_index": boot,
		"volume_id": apiutil.OptString(t.VolumeID), "extra": apiutil.CopyEmptyMap(t.Extra), "node_uuid": nil,
	}, ops, node)
	if err != nil {
		return err
	}
	updated := *t
	updated.NodeID = &node.ID
	if err := setTargetFields(&updated, map[string]any{"volume_type": doc["volume_type"], "properties": doc["properties"],
		"boot_index": doc["boot_index"], "volume_id": doc["volume_id"], "extra": doc["extra"]}); err != nil {
		return err
	}
	topic, err := h.Topic(r.Context(), node)
	if err != nil {
		return err
	}
	h.Notify(r.Context(), "volumetarget", "update", notify.StatusStart, targetRecord(&updated).payloadFor(node.UUID))
	saved, err := h.Conductor.UpdateVolumeTarget(r.Context(), topic, &updated)
	if err != nil {
		h.NotifyOutcome(r.Context(), "volumetarget", "update", err, targetRecord(&updated).payloadFor(node.UUID))
	} else {
		h.NotifyOutcome(r.Context(), "volumetarget", "update", nil, targetRecord(saved).payloadFor(node.UUID))
	}
	if err != nil {
		return err
	}
	return h.writeRecord(w, r, rc, http.StatusOK, targets, targetRecord(saved))
}
