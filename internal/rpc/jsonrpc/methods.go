package jsonrpc

import (
	"context"
	"reflect"
	"strings"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
)

// method is one RPC method as the server dispatches it: its upstream
// name, the type of its keyword arguments on the wire, and how to call
// the conductor with them.
type method struct {
	name   string
	params reflect.Type // struct whose json tags are upstream's kwargs
	serve  func(ctx context.Context, h rpc.ConductorAPI, params any) (any, error)
}

// def declares a method whose kwargs decode into P. A P field is a
// required kwarg unless its tag says omitempty or rpc:"optional",
// mirroring the defaults of upstream's manager signatures.
func def[P any](name string, serve func(context.Context, rpc.ConductorAPI, *P) (any, error)) *method {
	return &method{
		name:   name,
		params: reflect.TypeFor[P](),
		serve: func(ctx context.Context, h rpc.ConductorAPI, p any) (any, error) {
			return serve(ctx, h, p.(*P))
		},
	}
}

// none adapts a call that answers nothing.
func none(err error) (any, error) { return nil, err }

// Wire kwargs of the methods whose Go arguments are positional.
type (
	nodeIDParams struct {
		NodeID string `json:"node_id"`
	}
	driverNameParams struct {
		DriverName string `json:"driver_name"`
	}
	nodeObjParams struct {
		NodeObj *model.Node `json:"node_obj"`
	}
	// Upstream's update_node sends the whole node object; ours sends the
	// node's id and the edits, so that the conductor applies them to the
	// node as read under its lock.
	updateNodeParams struct {
		NodeID          string            `json:"node_id"`
		NodeUpdate      *model.NodeUpdate `json:"node_update"`
		ResetInterfaces bool              `json:"reset_interfaces" rpc:"optional"`
	}
	powerStateParams struct {
		NodeID   string `json:"node_id"`
		NewState string `json:"new_state"`
		// Timeout is None (null) for the conductor's default.
		Timeout *int `json:"timeout" rpc:"optional"`
	}
	bootModeParams struct {
		NodeID   string `json:"node_id"`
		NewState string `json:"new_state"`
	}
	secureBootParams struct {
		NodeID   string `json:"node_id"`
		NewState bool   `json:"new_state"`
	}
	deployParams struct {
		NodeID      string           `json:"node_id"`
		Rebuild     bool             `json:"rebuild" rpc:"optional"`
		Configdrive any              `json:"configdrive" rpc:"optional"`
		DeploySteps []map[string]any `json:"deploy_steps,omitempty"`
	}
	provisioningActionParams struct {
		NodeID string `json:"node_id"`
		Action string `json:"action"`
	}
	cleanParams struct {
		NodeID         string           `json:"node_id"`
		CleanSteps     []map[string]any `json:"clean_steps"`
		DisableRamdisk bool             `json:"disable_ramdisk" rpc:"optional"`
	}
	serviceParams struct {
		NodeID         string           `json:"node_id"`
		ServiceSteps   []map[string]any `json:"service_steps"`
		DisableRamdisk bool             `json:"disable_ramdisk" rpc:"optional"`
	}
	rescueParams struct {
		NodeID         string `json:"node_id"`
		RescuePassword string `json:"rescue_password"`
	}
	consoleModeParams struct {
		NodeID  string `json:"node_id"`
		Enabled bool   `json:"enabled"`
	}
	portObjParams struct {
		PortObj *model.Port `json:"port_obj"`
	}
	portParams struct {
		Port *model.Port `json:"port"`
	}
	portgroupObjParams struct {
		PortgroupObj *model.Portgroup `json:"portgroup_obj"`
	}
	portgroupParams struct {
		Portgroup *model.Portgroup `json:"portgroup"`
	}
	portgroupPhysnetParams struct {
		Portgroup          *model.Portgroup `json:"portgroup"`
		NewPhysicalNetwork string           `json:"new_physical_network"`
	}
	bootDeviceParams struct {
		NodeID     string `json:"node_id"`
		Device     string `json:"device"`
		Persistent bool   `json:"persistent" rpc:"optional"`
	}
	setIndicatorParams struct {
		NodeID    string `json:"node_id"`
		Component string `json:"component"`
		Indicator string `json:"indicator"`
		State     string `json:"state"`
	}
	getIndicatorParams struct {
		NodeID    string `json:"node_id"`
		Component string `json:"component"`
		Indicator string `json:"indicator"`
	}
	supportedIndicatorsParams struct {
		NodeID string `json:"node_id"`
		// Component is None (null) for all components.
		Component *string `json:"component" rpc:"optional"`
	}
	raidConfigParams struct {
		NodeID           string         `json:"node_id"`
		TargetRAIDConfig map[string]any `json:"target_raid_config"`
	}
	detachVmediaParams struct {
		NodeID      string   `json:"node_id"`
		DeviceTypes []string `json:"device_types" rpc:"optional"`
	}
	inspectionParams struct {
		NodeID     string         `json:"node_id"`
		Inventory  map[string]any `json:"inventory"`
		PluginData map[string]any `json:"plugin_data" rpc:"optional"`
	}
	backportParams struct {
		ObjInst        any               `json:"objinst"`
		ObjectVersions map[string]string `json:"object_versions"`
	}
	connectorParams struct {
		Connector *model.VolumeConnector `json:"connector"`
	}
	targetParams struct {
		Target *model.VolumeTarget `json:"target"`
	}
	vifAttachParams struct {
		NodeID  string         `json:"node_id"`
		VifInfo map[string]any `json:"vif_info"`
	}
	vifDetachParams struct {
		NodeID string `json:"node_id"`
		VifID  string `json:"vif_id"`
	}
	addTraitsParams struct {
		NodeID  string   `json:"node_id"`
		Traits  []string `json:"traits"`
		Replace bool     `json:"replace" rpc:"optional"`
	}
	removeTraitsParams struct {
		NodeID string   `json:"node_id"`
		Traits []string `json:"traits"`
	}
	allocationParams struct {
		Allocation *model.Allocation `json:"allocation"`
	}
)

