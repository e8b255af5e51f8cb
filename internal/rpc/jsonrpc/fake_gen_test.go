// Code generated from the ConductorAPI interface (rpc/api.go) for the
// round-trip test; regenerate when the interface changes. DO NOT EDIT.

package jsonrpc

import (
	"context"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
)

func (f *fakeConductor) CreateNode(ctx context.Context, topic string, node *model.Node) (*model.Node, error) {
	err := f.record(ctx, "CreateNode", node)
	out, _ := f.result("CreateNode").(*model.Node)
	return out, err
}

func (f *fakeConductor) UpdateNode(ctx context.Context, topic string, nodeID string, upd *model.NodeUpdate, resetInterfaces bool) (*model.Node, error) {
	err := f.record(ctx, "UpdateNode", nodeID, upd, resetInterfaces)
	out, _ := f.result("UpdateNode").(*model.Node)
	return out, err
}

func (f *fakeConductor) DestroyNode(ctx context.Context, topic string, nodeID string) error {
	return f.record(ctx, "DestroyNode", nodeID)
}

func (f *fakeConductor) ValidateDriverInterfaces(ctx context.Context, topic string, nodeID string) (map[string]rpc.InterfaceValidation, error) {
	err := f.record(ctx, "ValidateDriverInterfaces", nodeID)
	out, _ := f.result("ValidateDriverInterfaces").(map[string]rpc.InterfaceValidation)
	return out, err
}

func (f *fakeConductor) ChangeNodePowerState(ctx context.Context, topic string, nodeID string, newState string, timeout int) error {
	return f.record(ctx, "ChangeNodePowerState", nodeID, newState, timeout)
}

func (f *fakeConductor) ChangeNodeBootMode(ctx context.Context, topic string, nodeID string, newState string) error {
	return f.record(ctx, "ChangeNodeBootMode", nodeID, newState)
}

func (f *fakeConductor) ChangeNodeSecureBoot(ctx context.Context, topic string, nodeID string, newState bool) error {
	return f.record(ctx, "ChangeNodeSecureBoot", nodeID, newState)
}

func (f *fakeConductor) VendorPassthru(ctx context.Context, topic string, args rpc.VendorPassthruArgs) (*rpc.VendorPassthruResult, error) {
	err := f.record(ctx, "VendorPassthru", args)
	out, _ := f.result("VendorPassthru").(*rpc.VendorPassthruResult)
	return out, err
}

func (f *fakeConductor) DriverVendorPassthru(ctx context.Context, topic string, args rpc.DriverVendorPassthruArgs) (*rpc.VendorPassthruResult, error) {
	err := f.record(ctx, "DriverVendorPassthru", args)
	out, _ := f.result("DriverVendorPassthru").(*rpc.VendorPassthruResult)
	return out, err
}

func (f *fakeConductor) GetNodeVendorPassthruMethods(ctx context.Context, topic string, nodeID string) (map[string]map[string]any, error) {
	err := f.record(ctx, "GetNodeVendorPassthruMethods", nodeID)
	out, _ := f.result("GetNodeVendorPassthruMethods").(map[string]map[string]any)
	return out, err
}

func (f *fakeConductor) GetDriverVendorPassthruMethods(ctx context.Context, topic string, driverName string) (map[string]map[string]any, error) {
	err := f.record(ctx, "GetDriverVendorPassthruMethods", driverName)
	out, _ := f.result("GetDriverVendorPassthruMethods").(map[string]map[string]any)
	return out, err
}

func (f *fakeConductor) DoNodeDeploy(ctx context.Context, topic string, nodeID string, rebuild bool, configdrive any, deploySteps []map[string]any) error {
	return f.record(ctx, "DoNodeDeploy", nodeID, rebuild, configdrive, deploySteps)
}

func (f *fakeConductor) DoNodeTearDown(ctx context.Context, topic string, nodeID string) error {
	return f.record(ctx, "DoNodeTearDown", nodeID)
}

