package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/secrets"
)

func volumeConnectorFields(c *model.VolumeConnector) []field {
	return rowFields(&c.ID, &c.UUID, &c.CreatedAt, &c.UpdatedAt, &c.Version, []field{
		{name: "node_id", ptr: &c.NodeID},
		{name: "type", ptr: &c.Type},
		{name: "connector_id", ptr: &c.ConnectorID},
		{name: "extra", ptr: &c.Extra},
	})
}

func volumeTargetFields(v *model.VolumeTarget) []field {
	return rowFields(&v.ID, &v.UUID, &v.CreatedAt, &v.UpdatedAt, &v.Version, []field{
		{name: "node_id", ptr: &v.NodeID},
		{name: "volume_type", ptr: &v.VolumeType},
		{name: "properties", ptr: &v.Properties},
		{name: "boot_index", ptr: &v.BootIndex},
		{name: "volume_id", ptr: &v.VolumeID},
		{name: "extra", ptr: &v.Extra},
	})
}

var (
	// A taken (type, connector_id) is a DuplicateError on "type"
	// (VolumeConnectorTypeAndIdAlreadyExists), valued "type/connector_id".
	volumeConnectorResource = resource[model.VolumeConnector]{table: "volume_connectors", kind: KindVolumeConnector,
		fields: volumeConnectorFields,
		dupValue: func(c *model.VolumeConnector, col string) string {
			if col == "type" {
				return model.Deref(c.Type) + "/" + model.Deref(c.ConnectorID)
			}
			return c.UUID
		}}
	// A taken (node_id, boot_index) is a DuplicateError on "boot_index"
	// (VolumeTargetBootIndexAlreadyExists).
	volumeTargetResource = resource[model.VolumeTarget]{table: "volume_targets", kind: KindVolumeTarget,
		fields:    volumeTargetFields,
		dupFields: map[string]string{"node_id": "boot_index"},
		seal: func(ring *secrets.KeyRing, v *model.VolumeTarget) (*model.VolumeTarget, error) {
			if ring == nil {
				return v, nil
			}
			if v.UUID == "" {
				// Sealed under no UUID, the secrets would never open again.
				return nil, fmt.Errorf("volume target %d written without its UUID: its secrets cannot be sealed", v.ID)
			}
			sealed, err := ring.Seal(v.UUID, secrets.VolumeTargetProperties, v.Properties)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v.UUID, err)
			}
			w := *v
			w.Properties = sealed
			return &w, nil
		},
		open: func(ring *secrets.KeyRing, v *model.VolumeTarget) error {
			opened, err := secrets.Open(ring, v.UUID, secrets.VolumeTargetProperties, v.Properties)
			v.Properties = opened
			return err
		},
		dupValue: func(v *model.VolumeTarget, col string) string {
			if col == "node_id" || col == "boot_index" {
				if v.BootIndex == nil {
					return ""
				}
				return strconv.Itoa(*v.BootIndex)
			}
			return v.UUID
		}}
)

// VolumeFilter selects volume connectors or targets; nil fields do not
// filter.
type VolumeFilter struct {
	NodeID *int64
	// VolumeID: targets of this volume (ignored for connectors).
	VolumeID *string
	// Project: records of nodes owned by or leased to this project.
	Project *string
}

func volumeWhere(f VolumeFilter, withVolume bool) *where {
	w := &where{}
	if f.NodeID != nil {
		w.add("node_id = ?", *f.NodeID)
	}
	if withVolume && f.VolumeID != nil {
		w.add("volume_id = ?", *f.VolumeID)
	}
	nodeSubquery(w, nil, nil, nil, f.Project)
	return w
}

// CreateVolumeConnector inserts a volume connector.
func (s *sqlStore) CreateVolumeConnector(ctx context.Context, c *model.VolumeConnector) (*model.VolumeConnector, error) {
	return create(ctx, s, volumeConnectorResource, c, func(*model.VolumeConnector) {})
}

// GetVolumeConnectorByID returns the connector with that primary key.
func (s *sqlStore) GetVolumeConnectorByID(ctx context.Context, id int64) (*model.VolumeConnector, error) {
	return getOne(ctx, s, volumeConnectorResource, "id", id, strconv.FormatInt(id, 10))
}

// GetVolumeConnectorByUUID returns the connector with that UUID.
func (s *sqlStore) GetVolumeConnectorByUUID(ctx context.Context, u string) (*model.VolumeConnector, error) {
	return getOne(ctx, s, volumeConnectorResource, "uuid", u, u)
}

// ListVolumeConnectors returns one page of connectors matching f.
func (s *sqlStore) ListVolumeConnectors(ctx context.Context, f VolumeFilter, o ListOptions) ([]*model.VolumeConnector, error) {
	return list(ctx, s, volumeConnectorResource, volumeWhere(f, false), o)
}

// UpdateVolumeConnector writes the named columns of c (all when none are
// named).
func (s *sqlStore) UpdateVolumeConnector(ctx context.Context, c *model.VolumeConnector, fields ...string) (*model.VolumeConnector, error) {
	return update(ctx, s, volumeConnectorResource, c, c.ID, fields)
}

// DeleteVolumeConnector removes the connector.
func (s *sqlStore) DeleteVolumeConnector(ctx context.Context, id int64) error {
	return s.deleteByID(ctx, "volume_connectors", KindVolumeConnector, id, "")
}

// CreateVolumeTarget inserts a volume target.
func (s *sqlStore) CreateVolumeTarget(ctx context.Context, v *model.VolumeTarget) (*model.VolumeTarget, error) {
	return create(ctx, s, volumeTargetResource, v, func(*model.VolumeTarget) {})
}

// GetVolumeTargetByID returns the target with that primary key.
func (s *sqlStore) GetVolumeTargetByID(ctx context.Context, id int64) (*model.VolumeTarget, error) {
	return getOne(ctx, s, volumeTargetResource, "id", id, strconv.FormatInt(id, 10))
}

// GetVolumeTargetByUUID returns the target with that UUID.
func (s *sqlStore) GetVolumeTargetByUUID(ctx context.Context, u string) (*model.VolumeTarget, error) {
	return getOne(ctx, s, volumeTargetResource, "uuid", u, u)
}

// ListVolumeTargets returns one page of targets matching f.
func (s *sqlStore) ListVolumeTargets(ctx context.Context, f VolumeFilter, o ListOptions) ([]*model.VolumeTarget, error) {
	return list(ctx, s, volumeTargetResource, volumeWhere(f, true), o)
}

// UpdateVolumeTarget writes the named columns of v (all when none are
// named).
func (s *sqlStore) UpdateVolumeTarget(ctx context.Context, v *model.VolumeTarget, fields ...string) (*model.VolumeTarget, error) {
	return update(ctx, s, volumeTargetResource, v, v.ID, fields)
}

// DeleteVolumeTarget removes the target.
func (s *sqlStore) DeleteVolumeTarget(ctx context.Context, id int64) error {
	return s.deleteByID(ctx, "volume_targets", KindVolumeTarget, id, "")
}
