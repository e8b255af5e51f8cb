package model

import "time"

// Port is a row of the ports table: a NIC of a node.
type Port struct {
	ID        int64      `json:"id"`
	UUID      string     `json:"uuid"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	// Address is the MAC address, unique among ports.
	Address *string `json:"address"`
	// NodeID references the node the port belongs to.
	NodeID *int64 `json:"node_id"`
	// Extra is free-form user metadata.
	Extra map[string]any `json:"extra"`
	// LocalLinkConnection describes the switch port (switch_id, port_id,
	// switch_info) for the network interface.
	LocalLinkConnection map[string]any `json:"local_link_connection"`
	// PortgroupID references the portgroup the port is a member of.
	PortgroupID *int64 `json:"portgroup_id"`
	// PXEEnabled says whether the node may PXE boot from this port
	// (model default true).
	PXEEnabled *bool `json:"pxe_enabled"`
	// InternalInfo is Ironic's private data (tenant_vif_port_id…).
	InternalInfo map[string]any `json:"internal_info"`
	// PhysicalNetwork is the physical network the port is attached to.
	PhysicalNetwork *string `json:"physical_network"`
	// IsSmartNIC marks a Smart NIC port.
	IsSmartNIC *bool `json:"is_smartnic"`
	// Name is an optional unique name.
	Name *string `json:"name"`
	// Description is free text about the port.
	Description *string `json:"description"`
	// Vendor is the NIC vendor.
	Vendor *string `json:"vendor"`
	// Category is a free-form classification of the port.
	Category *string `json:"category"`
	// AvailableForDynamicPortgroup lets the networking service put the
	// port into a dynamic portgroup (NOT NULL, server default true).
	AvailableForDynamicPortgroup bool `json:"available_for_dynamic_portgroup"`

	// NodeUUID is the UUID of the node NodeID names; not a column, the
	// store fills it on reads as upstream's node_uuid association does.
	NodeUUID string `json:"node_uuid,omitempty"`
}

// Portgroup is a row of the portgroups table: a bond of a node's ports.
type Portgroup struct {
	ID        int64      `json:"id"`
	UUID      string     `json:"uuid"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	// Name is an optional unique name.
	Name *string `json:"name"`
	// NodeID references the node the portgroup belongs to.
	NodeID *int64 `json:"node_id"`
	// Address is the MAC address of the bond, unique among portgroups.
	Address *string `json:"address"`
	// Extra is free-form user metadata.
	Extra map[string]any `json:"extra"`
	// InternalInfo is Ironic's private data.
	InternalInfo map[string]any `json:"internal_info"`
	// StandalonePortsSupported says whether member ports may be used
	// outside the group (model default true).
	StandalonePortsSupported *bool `json:"standalone_ports_supported"`
	// Mode is the bonding mode ([DEFAULT]default_portgroup_mode when unset).
	Mode *string `json:"mode"`
	// Properties holds bonding options.
	Properties map[string]any `json:"properties"`
	// PhysicalNetwork is the physical network of the member ports.
	PhysicalNetwork *string `json:"physical_network"`
	// Category is a free-form classification.
	Category *string `json:"category"`
	// DynamicPortgroup marks a group managed by the networking service.
	DynamicPortgroup *bool `json:"dynamic_portgroup"`

	// NodeUUID is the UUID of the node NodeID names; not a column, the
	// store fills it on reads as upstream's node_uuid association does.
	NodeUUID string `json:"node_uuid,omitempty"`
}

// Chassis is a row of the chassis table: a grouping of nodes.
type Chassis struct {
	ID        int64      `json:"id"`
	UUID      string     `json:"uuid"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	// Extra is free-form user metadata.
	Extra map[string]any `json:"extra"`
	// Description is free text about the chassis.
	Description *string `json:"description"`
}