func (f *fakeConductor) DoProvisioningAction(ctx context.Context, topic string, nodeID string, action string) error {
	return f.record(ctx, "DoProvisioningAction", nodeID, action)
}

func (f *fakeConductor) DoNodeClean(ctx context.Context, topic string, nodeID string, cleanSteps []map[string]any, disableRamdisk bool) error {
	return f.record(ctx, "DoNodeClean", nodeID, cleanSteps, disableRamdisk)
}

func (f *fakeConductor) DoNodeService(ctx context.Context, topic string, nodeID string, serviceSteps []map[string]any, disableRamdisk bool) error {
	return f.record(ctx, "DoNodeService", nodeID, serviceSteps, disableRamdisk)
}

func (f *fakeConductor) DoNodeRescue(ctx context.Context, topic string, nodeID string, rescuePassword string) error {
	return f.record(ctx, "DoNodeRescue", nodeID, rescuePassword)
}

func (f *fakeConductor) DoNodeUnrescue(ctx context.Context, topic string, nodeID string) error {
	return f.record(ctx, "DoNodeUnrescue", nodeID)
}

func (f *fakeConductor) InspectHardware(ctx context.Context, topic string, nodeID string) error {
	return f.record(ctx, "InspectHardware", nodeID)
}

func (f *fakeConductor) ContinueNodeClean(ctx context.Context, topic string, nodeID string) error {
	return f.record(ctx, "ContinueNodeClean", nodeID)
}

func (f *fakeConductor) ContinueNodeDeploy(ctx context.Context, topic string, nodeID string) error {
	return f.record(ctx, "ContinueNodeDeploy", nodeID)
}

func (f *fakeConductor) ContinueNodeService(ctx context.Context, topic string, nodeID string) error {
	return f.record(ctx, "ContinueNodeService", nodeID)
}

func (f *fakeConductor) GetConsoleInformation(ctx context.Context, topic string, nodeID string) (map[string]any, error) {
	err := f.record(ctx, "GetConsoleInformation", nodeID)
	out, _ := f.result("GetConsoleInformation").(map[string]any)
	return out, err
}

func (f *fakeConductor) SetConsoleMode(ctx context.Context, topic string, nodeID string, enabled bool) error {
	return f.record(ctx, "SetConsoleMode", nodeID, enabled)
}

func (f *fakeConductor) CreatePort(ctx context.Context, topic string, port *model.Port) (*model.Port, error) {
	err := f.record(ctx, "CreatePort", port)
	out, _ := f.result("CreatePort").(*model.Port)
	return out, err
}

func (f *fakeConductor) UpdatePort(ctx context.Context, topic string, port *model.Port) (*model.Port, error) {
	err := f.record(ctx, "UpdatePort", port)
	out, _ := f.result("UpdatePort").(*model.Port)
	return out, err
}

func (f *fakeConductor) DestroyPort(ctx context.Context, topic string, port *model.Port) error {
	return f.record(ctx, "DestroyPort", port)
}

func (f *fakeConductor) UpdatePortgroup(ctx context.Context, topic string, portgroup *model.Portgroup) (*model.Portgroup, error) {
	err := f.record(ctx, "UpdatePortgroup", portgroup)
	out, _ := f.result("UpdatePortgroup").(*model.Portgroup)
	return out, err
}

func (f *fakeConductor) DestroyPortgroup(ctx context.Context, topic string, portgroup *model.Portgroup) error {
	return f.record(ctx, "DestroyPortgroup", portgroup)
}

func (f *fakeConductor) UpdatePortgroupPhysicalNetwork(ctx context.Context, topic string, portgroup *model.Portgroup, newPhysicalNetwork string) error {
	return f.record(ctx, "UpdatePortgroupPhysicalNetwork", portgroup, newPhysicalNetwork)
}