// methodList is every conductor RPC method the server answers. The topic
// handed to the conductor is "": the request already reached it.
var methodList = []*method{
	def("create_node", func(ctx context.Context, h rpc.ConductorAPI, p *nodeObjParams) (any, error) {
		return h.CreateNode(ctx, "", p.NodeObj)
	}),
	def("update_node", func(ctx context.Context, h rpc.ConductorAPI, p *updateNodeParams) (any, error) {
		return h.UpdateNode(ctx, "", p.NodeID, p.NodeUpdate, p.ResetInterfaces)
	}),
	def("destroy_node", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return none(h.DestroyNode(ctx, "", p.NodeID))
	}),
	def("validate_driver_interfaces", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return h.ValidateDriverInterfaces(ctx, "", p.NodeID)
	}),
	def("change_node_power_state", func(ctx context.Context, h rpc.ConductorAPI, p *powerStateParams) (any, error) {
		timeout := 0
		if p.Timeout != nil {
			timeout = *p.Timeout
		}
		return none(h.ChangeNodePowerState(ctx, "", p.NodeID, p.NewState, timeout))
	}),
	def("change_node_boot_mode", func(ctx context.Context, h rpc.ConductorAPI, p *bootModeParams) (any, error) {
		return none(h.ChangeNodeBootMode(ctx, "", p.NodeID, p.NewState))
	}),
	def("change_node_secure_boot", func(ctx context.Context, h rpc.ConductorAPI, p *secureBootParams) (any, error) {
		return none(h.ChangeNodeSecureBoot(ctx, "", p.NodeID, p.NewState))
	}),
	def("vendor_passthru", func(ctx context.Context, h rpc.ConductorAPI, p *rpc.VendorPassthruArgs) (any, error) {
		return h.VendorPassthru(ctx, "", *p)
	}),
	def("driver_vendor_passthru", func(ctx context.Context, h rpc.ConductorAPI, p *rpc.DriverVendorPassthruArgs) (any, error) {
		return h.DriverVendorPassthru(ctx, "", *p)
	}),
	def("get_node_vendor_passthru_methods", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return h.GetNodeVendorPassthruMethods(ctx, "", p.NodeID)
	}),
	def("get_driver_vendor_passthru_methods", func(ctx context.Context, h rpc.ConductorAPI, p *driverNameParams) (any, error) {
		return h.GetDriverVendorPassthruMethods(ctx, "", p.DriverName)
	}),
	def("do_node_deploy", func(ctx context.Context, h rpc.ConductorAPI, p *deployParams) (any, error) {
		return none(h.DoNodeDeploy(ctx, "", p.NodeID, p.Rebuild, p.Configdrive, p.DeploySteps))
	}),
	def("do_node_tear_down", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return none(h.DoNodeTearDown(ctx, "", p.NodeID))
	}),
	def("do_provisioning_action", func(ctx context.Context, h rpc.ConductorAPI, p *provisioningActionParams) (any, error) {
		return none(h.DoProvisioningAction(ctx, "", p.NodeID, p.Action))
	}),
	def("do_node_clean", func(ctx context.Context, h rpc.ConductorAPI, p *cleanParams) (any, error) {
		return none(h.DoNodeClean(ctx, "", p.NodeID, p.CleanSteps, p.DisableRamdisk))
	}),
	def("do_node_service", func(ctx context.Context, h rpc.ConductorAPI, p *serviceParams) (any, error) {
		return none(h.DoNodeService(ctx, "", p.NodeID, p.ServiceSteps, p.DisableRamdisk))
	}),
	def("do_node_rescue", func(ctx context.Context, h rpc.ConductorAPI, p *rescueParams) (any, error) {
		return none(h.DoNodeRescue(ctx, "", p.NodeID, p.RescuePassword))
	}),
	def("do_node_unrescue", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return none(h.DoNodeUnrescue(ctx, "", p.NodeID))
	}),
	def("inspect_hardware", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return none(h.InspectHardware(ctx, "", p.NodeID))
	}),
	def("continue_node_clean", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return none(h.ContinueNodeClean(ctx, "", p.NodeID))
	}),
	def("continue_node_deploy", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return none(h.ContinueNodeDeploy(ctx, "", p.NodeID))
	}),
	def("continue_node_service", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return none(h.ContinueNodeService(ctx, "", p.NodeID))
	}),
	def("get_console_information", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return h.GetConsoleInformation(ctx, "", p.NodeID)
	}),
	def("set_console_mode", func(ctx context.Context, h rpc.ConductorAPI, p *consoleModeParams) (any, error) {
		return none(h.SetConsoleMode(ctx, "", p.NodeID, p.Enabled))
	}),
	def("create_port", func(ctx context.Context, h rpc.ConductorAPI, p *portObjParams) (any, error) {
		return h.CreatePort(ctx, "", p.PortObj)
	}),
	def("update_port", func(ctx context.Context, h rpc.ConductorAPI, p *portObjParams) (any, error) {
		return h.UpdatePort(ctx, "", p.PortObj)
	}),
	def("destroy_port", func(ctx context.Context, h rpc.ConductorAPI, p *portParams) (any, error) {
		return none(h.DestroyPort(ctx, "", p.Port))
	}),
	def("update_portgroup", func(ctx context.Context, h rpc.ConductorAPI, p *portgroupObjParams) (any, error) {
		return h.UpdatePortgroup(ctx, "", p.PortgroupObj)
	}),
	def("destroy_portgroup", func(ctx context.Context, h rpc.ConductorAPI, p *portgroupParams) (any, error) {
		return none(h.DestroyPortgroup(ctx, "", p.Portgroup))
	}),
	def("update_portgroup_physical_network", func(ctx context.Context, h rpc.ConductorAPI, p *portgroupPhysnetParams) (any, error) {
		return none(h.UpdatePortgroupPhysicalNetwork(ctx, "", p.Portgroup, p.NewPhysicalNetwork))
	}),
	def("get_driver_properties", func(ctx context.Context, h rpc.ConductorAPI, p *driverNameParams) (any, error) {
		return h.GetDriverProperties(ctx, "", p.DriverName)
	}),
	def("get_raid_logical_disk_properties", func(ctx context.Context, h rpc.ConductorAPI, p *driverNameParams) (any, error) {
		return h.GetRAIDLogicalDiskProperties(ctx, "", p.DriverName)
	}),
	def("set_boot_device", func(ctx context.Context, h rpc.ConductorAPI, p *bootDeviceParams) (any, error) {
		return none(h.SetBootDevice(ctx, "", p.NodeID, p.Device, p.Persistent))
	}),
	def("get_boot_device", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return h.GetBootDevice(ctx, "", p.NodeID)
	}),
	def("get_supported_boot_devices", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return h.GetSupportedBootDevices(ctx, "", p.NodeID)
	}),
	def("inject_nmi", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return none(h.InjectNMI(ctx, "", p.NodeID))
	}),
	def("set_indicator_state", func(ctx context.Context, h rpc.ConductorAPI, p *setIndicatorParams) (any, error) {
		return none(h.SetIndicatorState(ctx, "", p.NodeID, p.Component, p.Indicator, p.State))
	}),
	def("get_indicator_state", func(ctx context.Context, h rpc.ConductorAPI, p *getIndicatorParams) (any, error) {
		return h.GetIndicatorState(ctx, "", p.NodeID, p.Component, p.Indicator)
	}),
	def("get_supported_indicators", func(ctx context.Context, h rpc.ConductorAPI, p *supportedIndicatorsParams) (any, error) {
		component := ""
		if p.Component != nil {
			component = *p.Component
		}
		return h.GetSupportedIndicators(ctx, "", p.NodeID, component)
	}),
	def("set_target_raid_config", func(ctx context.Context, h rpc.ConductorAPI, p *raidConfigParams) (any, error) {
		return none(h.SetTargetRAIDConfig(ctx, "", p.NodeID, p.TargetRAIDConfig))
	}),
	def("attach_virtual_media", func(ctx context.Context, h rpc.ConductorAPI, p *rpc.AttachVirtualMediaArgs) (any, error) {
		return none(h.AttachVirtualMedia(ctx, "", *p))
	}),
	def("detach_virtual_media", func(ctx context.Context, h rpc.ConductorAPI, p *detachVmediaParams) (any, error) {
		return none(h.DetachVirtualMedia(ctx, "", p.NodeID, p.DeviceTypes))
	}),
	def("get_virtual_media", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return h.GetVirtualMedia(ctx, "", p.NodeID)
	}),
	def("heartbeat", func(ctx context.Context, h rpc.ConductorAPI, p *rpc.HeartbeatArgs) (any, error) {
		return none(h.Heartbeat(ctx, "", *p))
	}),
	def("get_node_with_token", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return h.GetNodeWithToken(ctx, "", p.NodeID)
	}),
	def("continue_inspection", func(ctx context.Context, h rpc.ConductorAPI, p *inspectionParams) (any, error) {
		return none(h.ContinueInspection(ctx, "", p.NodeID, p.Inventory, p.PluginData))
	}),
	def("object_class_action_versions", func(ctx context.Context, h rpc.ConductorAPI, p *rpc.ObjectClassActionVersionsArgs) (any, error) {
		return h.ObjectClassActionVersions(ctx, "", *p)
	}),
	def("object_action", func(ctx context.Context, h rpc.ConductorAPI, p *rpc.ObjectActionArgs) (any, error) {
		return h.ObjectAction(ctx, "", *p)
	}),
	def("object_backport_versions", func(ctx context.Context, h rpc.ConductorAPI, p *backportParams) (any, error) {
		return h.ObjectBackportVersions(ctx, "", p.ObjInst, p.ObjectVersions)
	}),
	def("update_volume_connector", func(ctx context.Context, h rpc.ConductorAPI, p *connectorParams) (any, error) {
		return h.UpdateVolumeConnector(ctx, "", p.Connector)
	}),
	def("destroy_volume_connector", func(ctx context.Context, h rpc.ConductorAPI, p *connectorParams) (any, error) {
		return none(h.DestroyVolumeConnector(ctx, "", p.Connector))
	}),
	def("update_volume_target", func(ctx context.Context, h rpc.ConductorAPI, p *targetParams) (any, error) {
		return h.UpdateVolumeTarget(ctx, "", p.Target)
	}),
	def("destroy_volume_target", func(ctx context.Context, h rpc.ConductorAPI, p *targetParams) (any, error) {
		return none(h.DestroyVolumeTarget(ctx, "", p.Target))
	}),
	def("vif_attach", func(ctx context.Context, h rpc.ConductorAPI, p *vifAttachParams) (any, error) {
		return none(h.VifAttach(ctx, "", p.NodeID, p.VifInfo))
	}),
	def("vif_detach", func(ctx context.Context, h rpc.ConductorAPI, p *vifDetachParams) (any, error) {
		return none(h.VifDetach(ctx, "", p.NodeID, p.VifID))
	}),
	def("vif_list", func(ctx context.Context, h rpc.ConductorAPI, p *nodeIDParams) (any, error) {
		return h.VifList(ctx, "", p.NodeID)
	}),
	def("add_node_traits", func(ctx context.Context, h rpc.ConductorAPI, p *addTraitsParams) (any, error) {
		return none(h.AddNodeTraits(ctx, "", p.NodeID, p.Traits, p.Replace))
	}),
	def("remove_node_traits", func(ctx context.Context, h rpc.ConductorAPI, p *removeTraitsParams) (any, error) {
		return none(h.RemoveNodeTraits(ctx, "", p.NodeID, p.Traits))
	}),
	def("create_allocation", func(ctx context.Context, h rpc.ConductorAPI, p *allocationParams) (any, error) {
		return h.CreateAllocation(ctx, "", p.Allocation)
	}),
	def("destroy_allocation", func(ctx context.Context, h rpc.ConductorAPI, p *allocationParams) (any, error) {
		return none(h.DestroyAllocation(ctx, "", p.Allocation))
	}),
}

// methods indexes methodList by name.
var methods = func() map[string]*method {
	m := make(map[string]*method, len(methodList))
	for _, x := range methodList {
		if _, dup := m[x.name]; dup {
			panic("jsonrpc: method " + x.name + " declared twice")
		}
		m[x.name] = x
	}
	return m
}()

// kwarg is one keyword argument of a method's wire struct.
type kwarg struct {
	name     string
	required bool
}

// kwargs lists the keyword arguments of params, following embedded
// structs as encoding/json does.
func kwargs(t reflect.Type) []kwarg {
	var out []kwarg
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			out = append(out, kwargs(f.Type)...)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		optional := strings.Contains(","+opts+",", ",omitempty,") || f.Tag.Get("rpc") == "optional"
		out = append(out, kwarg{name: name, required: !optional})
	}
	return out
}
