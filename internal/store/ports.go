package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/openkeel/ironic/internal/model"
)

func portFields(p *model.Port) []field {
	return rowFields(&p.ID, &p.UUID, &p.CreatedAt, &p.UpdatedAt, &p.Version, []field{
		{name: "address", ptr: &p.Address},
		{name: "node_id", ptr: &p.NodeID},
		{name: "extra", ptr: &p.Extra},
		{name: "local_link_connection", ptr: &p.LocalLinkConnection},
		{name: "portgroup_id", ptr: &p.PortgroupID},
		{name: "pxe_enabled", ptr: &p.PXEEnabled},
		{name: "internal_info", ptr: &p.InternalInfo},
		{name: "physical_network", ptr: &p.PhysicalNetwork},
		{name: "is_smartnic", ptr: &p.IsSmartNIC},
		{name: "name", ptr: &p.Name},
		{name: "description", ptr: &p.Description},
		{name: "vendor", ptr: &p.Vendor},
		{name: "category", ptr: &p.Category},
		{name: "available_for_dynamic_portgroup", ptr: &p.AvailableForDynamicPortgroup},
	})
}

func portgroupFields(p *model.Portgroup) []field {
	return rowFields(&p.ID, &p.UUID, &p.CreatedAt, &p.UpdatedAt, &p.Version, []field{
		{name: "name", ptr: &p.Name},
		{name: "node_id", ptr: &p.NodeID},
		{name: "address", ptr: &p.Address},
		{name: "extra", ptr: &p.Extra},
		{name: "internal_info", ptr: &p.InternalInfo},
		{name: "standalone_ports_supported", ptr: &p.StandalonePortsSupported},
		{name: "mode", ptr: &p.Mode},
		{name: "properties", ptr: &p.Properties},
		{name: "physical_network", ptr: &p.PhysicalNetwork},
		{name: "category", ptr: &p.Category},
		{name: "dynamic_portgroup", ptr: &p.DynamicPortgroup},
	})
}

func chassisFields(c *model.Chassis) []field {
	return rowFields(&c.ID, &c.UUID, &c.CreatedAt, &c.UpdatedAt, &c.Version, []field{
		{name: "extra", ptr: &c.Extra},
		{name: "description", ptr: &c.Description},
	})
}

var (
	portResource = resource[model.Port]{table: "ports", kind: KindPort, fields: portFields,
		load: func(ctx context.Context, q querier, ps []*model.Port) error {
			return fillNodeUUIDs(ctx, q, ps, func(p *model.Port) (*int64, *string) { return p.NodeID, &p.NodeUUID })
		},
		dupValue: func(p *model.Port, col string) string { return addressOrName(col, p.Address, p.Name, p.UUID) }}
	portgroupResource = resource[model.Portgroup]{table: "portgroups", kind: KindPortgroup, fields: portgroupFields,
		load: func(ctx context.Context, q querier, ps []*model.Portgroup) error {
			return fillNodeUUIDs(ctx, q, ps, func(p *model.Portgroup) (*int64, *string) { return p.NodeID, &p.NodeUUID })
		},
		dupValue: func(p *model.Portgroup, col string) string { return addressOrName(col, p.Address, p.Name, p.UUID) }}
	chassisResource = resource[model.Chassis]{table: "chassis", kind: KindChassis, fields: chassisFields,
		dupValue: func(c *model.Chassis, _ string) string { return c.UUID }}
)

// addressOrName is the value a port or portgroup shows for its violated
// unique column col: its address, its name, else its UUID.
func addressOrName(col string, address, name *string, uuid string) string {
	switch col {
	case "address":
		return model.Deref(address)
	case "name":
		return model.Deref(name)
	}
	return uuid
}

// DefaultPortgroupMode is [DEFAULT]default_portgroup_mode's default, which
// upstream applies when a portgroup is created without a mode.
const DefaultPortgroupMode = "active-backup"

// CreatePort inserts a port; a taken address is a DuplicateError on
// "address" (MACAlreadyExists), a taken name on "name".
func (s *sqlStore) CreatePort(ctx context.Context, p *model.Port) (*model.Port, error) {
	return create(ctx, s, portResource, p, func(*model.Port) {})
}

// GetPortByID returns the port with that primary key.
func (s *sqlStore) GetPortByID(ctx context.Context, id int64) (*model.Port, error) {
	return getOne(ctx, s, portResource, "id", id, strconv.FormatInt(id, 10))
}

