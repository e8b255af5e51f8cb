package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// reservedNames are the node names upstream refuses (its controller's
// sub-controllers and custom actions).
var reservedNames = []string{"maintenance", "management", "states", "vendor_passthru", "detail", "validate"}

// patchAllowedFields are PATCH_ALLOWED_FIELDS.
var patchAllowedFields = []string{"automated_clean", "bios_interface", "boot_interface", "chassis_uuid",
	"conductor_group", "console_interface", "deploy_interface", "description", "disable_power_off", "driver",
	"driver_info", "extra", "inspect_interface", "instance_info", "instance_name", "instance_uuid", "lessee",
	"maintenance", "management_interface", "name", "network_data", "network_interface", "owner",
	"power_interface", "properties", "protected", "protected_reason", "raid_interface", "rescue_interface",
	"resource_class", "retired", "retired_reason", "shard", "storage_interface", "vendor_interface",
	"parent_node", "firmware_interface"}

// boolFields and uuidFields are NODE_VALIDATE_EXTRA.
var (
	boolFields = []string{"automated_clean", "console_enabled", "disable_power_off", "protected", "maintenance", "retired"}
	uuidFields = []string{"chassis_uuid", "instance_uuid", "uuid"}
)

// validateExtra is NODE_VALIDATE_EXTRA: booleans given as strings are
// converted, UUID fields checked.
func validateExtra(m map[string]any) error {
	for _, f := range boolFields {
		if s, ok := m[f].(string); ok {
			b, err := collection.Boolean(f, &s)
			if err != nil {
				return err
			}
			m[f] = *b
		}
	}
	for _, f := range uuidFields {
		if s, ok := m[f].(string); ok {
			if _, err := collection.UUID(f, &s); err != nil {
				return err
			}
		}
	}
	return nil
}

// rejectNewerFields is reject_fields_in_newer_versions.
func rejectNewerFields(m map[string]any, v microversion.Version) error {
	for _, f := range microversion.DisallowedFields(v) {
		val, ok := m[f]
		switch {
		case f == "conductor_group":
			if ok && val != "" {
				return errs.NotAcceptable()
			}
		case f == "name" && val == nil:
		case ok && val != nil:
			return errs.NotAcceptable()
		}
	}
	return nil
}

func (h *handlers) checkNames(names []any, v microversion.Version, msg func(string) string) error {
	if !microversion.AllowNodeLogicalNames.Allows(v) {
		return errs.NotAcceptable()
	}
	for _, n := range names {
		name, _ := n.(string)
		if !apiutil.IsValidNodeName(name, v) {
			return errs.ClientSideError(msg(apiutil.PyRepr(n)), http.StatusBadRequest, "")
		}
		if slices.Contains(reservedNames, name) {
			return errs.ClientSideError(fmt.Sprintf("The word \"%s\" is reserved and can not be used as a node name. Reserved words are: %s.",
				name, strings.Join(reservedNames, ", ")), http.StatusBadRequest, "")
		}
	}
	return nil
}

func (h *handlers) chassisID(r *http.Request, m map[string]any) (*int64, error) {
	cu, _ := m["chassis_uuid"].(string)
	if cu == "" {
		return nil, nil
	}
	c, err := h.Store.GetChassisByUUID(r.Context(), cu)
	if errors.Is(err, store.ErrNotFound) {
		e := errs.New(errs.ClassChassisNotFound, map[string]any{"chassis": cu})
		e.Code = http.StatusBadRequest
		return nil, e
	}
	if err != nil {
		return nil, fmt.Errorf("get chassis %s: %w", cu, err)
	}
	return &c.ID, nil
}

// parentNode is authorize_node_link: the parent must be visible and have
// the same owner.
func (h *handlers) parentNode(r *http.Request, rc *api.RequestContext, owner *string, ident string) (*model.Node, error) {
	bad := errs.NewMessage(errs.ClassInvalid, fmt.Sprintf("Unable to apply the requested parent_node '%s'. Requested value was invalid.", ident))
	p, err := h.node(r, rc, "baremetal:node:get", ident)
	if err != nil {
		return nil, bad
	}
	if (owner == nil) != (p.Owner == nil) || (owner != nil && *owner != *p.Owner) {
		return nil, bad
	}
	return p, nil
}

