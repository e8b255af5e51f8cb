package jsonrpc

import (
	"context"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
)

// The methods below send upstream's kwargs under the RPC version upstream's
// client asks for each call (ironic/conductor/rpcapi.py).

// CreateNode calls create_node.
func (c *Client) CreateNode(ctx context.Context, topic string, node *model.Node) (*model.Node, error) {
	var out *model.Node
	err := c.call(ctx, topic, "create_node", "1.36", nodeObjParams{NodeObj: node}, &out)
	return out, err
}

// UpdateNode calls update_node.
func (c *Client) UpdateNode(ctx context.Context, topic, nodeID string, upd *model.NodeUpdate, resetInterfaces bool) (*model.Node, error) {
	var out *model.Node
	err := c.call(ctx, topic, "update_node", "1.1", updateNodeParams{NodeID: nodeID, NodeUpdate: upd, ResetInterfaces: resetInterfaces}, &out)
	return out, err
}

// DestroyNode calls destroy_node.
func (c *Client) DestroyNode(ctx context.Context, topic, nodeID string) error {
	return c.call(ctx, topic, "destroy_node", "1.9", nodeIDParams{nodeID}, nil)
}

// ValidateDriverInterfaces calls validate_driver_interfaces.
func (c *Client) ValidateDriverInterfaces(ctx context.Context, topic, nodeID string) (map[string]rpc.InterfaceValidation, error) {
	var out map[string]rpc.InterfaceValidation
	err := c.call(ctx, topic, "validate_driver_interfaces", "1.5", nodeIDParams{nodeID}, &out)
	return out, err
}

// ChangeNodePowerState calls change_node_power_state; timeout 0 is sent
// as None.
func (c *Client) ChangeNodePowerState(ctx context.Context, topic, nodeID, newState string, timeout int) error {
	p := powerStateParams{NodeID: nodeID, NewState: newState}
	if timeout != 0 {
		p.Timeout = &timeout
	}
	return c.call(ctx, topic, "change_node_power_state", "1.39", p, nil)
}

// ChangeNodeBootMode calls change_node_boot_mode.
func (c *Client) ChangeNodeBootMode(ctx context.Context, topic, nodeID, newState string) error {
	return c.call(ctx, topic, "change_node_boot_mode", "1.55", bootModeParams{NodeID: nodeID, NewState: newState}, nil)
}

// ChangeNodeSecureBoot calls change_node_secure_boot.
func (c *Client) ChangeNodeSecureBoot(ctx context.Context, topic, nodeID string, newState bool) error {
	return c.call(ctx, topic, "change_node_secure_boot", "1.55", secureBootParams{NodeID: nodeID, NewState: newState}, nil)
}

// VendorPassthru calls vendor_passthru.
func (c *Client) VendorPassthru(ctx context.Context, topic string, args rpc.VendorPassthruArgs) (*rpc.VendorPassthruResult, error) {
	var out *rpc.VendorPassthruResult
	err := c.call(ctx, topic, "vendor_passthru", "1.20", args, &out)
	return out, err
}

// DriverVendorPassthru calls driver_vendor_passthru.
func (c *Client) DriverVendorPassthru(ctx context.Context, topic string, args rpc.DriverVendorPassthruArgs) (*rpc.VendorPassthruResult, error) {
	var out *rpc.VendorPassthruResult
	err := c.call(ctx, topic, "driver_vendor_passthru", "1.20", args, &out)
	return out, err
}

// GetNodeVendorPassthruMethods calls get_node_vendor_passthru_methods.
func (c *Client) GetNodeVendorPassthruMethods(ctx context.Context, topic, nodeID string) (map[string]map[string]any, error) {
	var out map[string]map[string]any
	err := c.call(ctx, topic, "get_node_vendor_passthru_methods", "1.21", nodeIDParams{nodeID}, &out)
	return out, err
}

