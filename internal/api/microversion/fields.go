package microversion

import "sort"

// VersionedFields is upstream's VERSIONED_FIELDS: node fields and the first
// minor at which they exist. Below it a field is hidden from responses and
// rejected (406) in ?fields=, sort_key and request bodies. Upstream keys
// this by field name only; it applies to nodes.
var VersionedFields = map[string]int{
	"driver_internal_info":   Minor3DriverInternalInfo,
	"name":                   Minor5NodeName,
	"inspection_finished_at": Minor6InspectState,
	"inspection_started_at":  Minor6InspectState,
	"clean_step":             Minor7NodeClean,
	"raid_config":            Minor12RaidConfig,
	"target_raid_config":     Minor12RaidConfig,
	"network_interface":      Minor20NetworkInterface,
	"resource_class":         Minor21ResourceClass,
	"boot_interface":         Minor31DynamicInterfaces,
	"console_interface":      Minor31DynamicInterfaces,
	"deploy_interface":       Minor31DynamicInterfaces,
	"inspect_interface":      Minor31DynamicInterfaces,
	"management_interface":   Minor31DynamicInterfaces,
	"power_interface":        Minor31DynamicInterfaces,
	"raid_interface":         Minor31DynamicInterfaces,
	"vendor_interface":       Minor31DynamicInterfaces,
	"storage_interface":      Minor33StorageInterface,
	"traits":                 Minor37NodeTraits,
	"rescue_interface":       Minor38RescueInterface,
	"bios_interface":         Minor40BiosInterface,
	"fault":                  Minor42Fault,
	"deploy_step":            Minor44NodeDeployStep,
	"conductor_group":        Minor46NodeConductorGroup,
	"automated_clean":        Minor47NodeAutomatedClean,
	"protected":              Minor48NodeProtected,
	"protected_reason":       Minor48NodeProtected,
	"conductor":              Minor49Conductors,
	"owner":                  Minor50NodeOwner,
	"description":            Minor51NodeDescription,
	"allocation_uuid":        Minor52Allocation,
	"events":                 Minor54Events,
	"retired":                Minor61NodeRetired,
	"retired_reason":         Minor61NodeRetired,
	"lessee":                 Minor65NodeLessee,
	"network_data":           Minor66NodeNetworkData,
	"boot_mode":              Minor75NodeBootMode,
	"secure_boot":            Minor75NodeBootMode,
	"shard":                  Minor82NodeShard,
	"parent_node":            Minor83ParentChildNodes,
	"firmware_interface":     Minor86FirmwareInterface,
	"service_step":           Minor87Service,
	"disable_power_off":      Minor95DisablePowerOff,
	"instance_name":          Minor104NodeInstanceName,
	"health":                 Minor109NodeHealth,
}

// FieldAllowed is allow_field: whether a node field exists at v. Fields
// that are not versioned exist at every version.
func FieldAllowed(field string, v Version) bool {
	m, ok := VersionedFields[field]
	return !ok || v.Minor >= m
}

// DisallowedFields lists the versioned node fields that do not exist at v,
// sorted.
func DisallowedFields(v Version) []string {
	var out []string
	for f, m := range VersionedFields {
		if v.Minor < m {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}
