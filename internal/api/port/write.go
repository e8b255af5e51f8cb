package port

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/apiutil/respond"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// patchAllowedFields are PATCH_ALLOWED_FIELDS.
var patchAllowedFields = []string{"address", "extra", "is_smartnic", "local_link_connection", "node_ident",
	"node_uuid", "physical_network", "portgroup_uuid", "pxe_enabled", "name", "description", "vendor",
	"category", "available_for_dynamic_portgroup"}

// validate is PORT_VALIDATOR (and PORT_PATCH_VALIDATOR): the schema, then
// the per-field checks and conversions of PORT_VALIDATOR_EXTRA. llcSent,
// when set, is local_link_connection as the client sent it: Python quotes
// the dict in its key order, which the plain m has lost.
func validate(arg string, m map[string]any, llcSent any) error {
	if err := apiutil.MustSchema("port").Validate(arg, m); err != nil {
		return err
	}
	for _, f := range []string{"address", "node_uuid", "is_smartnic", "local_link_connection",
		"portgroup_uuid", "pxe_enabled", "uuid", "available_for_dynamic_portgroup"} {
		v, ok := m[f]
		if !ok || v == nil {
			continue
		}
		var err error
		switch f {
		case "address":
			m[f], err = apiutil.MACAddress(f, v)
		case "node_uuid", "portgroup_uuid", "uuid":
			err = apiutil.BodyUUID(f, v)
		case "local_link_connection":
			if llcSent != nil {
				if err := apiutil.MustSchema("local_link_connection").Validate(f, llcSent); err != nil {
					return err
				}
			}
			err = apiutil.LocalLinkConnection(f, v)
		default:
			m[f], err = apiutil.BodyBoolean(f, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func errPhysnetEmpty() error {
	return errs.NewMessage(errs.ClassInvalid, "A non-empty value is required when setting physical_network")
}

// smartNICLink is LOCAL_LINK_SMART_NIC_VALIDATOR reduced to what remains
// once LOCAL_LINK_VALIDATOR passed: port_id and hostname present.
func smartNICLink(llc any) bool {
	if llc == nil {
		return true
	}
	m, _ := llc.(map[string]any)
	_, p := m["port_id"]
	_, hn := m["hostname"]
	return p && hn
}

func (h *handlers) create(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ctx := r.Context()
	body, m, err := apiutil.DecodeObject(r, "port", "port")
	if err != nil {
		return err
	}
	llcSent, _ := body.Get("local_link_connection")
	if err := validate("port", m, llcSent); err != nil {
		return err
	}
	v := rc.Version
	nodeIdent, hasIdent := m["node_ident"].(string)
	if hasIdent && !microversion.AllowNodeIdentAsParamForPortCreation.Allows(v) {
		return errNotAcceptable()
	}
	nodeUUID, _ := m["node_uuid"].(string)
	ident := nodeUUID
	if hasIdent && nodeIdent != "" {
		ident = nodeIdent
	}
	node, err := apiutil.GetNode(ctx, h.Store, ident, v)
	notFound := errs.Is(err, errs.ClassNodeNotFound)
	if err != nil && !notFound {
		return err
	}
	if err := h.Authorize(r, "baremetal:port:create", node); err != nil {
		return err
	}
	if notFound {
		var name any
		if u, ok := m["node_uuid"]; ok {
			name = u
		}
		e := errs.New(errs.ClassNodeNotFound, map[string]any{"node": name})
		e.Code = http.StatusBadRequest
		return e
	}
	delete(m, "node_ident")
	delete(m, "node_uuid")
	if err := checkAllowedBody(m, v); err != nil {
		return err
	}
	p := &model.Port{NodeID: &node.ID, NodeUUID: node.UUID}
	var pg *model.Portgroup
	if pgu, _ := m["portgroup_uuid"].(string); pgu != "" {
		pg, err = h.Store.GetPortgroupByUUID(ctx, pgu)
		if errors.Is(err, store.ErrNotFound) {
			e := errs.New(errs.ClassPortgroupNotFound, map[string]any{"portgroup": pgu})
			e.Code = http.StatusBadRequest
			return e
		}
		if err != nil {
			return fmt.Errorf("get portgroup %s: %w", pgu, err)
		}
		if pg.NodeID == nil || *pg.NodeID != node.ID {
			return errs.NewMessage(errs.ClassInvalid, "Port can not be added to a portgroup belonging to a different node.")
		}
		p.PortgroupID = &pg.ID
	}
	if apiutil.Truthy(m["is_smartnic"]) && !smartNICLink(m["local_link_connection"]) {
		return errs.NewMessage(errs.ClassInvalid, "Smart NIC port must have port_id and hostname in local_link_connection")
	}
	if pn, ok := m["physical_network"].(string); ok && pn == "" {
		return errPhysnetEmpty()
	}
	if pg != nil && apiutil.Truthy(m["pxe_enabled"]) && pg.StandalonePortsSupported != nil && !*pg.StandalonePortsSupported {
		return errs.NewMessage(errs.ClassConflict, fmt.Sprintf("Port group %s doesn't support standalone ports. This port cannot be created as a member of that portgroup as the port's 'pxe_enabled' field was set to True.", pg.UUID))
	}
	if u, _ := m["uuid"].(string); u == "" {
		m["uuid"] = uuid.NewString()
	}
	setFields(p, m)
	topic, err := h.Topic(ctx, node)
	if err != nil {
		return err
	}
	pgUUID := ""
	if pg != nil {
		pgUUID = pg.UUID
	}
	h.Notify(ctx, "port", "create", notify.StatusStart, func(n *notify.Notifier) notify.Object { return n.PortCRUDPayload(p, node.UUID, pgUUID) })
	created, err := h.Conductor.CreatePort(ctx, topic, p)
	h.NotifyOutcome(ctx, "port", "create", err, func(n *notify.Notifier) notify.Object {
		if created == nil {
			return n.PortCRUDPayload(p, node.UUID, pgUUID)
		}
		return n.PortCRUDPayload(created, node.UUID, pgUUID)
	})
	if err != nil {
		return err
	}
	rc.SetLocation(w, "ports", created.UUID)
	return respond.JSON(w, http.StatusCreated)(h.convert(ctx, rc, created, nil))
}

// setFields copies the validated object fields of m onto p.
func setFields(p *model.Port, m map[string]any) {
	for k, v := range m {
		switch k {
		case "uuid":
			if s := apiutil.StringOf(v); s != nil {
				p.UUID = *s
			}
		case "address":
			p.Address = apiutil.StringOf(v)
		case "extra":
			p.Extra = apiutil.MapOf(v)
		case "local_link_connection":
			p.LocalLinkConnection = apiutil.MapOf(v)
		case "pxe_enabled":
			p.PXEEnabled = apiutil.BoolOf(v)
		case "is_smartnic":
			p.IsSmartNIC = apiutil.BoolOf(v)
		case "physical_network":
			p.PhysicalNetwork = apiutil.StringOf(v)
		case "name":
			p.Name = apiutil.StringOf(v)
		case "description":
			p.Description = apiutil.StringOf(v)
		case "vendor":
			p.Vendor = apiutil.StringOf(v)
		case "category":
			p.Category = apiutil.StringOf(v)
		case "available_for_dynamic_portgroup":
			p.AvailableForDynamicPortgroup = v == true
		}
	}
	if p.PXEEnabled == nil {
		t := true
		p.PXEEnabled = &t
	}
	if p.IsSmartNIC == nil {
		f := false
		p.IsSmartNIC = &f
	}
}

// patchDoc is the port as the API sees it, the document a PATCH applies
// to (as_dict without node_id and portgroup_id, with portgroup_uuid).
func (h *handlers) patchDoc(p *model.Port, pgUUID any) map[string]any {
	var nodeUUID any
	if p.NodeUUID != "" {
		nodeUUID = p.NodeUUID
	}
	return apiutil.CopyJSON(map[string]any{
		"id": p.ID, "uuid": p.UUID, "created_at": apiutil.ISOTime(p.CreatedAt), "updated_at": apiutil.OptISOTime(p.UpdatedAt),
		"address": apiutil.OptString(p.Address), "extra": apiutil.CopyEmptyMap(p.Extra), "local_link_connection": apiutil.CopyEmptyMap(p.LocalLinkConnection),
		"pxe_enabled": boolOr(p.PXEEnabled, true), "internal_info": apiutil.CopyEmptyMap(p.InternalInfo),
		"physical_network": apiutil.OptString(p.PhysicalNetwork), "is_smartnic": boolOr(p.IsSmartNIC, false),
		"name": apiutil.OptString(p.Name), "description": apiutil.OptString(p.Description), "vendor": apiutil.OptString(p.Vendor),
		"category": apiutil.OptString(p.Category), "available_for_dynamic_portgroup": p.AvailableForDynamicPortgroup,
		"node_uuid": nodeUUID, "portgroup_uuid": pgUUID,
	})
}

func (h *handlers) patch(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ctx := r.Context()
	ident := rc.Param("port_id")
	if err := apiutil.UUIDOrName("port_ident", ident); err != nil {
		return err
	}
	ops, err := apiutil.DecodePatchBody(r)
	if err != nil {
		return err
	}
	v := rc.Version
	if _, err := apiutil.ValidateAllowedFields(ops, patchAllowedFields, v); err != nil {
		return err
	}
	var check []string
	for _, f := range []string{"pxe_enabled", "local_link_connection", "portgroup_uuid", "physical_network",
		"is_smartnic", "local_link_connection/network_type"} {
		if len(apiutil.PatchValues(ops, "/"+f)) > 0 || apiutil.IsPathRemoved(ops, "/"+f) {
			check = append(check, f)
		}
	}
	if err := checkAllowedFields(check, v); err != nil {
		return err
	}
	p, node, err := h.portAndNode(r, "baremetal:port:update", ident)
	if err != nil {
		return err
	}
	var pg *model.Portgroup
	var pgUUID any
	if p.PortgroupID != nil {
		pg, err = h.Store.GetPortgroupByID(ctx, *p.PortgroupID)
		if err != nil {
			return fmt.Errorf("portgroup of port %s: %w", p.UUID, err)
		}
		pgUUID = pg.UUID
	}
	if nv := apiutil.PatchValues(ops, "/node_uuid"); len(nv) > 0 {
		node, err = h.LinkNode(r, rc.Version, node, nv[0])
		if err != nil {
			return err
		}
	}
	if node == nil {
		return errs.NodeNotFound(fmt.Sprint(model.Deref(p.NodeID)))
	}
	doc, err := apiutil.ApplyPatch(h.patchDoc(p, pgUUID), ops)
	if err != nil {
		return err
	}
	doc["node_uuid"] = node.UUID
	if apiutil.IsPathUpdated(ops, "/portgroup_uuid") {
		pg = nil
		if u, _ := doc["portgroup_uuid"].(string); u != "" {
			pg, err = h.Store.GetPortgroupByUUID(ctx, u)
			if errors.Is(err, store.ErrNotFound) {
				e := errs.New(errs.ClassPortgroupNotFound, map[string]any{"portgroup": u})
				e.Code = http.StatusBadRequest
				return e
			}
			if err != nil {
				return fmt.Errorf("get portgroup %s: %w", u, err)
			}
		}
	}
	schema := apiutil.MustSchema("port")
	for k := range doc {
		if !slices.Contains(schema.Properties(), k) {
			delete(doc, k)
		}
	}
	if err := validate("patch", doc, llcAsSent(ops, doc["local_link_connection"])); err != nil {
		return err
	}
	updated := *p
	updated.NodeID, updated.NodeUUID = &node.ID, node.UUID
	updated.PortgroupID = nil
	if pg != nil {
		updated.PortgroupID = &pg.ID
	}
	for _, f := range []string{"address", "extra", "local_link_connection", "pxe_enabled", "physical_network",
		"is_smartnic", "name", "description", "vendor", "category", "available_for_dynamic_portgroup"} {
		setFields(&updated, map[string]any{f: doc[f]})
	}
	if node.ProvisionState == states.Inspecting && microversion.AllowInspectWaitState.Allows(v) {
		return errs.ClientSideError(fmt.Sprintf("Cannot update port \"%s\" on \"%s\" while it is in state \"%s\".",
			p.UUID, node.UUID, states.Inspecting), http.StatusConflict, "")
	}
	if apiutil.IsPathUpdated(ops, "/physical_network") && updated.PhysicalNetwork != nil && *updated.PhysicalNetwork == "" {
		return errPhysnetEmpty()
	}
	if microversion.AllowPortgroupPhysicalNetwork.Allows(v) && apiutil.IsPathUpdated(ops, "/physical_network") && pg != nil {
		return errs.NewMessage(errs.ClassInvalid, "physical_network cannot be changed while the port belongs to a portgroup.")
	}
	topic, err := h.Topic(ctx, node)
	if err != nil {
		return err
	}
	newPG := ""
	if pg != nil {
		newPG = pg.UUID
	}
	h.Notify(ctx, "port", "update", notify.StatusStart, func(n *notify.Notifier) notify.Object { return n.PortCRUDPayload(&updated, node.UUID, newPG) })
	saved, err := h.Conductor.UpdatePort(ctx, topic, &updated)
	h.NotifyOutcome(ctx, "port", "update", err, func(n *notify.Notifier) notify.Object {
		if saved == nil {
			return n.PortCRUDPayload(&updated, node.UUID, newPG)
		}
		return n.PortCRUDPayload(saved, node.UUID, newPG)
	})
	if err != nil {
		return err
	}
	return respond.JSON(w, http.StatusOK)(h.convert(ctx, rc, saved, nil))
}

// llcAsSent is the local_link_connection a patch set as a whole, as the
// client sent it, when the patched document still holds it; nil otherwise.
func llcAsSent(ops []apiutil.PatchOp, patched any) any {
	for i := len(ops) - 1; i >= 0; i-- {
		if strings.HasPrefix(ops[i].Path, "/local_link_connection") {
			if ops[i].Path == "/local_link_connection" && ops[i].Op != "remove" && apiutil.JSONEqual(ops[i].Value, patched) {
				return ops[i].SentValue()
			}
			return nil
		}
	}
	return nil
}

func (h *handlers) delete(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("port_id")
	if _, err := collectionUUID("port_uuid", ident); err != nil {
		return err
	}
	p, node, err := h.portAndNode(r, "baremetal:port:delete", ident)
	if err != nil {
		return err
	}
	payload := func(n *notify.Notifier) notify.Object {
		pgUUID := ""
		if p.PortgroupID != nil {
			if pg, err := h.Store.GetPortgroupByID(r.Context(), *p.PortgroupID); err == nil {
				pgUUID = pg.UUID
			}
		}
		nodeUUID := ""
		if node != nil {
			nodeUUID = node.UUID
		}
		return n.PortCRUDPayload(p, nodeUUID, pgUUID)
	}
	return respond.NoContent(w, h.OnNode(r.Context(), node, p.NodeID, func(topic string) error {
		h.Notify(r.Context(), "port", "delete", notify.StatusStart, payload)
		err := h.Conductor.DestroyPort(r.Context(), topic, p)
		h.NotifyOutcome(r.Context(), "port", "delete", err, payload)
		return err
	}))
}