// GetDriverVendorPassthruMethods calls get_driver_vendor_passthru_methods.
func (c *Client) GetDriverVendorPassthruMethods(ctx context.Context, topic, driverName string) (map[string]map[string]any, error) {
	var out map[string]map[string]any
	err := c.call(ctx, topic, "get_driver_vendor_passthru_methods", "1.21", driverNameParams{driverName}, &out)
	return out, err
}

// DoNodeDeploy calls do_node_deploy; deploy_steps is sent, under 1.52,
// only when there are some, as upstream.
func (c *Client) DoNodeDeploy(ctx context.Context, topic, nodeID string, rebuild bool, configdrive any, deploySteps []map[string]any) error {
	version := "1.22"
	if len(deploySteps) > 0 {
		version = "1.52"
	}
	return c.call(ctx, topic, "do_node_deploy", version, deployParams{NodeID: nodeID, Rebuild: rebuild, Configdrive: configdrive, DeploySteps: deploySteps}, nil)
}

// DoNodeTearDown calls do_node_tear_down.
func (c *Client) DoNodeTearDown(ctx context.Context, topic, nodeID string) error {
	return c.call(ctx, topic, "do_node_tear_down", "1.6", nodeIDParams{nodeID}, nil)
}

// DoProvisioningAction calls do_provisioning_action.
func (c *Client) DoProvisioningAction(ctx context.Context, topic, nodeID, action string) error {
	return c.call(ctx, topic, "do_provisioning_action", "1.23", provisioningActionParams{NodeID: nodeID, Action: action}, nil)
}

// DoNodeClean calls do_node_clean.
func (c *Client) DoNodeClean(ctx context.Context, topic, nodeID string, cleanSteps []map[string]any, disableRamdisk bool) error {
	return c.call(ctx, topic, "do_node_clean", "1.53", cleanParams{NodeID: nodeID, CleanSteps: cleanSteps, DisableRamdisk: disableRamdisk}, nil)
}

// DoNodeService calls do_node_service.
func (c *Client) DoNodeService(ctx context.Context, topic, nodeID string, serviceSteps []map[string]any, disableRamdisk bool) error {
	return c.call(ctx, topic, "do_node_service", "1.57", serviceParams{NodeID: nodeID, ServiceSteps: serviceSteps, DisableRamdisk: disableRamdisk}, nil)
}

// DoNodeRescue calls do_node_rescue.
func (c *Client) DoNodeRescue(ctx context.Context, topic, nodeID, rescuePassword string) error {
	return c.call(ctx, topic, "do_node_rescue", "1.43", rescueParams{NodeID: nodeID, RescuePassword: rescuePassword}, nil)
}

// DoNodeUnrescue calls do_node_unrescue.
func (c *Client) DoNodeUnrescue(ctx context.Context, topic, nodeID string) error {
	return c.call(ctx, topic, "do_node_unrescue", "1.43", nodeIDParams{nodeID}, nil)
}

// InspectHardware calls inspect_hardware.
func (c *Client) InspectHardware(ctx context.Context, topic, nodeID string) error {
	return c.call(ctx, topic, "inspect_hardware", "1.24", nodeIDParams{nodeID}, nil)
}

// ContinueNodeClean casts continue_node_clean.
func (c *Client) ContinueNodeClean(ctx context.Context, topic, nodeID string) error {
	return c.cast(ctx, topic, "continue_node_clean", "1.27", nodeIDParams{nodeID})
}

// ContinueNodeDeploy casts continue_node_deploy.
func (c *Client) ContinueNodeDeploy(ctx context.Context, topic, nodeID string) error {
	return c.cast(ctx, topic, "continue_node_deploy", "1.45", nodeIDParams{nodeID})
}

// ContinueNodeService casts continue_node_service.
func (c *Client) ContinueNodeService(ctx context.Context, topic, nodeID string) error {
	return c.cast(ctx, topic, "continue_node_service", "1.60", nodeIDParams{nodeID})
}

// GetConsoleInformation calls get_console_information.
func (c *Client) GetConsoleInformation(ctx context.Context, topic, nodeID string) (map[string]any, error) {
	var out map[string]any
	err := c.call(ctx, topic, "get_console_information", "1.11", nodeIDParams{nodeID}, &out)
	return out, err
}

