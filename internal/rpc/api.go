// Package rpc is the boundary between the API and the conductors: the
// ConductorAPI interface (upstream's ironic/conductor/rpcapi.py, RPC API
// version 1.62, one Go method per RPC method with upstream's arguments),
// the choice of the conductor a call goes to (Router, over the hash rings
// of package ringmgr) and the in-process transport used by the
// all-in-one process. The JSON-RPC transport is package jsonrpc.
//
// Arguments and results that are model objects (nodes, ports…) travel as
// upstream's serialised versioned objects, down-levelled to the versions
// of [DEFAULT]/pin_release_version (package ovo), on every transport.
//
// Every method takes the topic the caller chose with the Router first,
// as upstream's methods take topic=; an implementation of the conductor
// ignores it, a transport uses it to address the conductor.
package rpc

import (
	"context"

	"github.com/openkeel/ironic/internal/model"
)

// APIVersion is the conductor RPC API version upstream's 2026.2 speaks.
const APIVersion = "1.62"

//go:generate go run ./gen

// ConductorAPI is every RPC call the API makes to a conductor. Errors are
// *errs.Error values whose class survives every transport, so the API
// answers the status upstream would.
//
// This interface is the one definition of the RPC surface: each method's
// //rpc:call or //rpc:cast line gives upstream's method name, the RPC
// version upstream's client sends and the kwarg of each argument
// (internal/rpc/gen/parse.go describes the flags), and go generate writes
// from it the JSON-RPC client and server table (jsonrpc/*_gen.go), the
// in-process transport's casts and wire re-encoding (local_gen.go) and
// the round-trip fake (jsonrpc/fake_gen_test.go).
type ConductorAPI interface {
	// Nodes.
	//rpc:call create_node 1.36 node_obj,new
	CreateNode(ctx context.Context, topic string, node *model.Node) (*model.Node, error)
	// UpdateNode applies upd to the node under its exclusive lock and
	// returns the node as saved; a failed condition of upd is the class
	// errs.ClassNodeChanged. Upstream's update_node sends the whole node
	// object with its changed fields (node_obj); ours sends the node's id
	// and the edits, so that the conductor applies them to the node as
	// read under its lock. Under a pinned release, whose conductors may be
	// upstream's, the client sends upstream's form; a server takes both,
	// upstream's as unconditional edits of the changed fields.
	//rpc:call update_node 1.1 node_id node_update reset_interfaces,optional adapt=node_obj
	UpdateNode(ctx context.Context, topic, nodeID string, upd *model.NodeUpdate, resetInterfaces bool) (*model.Node, error)
	//rpc:call destroy_node 1.9 node_id
	DestroyNode(ctx context.Context, topic, nodeID string) error
	//rpc:call validate_driver_interfaces 1.5 node_id
	ValidateDriverInterfaces(ctx context.Context, topic, nodeID string) (map[string]InterfaceValidation, error)

	// Power, boot mode, secure boot. A timeout of 0 is upstream's None
	// (the conductor's default).
	//rpc:call change_node_power_state 1.39 node_id new_state timeout,none
	ChangeNodePowerState(ctx context.Context, topic, nodeID, newState string, timeout int) error
	//rpc:call change_node_boot_mode 1.55 node_id new_state
	ChangeNodeBootMode(ctx context.Context, topic, nodeID, newState string) error
	//rpc:call change_node_secure_boot 1.55 node_id new_state
	ChangeNodeSecureBoot(ctx context.Context, topic, nodeID string, newState bool) error

	// Vendor passthru.
	//rpc:call vendor_passthru 1.20 *,wire
	VendorPassthru(ctx context.Context, topic string, args VendorPassthruArgs) (*VendorPassthruResult, error)
	//rpc:call driver_vendor_passthru 1.20 *,wire
	DriverVendorPassthru(ctx context.Context, topic string, args DriverVendorPassthruArgs) (*VendorPassthruResult, error)
	//rpc:call get_node_vendor_passthru_methods 1.21 node_id
	GetNodeVendorPassthruMethods(ctx context.Context, topic, nodeID string) (map[string]map[string]any, error)
	//rpc:call get_driver_vendor_passthru_methods 1.21 driver_name
	GetDriverVendorPassthruMethods(ctx context.Context, topic, driverName string) (map[string]map[string]any, error)

	// Provisioning. configdrive is a string (gzipped, base64) or an
	// object; deploySteps, cleanSteps and serviceSteps are step dicts.
	//rpc:call do_node_deploy 1.22 node_id rebuild,optional configdrive,optional,wire deploy_steps,since=1.52,wire
	DoNodeDeploy(ctx context.Context, topic, nodeID string, rebuild bool, configdrive any, deploySteps []map[string]any) error
	//rpc:call do_node_tear_down 1.6 node_id
	DoNodeTearDown(ctx context.Context, topic, nodeID string) error
	//rpc:call do_provisioning_action 1.23 node_id action
	DoProvisioningAction(ctx context.Context, topic, nodeID, action string) error
	//rpc:call do_node_clean 1.53 node_id clean_steps,wire disable_ramdisk,optional
	DoNodeClean(ctx context.Context, topic, nodeID string, cleanSteps []map[string]any, disableRamdisk bool) error
	//rpc:call do_node_service 1.57 node_id service_steps,wire disable_ramdisk,optional
	DoNodeService(ctx context.Context, topic, nodeID string, serviceSteps []map[string]any, disableRamdisk bool) error
	//rpc:call do_node_rescue 1.43 node_id rescue_password
	DoNodeRescue(ctx context.Context, topic, nodeID, rescuePassword string) error
	//rpc:call do_node_unrescue 1.43 node_id
	DoNodeUnrescue(ctx context.Context, topic, nodeID string) error
	//rpc:call inspect_hardware 1.24 node_id
	InspectHardware(ctx context.Context, topic, nodeID string) error
	// The three continue calls are casts: they report no conductor error.
	//rpc:cast continue_node_clean 1.27 node_id
	ContinueNodeClean(ctx context.Context, topic, nodeID string) error
	//rpc:cast continue_node_deploy 1.45 node_id
	ContinueNodeDeploy(ctx context.Context, topic, nodeID string) error
	//rpc:cast continue_node_service 1.60 node_id
	ContinueNodeService(ctx context.Context, topic, nodeID string) error

	// Console.
	//rpc:call get_console_information 1.11 node_id
	GetConsoleInformation(ctx context.Context, topic, nodeID string) (map[string]any, error)
	//rpc:call set_console_mode 1.11 node_id enabled
	SetConsoleMode(ctx context.Context, topic, nodeID string, enabled bool) error

	// Ports and portgroups.
	//rpc:call create_port 1.41 port_obj,new
	CreatePort(ctx context.Context, topic string, port *model.Port) (*model.Port, error)
	//rpc:call update_port 1.13 port_obj,diff
	UpdatePort(ctx context.Context, topic string, port *model.Port) (*model.Port, error)
	//rpc:call destroy_port 1.25 port
	DestroyPort(ctx context.Context, topic string, port *model.Port) error
	//rpc:call update_portgroup 1.33 portgroup_obj,diff
	UpdatePortgroup(ctx context.Context, topic string, portgroup *model.Portgroup) (*model.Portgroup, error)
	//rpc:call destroy_portgroup 1.33 portgroup
	DestroyPortgroup(ctx context.Context, topic string, portgroup *model.Portgroup) error
	//rpc:call update_portgroup_physical_network 1.62 portgroup new_physical_network
	UpdatePortgroupPhysicalNetwork(ctx context.Context, topic string, portgroup *model.Portgroup, newPhysicalNetwork string) error

	// Drivers.
	//rpc:call get_driver_properties 1.16 driver_name
	GetDriverProperties(ctx context.Context, topic, driverName string) (map[string]string, error)
	//rpc:call get_raid_logical_disk_properties 1.30 driver_name
	GetRAIDLogicalDiskProperties(ctx context.Context, topic, driverName string) (map[string]string, error)

	// Management.
	//rpc:call set_boot_device 1.17 node_id device persistent,optional
	SetBootDevice(ctx context.Context, topic, nodeID, device string, persistent bool) error
	//rpc:call get_boot_device 1.17 node_id
	GetBootDevice(ctx context.Context, topic, nodeID string) (*BootDevice, error)
	//rpc:call get_supported_boot_devices 1.17 node_id
	GetSupportedBootDevices(ctx context.Context, topic, nodeID string) ([]string, error)
	//rpc:call inject_nmi 1.40 node_id
	InjectNMI(ctx context.Context, topic, nodeID string) error
	//rpc:call set_indicator_state 1.50 node_id component indicator state
	SetIndicatorState(ctx context.Context, topic, nodeID, component, indicator, state string) error
	//rpc:call get_indicator_state 1.50 node_id component indicator
	GetIndicatorState(ctx context.Context, topic, nodeID, component, indicator string) (string, error)
	// GetSupportedIndicators lists all components when component is "".
	//rpc:call get_supported_indicators 1.50 node_id component,none
	GetSupportedIndicators(ctx context.Context, topic, nodeID, component string) (map[string]any, error)
	//rpc:call set_target_raid_config 1.30 node_id target_raid_config,wire
	SetTargetRAIDConfig(ctx context.Context, topic, nodeID string, targetRAIDConfig map[string]any) error
	//rpc:call attach_virtual_media 1.59 *
	AttachVirtualMedia(ctx context.Context, topic string, args AttachVirtualMediaArgs) error
	// DetachVirtualMedia detaches every device when deviceTypes is nil.
	//rpc:call detach_virtual_media 1.59 node_id device_types,optional
	DetachVirtualMedia(ctx context.Context, topic, nodeID string, deviceTypes []string) error
	//rpc:call get_virtual_media 1.61 node_id
	GetVirtualMedia(ctx context.Context, topic, nodeID string) (map[string]any, error)

	// The ramdisk agent and inspection.
	//rpc:call heartbeat 1.54 *
	Heartbeat(ctx context.Context, topic string, args HeartbeatArgs) error
	//rpc:call get_node_with_token 1.49 node_id
	GetNodeWithToken(ctx context.Context, topic, nodeID string) (*model.Node, error)
	// ContinueInspection takes a nil pluginData as upstream's None.
	//rpc:call continue_inspection 1.56 node_id inventory,wire plugin_data,optional,wire
	ContinueInspection(ctx context.Context, topic, nodeID string, inventory, pluginData map[string]any) error

	// Versioned objects indirection (upstream's object_* calls); the
	// payloads are upstream's serialised objects, passed through as is.
	//rpc:call object_class_action_versions 1.31 *
	ObjectClassActionVersions(ctx context.Context, topic string, args ObjectClassActionVersionsArgs) (any, error)
	//rpc:call object_action 1.31 *
	ObjectAction(ctx context.Context, topic string, args ObjectActionArgs) (any, error)
	//rpc:call object_backport_versions 1.31 objinst object_versions
	ObjectBackportVersions(ctx context.Context, topic string, objinst any, objectVersions map[string]string) (any, error)

	// Volumes.
	//rpc:call update_volume_connector 1.35 connector,diff
	UpdateVolumeConnector(ctx context.Context, topic string, connector *model.VolumeConnector) (*model.VolumeConnector, error)
	//rpc:call destroy_volume_connector 1.35 connector
	DestroyVolumeConnector(ctx context.Context, topic string, connector *model.VolumeConnector) error
	//rpc:call update_volume_target 1.37 target,diff
	UpdateVolumeTarget(ctx context.Context, topic string, target *model.VolumeTarget) (*model.VolumeTarget, error)
	//rpc:call destroy_volume_target 1.37 target
	DestroyVolumeTarget(ctx context.Context, topic string, target *model.VolumeTarget) error

	// VIFs. vifInfo must hold an "id".
	//rpc:call vif_attach 1.38 node_id vif_info,wire
	VifAttach(ctx context.Context, topic, nodeID string, vifInfo map[string]any) error
	//rpc:call vif_detach 1.38 node_id vif_id
	VifDetach(ctx context.Context, topic, nodeID, vifID string) error
	//rpc:call vif_list 1.38 node_id
	VifList(ctx context.Context, topic, nodeID string) ([]map[string]any, error)

	// Traits. RemoveNodeTraits removes every trait when traits is nil.
	//rpc:call add_node_traits 1.44 node_id traits replace,optional
	AddNodeTraits(ctx context.Context, topic, nodeID string, traits []string, replace bool) error
	//rpc:call remove_node_traits 1.44 node_id traits
	RemoveNodeTraits(ctx context.Context, topic, nodeID string, traits []string) error

	// Allocations.
	//rpc:call create_allocation 1.48 allocation,new
	CreateAllocation(ctx context.Context, topic string, allocation *model.Allocation) (*model.Allocation, error)
	//rpc:call destroy_allocation 1.48 allocation
	DestroyAllocation(ctx context.Context, topic string, allocation *model.Allocation) error
}

