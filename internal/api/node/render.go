package node

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// objectFields are the node fields read from the object, in upstream's
// order (_get_fields_for_node_query).
var objectFields = []string{
	"automated_clean", "bios_interface", "boot_interface", "boot_mode", "clean_step",
	"conductor_group", "console_enabled", "console_interface", "disable_power_off",
	"deploy_interface", "deploy_step", "description", "driver", "driver_info",
	"driver_internal_info", "extra", "fault", "firmware_interface", "health",
	"inspection_finished_at", "inspection_started_at", "inspect_interface",
	"instance_info", "instance_name", "instance_uuid", "last_error", "lessee",
	"maintenance", "maintenance_reason", "management_interface", "name",
	"network_data", "network_interface", "owner", "parent_node", "power_interface",
	"power_state", "properties", "protected", "protected_reason", "provision_state",
	"provision_updated_at", "raid_config", "raid_interface", "rescue_interface",
	"reservation", "resource_class", "retired", "retired_reason", "secure_boot",
	"service_step", "shard", "storage_interface", "target_power_state",
	"target_provision_state", "target_raid_config", "traits", "vendor_interface",
}

// apiFields are the node fields the API computes.
var apiFields = []string{"allocation_uuid", "chassis_uuid", "conductor"}

// defaultListFields are what GET /v1/nodes returns without ?fields or
// ?detail.
var defaultListFields = []string{"instance_uuid", "maintenance", "power_state", "provision_state", "uuid", "name"}

