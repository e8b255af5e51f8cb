package portgroup

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/apiutil/respond"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/states"
)

// patchAllowedFields are PATCH_ALLOWED_FIELDS.
var patchAllowedFields = []string{"address", "extra", "mode", "name", "node_uuid", "properties",
	"standalone_ports_supported", "physical_network", "category"}

// validate is PORTGROUP_VALIDATOR (and PORTGROUP_PATCH_VALIDATOR): the
// schema, then the per-field checks and conversions of
// PORTGROUP_VALIDATOR_EXTRA.
func validate(arg string, m map[string]any) error {
	if err := apiutil.MustSchema("portgroup").Validate(arg, m); err != nil {
		return err
	}
	for _, f := range []string{"address", "node_uuid", "standalone_ports_supported", "uuid"} {
		v, ok := m[f]
		if !ok || v == nil {
			continue
		}
		var err error
		switch f {
		case "address":
			m[f], err = apiutil.MACAddress(f, v)
		case "node_uuid", "uuid":
			err = apiutil.BodyUUID(f, v)
		default:
			m[f], err = apiutil.BodyBoolean(f, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// setField copies one validated field of the API object onto pg.
func setField(pg *model.Portgroup, k string, v any) {
	switch k {
	case "uuid":
		if s := apiutil.StringOf(v); s != nil {
			pg.UUID = *s
		}
	case "address":
		pg.Address = apiutil.StringOf(v)
	case "name":
		pg.Name = apiutil.StringOf(v)
	case "extra":
		pg.Extra = apiutil.MapOf(v)
	case "mode":
		pg.Mode = apiutil.StringOf(v)
	case "properties":
		pg.Properties = apiutil.MapOf(v)
	case "standalone_ports_supported":
		pg.StandalonePortsSupported = apiutil.BoolOf(v)
	case "physical_network":
		pg.PhysicalNetwork = apiutil.StringOf(v)
	case "category":
		pg.Category = apiutil.StringOf(v)
	}
}

func invalidName(v any) bool {
	s, ok := v.(string)
	return !ok || !apiutil.IsValidLogicalName(s)
}

func (h *handlers) create(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ctx := r.Context()
	_, m, err := apiutil.DecodeObject(r, "portgroup", "portgroup")
	if err != nil {
		return err
	}
	if err := validate("portgroup", m); err != nil {
		return err
	}
	nodeUUID, _ := m["node_uuid"].(string)
	node, err := h.CreationNode(r, "baremetal:portgroup:create", nodeUUID)
	if err != nil {
		return err
	}
	if node == nil {
		e := errs.NodeNotFound(nodeUUID)
		e.Code = http.StatusBadRequest
		return e
	}
	delete(m, "node_uuid")
	if !microversion.AllowPortgroupModeProperties.Allows(rc.Version) &&
		(apiutil.Truthy(m["mode"]) || apiutil.Truthy(m["properties"])) {
		return errs.NotAcceptable()
	}
	if apiutil.Truthy(m["name"]) && invalidName(m["name"]) {
		return errs.ClientSideError(fmt.Sprintf("Cannot create portgroup with invalid name '%s'", apiutil.PyStr(m["name"])),
			http.StatusBadRequest, "")
	}
	if u, _ := m["uuid"].(string); u == "" {
		m["uuid"] = uuid.NewString()
	}
	pg := &model.Portgroup{NodeID: &node.ID, NodeUUID: node.UUID}
	for k, v := range m {
		setField(pg, k, v)
	}
	if pg.StandalonePortsSupported == nil {
		pg.StandalonePortsSupported = model.Ptr(true)
	}
	if model.Deref(pg.Mode) == "" {
		// dbapi.create_portgroup: an empty mode is the configured default.
		pg.Mode = model.Ptr(rc.Config.StringOf(config.DefaultDefaultPortgroupMode))
	}
	h.Notify(ctx, "portgroup", "create", notify.StatusStart, func(n *notify.Notifier) notify.Object { return n.PortgroupCRUDPayload(pg, node.UUID) })
	created, err := h.Store.CreatePortgroup(ctx, pg)
	h.NotifyOutcome(ctx, "portgroup", "create", err, func(n *notify.Notifier) notify.Object {
		if created == nil {
			return n.PortgroupCRUDPayload(pg, node.UUID)
		}
		return n.PortgroupCRUDPayload(created, node.UUID)
	})
	if err != nil {
		return apiutil.CreateErr(err, "portgroup "+pg.UUID, pg)
	}
	rc.SetLocation(w, "portgroups", created.UUID)
	return respond.JSON(w, http.StatusCreated)(convert(rc, created, nil))
}

// patchDoc is the portgroup as the API sees it (as_dict without node_id,
// with node_uuid), the document a PATCH applies to.
func patchDoc(pg *model.Portgroup, nodeUUID string) map[string]any {
	return apiutil.CopyJSON(map[string]any{
		"id": pg.ID, "uuid": pg.UUID, "created_at": apiutil.ISOTime(pg.CreatedAt), "updated_at": apiutil.OptISOTime(pg.UpdatedAt),
		"name": apiutil.OptString(pg.Name), "address": apiutil.OptString(pg.Address), "extra": apiutil.CopyEmptyMap(pg.Extra),
		"internal_info": apiutil.CopyEmptyMap(pg.InternalInfo), "standalone_ports_supported": boolOr(pg.StandalonePortsSupported, true),
		"mode": apiutil.OptString(pg.Mode), "properties": apiutil.CopyEmptyMap(pg.Properties),
		"physical_network": apiutil.OptString(pg.PhysicalNetwork), "category": apiutil.OptString(pg.Category),
		"dynamic_portgroup": boolOr(pg.DynamicPortgroup, false), "node_uuid": nodeUUID,
	})
}

func (h *handlers) patch(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ctx := r.Context()
	ident := rc.Param("portgroup_ident")
	if !identOK(w, r, ident) {
		return nil
	}
	ops, err := apiutil.DecodePatchBody(r)
	if err != nil {
		return err
	}
	pg, node, err := h.portgroupAndNode(r, "baremetal:portgroup:update", ident)
	if err != nil {
		return err
	}
	v := rc.Version
	if !microversion.AllowPortgroupModeProperties.Allows(v) &&
		(apiutil.IsPathUpdated(ops, "/mode") || apiutil.IsPathUpdated(ops, "/properties")) {
		return errs.NotAcceptable()
	}
	if _, err := apiutil.ValidateAllowedFields(ops, patchAllowedFields, v); err != nil {
		return err
	}
	for _, name := range apiutil.PatchValues(ops, "/name") {
		if apiutil.Truthy(name) && invalidName(name) {
			return errs.ClientSideError(fmt.Sprintf("Portgroup %s: Cannot change name to invalid name '%s'",
				ident, apiutil.PyStr(name)), http.StatusBadRequest, "")
		}
	}
	if node == nil {
		return errs.NodeNotFound(fmt.Sprint(model.Deref(pg.NodeID)))
	}
	if vals := apiutil.PatchValues(ops, "/node_uuid"); len(vals) > 0 {
		if node, err = h.LinkNode(r, rc.Version, node, vals[0]); err != nil {
			return err
		}
	}
	doc, err := apiutil.ApplyPatch(patchDoc(pg, node.UUID), ops)
	if err != nil {
		return err
	}
	doc["node_uuid"] = node.UUID
	if _, ok := doc["mode"]; !ok {
		return errs.ClientSideError("'mode' is a mandatory attribute and can not be removed", http.StatusBadRequest, "")
	}
	schema := apiutil.MustSchema("portgroup")
	for k := range doc {
		if !slices.Contains(schema.Properties(), k) {
			delete(doc, k)
		}
	}
	if err := validate("patch", doc); err != nil {
		return err
	}
	updated := *pg
	updated.NodeID, updated.NodeUUID = &node.ID, node.UUID
	for _, f := range []string{"address", "extra", "mode", "name", "properties", "standalone_ports_supported",
		"physical_network", "category"} {
		setField(&updated, f, doc[f])
	}
	if node.ProvisionState == states.Inspecting && microversion.AllowInspectWaitState.Allows(v) {
		return errs.ClientSideError(fmt.Sprintf("Cannot update portgroup \"%s\" on node \"%s\" while it is in state \"%s\".",
			pg.UUID, node.UUID, states.Inspecting), http.StatusConflict, "")
	}
	topic, err := h.Topic(ctx, node)
	if err != nil {
		return err
	}
	h.Notify(ctx, "portgroup", "update", notify.StatusStart, func(n *notify.Notifier) notify.Object { return n.PortgroupCRUDPayload(&updated, node.UUID) })
	saved, err := h.Conductor.UpdatePortgroup(ctx, topic, &updated)
	h.NotifyOutcome(ctx, "portgroup", "update", err, func(n *notify.Notifier) notify.Object {
		if saved == nil {
			return n.PortgroupCRUDPayload(&updated, node.UUID)
		}
		return n.PortgroupCRUDPayload(saved, node.UUID)
	})
	if err != nil {
		return err
	}
	if apiutil.IsPathUpdated(ops, "/physical_network") {
		physnet := ""
		if vals := apiutil.PatchValues(ops, "/physical_network"); len(vals) > 0 {
			physnet, _ = vals[0].(string)
		}
		if err := h.Conductor.UpdatePortgroupPhysicalNetwork(ctx, topic, saved, physnet); err != nil {
			return err
		}
	}
	return respond.JSON(w, http.StatusOK)(convert(rc, saved, nil))
}

func (h *handlers) delete(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("portgroup_ident")
	if !identOK(w, r, ident) {
		return nil
	}
	pg, node, err := h.portgroupAndNode(r, "baremetal:portgroup:delete", ident)
	if err != nil {
		return err
	}
	payload := func(n *notify.Notifier) notify.Object {
		nodeUUID := ""
		if node != nil {
			nodeUUID = node.UUID
		}
		return n.PortgroupCRUDPayload(pg, nodeUUID)
	}
	return respond.NoContent(w, h.OnNode(r.Context(), node, pg.NodeID, func(topic string) error {
		h.Notify(r.Context(), "portgroup", "delete", notify.StatusStart, payload)
		err := h.Conductor.DestroyPortgroup(r.Context(), topic, pg)
		h.NotifyOutcome(r.Context(), "portgroup", "delete", err, payload)
		return err
	}))
}