// InterfaceValidation is one entry of validate_driver_interfaces: whether
// the interface validated and, when it did not (or is not supported), why.
// Result is nil when upstream reports None.
type InterfaceValidation struct {
	Result *bool  `json:"result"`
	Reason string `json:"reason,omitempty"`
}

// VendorPassthruArgs are vendor_passthru's arguments.
type VendorPassthruArgs struct {
	NodeID       string         `json:"node_id"`
	DriverMethod string         `json:"driver_method"`
	HTTPMethod   string         `json:"http_method"`
	Info         map[string]any `json:"info"`
}

// DriverVendorPassthruArgs are driver_vendor_passthru's arguments.
type DriverVendorPassthruArgs struct {
	DriverName   string         `json:"driver_name"`
	DriverMethod string         `json:"driver_method"`
	HTTPMethod   string         `json:"http_method"`
	Info         map[string]any `json:"info"`
}

// VendorPassthruResult is what a vendor method answers: its return value,
// whether it ran asynchronously (Return is then nil) and whether the API
// sends Return as the raw response body (attach) instead of JSON.
type VendorPassthruResult struct {
	Return any  `json:"return"`
	Async  bool `json:"async"`
	Attach bool `json:"attach"`
}

// BootDevice is get_boot_device's answer; Persistent is nil when the
// driver cannot tell.
type BootDevice struct {
	BootDevice string `json:"boot_device"`
	Persistent *bool  `json:"persistent"`
}