// SetConsoleMode calls set_console_mode.
func (c *Client) SetConsoleMode(ctx context.Context, topic, nodeID string, enabled bool) error {
	return c.call(ctx, topic, "set_console_mode", "1.11", consoleModeParams{NodeID: nodeID, Enabled: enabled}, nil)
}

// CreatePort calls create_port.
func (c *Client) CreatePort(ctx context.Context, topic string, port *model.Port) (*model.Port, error) {
	var out *model.Port
	err := c.call(ctx, topic, "create_port", "1.41", portObjParams{port}, &out)
	return out, err
}

// UpdatePort calls update_port.
func (c *Client) UpdatePort(ctx context.Context, topic string, port *model.Port) (*model.Port, error) {
	var out *model.Port
	err := c.call(ctx, topic, "update_port", "1.13", portObjParams{port}, &out)
	return out, err
}

// DestroyPort calls destroy_port.
func (c *Client) DestroyPort(ctx context.Context, topic string, port *model.Port) error {
	return c.call(ctx, topic, "destroy_port", "1.25", portParams{port}, nil)
}

// UpdatePortgroup calls update_portgroup.
func (c *Client) UpdatePortgroup(ctx context.Context, topic string, portgroup *model.Portgroup) (*model.Portgroup, error) {
	var out *model.Portgroup
	err := c.call(ctx, topic, "update_portgroup", "1.33", portgroupObjParams{portgroup}, &out)
	return out, err
}

// DestroyPortgroup calls destroy_portgroup.
func (c *Client) DestroyPortgroup(ctx context.Context, topic string, portgroup *model.Portgroup) error {
	return c.call(ctx, topic, "destroy_portgroup", "1.33", portgroupParams{portgroup}, nil)
}

// UpdatePortgroupPhysicalNetwork calls update_portgroup_physical_network.
func (c *Client) UpdatePortgroupPhysicalNetwork(ctx context.Context, topic string, portgroup *model.Portgroup, newPhysicalNetwork string) error {
	return c.call(ctx, topic, "update_portgroup_physical_network", "1.62", portgroupPhysnetParams{Portgroup: portgroup, NewPhysicalNetwork: newPhysicalNetwork}, nil)
}

// GetDriverProperties calls get_driver_properties.
func (c *Client) GetDriverProperties(ctx context.Context, topic, driverName string) (map[string]string, error) {
	var out map[string]string
	err := c.call(ctx, topic, "get_driver_properties", "1.16", driverNameParams{driverName}, &out)
	return out, err
}

// GetRAIDLogicalDiskProperties calls get_raid_logical_disk_properties.
func (c *Client) GetRAIDLogicalDiskProperties(ctx context.Context, topic, driverName string) (map[string]string, error) {
	var out map[string]string
	err := c.call(ctx, topic, "get_raid_logical_disk_properties", "1.30", driverNameParams{driverName}, &out)
	return out, err
}

// SetBootDevice calls set_boot_device.
func (c *Client) SetBootDevice(ctx context.Context, topic, nodeID, device string, persistent bool) error {
	return c.call(ctx, topic, "set_boot_device", "1.17", bootDeviceParams{NodeID: nodeID, Device: device, Persistent: persistent}, nil)
}

// GetBootDevice calls get_boot_device.
func (c *Client) GetBootDevice(ctx context.Context, topic, nodeID string) (*rpc.BootDevice, error) {
	var out *rpc.BootDevice
	err := c.call(ctx, topic, "get_boot_device", "1.17", nodeIDParams{nodeID}, &out)
	return out, err
}

// GetSupportedBootDevices calls get_supported_boot_devices.
func (c *Client) GetSupportedBootDevices(ctx context.Context, topic, nodeID string) ([]string, error) {
	var out []string
	err := c.call(ctx, topic, "get_supported_boot_devices", "1.17", nodeIDParams{nodeID}, &out)
	return out, err
}

