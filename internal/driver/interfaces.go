package driver

import (
	"context"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

// Interface is what every implementation provides, whatever its kind
// (upstream BaseInterface): its driver_info properties and its declared
// steps. Validation is per kind because the vendor kind validates a method.
type Interface interface {
	// Properties is upstream get_properties(): driver_info key → description.
	Properties() map[string]string
	// Steps declares the decorated step methods of the implementation.
	Steps() []StepSpec
}

// Validator is the validate(task) of every kind except vendor.
type Validator interface {
	Validate(ctx context.Context, task *Task) error
}

// PowerInterface controls the node's power (upstream PowerInterface).
type PowerInterface interface {
	Interface
	Validator
	GetPowerState(ctx context.Context, task *Task) (string, error)
	// SetPowerState moves the node to state; a zero timeout means the
	// implementation's default.
	SetPowerState(ctx context.Context, task *Task, state string, timeout time.Duration) error
	Reboot(ctx context.Context, task *Task, timeout time.Duration) error
	GetSupportedPowerStates(ctx context.Context, task *Task) ([]string, error)
}

// PowerSyncer is implemented by power interfaces that can opt out of the
// periodic power state sync (upstream supports_power_sync, default true).
type PowerSyncer interface {
	SupportsPowerSync(ctx context.Context, task *Task) bool
}

// BootDevice is the answer of get_boot_device: the device and whether it is
// persistent (nil when the BMC cannot tell).
type BootDevice struct {
	BootDevice string `json:"boot_device"`
	Persistent *bool  `json:"persistent"`
}

// ManagementInterface holds the abstract methods of upstream's
// ManagementInterface; everything upstream gives a raising default is an
// optional interface below, and callers answer ErrUnsupportedDriverExtension
// when the implementation lacks it.
type ManagementInterface interface {
	Interface
	Validator
	GetSupportedBootDevices(ctx context.Context, task *Task) ([]string, error)
	SetBootDevice(ctx context.Context, task *Task, device string, persistent bool) error
	GetBootDevice(ctx context.Context, task *Task) (BootDevice, error)
	GetSensorsData(ctx context.Context, task *Task) (map[string]any, error)
}

// BootModeManager reads and sets the boot mode (bios, uefi).
type BootModeManager interface {
	GetSupportedBootModes(ctx context.Context, task *Task) ([]string, error)
	SetBootMode(ctx context.Context, task *Task, mode string) error
	GetBootMode(ctx context.Context, task *Task) (string, error)
}

// SecureBootManager reads and sets UEFI secure boot.
type SecureBootManager interface {
	GetSecureBootState(ctx context.Context, task *Task) (bool, error)
	SetSecureBootState(ctx context.Context, task *Task, enabled bool) error
}

// NMIInjector injects a non-maskable interrupt.
type NMIInjector interface {
	InjectNMI(ctx context.Context, task *Task) error
}

// Indicator describes one indicator (LED) of a component.
type Indicator struct {
	ReadOnly bool     `json:"readonly"`
	States   []string `json:"states"`
}

// IndicatorLister lists indicators per component (component "" = all).
type IndicatorLister interface {
	GetSupportedIndicators(ctx context.Context, task *Task, component string) (map[string]map[string]Indicator, error)
}

// IndicatorGetter reads an indicator's state.
type IndicatorGetter interface {
	GetIndicatorState(ctx context.Context, task *Task, component, indicator string) (string, error)
}

// IndicatorSetter sets an indicator's state.
type IndicatorSetter interface {
	SetIndicatorState(ctx context.Context, task *Task, component, indicator, state string) error
}

// VendorDetector reports the hardware vendor.
type VendorDetector interface {
	DetectVendor(ctx context.Context, task *Task) (string, error)
}

// MACAddressLister reports the node's MAC addresses.
type MACAddressLister interface {
	GetMACAddresses(ctx context.Context, task *Task) ([]string, error)
}

// NodeHealthGetter reports the BMC's health rollup (OK, Warning, Critical).
type NodeHealthGetter interface {
	GetNodeHealth(ctx context.Context, task *Task) (string, error)
}

// VirtualMediaManager handles virtual media devices.
type VirtualMediaManager interface {
	GetVirtualMedia(ctx context.Context, task *Task) ([]map[string]any, error)
	AttachVirtualMedia(ctx context.Context, task *Task, deviceType, imageURL string) error
	DetachVirtualMedia(ctx context.Context, task *Task, deviceTypes []string) error
}

// BootInterface prepares what the node boots (upstream BootInterface).
type BootInterface interface {
	Interface
	Validator
	PrepareRamdisk(ctx context.Context, task *Task, ramdiskParams map[string]any) error
	CleanUpRamdisk(ctx context.Context, task *Task) error
	PrepareInstance(ctx context.Context, task *Task) error
	CleanUpInstance(ctx context.Context, task *Task) error
}

// RescueValidator is BootInterface.validate_rescue.
type RescueValidator interface {
	ValidateRescue(ctx context.Context, task *Task) error
}

// InspectionValidator is validate_inspection of the boot and network kinds.
type InspectionValidator interface {
	ValidateInspection(ctx context.Context, task *Task) error
}

// DeployInterface writes and removes the instance (upstream DeployInterface).
// Methods returning a string return "" or the provision state upstream's
// method returns (e.g. "deleted", "wait call-back").
type DeployInterface interface {
	Interface
	Validator
	Deploy(ctx context.Context, task *Task) (string, error)
	TearDown(ctx context.Context, task *Task) (string, error)
	Prepare(ctx context.Context, task *Task) error
	CleanUp(ctx context.Context, task *Task) error
	TakeOver(ctx context.Context, task *Task) error
}

// CleaningPreparer is prepare_cleaning / tear_down_cleaning (upstream
// defaults do nothing).
type CleaningPreparer interface {
	PrepareCleaning(ctx context.Context, task *Task) (string, error)
	TearDownCleaning(ctx context.Context, task *Task) error
}

// ServicePreparer is prepare_service / tear_down_service.
type ServicePreparer interface {
	PrepareService(ctx context.Context, task *Task) (string, error)
	TearDownService(ctx context.Context, task *Task) error
}

// Heartbeat is what the agent sends to /v1/heartbeat.
type Heartbeat struct {
	CallbackURL        string
	AgentVersion       string
	AgentVerifyCA      string
	AgentStatus        string
	AgentStatusMessage string
}

// Heartbeater records agent heartbeats (upstream's default only logs).
type Heartbeater interface {
	Heartbeat(ctx context.Context, task *Task, hb Heartbeat) error
}

// DeploySupporter reports whether the interface can deploy the node's image
// (used by autodetect; upstream default true).
type DeploySupporter interface {
	SupportsDeploy(ctx context.Context, task *Task) bool
}

// ConsoleInterface is the serial/graphical console (upstream ConsoleInterface).
type ConsoleInterface interface {
	Interface
	Validator
	StartConsole(ctx context.Context, task *Task) error
	StopConsole(ctx context.Context, task *Task) error
	GetConsole(ctx context.Context, task *Task) (map[string]any, error)
}

// ConsoleSessionExpirer is a console whose sessions expire (upstream's
// graphical consoles and their _expire_console_sessions periodic): the
// conductor stops, every ConsoleSessionInterval, the active sessions
// that have expired.
type ConsoleSessionExpirer interface {
	ConsoleSessionInterval() time.Duration
	// ConsoleSessionActive tells the nodes with a session of this
	// implementation.
	ConsoleSessionActive(n *model.Node) bool
	ConsoleSessionExpired(n *model.Node) bool
}

// RescueInterface boots the rescue ramdisk (upstream RescueInterface).
type RescueInterface interface {
	Interface
	Validator
	Rescue(ctx context.Context, task *Task) (string, error)
	Unrescue(ctx context.Context, task *Task) (string, error)
}

// RescueCleaner is RescueInterface.clean_up (upstream default does nothing).
type RescueCleaner interface {
	CleanUp(ctx context.Context, task *Task) error
}

// PassthruFunc runs a node vendor passthru method.
type PassthruFunc func(ctx context.Context, task *Task, httpMethod string, args map[string]any) (any, error)

// DriverPassthruFunc runs a driver (node-less) vendor passthru method.
type DriverPassthruFunc func(ctx context.Context, httpMethod string, args map[string]any) (any, error)

// PassthruRoute is the metadata of upstream's @passthru / @driver_passthru.
type PassthruRoute struct {
	HTTPMethods []string
	Async       bool
	Description string
	Attach      bool
	// RequireExclusiveLock applies to node passthru only.
	RequireExclusiveLock bool
	Func                 PassthruFunc
	DriverFunc           DriverPassthruFunc
}

// VendorInterface is upstream VendorInterface: validate takes the method
// being called and its arguments, and the routes are declared as data.
type VendorInterface interface {
	Interface
	Validate(ctx context.Context, task *Task, method string, args map[string]any) error
	// VendorRoutes are the node passthru methods by name.
	VendorRoutes() map[string]PassthruRoute
	// DriverRoutes are the driver passthru methods by name.
	DriverRoutes() map[string]PassthruRoute
}

// DriverValidator is VendorInterface.driver_validate (default accepts).
type DriverValidator interface {
	DriverValidate(ctx context.Context, method string, args map[string]any) error
}

// InspectInterface gathers hardware properties (upstream InspectInterface).
type InspectInterface interface {
	Interface
	Validator
	// InspectHardware returns the next provision state ("manageable",
	// "inspect wait", ...).
	InspectHardware(ctx context.Context, task *Task) (string, error)
}

// InspectAborter aborts a running inspection.
type InspectAborter interface {
	Abort(ctx context.Context, task *Task) error
}

// InspectionContinuer continues inspection with data the agent sent.
type InspectionContinuer interface {
	ContinueInspection(ctx context.Context, task *Task, inventory, pluginData map[string]any) (string, error)
}

// BIOSInterface manages BIOS settings (upstream BIOSInterface).
type BIOSInterface interface {
	Interface
	Validator
	ApplyConfiguration(ctx context.Context, task *Task, settings []map[string]any) (string, error)
	FactoryReset(ctx context.Context, task *Task) (string, error)
	CacheBIOSSettings(ctx context.Context, task *Task) error
}

// RAIDInterface manages RAID (upstream RAIDInterface).
type RAIDInterface interface {
	Interface
	Validator
	CreateConfiguration(ctx context.Context, task *Task, createRootVolume, createNonrootVolumes, deleteExisting bool) (string, error)
	DeleteConfiguration(ctx context.Context, task *Task) (string, error)
}

// RAIDConfigValidator is validate_raid_config.
type RAIDConfigValidator interface {
	ValidateRAIDConfig(ctx context.Context, task *Task, raidConfig map[string]any) error
}

// NetworkInterface attaches the node to networks (upstream NetworkInterface).
type NetworkInterface interface {
	Interface
	Validator
	PortChanged(ctx context.Context, task *Task, port *model.Port) error
	PortgroupChanged(ctx context.Context, task *Task, portgroup *model.Portgroup) error
	VifAttach(ctx context.Context, task *Task, vifInfo map[string]any) error
	VifDetach(ctx context.Context, task *Task, vifID string) error
	VifList(ctx context.Context, task *Task) ([]map[string]any, error)
	// GetCurrentVif returns the VIF bound to a port or portgroup, given its
	// internal_info ("" when none).
	GetCurrentVif(ctx context.Context, task *Task, internalInfo map[string]any) (string, error)
	AddProvisioningNetwork(ctx context.Context, task *Task) error
	RemoveProvisioningNetwork(ctx context.Context, task *Task) error
	ConfigureTenantNetworks(ctx context.Context, task *Task) error
	UnconfigureTenantNetworks(ctx context.Context, task *Task) error
	AddCleaningNetwork(ctx context.Context, task *Task) error
	RemoveCleaningNetwork(ctx context.Context, task *Task) error
}

// RescuingNetworker is the rescue network hooks (upstream defaults no-op).
type RescuingNetworker interface {
	ValidateRescue(ctx context.Context, task *Task) error
	AddRescuingNetwork(ctx context.Context, task *Task) error
	RemoveRescuingNetwork(ctx context.Context, task *Task) error
}

// InspectionNetworker is the inspection network hooks.
type InspectionNetworker interface {
	AddInspectionNetwork(ctx context.Context, task *Task) error
	RemoveInspectionNetwork(ctx context.Context, task *Task) error
}

// ServicingNetworker is the servicing network hooks.
type ServicingNetworker interface {
	AddServicingNetwork(ctx context.Context, task *Task) error
	RemoveServicingNetwork(ctx context.Context, task *Task) error
}

// StorageInterface attaches volumes (upstream StorageInterface).
type StorageInterface interface {
	Interface
	Validator
	AttachVolumes(ctx context.Context, task *Task) error
	DetachVolumes(ctx context.Context, task *Task) error
	ShouldWriteImage(ctx context.Context, task *Task) bool
}

// FirmwareInterface updates firmware (upstream FirmwareInterface).
type FirmwareInterface interface {
	Interface
	Validator
	Update(ctx context.Context, task *Task, settings []map[string]any) (string, error)
	CacheFirmwareComponents(ctx context.Context, task *Task) error
}

// implements reports whether impl satisfies the Go interface of kind.
func implements(kind Kind, impl Interface) bool {
	var ok bool
	switch kind {
	case KindBIOS:
		_, ok = impl.(BIOSInterface)
	case KindBoot:
		_, ok = impl.(BootInterface)
	case KindConsole:
		_, ok = impl.(ConsoleInterface)
	case KindDeploy:
		_, ok = impl.(DeployInterface)
	case KindFirmware:
		_, ok = impl.(FirmwareInterface)
	case KindInspect:
		_, ok = impl.(InspectInterface)
	case KindManagement:
		_, ok = impl.(ManagementInterface)
	case KindNetwork:
		_, ok = impl.(NetworkInterface)
	case KindPower:
		_, ok = impl.(PowerInterface)
	case KindRAID:
		_, ok = impl.(RAIDInterface)
	case KindRescue:
		_, ok = impl.(RescueInterface)
	case KindStorage:
		_, ok = impl.(StorageInterface)
	case KindVendor:
		_, ok = impl.(VendorInterface)
	}
	return ok
}

// NetworkPowerNeeder reports whether the network interface needs the node
// powered on to configure it (upstream need_power_on, default false).
type NetworkPowerNeeder interface {
	NeedPowerOn(ctx context.Context, task *Task) bool
}

// NetworkDataProvider gives the network configuration for the config drive
// (upstream get_node_network_data; the default is node.network_data).
type NetworkDataProvider interface {
	GetNodeNetworkData(ctx context.Context, task *Task) (map[string]any, error)
}

// InstanceNetworkMetadataGenerator is a network interface with upstream's
// "metadata" capability (flat and neutron): it can build the instance's
// network_data.json from the tenant VIFs of the node's ports and
// portgroups (configdrive_utils.generate_instance_network_data), so the
// conductor checks and fixes the network metadata of a config drive.
type InstanceNetworkMetadataGenerator interface {
	GenerateInstanceNetworkData(ctx context.Context, task *Task) (map[string]any, error)
}

// AsyncStepPoller is implemented by interfaces whose steps leave a job
// running on the BMC (RAID volumes, firmware updates) and return the wait
// state: the conductor polls them periodically, as upstream's
// @periodics.node_periodic tasks of those interfaces do, for the nodes in
// clean wait, deploy wait or service wait.
type AsyncStepPoller interface {
	// AsyncStepInterval is the period of the poll (upstream's spacing
	// option, e.g. [redfish]/raid_config_status_interval); 0 disables it.
	AsyncStepInterval() time.Duration
	// AsyncStepPending tells, from driver_internal_info, whether the node
	// has a job of this interface to follow (upstream's predicate).
	AsyncStepPending(n *model.Node) bool
	// PollAsyncStep checks the node's jobs under the exclusive lock and
	// may change driver_internal_info, which the conductor saves.
	// AsyncStepRunning leaves the step waiting; AsyncStepDone resumes the
	// flow with the next step; an error fails the step with its message
	// as last_error.
	PollAsyncStep(ctx context.Context, task *Task) (AsyncStepStatus, error)
}

// AsyncStepDiscarder is implemented by pollers whose jobs are dropped once
// the step failed, as upstream's _query_*_failed periodics do for nodes in
// clean/deploy/service failed and maintenance: the jobs must not carry on
// when the operator takes the node out of maintenance.
type AsyncStepDiscarder interface {
	// AsyncStepFailInterval is the period of the check (upstream's
	// raid_config_fail_interval, firmware_update_fail_interval); 0
	// disables it.
	AsyncStepFailInterval() time.Duration
	// DiscardAsyncStep forgets the node's jobs under the exclusive lock;
	// the conductor saves driver_internal_info.
	DiscardAsyncStep(ctx context.Context, task *Task) error
}

// AsyncStepStatus is what one poll of an asynchronous step found.
type AsyncStepStatus int

// The outcomes of a poll that did not fail.
const (
	AsyncStepRunning AsyncStepStatus = iota
	AsyncStepDone
)

// FirmwareComponentReader is a firmware interface that reads the node's
// firmware components and leaves storing them (firmware_information) to
// the conductor, as the driver layer has no store.
type FirmwareComponentReader interface {
	FirmwareComponents(ctx context.Context, task *Task) ([]model.FirmwareComponent, error)
}
