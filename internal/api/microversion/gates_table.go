package microversion

// The allow_* version checks of ironic/api/controllers/v1/utils.py, one
// Gate each, named after the upstream function (allow_allocations is
// AllowAllocations). allow_field is FieldAllowed (fields.go).
var (
	AllowSpecialCharactersInPatchFields     = Gate{Name: "allow_special_characters_in_patch_fields", Min: Minor98SupportSpecialCharInAttributes}
	AllowNodeLogicalNames                   = Gate{Name: "allow_node_logical_names", Min: Minor5NodeName}
	AllowRaidConfig                         = Gate{Name: "allow_raid_config", Min: Minor12RaidConfig}
	AllowSoftPowerOff                       = Gate{Name: "allow_soft_power_off", Min: Minor27SoftPowerOff}
	AllowInjectNmi                          = Gate{Name: "allow_inject_nmi", Min: Minor29InjectNmi}
	AllowLinksNodeStatesAndDriverProperties = Gate{Name: "allow_links_node_states_and_driver_properties", Min: Minor14LinksNodestatesDriverproperties}
	AllowPortInternalInfo                   = Gate{Name: "allow_port_internal_info", Min: Minor18PortInternalInfo}
	AllowPortAdvancedNetFields              = Gate{Name: "allow_port_advanced_net_fields", Min: Minor19PortAdvancedNetFields}
	AllowRamdiskEndpoints                   = Gate{Name: "allow_ramdisk_endpoints", Min: Minor22LookupHeartbeat}
	AllowPortgroups                         = Gate{Name: "allow_portgroups", Min: Minor23Portgroups}
	AllowPortgroupsSubcontrollers           = Gate{Name: "allow_portgroups_subcontrollers", Min: Minor24PortgroupsSubcontrollers}
	AllowRemoveChassisUuid                  = Gate{Name: "allow_remove_chassis_uuid", Min: Minor25UnsetChassisUuid}
	AllowPortgroupModeProperties            = Gate{Name: "allow_portgroup_mode_properties", Min: Minor26PortgroupModeProperties}
	AllowPortgroupPhysicalNetwork           = Gate{Name: "allow_portgroup_physical_network", Min: Minor102PortgroupPhysicalNetwork}
	AllowPortgroupCategory                  = Gate{Name: "allow_portgroup_category", Min: Minor103PortgroupCategory}
	AllowVifsSubcontroller                  = Gate{Name: "allow_vifs_subcontroller", Min: Minor28VifsSubcontroller}
	AllowDynamicDrivers                     = Gate{Name: "allow_dynamic_drivers", Min: Minor30DynamicDrivers}
	AllowDynamicInterfaces                  = Gate{Name: "allow_dynamic_interfaces", Min: Minor31DynamicInterfaces}
	AllowVolume                             = Gate{Name: "allow_volume", Min: Minor32Volume}
	AllowStorageInterface                   = Gate{Name: "allow_storage_interface", Min: Minor33StorageInterface}
	AllowPortPhysicalNetwork                = Gate{Name: "allow_port_physical_network", Min: Minor34PortPhysicalNetwork, RequiresObject: "objects.Port.supports_physical_network()"}
	AllowNodeRebuildWithConfigdrive         = Gate{Name: "allow_node_rebuild_with_configdrive", Min: Minor35RebuildConfigDrive}
	AllowAgentVersionInHeartbeat            = Gate{Name: "allow_agent_version_in_heartbeat", Min: Minor36AgentVersionHeartbeat}
	AllowRescueInterface                    = Gate{Name: "allow_rescue_interface", Min: Minor38RescueInterface}
	AllowBiosInterface                      = Gate{Name: "allow_bios_interface", Min: Minor40BiosInterface}
	AllowTraits                             = Gate{Name: "allow_traits", Min: Minor37NodeTraits}
	AllowInspectWaitState                   = Gate{Name: "allow_inspect_wait_state", Min: Minor39InspectWait}
	AllowInspectAbort                       = Gate{Name: "allow_inspect_abort", Min: Minor41InspectionAbort}
	AllowDeployAbort                        = Gate{Name: "allow_deploy_abort", Min: Minor110DeploywaitAbort}
	AllowDetailQuery                        = Gate{Name: "allow_detail_query", Min: Minor43EnableDetailQuery}
	AllowQueryBios                          = Gate{Name: "allow_query_bios", Min: Minor74BiosRegistry}
	AllowResetInterfaces                    = Gate{Name: "allow_reset_interfaces", Min: Minor45ResetInterfaces}
	AllowNodeHistory                        = Gate{Name: "allow_node_history", Min: Minor78NodeHistory}
	AllowNodeHistoryProject                 = Gate{Name: "allow_node_history_project", Min: Minor113NodeHistoryProject}
	AllowNodeHistoryFields                  = Gate{Name: "allow_node_history_fields", Min: Minor115NodeHistoryFields}
	AllowNodeInventory                      = Gate{Name: "allow_node_inventory", Min: Minor81NodeInventory}
	AllowExposeConductors                   = Gate{Name: "allow_expose_conductors", Min: Minor49Conductors}
	AllowAllocations                        = Gate{Name: "allow_allocations", Min: Minor52Allocation}
	AllowPortIsSmartnic                     = Gate{Name: "allow_port_is_smartnic", Min: Minor53PortSmartnic, RequiresObject: "objects.Port.supports_is_smartnic()"}
	AllowExposeEvents                       = Gate{Name: "allow_expose_events", Min: Minor54Events}
	AllowDeployTemplates                    = Gate{Name: "allow_deploy_templates", Min: Minor55DeployTemplates}
	AllowRunbooks                           = Gate{Name: "allow_runbooks", Min: Minor92Runbooks}
	AllowRunbookTraits                      = Gate{Name: "allow_runbook_traits", Min: Minor112RunbookTraits}
	AllowInspectionRules                    = Gate{Name: "allow_inspection_rules", Min: Minor96InspectionRules}
	AllowOvnVtepVersion                     = Gate{Name: "allow_ovn_vtep_version", Min: Minor90OvnVtep, Before: Minor105RemoveOvnVtep}
	AllowBuildConfigdrive                   = Gate{Name: "allow_build_configdrive", Min: Minor56BuildConfigdrive}
	AllowConfigdriveVendorData              = Gate{Name: "allow_configdrive_vendor_data", Min: Minor59ConfigdriveVendorData}
	AllowAllocationBackfill                 = Gate{Name: "allow_allocation_backfill", Min: Minor58AllocationBackfill}
	AllowAllocationOwner                    = Gate{Name: "allow_allocation_owner", Min: Minor60AllocationOwner}
	AllowAgentToken                         = Gate{Name: "allow_agent_token", Min: Minor62AgentToken}
	AllowLocalLinkConnectionNetworkType     = Gate{Name: "allow_local_link_connection_network_type", Min: Minor64LocalLinkConnectionNetworkType}
	AllowVerifyCaInHeartbeat                = Gate{Name: "allow_verify_ca_in_heartbeat", Min: Minor68HeartbeatVerifyCa}
	AllowDeploySteps                        = Gate{Name: "allow_deploy_steps", Min: Minor69DeploySteps}
	AllowStatusInHeartbeat                  = Gate{Name: "allow_status_in_heartbeat", Min: Minor72HeartbeatStatus}
	AllowUnholdVerb                         = Gate{Name: "allow_unhold_verb", Min: Minor85UnholdVerb}
	AllowServiceVerb                        = Gate{Name: "allow_service_verb", Min: Minor87Service}
	AllowShardsEndpoint                     = Gate{Name: "allow_shards_endpoint", Min: Minor82NodeShard}
	AllowContinueInspectionEndpoint         = Gate{Name: "allow_continue_inspection_endpoint", Min: Minor84ContinueInspection, AlsoAt: []int{Minor1InitialVersion}}
	AllowFirmwareInterface                  = Gate{Name: "allow_firmware_interface", Min: Minor86FirmwareInterface}
	AllowFirmwareIdentity                   = Gate{Name: "allow_firmware_identity", Min: Minor114FirmwareIdentity}
	AllowPortName                           = Gate{Name: "allow_port_name", Min: Minor88PortName}
	AllowAttachDetachVmedia                 = Gate{Name: "allow_attach_detach_vmedia", Min: Minor89AttachDetachVmedia}
	AllowGetVmedia                          = Gate{Name: "allow_get_vmedia", Min: Minor93GetVmedia}
	AllowNodeIdentAsParamForPortCreation    = Gate{Name: "allow_node_ident_as_param_for_port_creation", Min: Minor94PortNodename}
	AllowPortDescription                    = Gate{Name: "allow_port_description", Min: Minor97PortDescription}
	AllowPortVendor                         = Gate{Name: "allow_port_vendor", Min: Minor100PortVendor}
	AllowPortCategory                       = Gate{Name: "allow_port_category", Min: Minor101PortCategory}
	AllowNodeInstanceName                   = Gate{Name: "allow_node_instance_name", Min: Minor104NodeInstanceName}
	AllowPortAvailableForDynamicPortgroup   = Gate{Name: "allow_port_available_for_dynamic_portgroup", Min: Minor111DynamicPortgroup}
	AllowPortgroupDynamicPortgroup          = Gate{Name: "allow_portgroup_dynamic_portgroup", Min: Minor111DynamicPortgroup}
)

