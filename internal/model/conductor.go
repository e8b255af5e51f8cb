package model

import "time"

// Conductor is a row of the conductors table: a conductor service that has
// registered itself. UpdatedAt is its heartbeat.
type Conductor struct {
	ID        int64      `json:"id"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	// Hostname is [DEFAULT]host of the conductor, unique.
	Hostname string `json:"hostname"`
	// Drivers is the deprecated list of classic drivers, [] nowadays.
	Drivers []string `json:"drivers"`
	// Online is false once the conductor unregistered on shutdown.
	Online bool `json:"online"`
	// ConductorGroup is [conductor]conductor_group, "" by default.
	ConductorGroup string `json:"conductor_group"`
}

// ConductorHardwareInterface is a row of conductor_hardware_interfaces: one
// interface implementation a conductor has enabled for a hardware type.
type ConductorHardwareInterface struct {
	ID        int64      `json:"id"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	// ConductorID references the conductor.
	ConductorID int64 `json:"conductor_id"`
	// HardwareType is the hardware type name (redfish, ipmi…).
	HardwareType string `json:"hardware_type"`
	// InterfaceType is the interface kind (power, boot, deploy…).
	InterfaceType string `json:"interface_type"`
	// InterfaceName is the implementation name (redfish, ipxe…).
	InterfaceName string `json:"interface_name"`
	// Default marks the implementation used when a node names none.
	Default bool `json:"default"`
}