// createOwner is NodesController.post's rule for a project scoped admin
// enrolling its own node ("baremetal:node:create:self_owned_node" when
// [api]project_admin_can_manage_own_nodes allows it): the node belongs to
// the caller's project, and asking for another owner is refused. Under
// noauth and http_basic every policy passes, so upstream applies the rule
// to the X-Project-Id header, or to no project at all: a node created
// there with an owner needs OpenStack-System-Scope: all, odd as it is.
func (h *handlers) createOwner(r *http.Request, rc *api.RequestContext, m map[string]any) error {
	if rc.Config == nil || !rc.Config.BoolOf(config.APIProjectAdminCanManageOwnNodes) {
		return nil
	}
	c := auth.FromContext(r.Context())
	if c == nil || c.SystemScope == "all" {
		return nil
	}
	if h.Authorize(r, "baremetal:node:create:self_owned_node", nil) != nil {
		return nil
	}
	if owner, _ := m["owner"].(string); owner != "" && owner != c.ProjectID {
		return errs.NewMessage(errs.ClassInvalid, "Cannot create a node as a project scoped admin with an owner other than your own project.")
	}
	m["owner"] = nil
	if c.ProjectID != "" {
		m["owner"] = c.ProjectID
	}
	return nil
}

func (h *handlers) create(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	schemas, err := h.nodeSchemas()
	if err != nil {
		return err
	}
	if err := schemas.Node.ValidateBody("node", body); err != nil {
		return err
	}
	m := apiutil.Plain(body).(map[string]any)
	props, _ := m["properties"].(map[string]any)
	if err := checkAllowBootMode([]any{props["capabilities"]}, rc.Config.ListOf(config.APIDisallowedEnrollmentBootModes)); err != nil {
		return err
	}
	if err := validateExtra(m); err != nil {
		return err
	}
	v := rc.Version
	if err := rejectNewerFields(m, v); err != nil {
		return err
	}
	if s, _ := m["uuid"].(string); s == "" {
		m["uuid"] = uuid.NewString()
	}
	if s, _ := m["conductor_group"].(string); s == "" {
		m["conductor_group"] = rc.Config.StringOf(config.DefaultDefaultConductorGroup)
	}
	if name, ok := m["name"]; ok && name != nil {
		if err := h.checkNames([]any{name}, v, func(n string) string {
			return fmt.Sprintf("Cannot create node with invalid name %s", n)
		}); err != nil {
			return err
		}
	}
	n := &model.Node{ProvisionState: states.Enroll}
	if v.Minor < microversion.Minor11EnrollState {
		n.ProvisionState = states.Available
	}
	if s, _ := m["resource_class"].(string); s == "" {
		if rcl := rc.Config.StringOf(config.DefaultDefaultResourceClass); rcl != "" {
			m["resource_class"] = rcl
		}
	}
	if err := h.createOwner(r, rc, m); err != nil {
		return err
	}
	chassis, err := h.chassisID(r, m)
	if err != nil {
		return err
	}
	n.ChassisID = chassis
	if err := setFields(n, m); err != nil {
		return err
	}
	if n.ParentNode != nil {
		p, err := h.parentNode(r, rc, n.Owner, *n.ParentNode)
		if err != nil {
			return err
		}
		n.ParentNode = &p.UUID
	}
	topic, err := h.topic(r.Context(), n)
	if err != nil {
		return err
	}
	h.notifyNode(r.Context(), n, "create", notify.StatusStart)
	created, err := h.Conductor.CreateNode(r.Context(), topic, n)
	h.notifyOutcome(r.Context(), n, created, "create", err)
	if err != nil {
		return err
	}
	rc.SetLocation(w, "nodes", created.UUID)
	d, err := h.convert(r.Context(), rc, h.view(r), created, nil)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusCreated, d)
}