// InjectNMI calls inject_nmi.
func (c *Client) InjectNMI(ctx context.Context, topic, nodeID string) error {
	return c.call(ctx, topic, "inject_nmi", "1.40", nodeIDParams{nodeID}, nil)
}

// SetIndicatorState calls set_indicator_state.
func (c *Client) SetIndicatorState(ctx context.Context, topic, nodeID, component, indicator, state string) error {
	return c.call(ctx, topic, "set_indicator_state", "1.50", setIndicatorParams{NodeID: nodeID, Component: component, Indicator: indicator, State: state}, nil)
}

// GetIndicatorState calls get_indicator_state.
func (c *Client) GetIndicatorState(ctx context.Context, topic, nodeID, component, indicator string) (string, error) {
	var out string
	err := c.call(ctx, topic, "get_indicator_state", "1.50", getIndicatorParams{NodeID: nodeID, Component: component, Indicator: indicator}, &out)
	return out, err
}

// GetSupportedIndicators calls get_supported_indicators; component ""
// is sent as None.
func (c *Client) GetSupportedIndicators(ctx context.Context, topic, nodeID, component string) (map[string]any, error) {
	p := supportedIndicatorsParams{NodeID: nodeID}
	if component != "" {
		p.Component = &component
	}
	var out map[string]any
	err := c.call(ctx, topic, "get_supported_indicators", "1.50", p, &out)
	return out, err
}

// SetTargetRAIDConfig calls set_target_raid_config.
func (c *Client) SetTargetRAIDConfig(ctx context.Context, topic, nodeID string, targetRAIDConfig map[string]any) error {
	return c.call(ctx, topic, "set_target_raid_config", "1.30", raidConfigParams{NodeID: nodeID, TargetRAIDConfig: targetRAIDConfig}, nil)
}

// AttachVirtualMedia calls attach_virtual_media.
func (c *Client) AttachVirtualMedia(ctx context.Context, topic string, args rpc.AttachVirtualMediaArgs) error {
	return c.call(ctx, topic, "attach_virtual_media", "1.59", args, nil)
}

// DetachVirtualMedia calls detach_virtual_media.
func (c *Client) DetachVirtualMedia(ctx context.Context, topic, nodeID string, deviceTypes []string) error {
	return c.call(ctx, topic, "detach_virtual_media", "1.59", detachVmediaParams{NodeID: nodeID, DeviceTypes: deviceTypes}, nil)
}

// GetVirtualMedia calls get_virtual_media.
func (c *Client) GetVirtualMedia(ctx context.Context, topic, nodeID string) (map[string]any, error) {
	var out map[string]any
	err := c.call(ctx, topic, "get_virtual_media", "1.61", nodeIDParams{nodeID}, &out)
	return out, err
}

// Heartbeat calls heartbeat.
func (c *Client) Heartbeat(ctx context.Context, topic string, args rpc.HeartbeatArgs) error {
	return c.call(ctx, topic, "heartbeat", "1.54", args, nil)
}

// GetNodeWithToken calls get_node_with_token.
func (c *Client) GetNodeWithToken(ctx context.Context, topic, nodeID string) (*model.Node, error) {
	var out *model.Node
	err := c.call(ctx, topic, "get_node_with_token", "1.49", nodeIDParams{nodeID}, &out)
	return out, err
}

// ContinueInspection calls continue_inspection.
func (c *Client) ContinueInspection(ctx context.Context, topic, nodeID string, inventory, pluginData map[string]any) error {
	return c.call(ctx, topic, "continue_inspection", "1.56", inspectionParams{NodeID: nodeID, Inventory: inventory, PluginData: pluginData}, nil)
}

// ObjectClassActionVersions calls object_class_action_versions.
func (c *Client) ObjectClassActionVersions(ctx context.Context, topic string, args rpc.ObjectClassActionVersionsArgs) (any, error) {
	var out any
	err := c.call(ctx, topic, "object_class_action_versions", "1.31", args, &out)
	return out, err
}