func (f *fakeConductor) GetDriverProperties(ctx context.Context, topic string, driverName string) (map[string]string, error) {
	err := f.record(ctx, "GetDriverProperties", driverName)
	out, _ := f.result("GetDriverProperties").(map[string]string)
	return out, err
}

func (f *fakeConductor) GetRAIDLogicalDiskProperties(ctx context.Context, topic string, driverName string) (map[string]string, error) {
	err := f.record(ctx, "GetRAIDLogicalDiskProperties", driverName)
	out, _ := f.result("GetRAIDLogicalDiskProperties").(map[string]string)
	return out, err
}

func (f *fakeConductor) SetBootDevice(ctx context.Context, topic string, nodeID string, device string, persistent bool) error {
	return f.record(ctx, "SetBootDevice", nodeID, device, persistent)
}

func (f *fakeConductor) GetBootDevice(ctx context.Context, topic string, nodeID string) (*rpc.BootDevice, error) {
	err := f.record(ctx, "GetBootDevice", nodeID)
	out, _ := f.result("GetBootDevice").(*rpc.BootDevice)
	return out, err
}

func (f *fakeConductor) GetSupportedBootDevices(ctx context.Context, topic string, nodeID string) ([]string, error) {
	err := f.record(ctx, "GetSupportedBootDevices", nodeID)
	out, _ := f.result("GetSupportedBootDevices").([]string)
	return out, err
}

func (f *fakeConductor) InjectNMI(ctx context.Context, topic string, nodeID string) error {
	return f.record(ctx, "InjectNMI", nodeID)
}

func (f *fakeConductor) SetIndicatorState(ctx context.Context, topic string, nodeID string, component string, indicator string, state string) error {
	return f.record(ctx, "SetIndicatorState", nodeID, component, indicator, state)
}

func (f *fakeConductor) GetIndicatorState(ctx context.Context, topic string, nodeID string, component string, indicator string) (string, error) {
	err := f.record(ctx, "GetIndicatorState", nodeID, component, indicator)
	out, _ := f.result("GetIndicatorState").(string)
	return out, err
}

func (f *fakeConductor) GetSupportedIndicators(ctx context.Context, topic string, nodeID string, component string) (map[string]any, error) {
	err := f.record(ctx, "GetSupportedIndicators", nodeID, component)
	out, _ := f.result("GetSupportedIndicators").(map[string]any)
	return out, err
}

func (f *fakeConductor) SetTargetRAIDConfig(ctx context.Context, topic string, nodeID string, targetRAIDConfig map[string]any) error {
	return f.record(ctx, "SetTargetRAIDConfig", nodeID, targetRAIDConfig)
}

func (f *fakeConductor) AttachVirtualMedia(ctx context.Context, topic string, args rpc.AttachVirtualMediaArgs) error {
	return f.record(ctx, "AttachVirtualMedia", args)
}

func (f *fakeConductor) DetachVirtualMedia(ctx context.Context, topic string, nodeID string, deviceTypes []string) error {
	return f.record(ctx, "DetachVirtualMedia", nodeID, deviceTypes)
}

func (f *fakeConductor) GetVirtualMedia(ctx context.Context, topic string, nodeID string) (map[string]any, error) {
	err := f.record(ctx, "GetVirtualMedia", nodeID)
	out, _ := f.result("GetVirtualMedia").(map[string]any)
	return out, err
}

func (f *fakeConductor) Heartbeat(ctx context.Context, topic string, args rpc.HeartbeatArgs) error {
	return f.record(ctx, "Heartbeat", args)
}

func (f *fakeConductor) GetNodeWithToken(ctx context.Context, topic string, nodeID string) (*model.Node, error) {
	err := f.record(ctx, "GetNodeWithToken", nodeID)
	out, _ := f.result("GetNodeWithToken").(*model.Node)
	return out, err
}