// queryFields is _get_fields_for_node_query: the object fields to read
// for a request's field list (owner and lessee always, for policy).
func queryFields(fields []string) ([]string, error) {
	if len(fields) == 0 {
		return objectFields, nil
	}
	var out []string
	for _, f := range fields {
		if !slices.Contains(apiFields, f) {
			out = append(out, f)
		}
	}
	for _, f := range fields {
		if f != "uuid" && !slices.Contains(apiFields, f) && !slices.Contains(objectFields, f) {
			return nil, errs.NewMessage(errs.ClassInvalid, fmt.Sprintf("Field %s is not a valid field.", f))
		}
	}
	for _, f := range []string{"owner", "lessee"} {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// nullStr renders the model's "" (NULL) as null.
func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// fieldValue is the API value of an object field of n.
func fieldValue(n *model.Node, f string) any {
	switch f {
	case "uuid":
		return n.UUID
	case "created_at":
		return apiutil.ISOTime(n.CreatedAt)
	case "updated_at":
		return apiutil.OptISOTime(n.UpdatedAt)
	case "automated_clean":
		if n.AutomatedClean == nil {
			return nil
		}
		return *n.AutomatedClean
	case "bios_interface":
		return nullStr(n.BIOSInterface)
	case "boot_interface":
		return nullStr(n.BootInterface)
	case "boot_mode":
		return apiutil.OptString(n.BootMode)
	case "clean_step":
		return apiutil.EmptyMap(n.CleanStep)
	case "conductor_group":
		return n.ConductorGroup
	case "console_enabled":
		return n.ConsoleEnabled
	case "console_interface":
		return nullStr(n.ConsoleInterface)
	case "disable_power_off":
		return n.DisablePowerOff
	case "deploy_interface":
		return nullStr(n.DeployInterface)
	case "deploy_step":
		return apiutil.EmptyMap(n.DeployStep)
	case "description":
		return apiutil.OptString(n.Description)
	case "driver":
		return n.Driver
	case "driver_info":
		return apiutil.EmptyMap(n.DriverInfo)
	case "driver_internal_info":
		return apiutil.EmptyMap(n.DriverInternalInfo)
	case "extra":
		return apiutil.EmptyMap(n.Extra)
	case "fault":
		return apiutil.OptString(n.Fault)
	case "firmware_interface":
		return nullStr(n.FirmwareInterface)
	case "health":
		return apiutil.OptString(n.Health)
	case "inspection_finished_at":
		return apiutil.OptISOTime(n.InspectionFinishedAt)
	case "inspection_started_at":
		return apiutil.OptISOTime(n.InspectionStartedAt)
	case "inspect_interface":
		return nullStr(n.InspectInterface)
	case "instance_info":
		return apiutil.EmptyMap(n.InstanceInfo)
	case "instance_name":
		return apiutil.OptString(n.InstanceName)
	case "instance_uuid":
		return apiutil.OptString(n.InstanceUUID)
	case "last_error":
		return apiutil.OptString(n.LastError)
	case "lessee":
		return apiutil.OptString(n.Lessee)
	case "maintenance":
		return n.Maintenance
	case "maintenance_reason":
		return apiutil.OptString(n.MaintenanceReason)
	case "management_interface":
		return nullStr(n.ManagementInterface)
	case "name":
		return apiutil.OptString(n.Name)
	case "network_data":
		return apiutil.EmptyMap(n.NetworkData)
	case "network_interface":
		return nullStr(n.NetworkInterface)
	case "owner":
		return apiutil.OptString(n.Owner)
	case "parent_node":
		return apiutil.OptString(n.ParentNode)
	case "power_interface":
		return nullStr(n.PowerInterface)
	case "power_state":
		return nullStr(n.PowerState)
	case "properties":
		return apiutil.EmptyMap(n.Properties)
	case "protected":
		return n.Protected
	case "protected_reason":
		return apiutil.OptString(n.ProtectedReason)
	case "provision_state":
		return nullStr(n.ProvisionState)
	case "provision_updated_at":
		return apiutil.OptISOTime(n.ProvisionUpdatedAt)
	case "raid_config":
		return apiutil.EmptyMap(n.RAIDConfig)
	case "raid_interface":
		return nullStr(n.RAIDInterface)
	case "rescue_interface":
		return nullStr(n.RescueInterface)
	case "reservation":
		return apiutil.OptString(n.Reservation)
	case "resource_class":
		return apiutil.OptString(n.ResourceClass)
	case "retired":
		return n.Retired
	case "retired_reason":
		return apiutil.OptString(n.RetiredReason)
	case "secure_boot":
		if n.SecureBoot == nil {
			return nil
		}
		return *n.SecureBoot
	case "service_step":
		return apiutil.EmptyMap(n.ServiceStep)
	case "shard":
		return apiutil.OptString(n.Shard)
	case "storage_interface":
		return nullStr(n.StorageInterface)
	case "target_power_state":
		return nullStr(n.TargetPowerState)
	case "target_provision_state":
		return nullStr(n.TargetProvisionState)
	case "target_raid_config":
		return apiutil.EmptyMap(n.TargetRAIDConfig)
	case "traits":
		if n.Traits == nil {
			return []string{}
		}
		return slices.Clone(n.Traits)
	case "vendor_interface":
		return nullStr(n.VendorInterface)
	}
	return nil
}

// view holds the per-request answers of the output rules, computed once
// per request as upstream's node_list_convert_with_links does.
type view struct {
	showDriverSecrets   bool
	showInstanceSecrets bool
	// allowed answers the per-field output rules for a node; nil when the
	// caller passes "baremetal:node:get:filter_threshold" and sees every
	// field.
	allowed func(rule string, n *model.Node) bool
}

func (h *handlers) view(r *http.Request) view {
	vw := view{
		showDriverSecrets:   h.show(r, "show_password", nil),
		showInstanceSecrets: h.show(r, "show_instance_secrets", nil),
	}
	// The threshold is a check_policy, passed without a policy hook.
	if h.Show != nil && !h.Show(r, "baremetal:node:get:filter_threshold", nil) {
		vw.allowed = func(rule string, n *model.Node) bool { return h.Show(r, rule, n) }
	}
	return vw
}

// redactions are the fields hidden from callers below the filter
// threshold without the field's rule, with upstream's wording; a dict
// field becomes {"content": text}.
var redactions = []struct {
	field, rule, text string
	dict              bool
}{
	{"last_error", "baremetal:node:get:last_error",
		"** Value Redacted - Requires baremetal:node:get:last_error permission. **", false},
	{"reservation", "baremetal:node:get:reservation",
		"** Redacted - requires baremetal:node:get:reservation permission. **", false},
	{"driver_internal_info", "baremetal:node:get:driver_internal_info",
		"** Redacted - Requires baremetal:node:get:driver_internal_info permission. **", true},
	{"driver_info", "baremetal:node:get:driver_info",
		"** Redacted - requires baremetal:node:get:driver_info permission. **", true},
}

// convert is node_convert_with_links followed by node_sanitize, for the
// answers about one node. List pages are written by writePage
// (listrender.go), which the tests hold to convert's bytes.
func (h *handlers) convert(ctx context.Context, rc *api.RequestContext, vw view, n *model.Node, fields []string) (*apiutil.Dict, error) {
	qf, err := queryFields(fields)
	if err != nil {
		return nil, err
	}
	d := apiutil.NewDict()
	for _, f := range append([]string{"uuid", "created_at", "updated_at"}, qf...) {
		d.Set(f, fieldValue(n, f))
	}
	d.Set("links", collection.SelfAndBookmark(rc.PublicURL, "nodes", n.UUID))
	v := rc.Version
	if microversion.AllowExposeConductors.Allows(v) && (fields == nil || slices.Contains(fields, "conductor")) {
		host, err := h.Topics.GetConductorFor(ctx, n)
		if err != nil {
			if !errs.Is(err, errs.ClassNoValidHost) && !errs.Is(err, errs.ClassTemporaryFailure) {
				return nil, err
			}
			d.Set("conductor", nil)
		} else {
			d.Set("conductor", host)
		}
	}
	if microversion.AllowAllocations.Allows(v) && (fields == nil || slices.Contains(fields, "allocation_uuid")) {
		d.Set("allocation_uuid", nil)
		if n.AllocationID != nil {
			a, err := h.Store.GetAllocationByID(ctx, *n.AllocationID)
			switch {
			case err == nil:
				d.Set("allocation_uuid", a.UUID)
			case !errors.Is(err, store.ErrNotFound):
				return nil, fmt.Errorf("allocation of node %s: %w", n.UUID, err)
			}
		}
	}
	if fields == nil || slices.Contains(fields, "chassis_uuid") {
		cu, err := h.chassisUUID(ctx, n)
		if err != nil {
			return nil, err
		}
		d.Set("chassis_uuid", cu)
	}
	if fields != nil {
		if err := collection.CheckInvalidFields(fields, d.Keys()); err != nil {
			return nil, err
		}
	}
	if fields == nil {
		for _, sub := range []string{"ports", "states", "portgroups", "volume"} {
			d.Set(sub, collection.SelfAndBookmark(rc.PublicURL, "nodes", n.UUID+"/"+sub))
		}
	}
	sanitize(d, fields, v, vw, n)
	return d, nil
}

func (h *handlers) chassisUUID(ctx context.Context, n *model.Node) (any, error) {
	if n.ChassisID == nil {
		return nil, nil
	}
	c, err := h.Store.GetChassisByID(ctx, *n.ChassisID)
	if err != nil {
		return nil, fmt.Errorf("chassis of node %s: %w", n.UUID, err)
	}
	return c.UUID, nil
}

// sanitize is node_sanitize: requested fields only, secrets masked,
// legacy state names, fields and links the version does not know removed.
func sanitize(d *apiutil.Dict, fields []string, v microversion.Version, vw view, n *model.Node) {
	d.KeepOnly(fields)
	if vw.allowed != nil {
		for _, red := range redactions {
			if _, ok := d.Get(red.field); !ok || vw.allowed(red.rule, n) {
				continue
			}
			if red.dict {
				d.Set(red.field, map[string]any{"content": red.text})
			} else {
				d.Set(red.field, red.text)
			}
		}
	}
	if di, ok := d.Get("driver_info"); ok && !vw.showDriverSecrets {
		m := apiutil.MaskDict(di.(map[string]any))
		apiutil.MaskFields(m, "snmp_auth_key", "snmp_priv_key")
		d.Set("driver_info", m)
	}
	if ii, ok := d.Get("instance_info"); ok && !vw.showInstanceSecrets {
		m := apiutil.MaskDict(ii.(map[string]any))
		if apiutil.Truthy(m["configdrive"]) {
			m["configdrive"] = apiutil.Secret
		}
		if apiutil.Truthy(m["image_url"]) {
			m["image_url"] = apiutil.Secret
		}
		d.Set("instance_info", m)
	}
	if dii, ok := d.Get("driver_internal_info"); ok && !vw.showDriverSecrets {
		d.Set("driver_internal_info", apiutil.MaskDict(dii.(map[string]any)))
	}
	if ps, ok := d.Get("provision_state"); ok {
		switch {
		case v.Minor < microversion.Minor2AvailableState && ps == states.Available:
			d.Set("provision_state", nil)
		case !microversion.AllowInspectWaitState.Allows(v) && ps == states.InspectWait:
			d.Set("provision_state", states.Inspecting)
		}
	}
	for _, f := range microversion.DisallowedFields(v) {
		d.Delete(f)
	}
	if !microversion.AllowVolume.Allows(v) {
		d.Delete("volume")
	}
	if !microversion.AllowPortgroupsSubcontrollers.Allows(v) {
		d.Delete("portgroups")
	}
	if !microversion.AllowLinksNodeStatesAndDriverProperties.Allows(v) {
		d.Delete("states")
	}
}
