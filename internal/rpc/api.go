// Package rpc is the boundary between the API and the conductors: the
// ConductorAPI interface (upstream's ironic/conductor/rpcapi.py, RPC API
// version 1.62, one Go method per RPC method with upstream's arguments),
// the choice of the conductor a call goes to (Router, over the hash rings
// of package ringmgr) and the in-process transport used by the
// all-in-one process. The JSON-RPC transport is package jsonrpc.
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

// ConductorAPI is every RPC call the API makes to a conductor. Errors are
// *errs.Error values whose class survives every transport, so the API
// answers the status upstream would.
type ConductorAPI interface {
	// Nodes.
	CreateNode(ctx context.Context, topic string, node *model.Node) (*model.Node, error)
	// UpdateNode applies upd to the node under its exclusive lock and
	// returns the node as saved; a failed condition of upd is the class
	// errs.ClassNodeChanged.
	UpdateNode(ctx context.Context, topic, nodeID string, upd *model.NodeUpdate, resetInterfaces bool) (*model.Node, error)
	DestroyNode(ctx context.Context, topic, nodeID string) error
	ValidateDriverInterfaces(ctx context.Context, topic, nodeID string) (map[string]InterfaceValidation, error)

	// Power, boot mode, secure boot. A timeout of 0 is upstream's None
	// (the conductor's default).
	ChangeNodePowerState(ctx context.Context, topic, nodeID, newState string, timeout int) error
	ChangeNodeBootMode(ctx context.Context, topic, nodeID, newState string) error
	ChangeNodeSecureBoot(ctx context.Context, topic, nodeID string, newState bool) error

	// Vendor passthru.
	VendorPassthru(ctx context.Context, topic string, args VendorPassthruArgs) (*VendorPassthruResult, error)
	DriverVendorPassthru(ctx context.Context, topic string, args DriverVendorPassthruArgs) (*VendorPassthruResult, error)
	GetNodeVendorPassthruMethods(ctx context.Context, topic, nodeID string) (map[string]map[string]any, error)
	GetDriverVendorPassthruMethods(ctx context.Context, topic, driverName string) (map[string]map[string]any, error)

	// Provisioning. configdrive is a string (gzipped, base64) or an
	// object; deploySteps, cleanSteps and serviceSteps are step dicts.
	DoNodeDeploy(ctx context.Context, topic, nodeID string, rebuild bool, configdrive any, deploySteps []map[string]any) error
	DoNodeTearDown(ctx context.Context, topic, nodeID string) error
	DoProvisioningAction(ctx context.Context, topic, nodeID, action string) error
	DoNodeClean(ctx context.Context, topic, nodeID string, cleanSteps []map[string]any, disableRamdisk bool) error
	DoNodeService(ctx context.Context, topic, nodeID string, serviceSteps []map[string]any, disableRamdisk bool) error
	DoNodeRescue(ctx context.Context, topic, nodeID, rescuePassword string) error
	DoNodeUnrescue(ctx context.Context, topic, nodeID string) error
	InspectHardware(ctx context.Context, topic, nodeID string) error
	// The three continue calls are casts: they report no conductor error.
	ContinueNodeClean(ctx context.Context, topic, nodeID string) error
	ContinueNodeDeploy(ctx context.Context, topic, nodeID string) error
	ContinueNodeService(ctx context.Context, topic, nodeID string) error

	// Console.
	GetConsoleInformation(ctx context.Context, topic, nodeID string) (map[string]any, error)
	SetConsoleMode(ctx context.Context, topic, nodeID string, enabled bool) error

	// Ports and portgroups.
	CreatePort(ctx context.Context, topic string, port *model.Port) (*model.Port, error)
	UpdatePort(ctx context.Context, topic string, port *model.Port) (*model.Port, error)
	DestroyPort(ctx context.Context, topic string, port *model.Port) error
	UpdatePortgroup(ctx context.Context, topic string, portgroup *model.Portgroup) (*model.Portgroup, error)
	DestroyPortgroup(ctx context.Context, topic string, portgroup *model.Portgroup) error
	UpdatePortgroupPhysicalNetwork(ctx context.Context, topic string, portgroup *model.Portgroup, newPhysicalNetwork string) error

	// Drivers.
	GetDriverProperties(ctx context.Context, topic, driverName string) (map[string]string, error)
	GetRAIDLogicalDiskProperties(ctx context.Context, topic, driverName string) (map[string]string, error)

	// Management.
	SetBootDevice(ctx context.Context, topic, nodeID, device string, persistent bool) error
	GetBootDevice(ctx context.Context, topic, nodeID string) (*BootDevice, error)
	GetSupportedBootDevices(ctx context.Context, topic, nodeID string) ([]string, error)
	InjectNMI(ctx context.Context, topic, nodeID string) error
	SetIndicatorState(ctx context.Context, topic, nodeID, component, indicator, state string) error
	GetIndicatorState(ctx context.Context, topic, nodeID, component, indicator string) (string, error)
	// GetSupportedIndicators lists all components when component is "".
	GetSupportedIndicators(ctx context.Context, topic, nodeID, component string) (map[string]any, error)
	SetTargetRAIDConfig(ctx context.Context, topic, nodeID string, targetRAIDConfig map[string]any) error
	AttachVirtualMedia(ctx context.Context, topic string, args AttachVirtualMediaArgs) error
	// DetachVirtualMedia detaches every device when deviceTypes is nil.
	DetachVirtualMedia(ctx context.Context, topic, nodeID string, deviceTypes []string) error
	GetVirtualMedia(ctx context.Context, topic, nodeID string) (map[string]any, error)

	// The ramdisk agent and inspection.
	Heartbeat(ctx context.Context, topic string, args HeartbeatArgs) error
	GetNodeWithToken(ctx context.Context, topic, nodeID string) (*model.Node, error)
	// ContinueInspection takes a nil pluginData as upstream's None.
	ContinueInspection(ctx context.Context, topic, nodeID string, inventory, pluginData map[string]any) error

	// Versioned objects indirection (upstream's object_* calls); the
	// payloads are upstream's serialised objects, passed through as is.
	ObjectClassActionVersions(ctx context.Context, topic string, args ObjectClassActionVersionsArgs) (any, error)
	ObjectAction(ctx context.Context, topic string, args ObjectActionArgs) (any, error)
	ObjectBackportVersions(ctx context.Context, topic string, objinst any, objectVersions map[string]string) (any, error)

	// Volumes.
	UpdateVolumeConnector(ctx context.Context, topic string, connector *model.VolumeConnector) (*model.VolumeConnector, error)
	DestroyVolumeConnector(ctx context.Context, topic string, connector *model.VolumeConnector) error
	UpdateVolumeTarget(ctx context.Context, topic string, target *model.VolumeTarget) (*model.VolumeTarget, error)
	DestroyVolumeTarget(ctx context.Context, topic string, target *model.VolumeTarget) error

	// VIFs. vifInfo must hold an "id".
	VifAttach(ctx context.Context, topic, nodeID string, vifInfo map[string]any) error
	VifDetach(ctx context.Context, topic, nodeID, vifID string) error
	VifList(ctx context.Context, topic, nodeID string) ([]map[string]any, error)

	// Traits. RemoveNodeTraits removes every trait when traits is nil.
	AddNodeTraits(ctx context.Context, topic, nodeID string, traits []string, replace bool) error
	RemoveNodeTraits(ctx context.Context, topic, nodeID string, traits []string) error

	// Allocations.
	CreateAllocation(ctx context.Context, topic string, allocation *model.Allocation) (*model.Allocation, error)
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