// setFields copies the schema fields of m (validated) onto n.
func setFields(n *model.Node, m map[string]any) error {
	for k, val := range m {
		if err := setField(n, k, val); err != nil {
			return err
		}
	}
	return nil
}

func strPtr(v any) *string {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	return &s
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func boolPtr(v any) *bool {
	b, ok := v.(bool)
	if !ok {
		return nil
	}
	return &b
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// setField sets one API field of n from its validated value.
func setField(n *model.Node, k string, v any) error {
	switch k {
	case "uuid":
		n.UUID = str(v)
	case "automated_clean":
		n.AutomatedClean = boolPtr(v)
	case "bios_interface":
		n.BIOSInterface = str(v)
	case "boot_interface":
		n.BootInterface = str(v)
	case "boot_mode":
		n.BootMode = strPtr(v)
	case "chassis_uuid":
	case "conductor_group":
		n.ConductorGroup = strings.ToLower(str(v))
	case "console_enabled":
		n.ConsoleEnabled = v == true
	case "console_interface":
		n.ConsoleInterface = str(v)
	case "deploy_interface":
		n.DeployInterface = str(v)
	case "description":
		n.Description = strPtr(v)
	case "disable_power_off":
		n.DisablePowerOff = v == true
	case "driver":
		n.Driver = str(v)
	case "driver_info":
		n.DriverInfo = mapOf(v)
	case "extra":
		n.Extra = mapOf(v)
	case "firmware_interface":
		n.FirmwareInterface = str(v)
	case "inspect_interface":
		n.InspectInterface = str(v)
	case "instance_info":
		n.InstanceInfo = mapOf(v)
	case "instance_name":
		n.InstanceName = strPtr(v)
	case "instance_uuid":
		n.InstanceUUID = strPtr(v)
	case "lessee":
		n.Lessee = strPtr(v)
	case "management_interface":
		n.ManagementInterface = str(v)
	case "maintenance":
		n.Maintenance = v == true
	case "name":
		n.Name = strPtr(v)
	case "network_data":
		n.NetworkData = mapOf(v)
	case "network_interface":
		n.NetworkInterface = str(v)
	case "owner":
		n.Owner = strPtr(v)
	case "parent_node":
		n.ParentNode = strPtr(v)
	case "power_interface":
		n.PowerInterface = str(v)
	case "properties":
		n.Properties = mapOf(v)
	case "protected":
		n.Protected = v == true
	case "protected_reason":
		n.ProtectedReason = strPtr(v)
	case "raid_interface":
		n.RAIDInterface = str(v)
	case "rescue_interface":
		n.RescueInterface = str(v)
	case "resource_class":
		n.ResourceClass = strPtr(v)
	case "retired":
		n.Retired = v == true
	case "retired_reason":
		n.RetiredReason = strPtr(v)
	case "secure_boot":
		n.SecureBoot = boolPtr(v)
	case "shard":
		n.Shard = strPtr(v)
	case "storage_interface":
		n.StorageInterface = str(v)
	case "vendor_interface":
		n.VendorInterface = str(v)
	default:
		return errs.InvalidParameterValue(fmt.Sprintf("Unknown node field %s", k))
	}
	return nil
}

// patchDoc is the node as upstream's as_dict() plus chassis_uuid: the
// document a PATCH applies to.
func patchDoc(n *model.Node, chassisUUID any) (map[string]any, error) {
	raw, err := json.Marshal(n)
	if err != nil {
		return nil, fmt.Errorf("encode node %s: %w", n.UUID, err)
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode node %s: %w", n.UUID, err)
	}
	for _, f := range objectFields {
		m[f] = fieldValue(n, f)
	}
	if tr, ok := m["traits"].([]string); ok {
		items := make([]any, len(tr))
		for i, t := range tr {
			items[i] = t
		}
		m["traits"] = items
	}
	m["chassis_uuid"] = chassisUUID
	return apiutil.CopyJSON(m), nil
}

func (h *handlers) patch(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	q, err := apiutil.ParseQuery(r, "reset_interfaces")
	if err != nil {
		return err
	}
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	reset, err := collection.Boolean("reset_interfaces", q.Get("reset_interfaces"))
	if err != nil {
		return err
	}
	body, err := apiutil.DecodeBody(r)
	if err != nil {
		return err
	}
	ops, err := apiutil.DecodePatch(body)
	if err != nil {
		return err
	}
	v := rc.Version
	if reset != nil && !microversion.AllowResetInterfaces.Allows(v) {
		return errs.NotAcceptable()
	}
	if err := checkAllowBootMode(apiutil.PatchValues(ops, "/properties/capabilities"), rc.Config.ListOf(config.APIDisallowedEnrollmentBootModes)); err != nil {
		return err
	}
	if _, err := apiutil.ValidateAllowedFields(ops, patchAllowedFields, v); err != nil {
		return err
	}
	for _, f := range microversion.DisallowedFields(v) {
		for _, val := range apiutil.PatchValues(ops, "/"+f) {
			if apiutil.Truthy(val) {
				return errs.NotAcceptable()
			}
		}
	}
	if len(apiutil.PatchValues(ops, "/traits")) > 0 {
		return errs.NewMessage(errs.ClassInvalid, "Cannot update node traits via node patch. Node traits should be updated via the node traits API.")
	}
	drivers := apiutil.PatchValues(ops, "/driver")
	if reset != nil && *reset && len(drivers) == 0 {
		return errs.NewMessage(errs.ClassInvalid, "The reset_interfaces parameter can only be used when changing the node's driver.")
	}
	if desc := apiutil.PatchValues(ops, "/description"); len(desc) > 0 {
		if s, ok := desc[0].(string); ok && len([]rune(s)) > 4096 {
			return errs.NewMessage(errs.ClassInvalid, "Cannot update node with description exceeding 4096 characters")
		}
	}
	schemas, err := h.nodeSchemas()
	if err != nil {
		return err
	}
	for _, nd := range apiutil.PatchValues(ops, "/network_data") {
		if err := schemas.NetworkData.Validate("network_data", nd); err != nil {
			e, _ := errs.As(err)
			return errs.NewMessage(errs.ClassInvalid, "Invalid network_data: "+strings.TrimPrefix(e.Message, "Schema error for network_data: ")+" ")
		}
	}
	var saved *model.Node
	for attempt := 1; ; attempt++ {
		saved, err = h.patchOnce(r, rc, ident, ops, reset)
		if !errs.Is(err, errs.ClassNodeChanged) {
			break
		}
		if attempt == patchAttempts {
			return errs.ClientSideError(fmt.Sprintf("Node %s was changed by other requests while this one was applied, %d times; please retry.", ident, patchAttempts), http.StatusConflict, "")
		}
	}
	if err != nil {
		return err
	}
	d, err := h.convert(r.Context(), rc, h.view(r), saved, nil)
	if err != nil {
		return err
	}
	return api.WriteJSON(w, http.StatusOK, d)
}

// patchAttempts bounds how often a PATCH is applied again to a node that
// another writer changed at the paths it edits.
const patchAttempts = 10

// patchPaths are the paths the operations write, as keys: column first.
func patchPaths(ops []apiutil.PatchOp) [][]string {
	out := make([][]string, len(ops))
	for i, op := range ops {
		out[i] = op.Parts()
	}
	return out
}

// patchOnce reads the node, applies the PATCH to it and has the conductor
// apply the difference under the node's lock, on the condition that what
// the PATCH edits is still as read (NodeChanged otherwise, and nothing is
// written): the PATCH takes effect as if applied to the node under the
// lock, as upstream's does, but writes only the keys it changes.
func (h *handlers) patchOnce(r *http.Request, rc *api.RequestContext, ident string, ops []apiutil.PatchOp, reset *bool) (*model.Node, error) {
	v := rc.Version
	n, err := h.nodeWithSuffix(r, rc, h.patchRule(ops), ident)
	if err != nil {
		return nil, err
	}
	var parentOverride *string
	if pv := apiutil.PatchValues(ops, "/parent_node"); len(pv) > 0 {
		p, err := h.parentNode(r, rc, n.Owner, str(pv[0]))
		if err != nil {
			return nil, err
		}
		if p.UUID != n.UUID {
			parentOverride = &p.UUID
		}
	}
	onlyRemoveInstance := len(ops) == 1 && ops[0].Op == "remove" && ops[0].Path == "/instance_uuid" && !ops[0].HasValue
	switch {
	case n.Maintenance && onlyRemoveInstance:
	case n.TargetProvisionState != "" && !states.UpdateAllowedStates.Contains(n.ProvisionState):
		return nil, errs.ClientSideError(fmt.Sprintf("Node %s can not be updated while a state transition is in progress.", ident), http.StatusConflict, "")
	case n.ProvisionState == states.Inspecting && microversion.AllowInspectWaitState.Allows(v):
		return nil, errs.ClientSideError(fmt.Sprintf("Cannot update node \"%s\" while it is in state \"%s\".", n.UUID, states.Inspecting), http.StatusConflict, "")
	case len(apiutil.PatchValues(ops, "/owner")) > 0:
		if n.ProvisionState == states.Active {
			if err := h.Authorize(r, "baremetal:node:update_owner_provisioned", n); err != nil {
				return nil, errs.ClientSideError(fmt.Sprintf("Cannot update owner of node \"%s\" while it is in state \"%s\".", n.UUID, states.Active), http.StatusConflict, "")
			}
		}
		if n.AllocationID != nil {
			a, err := h.Store.GetAllocationByID(r.Context(), *n.AllocationID)
			if err == nil && a.Owner != nil {
				return nil, errs.ClientSideError(fmt.Sprintf("Cannot update owner of node \"%s\" while it is allocated to an allocation with an  owner.", n.UUID), http.StatusConflict, "")
			}
		}
	}
	if names := apiutil.PatchValues(ops, "/name"); len(names) > 0 {
		if err := h.checkNames(names, v, func(name string) string {
			return fmt.Sprintf("Node %s: Cannot change name to invalid name %s", ident, name)
		}); err != nil {
			return nil, err
		}
	}
	cu, err := h.chassisUUID(r.Context(), n)
	if err != nil {
		return nil, err
	}
	doc, err := patchDoc(n, cu)
	if err != nil {
		return nil, err
	}
	doc, err = apiutil.ApplyPatch(doc, ops)
	if err != nil {
		return nil, err
	}
	if parentOverride != nil {
		doc["parent_node"] = *parentOverride
	}
	schemas, err := h.nodeSchemas()
	if err != nil {
		return nil, err
	}
	schema := schemas.NodePatch
	for k := range doc {
		if !slices.Contains(schema.Properties(), k) {
			delete(doc, k)
		}
	}
	if err := schema.Validate("patch", doc); err != nil {
		return nil, err
	}
	if err := validateExtra(doc); err != nil {
		return nil, err
	}
	updated, err := h.applyPatched(r, n, doc, cu, v)
	if err != nil {
		return nil, err
	}
	topic, err := h.topic(r.Context(), updated)
	if err != nil {
		return nil, err
	}
	if updated.Driver != n.Driver && n.ConsoleEnabled {
		return nil, errs.ClientSideError(fmt.Sprintf("Node %s can not update the driver while the console is enabled. Please stop the console first.", ident), http.StatusConflict, "")
	}
	upd, err := model.DiffNode(n, updated, patchPaths(ops))
	if err != nil {
		return nil, err
	}
	h.notifyNode(r.Context(), updated, "update", notify.StatusStart)
	saved, err := h.Conductor.UpdateNode(r.Context(), topic, n.UUID, upd, reset != nil && *reset)
	// A write that lost a race with another is applied again, not failed.
	if !errs.Is(err, errs.ClassNodeChanged) {
		h.notifyOutcome(r.Context(), updated, saved, "update", err)
	}
	return saved, err
}

// applyPatched is _update_changed_fields: a copy of n with the patched
// document's schema fields set.
func (h *handlers) applyPatched(r *http.Request, n *model.Node, doc map[string]any, oldChassis any, v microversion.Version) (*model.Node, error) {
	c := *n
	if s, ok := doc["conductor_group"].(string); ok {
		doc["conductor_group"] = strings.ToLower(s)
	}
	if doc["protected"] == nil {
		doc["protected"] = false
	}
	chassis, err := h.chassisID(r, doc)
	if err != nil {
		return nil, err
	}
	c.ChassisID = chassis
	if oldChassis != nil && chassis == nil && !microversion.AllowRemoveChassisUuid.Allows(v) {
		return nil, errs.NotAcceptable()
	}
	for _, k := range apiutil.MustSchema("node_patch").Properties() {
		if k == "uuid" || k == "chassis_uuid" {
			continue
		}
		if err := setField(&c, k, doc[k]); err != nil {
			return nil, err
		}
	}
	if c.InstanceName == nil && n.InstanceName == nil {
		if dn, ok := c.InstanceInfo["display_name"].(string); ok && dn != "" && !apiutil.JSONEqual(c.InstanceInfo, n.InstanceInfo) {
			c.InstanceName = &dn
		}
	}
	return &c, nil
}

// patchRule is the rule upstream checks for a node patch; with several
// field rules the router's policy layer checks each (see
// _authorize_patch_and_get_node), the first is the one named here.
func (h *handlers) patchRule(ops []apiutil.PatchOp) string {
	paths := []struct{ prefix, rule string }{
		{"/instance_info", "baremetal:node:update_instance_info"},
		{"/extra", "baremetal:node:update_extra"},
		{"/driver_info", "baremetal:node:update:driver_info"},
		{"/properties", "baremetal:node:update:properties"},
		{"/chassis_uuid", "baremetal:node:update:chassis_uuid"},
		{"/instance_uuid", "baremetal:node:update:instance_uuid"},
		{"/instance_name", "baremetal:node:update_instance_info"},
		{"/lessee", "baremetal:node:update:lessee"},
		{"/owner", "baremetal:node:update:owner"},
		{"/driver", "baremetal:node:update:driver_interfaces"},
		{"/network_data", "baremetal:node:update:network_data"},
		{"/conductor_group", "baremetal:node:update:conductor_group"},
		{"/name", "baremetal:node:update:name"},
		{"/retired", "baremetal:node:update:retired"},
		{"/shard", "baremetal:node:update:shard"},
		{"/parent_node", "baremetal:node:update:parent_node"},
		{"/disable_power_off", "baremetal:node:update:disable_power_off"},
	}
	for _, p := range ops {
		for _, c := range paths {
			if strings.HasPrefix(p.Path, c.prefix) {
				return c.rule
			}
		}
	}
	return "baremetal:node:update"
}

func (h *handlers) delete(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
	ident := rc.Param("node_ident")
	if err := apiutil.UUIDOrName("node_ident", ident); err != nil {
		return err
	}
	n, err := h.nodeWithSuffix(r, rc, "baremetal:node:delete", ident)
	if err != nil {
		return err
	}
	topic, err := h.topic(r.Context(), n)
	if err != nil {
		return err
	}
	h.notifyNode(r.Context(), n, "delete", notify.StatusStart)
	err = h.Conductor.DestroyNode(r.Context(), topic, n.UUID)
	h.notifyOutcome(r.Context(), n, n, "delete", err)
	if err != nil {
		return err
	}
	api.WriteEmpty(w, http.StatusNoContent)
	return nil
}
