package model

import "time"

// NodeHistory is a row of node_history: an event or error recorded on a node.
type NodeHistory struct {
	ID        int64      `json:"id"`
	UUID      string     `json:"uuid"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	// Conductor is the host that recorded the event.
	Conductor *string `json:"conductor"`
	// EventType is the kind of event (provisioning, cleaning, console…).
	EventType *string `json:"event_type"`
	// Severity is ERROR, WARNING or INFO.
	Severity *string `json:"severity"`
	// Event is the message; upstream truncates it to 64 KiB.
	Event *string `json:"event"`
	// User is the user id that caused the event.
	User *string `json:"user"`
	// Project is the project id that caused the event.
	Project *string `json:"project"`
	// NodeID references the node.
	NodeID *int64 `json:"node_id"`
	// State is the provision state when the event was recorded.
	State *string `json:"state"`
	// TargetProvisionState is the target state at that moment.
	TargetProvisionState *string `json:"target_provision_state"`
	// DurationSeconds is how long the operation took, when known.
	DurationSeconds *int `json:"duration_seconds"`
}

// NodeInventory is a row of node_inventory: the inventory and plugin data
// stored by the last inspection.
type NodeInventory struct {
	ID            int64          `json:"id"`
	CreatedAt     time.Time      `json:"created_at"`
	UpdatedAt     *time.Time     `json:"updated_at"`
	Version       string         `json:"version,omitempty"`
	InventoryData map[string]any `json:"inventory_data"`
	PluginData    map[string]any `json:"plugin_data"`
	NodeID        *int64         `json:"node_id"`
}

// BIOSSetting is a row of bios_settings: one cached BIOS attribute of a node
// and its registry metadata.
type BIOSSetting struct {
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	NodeID int64 `json:"node_id"`
	// Name is the attribute name, unique per node.
	Name string `json:"name"`
	// Value is the current value as a string.
	Value *string `json:"value"`
	// AttributeType is Enumeration, String, Integer, Boolean or Password.
	AttributeType *string `json:"attribute_type"`
	// AllowableValues lists the values an Enumeration accepts.
	AllowableValues []string `json:"allowable_values"`
	// LowerBound is an Integer's minimum.
	LowerBound *int64 `json:"lower_bound"`
	// MaxLength is a String's maximum length.
	MaxLength *int `json:"max_length"`
	// MinLength is a String's minimum length.
	MinLength *int `json:"min_length"`
	// ReadOnly marks a setting that cannot be changed.
	ReadOnly *bool `json:"read_only"`
	// ResetRequired marks a setting that needs a reboot to apply.
	ResetRequired *bool `json:"reset_required"`
	// Unique marks a value unique to this machine (e.g. serial number).
	Unique *bool `json:"unique"`
	// UpperBound is an Integer's maximum.
	UpperBound *int64 `json:"upper_bound"`
}

// FirmwareComponent is a row of firmware_information: the firmware version
// of one component (bios, bmc, nic:…) of a node.
type FirmwareComponent struct {
	ID        int64      `json:"id"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	NodeID int64 `json:"node_id"`
	// Component names the component, unique per node.
	Component string `json:"component"`
	// InitialVersion is the version found when first read.
	InitialVersion string `json:"initial_version"`
	// CurrentVersion is the version running now.
	CurrentVersion *string `json:"current_version"`
	// LastVersionFlashed is the version Ironic last flashed.
	LastVersionFlashed *string `json:"last_version_flashed"`
	// Vendor is the component's vendor.
	Vendor *string `json:"vendor"`
	// Model is the component's model.
	Model *string `json:"model"`
	// SerialNumber is the component's serial number.
	SerialNumber *string `json:"serial_number"`
}

// InspectionRule is a row of inspection_rules: conditions on inspection
// data and the actions to run when they hold.
type InspectionRule struct {
	ID        int64      `json:"id"`
	UUID      string     `json:"uuid"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	// Priority orders rules; higher runs first (model default 0).
	Priority int `json:"priority"`
	// Description is free text.
	Description *string `json:"description"`
	// Scope restricts the rule to nodes whose inspection scope matches.
	Scope *string `json:"scope"`
	// Sensitive hides conditions and actions from the API.
	Sensitive bool `json:"sensitive"`
	// Phase is when the rule runs (model default "main").
	Phase *string `json:"phase"`
	// Conditions are the rule's conditions, nil when it always applies.
	Conditions []map[string]any `json:"conditions"`
	// Actions are the rule's actions.
	Actions []map[string]any `json:"actions"`
}
