package notify_test

// The payload classes of upstream master (ironic/objects/*.py), written
// out field by field: name, version and every field the primitive's data
// carries.

var nodePayloadFields = []string{
	"clean_step", "conductor_group", "console_enabled", "created_at", "deploy_step", "description",
	"disable_power_off", "driver", "extra", "boot_mode", "secure_boot", "inspection_finished_at",
	"inspection_started_at", "instance_uuid", "last_error", "maintenance", "maintenance_reason", "fault",
	"bios_interface", "boot_interface", "console_interface", "deploy_interface", "inspect_interface",
	"management_interface", "network_interface", "power_interface", "raid_interface", "rescue_interface",
	"storage_interface", "vendor_interface", "name", "owner", "lessee", "power_state", "properties",
	"protected", "protected_reason", "provision_state", "provision_updated_at", "resource_class", "retired",
	"retired_reason", "target_power_state", "target_provision_state", "traits", "updated_at", "uuid",
}

func with(base []string, extra ...string) []string {
	return append(append([]string{}, base...), extra...)
}

type payloadClass struct {
	version string
	fields  []string
}

var upstreamPayloads = map[string]payloadClass{
	"NodePayload":                    {"1.17", nodePayloadFields},
	"NodeSetPowerStatePayload":       {"1.17", with(nodePayloadFields, "to_power")},
	"NodeCorrectedPowerStatePayload": {"1.17", with(nodePayloadFields, "from_power")},
	"NodeSetProvisionStatePayload": {"1.18", with(nodePayloadFields, "instance_info", "driver_internal_info", "event",
		"previous_provision_state", "previous_target_provision_state")},
	"NodeCRUDPayload": {"1.15", with(nodePayloadFields, "chassis_uuid", "instance_info", "driver_info")},
	"PortCRUDPayload": {"1.8", []string{"address", "extra", "local_link_connection", "pxe_enabled", "node_uuid",
		"portgroup_uuid", "physical_network", "created_at", "updated_at", "uuid", "is_smartnic", "name",
		"description", "vendor", "category", "available_for_dynamic_portgroup"}},
	"PortgroupCRUDPayload": {"1.3", []string{"address", "category", "extra", "mode", "name", "node_uuid",
		"physical_network", "properties", "standalone_ports_supported", "created_at", "updated_at", "uuid",
		"dynamic_portgroup"}},
	"ChassisCRUDPayload":        {"1.0", []string{"description", "extra", "created_at", "updated_at", "uuid"}},
	"DeployTemplateCRUDPayload": {"1.0", []string{"created_at", "extra", "name", "steps", "updated_at", "uuid"}},
	"AllocationCRUDPayload": {"1.1", []string{"uuid", "name", "node_uuid", "state", "last_error", "owner",
		"resource_class", "traits", "candidate_nodes", "extra", "created_at", "updated_at"}},
	"VolumeConnectorCRUDPayload": {"1.0", []string{"extra", "type", "connector_id", "node_uuid", "created_at",
		"updated_at", "uuid"}},
	"VolumeTargetCRUDPayload": {"1.0", []string{"boot_index", "extra", "node_uuid", "properties", "volume_id",
		"volume_type", "created_at", "updated_at", "uuid"}},
}
