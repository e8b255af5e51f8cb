package notify

import (
	"encoding/json"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

// Namespace is the versioned objects' namespace.
const Namespace = "ironic"

// Object is a payload in oslo.versionedobjects' primitive form. Every
// payload field is set (nullable ones to null), as upstream populates the
// whole schema; changes are not listed because upstream resets them.
type Object struct {
	Name    string
	Version string
	Data    map[string]any
}

// MarshalJSON writes the ironic_object.* keys; an Object without a Name
// is a non-versioned notification's payload (the sensor data), a plain
// dictionary written as it is.
func (o Object) MarshalJSON() ([]byte, error) {
	if o.Name == "" {
		return json.Marshal(o.Data)
	}
	return json.Marshal(map[string]any{
		"ironic_object.name":      o.Name,
		"ironic_object.namespace": Namespace,
		"ironic_object.version":   o.Version,
		"ironic_object.data":      o.Data,
	})
}

// UnmarshalJSON reads the ironic_object.* keys (consumers in tests), or
// a plain dictionary into Data.
func (o *Object) UnmarshalJSON(b []byte) error {
	var raw struct {
		Name    string         `json:"ironic_object.name"`
		Version string         `json:"ironic_object.version"`
		Data    map[string]any `json:"ironic_object.data"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw.Name == "" {
		o.Name, o.Version = "", ""
		return json.Unmarshal(b, &o.Data)
	}
	o.Name, o.Version, o.Data = raw.Name, raw.Version, raw.Data
	return nil
}

// Payload classes and their versions (master's).
const (
	NodePayloadVersion                    = "1.17"
	NodeSetPowerStatePayloadVersion       = "1.17"
	NodeCorrectedPowerStatePayloadVersion = "1.17"
	NodeSetProvisionStatePayloadVersion   = "1.18"
	NodeCRUDPayloadVersion                = "1.15"
	PortCRUDPayloadVersion                = "1.8"
	PortgroupCRUDPayloadVersion           = "1.3"
	ChassisCRUDPayloadVersion             = "1.0"
	DeployTemplateCRUDPayloadVersion      = "1.0"
	AllocationCRUDPayloadVersion          = "1.1"
	VolumeConnectorCRUDPayloadVersion     = "1.0"
	VolumeTargetCRUDPayloadVersion        = "1.0"
)

// isotime is oslo.versionedobjects' DateTimeField primitive: seconds,
// "Z" for UTC.
func isotime(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02T15:04:05Z")
}

func isotimeV(t time.Time) any { return isotime(&t) }

// str is a nullable string field: the model's "" is the database's NULL.
func str(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func ptr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// dict is a FlexibleDictField: nil stays null.
func dict(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// nodeFields are NodePayload's fields.
func nodeFields(n *model.Node) map[string]any {
	traits := n.Traits
	if traits == nil {
		traits = []string{}
	}
	return map[string]any{
		"clean_step":             dict(n.CleanStep),
		"conductor_group":        n.ConductorGroup,
		"console_enabled":        n.ConsoleEnabled,
		"created_at":             isotimeV(n.CreatedAt),
		"deploy_step":            dict(n.DeployStep),
		"description":            ptr(n.Description),
		"disable_power_off":      n.DisablePowerOff,
		"driver":                 n.Driver,
		"extra":                  dict(n.Extra),
		"boot_mode":              ptr(n.BootMode),
		"secure_boot":            ptr(n.SecureBoot),
		"inspection_finished_at": isotime(n.InspectionFinishedAt),
		"inspection_started_at":  isotime(n.InspectionStartedAt),
		"instance_uuid":          ptr(n.InstanceUUID),
		"last_error":             ptr(n.LastError),
		"maintenance":            n.Maintenance,
		"maintenance_reason":     ptr(n.MaintenanceReason),
		"fault":                  ptr(n.Fault),
		"bios_interface":         str(n.BIOSInterface),
		"boot_interface":         str(n.BootInterface),
		"console_interface":      str(n.ConsoleInterface),
		"deploy_interface":       str(n.DeployInterface),
		"inspect_interface":      str(n.InspectInterface),
		"management_interface":   str(n.ManagementInterface),
		"network_interface":      str(n.NetworkInterface),
		"power_interface":        str(n.PowerInterface),
		"raid_interface":         str(n.RAIDInterface),
		"rescue_interface":       str(n.RescueInterface),
		"storage_interface":      str(n.StorageInterface),
		"vendor_interface":       str(n.VendorInterface),
		"name":                   ptr(n.Name),
		"owner":                  ptr(n.Owner),
		"lessee":                 ptr(n.Lessee),
		"power_state":            str(n.PowerState),
		"properties":             dict(n.Properties),
		"protected":              n.Protected,
		"protected_reason":       ptr(n.ProtectedReason),
		"provision_state":        str(n.ProvisionState),
		"provision_updated_at":   isotime(n.ProvisionUpdatedAt),
		"resource_class":         ptr(n.ResourceClass),
		"retired":                n.Retired,
		"retired_reason":         ptr(n.RetiredReason),
		"target_power_state":     str(n.TargetPowerState),
		"target_provision_state": str(n.TargetProvisionState),
		"traits":                 traits,
		"updated_at":             isotime(n.UpdatedAt),
		"uuid":                   n.UUID,
	}
}

// NodePayload is the payload of maintenance_set and console_set.
func (nt *Notifier) NodePayload(n *model.Node) Object {
	return Object{Name: "NodePayload", Version: NodePayloadVersion, Data: nodeFields(n)}
}

// NodeSetPowerStatePayload is power_set's: toPower is the state the
// conductor will try to set.
func (nt *Notifier) NodeSetPowerStatePayload(n *model.Node, toPower string) Object {
	d := nodeFields(n)
	d["to_power"] = str(toPower)
	return Object{Name: "NodeSetPowerStatePayload", Version: NodeSetPowerStatePayloadVersion, Data: d}
}

// NodeCorrectedPowerStatePayload is power_state_corrected's: fromPower is
// the recorded state before the correction.
func (nt *Notifier) NodeCorrectedPowerStatePayload(n *model.Node, fromPower string) Object {
	d := nodeFields(n)
	d["from_power"] = str(fromPower)
	return Object{Name: "NodeCorrectedPowerStatePayload", Version: NodeCorrectedPowerStatePayloadVersion, Data: d}
}

// NodeSetProvisionStatePayload is provision_set's, with the masked
// instance_info and driver_internal_info.
func (nt *Notifier) NodeSetProvisionStatePayload(n *model.Node, prevState, prevTarget, event string) Object {
	d := nodeFields(n)
	d["instance_info"] = maskImageURL(nt.maskDict(n.InstanceInfo))
	d["driver_internal_info"] = nt.maskDict(n.DriverInternalInfo)
	d["event"] = str(event)
	d["previous_provision_state"] = str(prevState)
	d["previous_target_provision_state"] = str(prevTarget)
	return Object{Name: "NodeSetProvisionStatePayload", Version: NodeSetProvisionStatePayloadVersion, Data: d}
}

// NodeCRUDPayload is node create/update/delete's, with the masked
// instance_info and driver_info; chassisUUID is "" without a chassis.
func (nt *Notifier) NodeCRUDPayload(n *model.Node, chassisUUID string) Object {
	d := nodeFields(n)
	d["chassis_uuid"] = str(chassisUUID)
	d["instance_info"] = maskImageURL(nt.maskDict(n.InstanceInfo))
	d["driver_info"] = nt.maskDict(n.DriverInfo)
	return Object{Name: "NodeCRUDPayload", Version: NodeCRUDPayloadVersion, Data: d}
}

// maskImageURL hides instance_info's image_url, which may carry a
// temporary URL's signature (upstream mask_secrets).
func maskImageURL(ii map[string]any) map[string]any {
	if _, ok := ii["image_url"]; ok {
		ii["image_url"] = "******"
	}
	return ii
}

// PortCRUDPayload is port create/update/delete's.
func (nt *Notifier) PortCRUDPayload(p *model.Port, nodeUUID, portgroupUUID string) Object {
	smart := false
	if p.IsSmartNIC != nil {
		smart = *p.IsSmartNIC
	}
	return Object{Name: "PortCRUDPayload", Version: PortCRUDPayloadVersion, Data: map[string]any{
		"address": ptr(p.Address), "extra": dict(p.Extra), "local_link_connection": dict(p.LocalLinkConnection),
		"pxe_enabled": ptr(p.PXEEnabled), "node_uuid": nodeUUID, "portgroup_uuid": str(portgroupUUID),
		"physical_network": ptr(p.PhysicalNetwork), "created_at": isotimeV(p.CreatedAt), "updated_at": isotime(p.UpdatedAt),
		"uuid": p.UUID, "is_smartnic": smart, "name": ptr(p.Name), "description": ptr(p.Description),
		"vendor": ptr(p.Vendor), "category": ptr(p.Category), "available_for_dynamic_portgroup": p.AvailableForDynamicPortgroup,
	}}
}

// PortgroupCRUDPayload is portgroup create/update/delete's.
func (nt *Notifier) PortgroupCRUDPayload(pg *model.Portgroup, nodeUUID string) Object {
	dynamic := false
	if pg.DynamicPortgroup != nil {
		dynamic = *pg.DynamicPortgroup
	}
	return Object{Name: "PortgroupCRUDPayload", Version: PortgroupCRUDPayloadVersion, Data: map[string]any{
		"address": ptr(pg.Address), "category": ptr(pg.Category), "extra": dict(pg.Extra), "mode": ptr(pg.Mode),
		"name": ptr(pg.Name), "node_uuid": nodeUUID, "physical_network": ptr(pg.PhysicalNetwork),
		"properties": dict(pg.Properties), "standalone_ports_supported": ptr(pg.StandalonePortsSupported),
		"created_at": isotimeV(pg.CreatedAt), "updated_at": isotime(pg.UpdatedAt), "uuid": pg.UUID,
		"dynamic_portgroup": dynamic,
	}}
}

// ChassisCRUDPayload is chassis create/update/delete's.
func (nt *Notifier) ChassisCRUDPayload(c *model.Chassis) Object {
	return Object{Name: "ChassisCRUDPayload", Version: ChassisCRUDPayloadVersion, Data: map[string]any{
		"description": ptr(c.Description), "extra": dict(c.Extra), "created_at": isotimeV(c.CreatedAt),
		"updated_at": isotime(c.UpdatedAt), "uuid": c.UUID,
	}}
}

// DeployTemplateCRUDPayload is deploy template create/update/delete's.
func (nt *Notifier) DeployTemplateCRUDPayload(t *model.DeployTemplate) Object {
	steps := make([]map[string]any, 0, len(t.Steps))
	for _, s := range t.Steps {
		args := s.Args
		if args == nil {
			args = map[string]any{}
		}
		steps = append(steps, map[string]any{"interface": s.Interface, "step": s.Step, "args": args, "priority": s.Priority})
	}
	return Object{Name: "DeployTemplateCRUDPayload", Version: DeployTemplateCRUDPayloadVersion, Data: map[string]any{
		"created_at": isotimeV(t.CreatedAt), "extra": dict(t.Extra), "name": t.Name, "steps": steps,
		"updated_at": isotime(t.UpdatedAt), "uuid": t.UUID,
	}}
}

// AllocationCRUDPayload is allocation create/update/delete's.
func (nt *Notifier) AllocationCRUDPayload(a *model.Allocation, nodeUUID string) Object {
	return Object{Name: "AllocationCRUDPayload", Version: AllocationCRUDPayloadVersion, Data: map[string]any{
		"uuid": a.UUID, "name": ptr(a.Name), "node_uuid": str(nodeUUID), "state": str(a.State),
		"last_error": ptr(a.LastError), "owner": ptr(a.Owner), "resource_class": ptr(a.ResourceClass),
		"traits": a.Traits, "candidate_nodes": a.CandidateNodes, "extra": dict(a.Extra),
		"created_at": isotimeV(a.CreatedAt), "updated_at": isotime(a.UpdatedAt),
	}}
}

// VolumeConnectorCRUDPayload is volume connector create/update/delete's.
func (nt *Notifier) VolumeConnectorCRUDPayload(c *model.VolumeConnector, nodeUUID string) Object {
	return Object{Name: "VolumeConnectorCRUDPayload", Version: VolumeConnectorCRUDPayloadVersion, Data: map[string]any{
		"extra": dict(c.Extra), "type": ptr(c.Type), "connector_id": ptr(c.ConnectorID), "node_uuid": nodeUUID,
		"created_at": isotimeV(c.CreatedAt), "updated_at": isotime(c.UpdatedAt), "uuid": c.UUID,
	}}
}

// VolumeTargetCRUDPayload is volume target create/update/delete's.
func (nt *Notifier) VolumeTargetCRUDPayload(t *model.VolumeTarget, nodeUUID string) Object {
	return Object{Name: "VolumeTargetCRUDPayload", Version: VolumeTargetCRUDPayloadVersion, Data: map[string]any{
		"boot_index": ptr(t.BootIndex), "extra": dict(t.Extra), "node_uuid": nodeUUID, "properties": dict(t.Properties),
		"volume_id": ptr(t.VolumeID), "volume_type": ptr(t.VolumeType), "created_at": isotimeV(t.CreatedAt),
		"updated_at": isotime(t.UpdatedAt), "uuid": t.UUID,
	}}
}