// GetPortByUUID returns the port with that UUID.
func (s *sqlStore) GetPortByUUID(ctx context.Context, u string) (*model.Port, error) {
	return getOne(ctx, s, portResource, "uuid", u, u)
}

// GetPortByName returns the port with that name.
func (s *sqlStore) GetPortByName(ctx context.Context, name string) (*model.Port, error) {
	return getOne(ctx, s, portResource, "name", name, name)
}

// GetPortByAddress returns the port with that MAC address.
func (s *sqlStore) GetPortByAddress(ctx context.Context, address string) (*model.Port, error) {
	return getOne(ctx, s, portResource, "address", address, address)
}

// UpdatePort writes the named columns of p (all when none are named).
func (s *sqlStore) UpdatePort(ctx context.Context, p *model.Port, fields ...string) (*model.Port, error) {
	return update(ctx, s, portResource, p, p.ID, fields)
}

// DeletePort removes the port.
func (s *sqlStore) DeletePort(ctx context.Context, id int64) error {
	return s.deleteByID(ctx, "ports", KindPort, id, "")
}

// PortFilter selects ports as upstream's port list queries do. Nil fields
// do not filter; a non-nil empty slice matches nothing.
type PortFilter struct {
	NodeID      *int64
	Address     *string
	PortgroupID *int64
	// ShardIn: ports of nodes in one of these shards.
	ShardIn []string
	// ConductorGroups: ports of nodes in one of these conductor groups.
	ConductorGroups []string
	// Owner: ports of nodes owned by this project.
	Owner *string
	// Project: ports of nodes owned by or leased to this project.
	Project *string
	// DescriptionContains: description LIKE %value%.
	DescriptionContains *string
}

// ListPorts returns one page of ports matching f.
func (s *sqlStore) ListPorts(ctx context.Context, f PortFilter, o ListOptions) ([]*model.Port, error) {
	w := &where{}
	if f.NodeID != nil {
		w.add("node_id = ?", *f.NodeID)
	}
	if f.Address != nil {
		w.add("address = ?", *f.Address)
	}
	if f.PortgroupID != nil {
		w.add("portgroup_id = ?", *f.PortgroupID)
	}
	nodeSubquery(w, f.ShardIn, f.ConductorGroups, f.Owner, f.Project)
	if f.DescriptionContains != nil {
		w.add("description LIKE ?", "%"+*f.DescriptionContains+"%")
	}
	return list(ctx, s, portResource, w, o)
}

// nodeSubquery restricts node_id to nodes matching the given node-side
// filters (upstream joins nodes; a subquery keeps column names unambiguous).
func nodeSubquery(w *where, shards, groups []string, owner, project *string) {
	nw := &where{}
	if shards != nil {
		nw.in("shard", shards)
	}
	if len(groups) > 0 {
		nw.in("conductor_group", groups)
	}
	if owner != nil {
		nw.add("owner = ?", *owner)
	}
	if project != nil {
		nw.add("(owner = ? OR lessee = ?)", *project, *project)
	}
	if len(nw.conds) > 0 {
		w.add("node_id IN (SELECT id FROM nodes"+nw.sql()+")", nw.args...)
	}
}

// CreatePortgroup inserts a portgroup; the mode defaults to
// DefaultPortgroupMode.
func (s *sqlStore) CreatePortgroup(ctx context.Context, pg *model.Portgroup) (*model.Portgroup, error) {
	return create(ctx, s, portgroupResource, pg, func(p *model.Portgroup) {
		if model.Deref(p.Mode) == "" {
			p.Mode = model.Ptr(DefaultPortgroupMode)
		}
	})
}

// GetPortgroupByID returns the portgroup with that primary key.
func (s *sqlStore) GetPortgroupByID(ctx context.Context, id int64) (*model.Portgroup, error) {
	return getOne(ctx, s, portgroupResource, "id", id, strconv.FormatInt(id, 10))
}

// GetPortgroupByUUID returns the portgroup with that UUID.
func (s *sqlStore) GetPortgroupByUUID(ctx context.Context, u string) (*model.Portgroup, error) {
	return getOne(ctx, s, portgroupResource, "uuid", u, u)
}

// GetPortgroupByName returns the portgroup with that name.
func (s *sqlStore) GetPortgroupByName(ctx context.Context, name string) (*model.Portgroup, error) {
	return getOne(ctx, s, portgroupResource, "name", name, name)
}