func (f *fakeConductor) ContinueInspection(ctx context.Context, topic string, nodeID string, inventory map[string]any, pluginData map[string]any) error {
	return f.record(ctx, "ContinueInspection", nodeID, inventory, pluginData)
}

func (f *fakeConductor) ObjectClassActionVersions(ctx context.Context, topic string, args rpc.ObjectClassActionVersionsArgs) (any, error) {
	err := f.record(ctx, "ObjectClassActionVersions", args)
	out, _ := f.result("ObjectClassActionVersions").(any)
	return out, err
}

func (f *fakeConductor) ObjectAction(ctx context.Context, topic string, args rpc.ObjectActionArgs) (any, error) {
	err := f.record(ctx, "ObjectAction", args)
	out, _ := f.result("ObjectAction").(any)
	return out, err
}

func (f *fakeConductor) ObjectBackportVersions(ctx context.Context, topic string, objinst any, objectVersions map[string]string) (any, error) {
	err := f.record(ctx, "ObjectBackportVersions", objinst, objectVersions)
	out, _ := f.result("ObjectBackportVersions").(any)
	return out, err
}

func (f *fakeConductor) UpdateVolumeConnector(ctx context.Context, topic string, connector *model.VolumeConnector) (*model.VolumeConnector, error) {
	err := f.record(ctx, "UpdateVolumeConnector", connector)
	out, _ := f.result("UpdateVolumeConnector").(*model.VolumeConnector)
	return out, err
}

func (f *fakeConductor) DestroyVolumeConnector(ctx context.Context, topic string, connector *model.VolumeConnector) error {
	return f.record(ctx, "DestroyVolumeConnector", connector)
}

func (f *fakeConductor) UpdateVolumeTarget(ctx context.Context, topic string, target *model.VolumeTarget) (*model.VolumeTarget, error) {
	err := f.record(ctx, "UpdateVolumeTarget", target)
	out, _ := f.result("UpdateVolumeTarget").(*model.VolumeTarget)
	return out, err
}

func (f *fakeConductor) DestroyVolumeTarget(ctx context.Context, topic string, target *model.VolumeTarget) error {
	return f.record(ctx, "DestroyVolumeTarget", target)
}

func (f *fakeConductor) VifAttach(ctx context.Context, topic string, nodeID string, vifInfo map[string]any) error {
	return f.record(ctx, "VifAttach", nodeID, vifInfo)
}

func (f *fakeConductor) VifDetach(ctx context.Context, topic string, nodeID string, vifID string) error {
	return f.record(ctx, "VifDetach", nodeID, vifID)
}

func (f *fakeConductor) VifList(ctx context.Context, topic string, nodeID string) ([]map[string]any, error) {
	err := f.record(ctx, "VifList", nodeID)
	out, _ := f.result("VifList").([]map[string]any)
	return out, err
}

func (f *fakeConductor) AddNodeTraits(ctx context.Context, topic string, nodeID string, traits []string, replace bool) error {
	return f.record(ctx, "AddNodeTraits", nodeID, traits, replace)
}

func (f *fakeConductor) RemoveNodeTraits(ctx context.Context, topic string, nodeID string, traits []string) error {
	return f.record(ctx, "RemoveNodeTraits", nodeID, traits)
}

func (f *fakeConductor) CreateAllocation(ctx context.Context, topic string, allocation *model.Allocation) (*model.Allocation, error) {
	err := f.record(ctx, "CreateAllocation", allocation)
	out, _ := f.result("CreateAllocation").(*model.Allocation)
	return out, err
}

func (f *fakeConductor) DestroyAllocation(ctx context.Context, topic string, allocation *model.Allocation) error {
	return f.record(ctx, "DestroyAllocation", allocation)
}

