package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/model"
)

func portFields(p *model.Port) []field {
	return []field{
		{name: "id", ptr: &p.ID},
		{name: "uuid", ptr: &p.UUID, emptyNull: true},
		{name: "created_at", ptr: &p.CreatedAt},
		{name: "updated_at", ptr: &p.UpdatedAt},
		{name: "version", ptr: &p.Version, emptyNull: true},
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
	}
}

func portgroupFields(p *model.Portgroup) []field {
	return []field{
		{name: "id", ptr: &p.ID},
		{name: "uuid", ptr: &p.UUID, emptyNull: true},
		{name: "created_at", ptr: &p.CreatedAt},
		{name: "updated_at", ptr: &p.UpdatedAt},
		{name: "version", ptr: &p.Version, emptyNull: true},
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
	}
}

func chassisFields(c *model.Chassis) []field {
	return []field{
		{name: "id", ptr: &c.ID},
		{name: "uuid", ptr: &c.UUID, emptyNull: true},
		{name: "created_at", ptr: &c.CreatedAt},
		{name: "updated_at", ptr: &c.UpdatedAt},
		{name: "version", ptr: &c.Version, emptyNull: true},
		{name: "extra", ptr: &c.Extra},
		{name: "description", ptr: &c.Description},
	}
}

// resource binds a table to its model type, so ports, portgroups and
// chassis share one implementation of get, create, update and list.
type resource[T any] struct {
	table, kind string
	fields      func(*T) []field
	// dupValue gives the value shown for a violated unique column.
	dupValue func(*T, string) string
}

func (r resource[T]) selectSQL() string {
	var zero T
	return "SELECT " + columnList(r.fields(&zero)) + " FROM " + r.table
}

func (r resource[T]) columns() map[string]field {
	var zero T
	return fieldNames(r.fields(&zero))
}

func getOne[T any](ctx context.Context, s *sqlStore, r resource[T], col string, val any, ident string) (*T, error) {
	rows, err := queryAll(ctx, s.db, r.fields, r.selectSQL()+" WHERE "+quote(col)+" = ?", val)
	if err != nil {
		return nil, fmt.Errorf("get %s %s: %w", r.kind, ident, err)
	}
	if len(rows) == 0 {
		return nil, &NotFoundError{Kind: r.kind, Ident: ident}
	}
	return rows[0], nil
}

// create inserts v after setUUID and stamping created_at; the uuid is
// generated when empty, as upstream.
func create[T any](ctx context.Context, s *sqlStore, r resource[T], in *T, prepare func(*T)) (*T, error) {
	v := *in
	prepare(&v)
	fs := r.fields(&v)
	for _, f := range fs {
		switch p := f.ptr.(type) {
		case *string:
			if f.name == "uuid" && *p == "" {
				*p = uuid.NewString()
			}
		}
		if f.name == "created_at" {
			*(f.ptr.(*time.Time)) = s.clock()
		}
		if f.name == "updated_at" {
			*(f.ptr.(**time.Time)) = nil
		}
	}
	var id int64
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		id, err = s.insert(ctx, tx, r.table, fs)
		return err
	})
	if err != nil {
		if d := duplicate(err, r.kind, func(col string) string { return r.dupValue(&v, col) }); d != nil {
			return nil, d
		}
		return nil, fmt.Errorf("create %s: %w", r.kind, err)
	}
	return getOne(ctx, s, r, "id", id, strconv.FormatInt(id, 10))
}

func update[T any](ctx context.Context, s *sqlStore, r resource[T], v *T, id int64, fields []string) (*T, error) {
	ident := strconv.FormatInt(id, 10)
	if slices.Contains(fields, "uuid") {
		return nil, &InvalidParameterError{Msg: fmt.Sprintf("Cannot overwrite UUID for an existing %s.", r.kind)}
	}
	set, args, err := s.updateSet(r.fields(v), fields, s.clock())
	if err != nil {
		return nil, err
	}
	err = s.db.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE "+r.table+" SET "+set+" WHERE id = ?", append(args, id)...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return &NotFoundError{Kind: r.kind, Ident: ident}
		}
		return nil
	})
	if err != nil {
		if d := duplicate(err, r.kind, func(col string) string { return r.dupValue(v, col) }); d != nil {
			return nil, d
		}
		return nil, wrapUnlessTyped(err, "update "+r.kind+" "+ident)
	}
	return getOne(ctx, s, r, "id", id, ident)
}

func list[T any](ctx context.Context, s *sqlStore, r resource[T], w *where, o ListOptions) ([]*T, error) {
	tail, err := s.paginate(ctx, s.db, r.table, "", r.columns(), "uuid", w, o)
	if err != nil {
		return nil, err
	}
	rows, err := queryAll(ctx, s.db, r.fields, r.selectSQL()+w.sql()+tail, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", r.table, err)
	}
	return rows, nil
}

var (
	portResource = resource[model.Port]{table: "ports", kind: KindPort, fields: portFields,
		dupValue: func(p *model.Port, col string) string {
			switch col {
			case "address":
				return model.Deref(p.Address)
			case "name":
				return model.Deref(p.Name)
			}
			return p.UUID
		}}
	portgroupResource = resource[model.Portgroup]{table: "portgroups", kind: KindPortgroup, fields: portgroupFields,
		dupValue: func(p *model.Portgroup, col string) string {
			switch col {
			case "address":
				return model.Deref(p.Address)
			case "name":
				return model.Deref(p.Name)
			}
			return p.UUID
		}}
	chassisResource = resource[model.Chassis]{table: "chassis", kind: KindChassis, fields: chassisFields,
		dupValue: func(c *model.Chassis, _ string) string { return c.UUID }}
)

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

// deleteByID deletes one row, refusing when membersSQL (if any) counts
// rows still referencing it.
func (s *sqlStore) deleteByID(ctx context.Context, table, kind string, id int64, membersSQL string) error {
	ident := strconv.FormatInt(id, 10)
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		if membersSQL != "" {
			var n int
			if err := tx.QueryRowContext(ctx, membersSQL, id).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return &NotEmptyError{Kind: kind, Ident: ident}
			}
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM "+table+" WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return &NotFoundError{Kind: kind, Ident: ident}
		}
		return nil
	})
	return wrapUnlessTyped(err, "delete "+kind+" "+ident)
}