// GetPortgroupByAddress returns the portgroup with that MAC address.
func (s *sqlStore) GetPortgroupByAddress(ctx context.Context, address string) (*model.Portgroup, error) {
	return getOne(ctx, s, portgroupResource, "address", address, address)
}

// UpdatePortgroup writes the named columns of pg (all when none are named).
func (s *sqlStore) UpdatePortgroup(ctx context.Context, pg *model.Portgroup, fields ...string) (*model.Portgroup, error) {
	return update(ctx, s, portgroupResource, pg, pg.ID, fields)
}

// DeletePortgroup removes the portgroup; one that still has ports is a
// NotEmptyError (PortgroupNotEmpty).
func (s *sqlStore) DeletePortgroup(ctx context.Context, id int64) error {
	return s.deleteByID(ctx, "portgroups", KindPortgroup, id, "SELECT COUNT(*) FROM ports WHERE portgroup_id = ?")
}

// PortgroupFilter selects portgroups as upstream's portgroup list queries.
type PortgroupFilter struct {
	NodeID          *int64
	Address         *string
	ShardIn         []string
	ConductorGroups []string
	Project         *string
}

// ListPortgroups returns one page of portgroups matching f.
func (s *sqlStore) ListPortgroups(ctx context.Context, f PortgroupFilter, o ListOptions) ([]*model.Portgroup, error) {
	w := &where{}
	if f.NodeID != nil {
		w.add("node_id = ?", *f.NodeID)
	}
	if f.Address != nil {
		w.add("address = ?", *f.Address)
	}
	nodeSubquery(w, f.ShardIn, f.ConductorGroups, nil, f.Project)
	return list(ctx, s, portgroupResource, w, o)
}

// CreateChassis inserts a chassis.
func (s *sqlStore) CreateChassis(ctx context.Context, c *model.Chassis) (*model.Chassis, error) {
	return create(ctx, s, chassisResource, c, func(*model.Chassis) {})
}

// GetChassisByID returns the chassis with that primary key.
func (s *sqlStore) GetChassisByID(ctx context.Context, id int64) (*model.Chassis, error) {
	return getOne(ctx, s, chassisResource, "id", id, strconv.FormatInt(id, 10))
}

// GetChassisByUUID returns the chassis with that UUID.
func (s *sqlStore) GetChassisByUUID(ctx context.Context, u string) (*model.Chassis, error) {
	return getOne(ctx, s, chassisResource, "uuid", u, u)
}

// UpdateChassis writes the named columns of c (all when none are named).
func (s *sqlStore) UpdateChassis(ctx context.Context, c *model.Chassis, fields ...string) (*model.Chassis, error) {
	return update(ctx, s, chassisResource, c, c.ID, fields)
}

// DeleteChassis removes the chassis; one that still has nodes is a
// NotEmptyError (ChassisNotEmpty).
func (s *sqlStore) DeleteChassis(ctx context.Context, id int64) error {
	return s.deleteByID(ctx, "chassis", KindChassis, id, "SELECT COUNT(*) FROM nodes WHERE chassis_id = ?")
}

// ListChassis returns one page of chassis.
func (s *sqlStore) ListChassis(ctx context.Context, o ListOptions) ([]*model.Chassis, error) {
	return list(ctx, s, chassisResource, &where{}, o)
}

// fillNodeUUIDs sets the node UUID of each row from its node id, with one
// query (upstream loads it through a relationship).
func fillNodeUUIDs[T any](ctx context.Context, q querier, rows []*T, node func(*T) (*int64, *string)) error {
	var ids []int64
	for _, r := range rows {
		if id, _ := node(r); id != nil && !slices.Contains(ids, *id) {
			ids = append(ids, *id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	marks, args := inList(ids)
	res, err := q.QueryContext(ctx, "SELECT id, uuid FROM nodes WHERE id IN "+marks, args...)
	if err != nil {
		return fmt.Errorf("read node uuids: %w", err)
	}
	defer res.Close()
	uuids := make(map[int64]string, len(ids))
	for res.Next() {
		var id int64
		var u string
		if err := res.Scan(&id, &u); err != nil {
			return fmt.Errorf("read node uuids: %w", err)
		}
		uuids[id] = u
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("read node uuids: %w", err)
	}
	for _, r := range rows {
		if id, dst := node(r); id != nil {
			*dst = uuids[*id]
		}
	}
	return nil
}