// roundTripCases calls every ConductorAPI method with distinctive
// arguments; result is what the fake conductor answers.
var roundTripCases = []roundTripCase{
	{
		method: "CreateNode",
		args:   []any{sampleNode()},
		result: sampleNode(),
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.CreateNode(ctx, topic, sampleNode())
		},
	},
	{
		method: "UpdateNode",
		args:   []any{"nodeID-value", sampleNodeUpdate(), true},
		result: sampleNode(),
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.UpdateNode(ctx, topic, "nodeID-value", sampleNodeUpdate(), true)
		},
	},
	{
		method: "DestroyNode",
		args:   []any{"nodeID-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DestroyNode(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "ValidateDriverInterfaces",
		args:   []any{"nodeID-value"},
		result: map[string]rpc.InterfaceValidation{"power": {Result: model.Ptr(true)}, "console": {Result: model.Ptr(false), Reason: "not supported"}, "rescue": {Result: nil, Reason: "missing"}},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.ValidateDriverInterfaces(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "ChangeNodePowerState",
		args:   []any{"nodeID-value", "newState-value", 42},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.ChangeNodePowerState(ctx, topic, "nodeID-value", "newState-value", 42)
		},
	},
	{
		method: "ChangeNodeBootMode",
		args:   []any{"nodeID-value", "newState-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.ChangeNodeBootMode(ctx, topic, "nodeID-value", "newState-value")
		},
	},
	{
		method: "ChangeNodeSecureBoot",
		args:   []any{"nodeID-value", true},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.ChangeNodeSecureBoot(ctx, topic, "nodeID-value", true)
		},
	},
	{
		method: "VendorPassthru",
		args:   []any{rpc.VendorPassthruArgs{NodeID: "node-1", DriverMethod: "do_it", HTTPMethod: "POST", Info: map[string]any{"k": "v"}}},
		result: &rpc.VendorPassthruResult{Return: map[string]any{"x": "y"}, Async: false, Attach: true},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.VendorPassthru(ctx, topic, rpc.VendorPassthruArgs{NodeID: "node-1", DriverMethod: "do_it", HTTPMethod: "POST", Info: map[string]any{"k": "v"}})
		},
	},
	{
		method: "DriverVendorPassthru",
		args:   []any{rpc.DriverVendorPassthruArgs{DriverName: "fake-hardware", DriverMethod: "do_it", HTTPMethod: "PUT", Info: map[string]any{"k": "v"}}},
		result: &rpc.VendorPassthruResult{Return: map[string]any{"x": "y"}, Async: false, Attach: true},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.DriverVendorPassthru(ctx, topic, rpc.DriverVendorPassthruArgs{DriverName: "fake-hardware", DriverMethod: "do_it", HTTPMethod: "PUT", Info: map[string]any{"k": "v"}})
		},
	},
	{
		method: "GetNodeVendorPassthruMethods",
		args:   []any{"nodeID-value"},
		result: map[string]map[string]any{"do_it": {"async": true, "http_methods": []any{"POST"}, "description": "d"}},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.GetNodeVendorPassthruMethods(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "GetDriverVendorPassthruMethods",
		args:   []any{"driverName-value"},
		result: map[string]map[string]any{"do_it": {"async": true, "http_methods": []any{"POST"}, "description": "d"}},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.GetDriverVendorPassthruMethods(ctx, topic, "driverName-value")
		},
	},
	{
		method: "DoNodeDeploy",
		args:   []any{"nodeID-value", true, map[string]any{"configdrive": "blob", "gzip": true}, []map[string]any{{"interface": "deploy", "step": "deploySteps", "priority": 50.0, "args": map[string]any{"a": "b"}}}},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DoNodeDeploy(ctx, topic, "nodeID-value", true, map[string]any{"configdrive": "blob", "gzip": true}, []map[string]any{{"interface": "deploy", "step": "deploySteps", "priority": 50.0, "args": map[string]any{"a": "b"}}})
		},
	},
	{
		method: "DoNodeTearDown",
		args:   []any{"nodeID-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DoNodeTearDown(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "DoProvisioningAction",
		args:   []any{"nodeID-value", "action-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DoProvisioningAction(ctx, topic, "nodeID-value", "action-value")
		},
	},
	{
		method: "DoNodeClean",
		args:   []any{"nodeID-value", []map[string]any{{"interface": "deploy", "step": "cleanSteps", "priority": 50.0, "args": map[string]any{"a": "b"}}}, true},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DoNodeClean(ctx, topic, "nodeID-value", []map[string]any{{"interface": "deploy", "step": "cleanSteps", "priority": 50.0, "args": map[string]any{"a": "b"}}}, true)
		},
	},
	{
		method: "DoNodeService",
		args:   []any{"nodeID-value", []map[string]any{{"interface": "deploy", "step": "serviceSteps", "priority": 50.0, "args": map[string]any{"a": "b"}}}, true},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DoNodeService(ctx, topic, "nodeID-value", []map[string]any{{"interface": "deploy", "step": "serviceSteps", "priority": 50.0, "args": map[string]any{"a": "b"}}}, true)
		},
	},
	{
		method: "DoNodeRescue",
		args:   []any{"nodeID-value", "rescuePassword-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DoNodeRescue(ctx, topic, "nodeID-value", "rescuePassword-value")
		},
	},
	{
		method: "DoNodeUnrescue",
		args:   []any{"nodeID-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DoNodeUnrescue(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "InspectHardware",
		args:   []any{"nodeID-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.InspectHardware(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "ContinueNodeClean",
		args:   []any{"nodeID-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.ContinueNodeClean(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "ContinueNodeDeploy",
		args:   []any{"nodeID-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.ContinueNodeDeploy(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "ContinueNodeService",
		args:   []any{"nodeID-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.ContinueNodeService(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "GetConsoleInformation",
		args:   []any{"nodeID-value"},
		result: map[string]any{"GetConsoleInformation": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.GetConsoleInformation(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "SetConsoleMode",
		args:   []any{"nodeID-value", true},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.SetConsoleMode(ctx, topic, "nodeID-value", true)
		},
	},
	{
		method: "CreatePort",
		args:   []any{samplePort()},
		result: samplePort(),
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.CreatePort(ctx, topic, samplePort())
		},
	},
	{
		method: "UpdatePort",
		args:   []any{samplePort()},
		result: samplePort(),
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.UpdatePort(ctx, topic, samplePort())
		},
	},
	{
		method: "DestroyPort",
		args:   []any{samplePort()},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DestroyPort(ctx, topic, samplePort())
		},
	},
	{
		method: "UpdatePortgroup",
		args:   []any{samplePortgroup()},
		result: samplePortgroup(),
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.UpdatePortgroup(ctx, topic, samplePortgroup())
		},
	},
	{
		method: "DestroyPortgroup",
		args:   []any{samplePortgroup()},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DestroyPortgroup(ctx, topic, samplePortgroup())
		},
	},
	{
		method: "UpdatePortgroupPhysicalNetwork",
		args:   []any{samplePortgroup(), "newPhysicalNetwork-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.UpdatePortgroupPhysicalNetwork(ctx, topic, samplePortgroup(), "newPhysicalNetwork-value")
		},
	},
	{
		method: "GetDriverProperties",
		args:   []any{"driverName-value"},
		result: map[string]string{"GetDriverProperties": "desc"},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.GetDriverProperties(ctx, topic, "driverName-value")
		},
	},
	{
		method: "GetRAIDLogicalDiskProperties",
		args:   []any{"driverName-value"},
		result: map[string]string{"GetRAIDLogicalDiskProperties": "desc"},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.GetRAIDLogicalDiskProperties(ctx, topic, "driverName-value")
		},
	},
	{
		method: "SetBootDevice",
		args:   []any{"nodeID-value", "device-value", true},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.SetBootDevice(ctx, topic, "nodeID-value", "device-value", true)
		},
	},
	{
		method: "GetBootDevice",
		args:   []any{"nodeID-value"},
		result: &rpc.BootDevice{BootDevice: "pxe", Persistent: model.Ptr(true)},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.GetBootDevice(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "GetSupportedBootDevices",
		args:   []any{"nodeID-value"},
		result: []string{"GetSupportedBootDevices-1", "GetSupportedBootDevices-2"},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.GetSupportedBootDevices(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "InjectNMI",
		args:   []any{"nodeID-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.InjectNMI(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "SetIndicatorState",
		args:   []any{"nodeID-value", "component-value", "indicator-value", "state-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.SetIndicatorState(ctx, topic, "nodeID-value", "component-value", "indicator-value", "state-value")
		},
	},
	{
		method: "GetIndicatorState",
		args:   []any{"nodeID-value", "component-value", "indicator-value"},
		result: "on",
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.GetIndicatorState(ctx, topic, "nodeID-value", "component-value", "indicator-value")
		},
	},
	{
		method: "GetSupportedIndicators",
		args:   []any{"nodeID-value", "component-value"},
		result: map[string]any{"GetSupportedIndicators": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.GetSupportedIndicators(ctx, topic, "nodeID-value", "component-value")
		},
	},
	{
		method: "SetTargetRAIDConfig",
		args:   []any{"nodeID-value", map[string]any{"targetRAIDConfig": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}}},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.SetTargetRAIDConfig(ctx, topic, "nodeID-value", map[string]any{"targetRAIDConfig": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}})
		},
	},
	{
		method: "AttachVirtualMedia",
		args:   []any{rpc.AttachVirtualMediaArgs{NodeID: "node-1", DeviceType: "cdrom", ImageURL: "https://images/x.iso", ImageDownloadSource: "local"}},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.AttachVirtualMedia(ctx, topic, rpc.AttachVirtualMediaArgs{NodeID: "node-1", DeviceType: "cdrom", ImageURL: "https://images/x.iso", ImageDownloadSource: "local"})
		},
	},
	{
		method: "DetachVirtualMedia",
		args:   []any{"nodeID-value", []string{"deviceTypes-1", "deviceTypes-2"}},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DetachVirtualMedia(ctx, topic, "nodeID-value", []string{"deviceTypes-1", "deviceTypes-2"})
		},
	},
	{
		method: "GetVirtualMedia",
		args:   []any{"nodeID-value"},
		result: map[string]any{"GetVirtualMedia": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.GetVirtualMedia(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "Heartbeat",
		args:   []any{rpc.HeartbeatArgs{NodeID: "node-1", CallbackURL: "https://10.0.0.5:9999", AgentVersion: "10.0.0", AgentToken: "tok", AgentVerifyCA: "-----BEGIN CERTIFICATE-----", AgentStatus: "start", AgentStatusMessage: "booted"}},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.Heartbeat(ctx, topic, rpc.HeartbeatArgs{NodeID: "node-1", CallbackURL: "https://10.0.0.5:9999", AgentVersion: "10.0.0", AgentToken: "tok", AgentVerifyCA: "-----BEGIN CERTIFICATE-----", AgentStatus: "start", AgentStatusMessage: "booted"})
		},
	},
	{
		method: "GetNodeWithToken",
		args:   []any{"nodeID-value"},
		result: sampleNode(),
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.GetNodeWithToken(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "ContinueInspection",
		args:   []any{"nodeID-value", map[string]any{"inventory": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}}, map[string]any{"pluginData": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}}},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.ContinueInspection(ctx, topic, "nodeID-value", map[string]any{"inventory": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}}, map[string]any{"pluginData": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}})
		},
	},
	{
		method: "ObjectClassActionVersions",
		args:   []any{rpc.ObjectClassActionVersionsArgs{ObjName: "Node", ObjMethod: "get", ObjectVersions: map[string]string{"Node": "1.41"}, Args: []any{"a"}, Kwargs: map[string]any{"k": "v"}}},
		result: map[string]any{"ironic_object.name": "Node", "changes": []any{"name"}},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.ObjectClassActionVersions(ctx, topic, rpc.ObjectClassActionVersionsArgs{ObjName: "Node", ObjMethod: "get", ObjectVersions: map[string]string{"Node": "1.41"}, Args: []any{"a"}, Kwargs: map[string]any{"k": "v"}})
		},
	},
	{
		method: "ObjectAction",
		args:   []any{rpc.ObjectActionArgs{ObjInst: map[string]any{"ironic_object.name": "Node"}, ObjMethod: "save", Args: []any{}, Kwargs: map[string]any{}}},
		result: map[string]any{"ironic_object.name": "Node", "changes": []any{"name"}},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.ObjectAction(ctx, topic, rpc.ObjectActionArgs{ObjInst: map[string]any{"ironic_object.name": "Node"}, ObjMethod: "save", Args: []any{}, Kwargs: map[string]any{}})
		},
	},
	{
		method: "ObjectBackportVersions",
		args:   []any{map[string]any{"objinst": "blob", "gzip": true}, map[string]string{"objectVersions": "desc"}},
		result: map[string]any{"ironic_object.name": "Node", "changes": []any{"name"}},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.ObjectBackportVersions(ctx, topic, map[string]any{"objinst": "blob", "gzip": true}, map[string]string{"objectVersions": "desc"})
		},
	},
	{
		method: "UpdateVolumeConnector",
		args:   []any{sampleConnector()},
		result: sampleConnector(),
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.UpdateVolumeConnector(ctx, topic, sampleConnector())
		},
	},
	{
		method: "DestroyVolumeConnector",
		args:   []any{sampleConnector()},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DestroyVolumeConnector(ctx, topic, sampleConnector())
		},
	},
	{
		method: "UpdateVolumeTarget",
		args:   []any{sampleTarget()},
		result: sampleTarget(),
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.UpdateVolumeTarget(ctx, topic, sampleTarget())
		},
	},
	{
		method: "DestroyVolumeTarget",
		args:   []any{sampleTarget()},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DestroyVolumeTarget(ctx, topic, sampleTarget())
		},
	},
	{
		method: "VifAttach",
		args:   []any{"nodeID-value", map[string]any{"vifInfo": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}}},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.VifAttach(ctx, topic, "nodeID-value", map[string]any{"vifInfo": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}})
		},
	},
	{
		method: "VifDetach",
		args:   []any{"nodeID-value", "vifID-value"},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.VifDetach(ctx, topic, "nodeID-value", "vifID-value")
		},
	},
	{
		method: "VifList",
		args:   []any{"nodeID-value"},
		result: []map[string]any{{"id": "vif-1"}, {"id": "vif-2"}},
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.VifList(ctx, topic, "nodeID-value")
		},
	},
	{
		method: "AddNodeTraits",
		args:   []any{"nodeID-value", []string{"traits-1", "traits-2"}, true},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.AddNodeTraits(ctx, topic, "nodeID-value", []string{"traits-1", "traits-2"}, true)
		},
	},
	{
		method: "RemoveNodeTraits",
		args:   []any{"nodeID-value", []string{"traits-1", "traits-2"}},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.RemoveNodeTraits(ctx, topic, "nodeID-value", []string{"traits-1", "traits-2"})
		},
	},
	{
		method: "CreateAllocation",
		args:   []any{sampleAllocation()},
		result: sampleAllocation(),
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return c.CreateAllocation(ctx, topic, sampleAllocation())
		},
	},
	{
		method: "DestroyAllocation",
		args:   []any{sampleAllocation()},
		result: nil,
		call: func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error) {
			return nil, c.DestroyAllocation(ctx, topic, sampleAllocation())
		},
	},
}
