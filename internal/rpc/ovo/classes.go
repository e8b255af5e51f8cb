package ovo

import (
	"slices"

	"github.com/openkeel/ironic/internal/model"
)

// Class is one of upstream's versioned object classes that the conductor
// RPC carries: its name, its latest version (master's VERSION) and the
// fields each version added, so that an object can be written at an older
// version by leaving out what that version does not know (upstream's
// _convert_to_version with remove_unavailable_fields).
type Class struct {
	Name   string
	Latest string
	// Fields are the fields of the latest version, in upstream's order.
	Fields []string
	// Added names, by version, the fields that version added; fields
	// named nowhere date from 1.0. Versions that added only methods are
	// absent.
	Added map[string][]string
	// NotNull are the fields upstream's object does not let be None, with
	// the value upstream's database gives them when they are not set
	// (JSON): an object decoded without one (a new object whose sender
	// left it unset, or an older version) gets that value, and one of ours
	// holding null is sent with it.
	NotNull map[string]string
}

// Since is the version that added field (1.0 for the original ones).
func (c *Class) Since(field string) string {
	for v, fields := range c.Added {
		if slices.Contains(fields, field) {
			return v
		}
	}
	return "1.0"
}

// FieldsAt lists the fields version v of the class has. At the latest
// version that is Fields itself, which the caller must not modify: the
// unpinned codec asks it for every object it writes.
func (c *Class) FieldsAt(v string) []string {
	if v == c.Latest {
		return c.Fields
	}
	var out []string
	for _, f := range c.Fields {
		if !Newer(c.Since(f), v) {
			out = append(out, f)
		}
	}
	return out
}

// has reports whether the latest version has field.
func (c *Class) has(field string) bool { return slices.Contains(c.Fields, field) }

// base are the fields every IronicObject has.
var base = []string{"created_at", "updated_at"}