// AttachVirtualMediaArgs are attach_virtual_media's arguments;
// ImageDownloadSource "" leaves the conductor's default ("local").
type AttachVirtualMediaArgs struct {
	NodeID              string `json:"node_id"`
	DeviceType          string `json:"device_type"`
	ImageURL            string `json:"image_url"`
	ImageDownloadSource string `json:"image_download_source,omitempty"`
}

// HeartbeatArgs are heartbeat's arguments (what the agent posted to
// /v1/heartbeat); "" stands for upstream's None in the optional ones. The
// rpc tag marks the kwargs a JSON-RPC server may go without.
type HeartbeatArgs struct {
	NodeID             string `json:"node_id"`
	CallbackURL        string `json:"callback_url"`
	AgentVersion       string `json:"agent_version" rpc:"optional"`
	AgentToken         string `json:"agent_token,omitempty"`
	AgentVerifyCA      string `json:"agent_verify_ca,omitempty"`
	AgentStatus        string `json:"agent_status,omitempty"`
	AgentStatusMessage string `json:"agent_status_message,omitempty"`
}

// ObjectClassActionVersionsArgs are object_class_action_versions'
// arguments.
type ObjectClassActionVersionsArgs struct {
	ObjName        string            `json:"objname"`
	ObjMethod      string            `json:"objmethod"`
	ObjectVersions map[string]string `json:"object_versions"`
	Args           []any             `json:"args"`
	Kwargs         map[string]any    `json:"kwargs"`
}

// ObjectActionArgs are object_action's arguments.
type ObjectActionArgs struct {
	ObjInst   any            `json:"objinst"`
	ObjMethod string         `json:"objmethod"`
	Args      []any          `json:"args"`
	Kwargs    map[string]any `json:"kwargs"`
}
