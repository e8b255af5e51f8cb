package model

import "time"

// Node is a row of the nodes table: one bare metal machine.
type Node struct {
	// ID is the internal primary key; never shown by the API.
	ID int64 `json:"id"`
	// UUID is the node's public identifier.
	UUID string `json:"uuid"`
	// CreatedAt is when the node was enrolled.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is the time of the last update, nil if never updated.
	UpdatedAt *time.Time `json:"updated_at"`
	// Version is the object version of the record as written (e.g. "1.41").
	Version string `json:"version,omitempty"`

	// Name is an optional unique, human-readable identifier.
	Name *string `json:"name"`
	// InstanceUUID identifies the workload (e.g. Nova instance) deployed on
	// the node; unique among nodes.
	InstanceUUID *string `json:"instance_uuid"`
	// InstanceName is the name of that workload.
	InstanceName *string `json:"instance_name"`
	// ChassisID references the chassis the node belongs to.
	ChassisID *int64 `json:"chassis_id"`

	// PowerState is the last known power state ("" = unknown, NULL).
	PowerState string `json:"power_state"`
	// TargetPowerState is the power state being moved to ("" = none).
	TargetPowerState string `json:"target_power_state"`
	// ProvisionState is the node's state in the provision state machine.
	ProvisionState string `json:"provision_state"`
	// TargetProvisionState is the stable state being moved to ("" = none).
	TargetProvisionState string `json:"target_provision_state"`
	// ProvisionUpdatedAt is when ProvisionState last changed.
	ProvisionUpdatedAt *time.Time `json:"provision_updated_at"`
	// LastError is the last error met while managing the node.
	LastError *string `json:"last_error"`

	// InstanceInfo holds deployment parameters (image_source, root_gb…).
	InstanceInfo map[string]any `json:"instance_info"`
	// Properties holds physical characteristics (cpus, memory_mb…).
	Properties map[string]any `json:"properties"`
	// Driver is the hardware type.
	Driver string `json:"driver"`
	// DriverInfo holds what the driver needs to reach the BMC; it carries
	// secrets.
	DriverInfo map[string]any `json:"driver_info"`
	// DriverInternalInfo is the conductor's private scratch space (agent
	// URL and token, step lists and indexes…).
	DriverInternalInfo map[string]any `json:"driver_internal_info"`
	// CleanStep is the clean step being executed, {} when none.
	CleanStep map[string]any `json:"clean_step"`
	// DeployStep is the deploy step being executed, {} when none.
	DeployStep map[string]any `json:"deploy_step"`
	// ServiceStep is the service step being executed, {} when none.
	ServiceStep map[string]any `json:"service_step"`
	// ResourceClass is the scheduling class (Placement CUSTOM_<class>).
	ResourceClass *string `json:"resource_class"`
	// RAIDConfig is the RAID configuration currently applied.
	RAIDConfig map[string]any `json:"raid_config"`
	// TargetRAIDConfig is the RAID configuration requested by the user.
	TargetRAIDConfig map[string]any `json:"target_raid_config"`

	// Reservation is the hostname of the conductor holding the node's
	// lock, nil when the node is not locked.
	Reservation *string `json:"reservation"`
	// ConductorAffinity is the id of the conductor that last deployed the
	// node, which keeps its PXE/HTTP files.
	ConductorAffinity *int64 `json:"conductor_affinity"`
	// ConductorGroup restricts the node to conductors of this group;
	// "" is the default group.
	ConductorGroup string `json:"conductor_group"`

	// Maintenance is true when the node is in maintenance mode.
	Maintenance bool `json:"maintenance"`
	// MaintenanceReason says why maintenance was set.
	MaintenanceReason *string `json:"maintenance_reason"`
	// Fault is set when Ironic itself put the node into maintenance
	// (power failure, clean failure, rescue abort failure, service failure).
	Fault *string `json:"fault"`
	// ConsoleEnabled is true when the serial console is enabled.
	ConsoleEnabled bool `json:"console_enabled"`
	// InspectionFinishedAt is when the last inspection finished.
	InspectionFinishedAt *time.Time `json:"inspection_finished_at"`
	// InspectionStartedAt is when the running inspection started.
	InspectionStartedAt *time.Time `json:"inspection_started_at"`
	// Extra is free-form user metadata.
	Extra map[string]any `json:"extra"`
	// AutomatedClean overrides [conductor]automated_clean for the node;
	// nil means "use the option".
	AutomatedClean *bool `json:"automated_clean"`
	// Protected forbids tearing down or rebuilding an active node.
	Protected bool `json:"protected"`
	// ProtectedReason says why the node is protected.
	ProtectedReason *string `json:"protected_reason"`
	// Owner is the project that owns the node.
	Owner *string `json:"owner"`
	// Lessee is the project the node is leased to.
	Lessee *string `json:"lessee"`
	// AllocationID references the allocation holding the node.
	AllocationID *int64 `json:"allocation_id"`
	// Description is free text about the node.
	Description *string `json:"description"`

	// The hardware interfaces in use ("" = not set, NULL).
	BIOSInterface       string `json:"bios_interface"`
	BootInterface       string `json:"boot_interface"`
	ConsoleInterface    string `json:"console_interface"`
	DeployInterface     string `json:"deploy_interface"`
	FirmwareInterface   string `json:"firmware_interface"`
	InspectInterface    string `json:"inspect_interface"`
	ManagementInterface string `json:"management_interface"`
	NetworkInterface    string `json:"network_interface"`
	PowerInterface      string `json:"power_interface"`
	RAIDInterface       string `json:"raid_interface"`
	RescueInterface     string `json:"rescue_interface"`
	StorageInterface    string `json:"storage_interface"`
	VendorInterface     string `json:"vendor_interface"`

	// Retired marks a node that will not be deployed again.
	Retired bool `json:"retired"`
	// RetiredReason says why the node was retired.
	RetiredReason *string `json:"retired_reason"`
	// NetworkData is static network configuration for the config drive.
	NetworkData map[string]any `json:"network_data"`
	// BootMode is the boot mode last read from the hardware (uefi, bios).
	BootMode *string `json:"boot_mode"`
	// SecureBoot is whether UEFI secure boot is on, nil when unknown.
	SecureBoot *bool `json:"secure_boot"`
	// Shard groups nodes for scaling out API consumers.
	Shard *string `json:"shard"`
	// ParentNode is the UUID of the node this one is a child of (e.g. a
	// DPU inside a server).
	ParentNode *string `json:"parent_node"`
	// DisablePowerOff keeps the node powered on through every operation.
	DisablePowerOff bool `json:"disable_power_off"`
	// Health is the health reported by the BMC (OK, Warning, Critical).
	Health *string `json:"health"`

	// Traits are the node's traits (node_traits rows), loaded with the node.
	Traits []string `json:"traits"`
	// Tags are the node's tags (node_tags rows), loaded with the node.
	Tags []string `json:"tags"`
}

// NodeTrait is a row of node_traits: a Placement trait of a node.
type NodeTrait struct {
	NodeID    int64      `json:"node_id"`
	Trait     string     `json:"trait"`
	Version   string     `json:"version,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
}

// NodeTag is a row of node_tags: a free-form tag of a node.
type NodeTag struct {
	NodeID    int64      `json:"node_id"`
	Tag       string     `json:"tag"`
	Version   string     `json:"version,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
}