// Gates lists every allow_* gate, in upstream source order.
var Gates = []Gate{
	AllowSpecialCharactersInPatchFields,
	AllowNodeLogicalNames,
	AllowRaidConfig,
	AllowSoftPowerOff,
	AllowInjectNmi,
	AllowLinksNodeStatesAndDriverProperties,
	AllowPortInternalInfo,
	AllowPortAdvancedNetFields,
	AllowRamdiskEndpoints,
	AllowPortgroups,
	AllowPortgroupsSubcontrollers,
	AllowRemoveChassisUuid,
	AllowPortgroupModeProperties,
	AllowPortgroupPhysicalNetwork,
	AllowPortgroupCategory,
	AllowVifsSubcontroller,
	AllowDynamicDrivers,
	AllowDynamicInterfaces,
	AllowVolume,
	AllowStorageInterface,
	AllowPortPhysicalNetwork,
	AllowNodeRebuildWithConfigdrive,
	AllowAgentVersionInHeartbeat,
	AllowRescueInterface,
	AllowBiosInterface,
	AllowTraits,
	AllowInspectWaitState,
	AllowInspectAbort,
	AllowDeployAbort,
	AllowDetailQuery,
	AllowQueryBios,
	AllowResetInterfaces,
	AllowNodeHistory,
	AllowNodeHistoryProject,
	AllowNodeHistoryFields,
	AllowNodeInventory,
	AllowExposeConductors,
	AllowAllocations,
	AllowPortIsSmartnic,
	AllowExposeEvents,
	AllowDeployTemplates,
	AllowRunbooks,
	AllowRunbookTraits,
	AllowInspectionRules,
	AllowOvnVtepVersion,
	AllowBuildConfigdrive,
	AllowConfigdriveVendorData,
	AllowAllocationBackfill,
	AllowAllocationOwner,
	AllowAgentToken,
	AllowLocalLinkConnectionNetworkType,
	AllowVerifyCaInHeartbeat,
	AllowDeploySteps,
	AllowStatusInHeartbeat,
	AllowUnholdVerb,
	AllowServiceVerb,
	AllowShardsEndpoint,
	AllowContinueInspectionEndpoint,
	AllowFirmwareInterface,
	AllowFirmwareIdentity,
	AllowPortName,
	AllowAttachDetachVmedia,
	AllowGetVmedia,
	AllowNodeIdentAsParamForPortCreation,
	AllowPortDescription,
	AllowPortVendor,
	AllowPortCategory,
	AllowNodeInstanceName,
	AllowPortAvailableForDynamicPortgroup,
	AllowPortgroupDynamicPortgroup,
}