// ObjectAction calls object_action.
func (c *Client) ObjectAction(ctx context.Context, topic string, args rpc.ObjectActionArgs) (any, error) {
	var out any
	err := c.call(ctx, topic, "object_action", "1.31", args, &out)
	return out, err
}

// ObjectBackportVersions calls object_backport_versions.
func (c *Client) ObjectBackportVersions(ctx context.Context, topic string, objinst any, objectVersions map[string]string) (any, error) {
	var out any
	err := c.call(ctx, topic, "object_backport_versions", "1.31", backportParams{ObjInst: objinst, ObjectVersions: objectVersions}, &out)
	return out, err
}

// UpdateVolumeConnector calls update_volume_connector.
func (c *Client) UpdateVolumeConnector(ctx context.Context, topic string, connector *model.VolumeConnector) (*model.VolumeConnector, error) {
	var out *model.VolumeConnector
	err := c.call(ctx, topic, "update_volume_connector", "1.35", connectorParams{connector}, &out)
	return out, err
}

// DestroyVolumeConnector calls destroy_volume_connector.
func (c *Client) DestroyVolumeConnector(ctx context.Context, topic string, connector *model.VolumeConnector) error {
	return c.call(ctx, topic, "destroy_volume_connector", "1.35", connectorParams{connector}, nil)
}

// UpdateVolumeTarget calls update_volume_target.
func (c *Client) UpdateVolumeTarget(ctx context.Context, topic string, target *model.VolumeTarget) (*model.VolumeTarget, error) {
	var out *model.VolumeTarget
	err := c.call(ctx, topic, "update_volume_target", "1.37", targetParams{target}, &out)
	return out, err
}

// DestroyVolumeTarget calls destroy_volume_target.
func (c *Client) DestroyVolumeTarget(ctx context.Context, topic string, target *model.VolumeTarget) error {
	return c.call(ctx, topic, "destroy_volume_target", "1.37", targetParams{target}, nil)
}

// VifAttach calls vif_attach.
func (c *Client) VifAttach(ctx context.Context, topic, nodeID string, vifInfo map[string]any) error {
	return c.call(ctx, topic, "vif_attach", "1.38", vifAttachParams{NodeID: nodeID, VifInfo: vifInfo}, nil)
}

// VifDetach calls vif_detach.
func (c *Client) VifDetach(ctx context.Context, topic, nodeID, vifID string) error {
	return c.call(ctx, topic, "vif_detach", "1.38", vifDetachParams{NodeID: nodeID, VifID: vifID}, nil)
}

// VifList calls vif_list.
func (c *Client) VifList(ctx context.Context, topic, nodeID string) ([]map[string]any, error) {
	var out []map[string]any
	err := c.call(ctx, topic, "vif_list", "1.38", nodeIDParams{nodeID}, &out)
	return out, err
}

// AddNodeTraits calls add_node_traits.
func (c *Client) AddNodeTraits(ctx context.Context, topic, nodeID string, traits []string, replace bool) error {
	return c.call(ctx, topic, "add_node_traits", "1.44", addTraitsParams{NodeID: nodeID, Traits: traits, Replace: replace}, nil)
}

// RemoveNodeTraits calls remove_node_traits.
func (c *Client) RemoveNodeTraits(ctx context.Context, topic, nodeID string, traits []string) error {
	return c.call(ctx, topic, "remove_node_traits", "1.44", removeTraitsParams{NodeID: nodeID, Traits: traits}, nil)
}

// CreateAllocation calls create_allocation.
func (c *Client) CreateAllocation(ctx context.Context, topic string, allocation *model.Allocation) (*model.Allocation, error) {
	var out *model.Allocation
	err := c.call(ctx, topic, "create_allocation", "1.48", allocationParams{allocation}, &out)
	return out, err
}

// DestroyAllocation calls destroy_allocation.
func (c *Client) DestroyAllocation(ctx context.Context, topic string, allocation *model.Allocation) error {
	return c.call(ctx, topic, "destroy_allocation", "1.48", allocationParams{allocation}, nil)
}
