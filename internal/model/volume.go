package model

import "time"

// VolumeConnector is a row of volume_connectors: an initiator (iqn, wwpn…)
// a node uses to attach remote volumes.
type VolumeConnector struct {
	ID        int64      `json:"id"`
	UUID      string     `json:"uuid"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	// NodeID references the node.
	NodeID *int64 `json:"node_id"`
	// Type is iqn, ip, mac, wwnn, wwpn, port or portal; unique with
	// ConnectorID.
	Type *string `json:"type"`
	// ConnectorID is the initiator's identifier of that type.
	ConnectorID *string `json:"connector_id"`
	// Extra is free-form user metadata.
	Extra map[string]any `json:"extra"`
}

// VolumeTarget is a row of volume_targets: a remote volume attached to a node.
type VolumeTarget struct {
	ID        int64      `json:"id"`
	UUID      string     `json:"uuid"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt *time.Time `json:"updated_at"`
	Version   string     `json:"version,omitempty"`

	// NodeID references the node.
	NodeID *int64 `json:"node_id"`
	// VolumeType is the storage protocol (iscsi, fibre_channel…).
	VolumeType *string `json:"volume_type"`
	// Properties hold the connection data from the storage service.
	Properties map[string]any `json:"properties"`
	// BootIndex orders the node's targets; 0 is the boot volume. Unique
	// per node.
	BootIndex *int `json:"boot_index"`
	// VolumeID is the volume's id in the storage service.
	VolumeID *string `json:"volume_id"`
	// Extra is free-form user metadata.
	Extra map[string]any `json:"extra"`
}