// The classes below follow master's ironic/objects/*.py: each version's
// comment there says which fields it added.
var (
	// NodeClass is objects.Node. traits is an object field (a TraitList).
	NodeClass = &Class{
		Name: "Node", Latest: "1.44",
		Fields: append(slices.Clone(base), "id", "uuid", "name", "chassis_id", "instance_uuid", "driver",
			"driver_info", "driver_internal_info", "clean_step", "deploy_step", "service_step",
			"raid_config", "target_raid_config", "instance_info", "properties", "reservation",
			"conductor_affinity", "conductor_group", "power_state", "target_power_state",
			"provision_state", "provision_updated_at", "target_provision_state", "maintenance",
			"maintenance_reason", "fault", "console_enabled", "last_error", "resource_class",
			"inspection_finished_at", "inspection_started_at", "extra", "automated_clean",
			"protected", "protected_reason", "allocation_id", "bios_interface", "boot_interface",
			"console_interface", "deploy_interface", "firmware_interface", "inspect_interface",
			"management_interface", "network_interface", "power_interface", "raid_interface",
			"rescue_interface", "storage_interface", "vendor_interface", "traits", "owner", "lessee",
			"description", "retired", "retired_reason", "network_data", "boot_mode", "secure_boot",
			"shard", "parent_node", "disable_power_off", "instance_name", "health"),
		Added: map[string][]string{
			"1.1": {"instance_info"}, "1.7": {"conductor_affinity"}, "1.8": {"maintenance_reason"},
			"1.9": {"driver_internal_info"}, "1.10": {"name"}, "1.11": {"clean_step"},
			"1.12": {"raid_config", "target_raid_config"}, "1.16": {"network_interface"},
			"1.17": {"resource_class"},
			"1.19": {"boot_interface", "console_interface", "deploy_interface", "inspect_interface",
				"management_interface", "power_interface", "raid_interface", "vendor_interface"},
			"1.21": {"storage_interface"}, "1.22": {"rescue_interface"}, "1.23": {"traits"},
			"1.24": {"bios_interface"}, "1.25": {"fault"}, "1.26": {"deploy_step"},
			"1.27": {"conductor_group"}, "1.28": {"automated_clean"},
			"1.29": {"protected", "protected_reason"}, "1.30": {"owner"}, "1.31": {"allocation_id"},
			"1.32": {"description"}, "1.33": {"retired", "retired_reason"}, "1.34": {"lessee"},
			"1.35": {"network_data"}, "1.36": {"boot_mode", "secure_boot"}, "1.37": {"shard"},
			"1.38": {"parent_node"}, "1.39": {"firmware_interface"}, "1.40": {"service_step"},
			"1.41": {"disable_power_off"}, "1.43": {"instance_name"}, "1.44": {"health"},
		},
	}
	// PortClass is objects.Port.
	PortClass = &Class{
		Name: "Port", Latest: "1.16",
		Fields: append(slices.Clone(base), "id", "uuid", "node_id", "node_uuid", "address", "extra",
			"local_link_connection", "portgroup_id", "pxe_enabled", "internal_info", "physical_network",
			"is_smartnic", "name", "description", "vendor", "category", "available_for_dynamic_portgroup"),
		Added: map[string][]string{
			"1.5": {"local_link_connection", "portgroup_id", "pxe_enabled"}, "1.6": {"internal_info"},
			"1.7": {"physical_network"}, "1.9": {"is_smartnic"}, "1.10": {"name"}, "1.11": {"node_uuid"},
			"1.12": {"description"}, "1.13": {"vendor"}, "1.15": {"category"},
			"1.16": {"available_for_dynamic_portgroup"},
		},
		NotNull: map[string]string{"pxe_enabled": "true", "local_link_connection": "{}", "available_for_dynamic_portgroup": "true"},
	}
	// PortgroupClass is objects.Portgroup.
	PortgroupClass = &Class{
		Name: "Portgroup", Latest: "1.9",
		Fields: append(slices.Clone(base), "id", "uuid", "name", "node_id", "node_uuid", "address", "extra",
			"internal_info", "standalone_ports_supported", "mode", "properties", "physical_network",
			"category", "dynamic_portgroup"),
		Added: map[string][]string{
			"1.1": {"internal_info"}, "1.2": {"standalone_ports_supported"}, "1.3": {"mode", "properties"},
			"1.5": {"node_uuid"}, "1.7": {"physical_network"}, "1.8": {"category"}, "1.9": {"dynamic_portgroup"},
		},
		NotNull: map[string]string{"standalone_ports_supported": "true", "dynamic_portgroup": "false"},
	}
	// AllocationClass is objects.Allocation.
	AllocationClass = &Class{
		Name: "Allocation", Latest: "1.3",
		Fields: append(slices.Clone(base), "id", "uuid", "name", "node_id", "state", "last_error",
			"resource_class", "traits", "candidate_nodes", "extra", "conductor_affinity", "owner"),
		Added: map[string][]string{"1.1": {"owner"}},
	}
	// VolumeConnectorClass is objects.VolumeConnector.
	VolumeConnectorClass = &Class{
		Name: "VolumeConnector", Latest: "1.1",
		Fields: append(slices.Clone(base), "id", "uuid", "node_id", "type", "connector_id", "extra"),
	}
	// VolumeTargetClass is objects.VolumeTarget.
	VolumeTargetClass = &Class{
		Name: "VolumeTarget", Latest: "1.1",
		Fields: append(slices.Clone(base), "id", "uuid", "node_id", "volume_type", "properties",
			"boot_index", "volume_id", "extra"),
	}
	// TraitClass and TraitListClass carry a node's traits inside a Node.
	TraitClass     = &Class{Name: "Trait", Latest: "1.1", Fields: append(slices.Clone(base), "node_id", "trait")}
	TraitListClass = &Class{Name: "TraitList", Latest: "1.2", Fields: []string{"objects"}}
)

// ConductorClass is objects.Conductor: never an RPC argument, but its
// rows carry its version, which an upstream Ironic sharing the database
// checks.
var ConductorClass = &Class{Name: "Conductor", Latest: "1.6",
	Fields: append(slices.Clone(base), "id", "drivers", "hostname", "conductor_group", "online")}

// classOf is the class of a model value the RPC carries, or nil.
func classOf(v any) *Class {
	switch v.(type) {
	case *model.Node, model.Node:
		return NodeClass
	case *model.Port, model.Port:
		return PortClass
	case *model.Portgroup, model.Portgroup:
		return PortgroupClass
	case *model.Allocation, model.Allocation:
		return AllocationClass
	case *model.VolumeConnector, model.VolumeConnector:
		return VolumeConnectorClass
	case *model.VolumeTarget, model.VolumeTarget:
		return VolumeTargetClass
	}
	return nil
}
