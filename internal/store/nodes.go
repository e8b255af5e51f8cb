package store

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func nodeFields(n *model.Node) []field {
	return rowFields(&n.ID, &n.UUID, &n.CreatedAt, &n.UpdatedAt, &n.Version, []field{
		{name: "instance_uuid", ptr: &n.InstanceUUID},
		{name: "instance_name", ptr: &n.InstanceName},
		{name: "name", ptr: &n.Name},
		{name: "chassis_id", ptr: &n.ChassisID},
		{name: "power_state", ptr: &n.PowerState, emptyNull: true},
		{name: "target_power_state", ptr: &n.TargetPowerState, emptyNull: true},
		{name: "provision_state", ptr: &n.ProvisionState, emptyNull: true},
		{name: "target_provision_state", ptr: &n.TargetProvisionState, emptyNull: true},
		{name: "provision_updated_at", ptr: &n.ProvisionUpdatedAt},
		{name: "last_error", ptr: &n.LastError},
		{name: "instance_info", ptr: &n.InstanceInfo},
		{name: "properties", ptr: &n.Properties},
		{name: "driver", ptr: &n.Driver, emptyNull: true},
		{name: "driver_info", ptr: &n.DriverInfo},
		{name: "driver_internal_info", ptr: &n.DriverInternalInfo},
		{name: "clean_step", ptr: &n.CleanStep},
		{name: "deploy_step", ptr: &n.DeployStep},
		{name: "resource_class", ptr: &n.ResourceClass},
		{name: "raid_config", ptr: &n.RAIDConfig},
		{name: "target_raid_config", ptr: &n.TargetRAIDConfig},
		{name: "reservation", ptr: &n.Reservation},
		{name: "conductor_affinity", ptr: &n.ConductorAffinity},
		{name: "conductor_group", ptr: &n.ConductorGroup},
		{name: "maintenance", ptr: &n.Maintenance},
		{name: "maintenance_reason", ptr: &n.MaintenanceReason},
		{name: "fault", ptr: &n.Fault},
		{name: "console_enabled", ptr: &n.ConsoleEnabled},
		{name: "inspection_finished_at", ptr: &n.InspectionFinishedAt},
		{name: "inspection_started_at", ptr: &n.InspectionStartedAt},
		{name: "extra", ptr: &n.Extra},
		{name: "automated_clean", ptr: &n.AutomatedClean},
		{name: "protected", ptr: &n.Protected},
		{name: "protected_reason", ptr: &n.ProtectedReason},
		{name: "owner", ptr: &n.Owner},
		{name: "lessee", ptr: &n.Lessee},
		{name: "allocation_id", ptr: &n.AllocationID},
		{name: "description", ptr: &n.Description},
		{name: "bios_interface", ptr: &n.BIOSInterface, emptyNull: true},
		{name: "boot_interface", ptr: &n.BootInterface, emptyNull: true},
		{name: "console_interface", ptr: &n.ConsoleInterface, emptyNull: true},
		{name: "deploy_interface", ptr: &n.DeployInterface, emptyNull: true},
		{name: "firmware_interface", ptr: &n.FirmwareInterface, emptyNull: true},
		{name: "inspect_interface", ptr: &n.InspectInterface, emptyNull: true},
		{name: "management_interface", ptr: &n.ManagementInterface, emptyNull: true},
		{name: "network_interface", ptr: &n.NetworkInterface, emptyNull: true},
		{name: "raid_interface", ptr: &n.RAIDInterface, emptyNull: true},
		{name: "rescue_interface", ptr: &n.RescueInterface, emptyNull: true},
		{name: "retired", ptr: &n.Retired},
		{name: "retired_reason", ptr: &n.RetiredReason},
		{name: "network_data", ptr: &n.NetworkData},
		{name: "storage_interface", ptr: &n.StorageInterface, emptyNull: true},
		{name: "power_interface", ptr: &n.PowerInterface, emptyNull: true},
		{name: "vendor_interface", ptr: &n.VendorInterface, emptyNull: true},
		{name: "boot_mode", ptr: &n.BootMode},
		{name: "secure_boot", ptr: &n.SecureBoot},
		{name: "shard", ptr: &n.Shard},
		{name: "parent_node", ptr: &n.ParentNode},
		{name: "service_step", ptr: &n.ServiceStep},
		{name: "disable_power_off", ptr: &n.DisablePowerOff},
		{name: "health", ptr: &n.Health},
	})
}

var (
	nodeColumns     = nodeFields(&model.Node{})
	nodeColumnNames = fieldNames(nodeColumns)
	nodeSelect      = "SELECT " + columnList(nodeColumns) + " FROM nodes"
)

// CreateNode inserts n with upstream's defaults: a new UUID when none is
// given, provision state enroll, no power state. Traits and tags cannot be
// given at creation (upstream refuses them too).
func (s *sqlStore) CreateNode(ctx context.Context, in *model.Node) (*model.Node, error) {
	if len(in.Traits) > 0 || len(in.Tags) > 0 {
		return nil, &InvalidParameterError{Msg: "Cannot create node with traits or tags."}
	}
	n := *in
	if n.UUID == "" {
		n.UUID = uuid.NewString()
	}
	if n.ProvisionState == "" {
		n.ProvisionState = states.Enroll
	}
	n.CreatedAt = s.clock()
	n.UpdatedAt = nil
	fs, err := s.sealedFields(&n, nil)
	if err != nil {
		return nil, err
	}
	var id int64
	err = s.changeTx(ctx, func(tx *sql.Tx) error {
		var err error
		id, err = s.insert(ctx, tx, "nodes", fs)
		if err != nil {
			return err
		}
		return s.recordNode(ctx, tx, id, ChangeCreated, nil)
	})
	if err != nil {
		if d := duplicate(err, KindNode, nodeDupValue(&n)); d != nil {
			if d.Field == "instance_uuid" {
				d.Node = n.UUID
			}
			return nil, d
		}
		return nil, fmt.Errorf("create node %s: %w", n.UUID, err)
	}
	n.ID = id
	// Reading the row back cost more than half of CreateNode (issue 29):
	// the node returned is the row as written, as a read would give it.
	n.Traits, n.Tags = []string{}, []string{}
	return s.asWritten(&n, nil, nil)
}

// asWritten is n as a read of its row would return it once the named
// columns (every column when none is named) and updated_at (when
// updatedAt is set) are written: those columns go through what is stored
// for them and back (JSON numbers become float64, times take the
// backend's precision, "" of a state becomes NULL and ""). The other
// columns, traits and tags are n's: the callers write under the node's
// lock a node read under it. It saves UpdateNodeIf and CreateNode the read
// after their write, a third of a PATCH's and more than half of a
// creation's store cost (issue 29).
func (s *sqlStore) asWritten(n *model.Node, names []string, updatedAt *time.Time) (*model.Node, error) {
	out := *n
	if updatedAt != nil {
		t := *updatedAt
		out.UpdatedAt = &t
	}
	for _, f := range nodeFields(&out) {
		switch {
		case f.name == "updated_at" && updatedAt == nil, f.name == "id":
			continue
		case f.name == "updated_at":
		case len(names) > 0 && !slices.Contains(names, f.name):
			continue
		}
		v, err := bind(s.db, f)
		if err != nil {
			return nil, err
		}
		sc := scanner{f: f}
		if err := sc.Scan(v); err != nil {
			return nil, fmt.Errorf("node %s as written: %w", n.UUID, err)
		}
	}
	return &out, nil
}

func nodeDupValue(n *model.Node) func(string) string {
	return func(col string) string {
		switch col {
		case "name":
			return model.Deref(n.Name)
		case "instance_uuid":
			return model.Deref(n.InstanceUUID)
		}
		return n.UUID
	}
}

// getNode reads the node and its traits and tags in one read transaction,
// so that they are of one moment: read apart, a concurrent trait change
// could show beside a node row older than it.
func (s *sqlStore) getNode(ctx context.Context, col string, val any, ident string) (*model.Node, error) {
	// Its three texts are prepared once (on SQLite) and run inside the
	// transaction as its connection's copies: parsing them was most of a
	// lock's cost (the power sync takes one per node).
	cached := s.db.Cached()
	if err := cached.Prepare(ctx, nodeSelect+" WHERE "+quote(col)+" = ?", traitsOfOne, tagsOfOne); err != nil {
		return nil, wrapUnlessTyped(err, "get node "+ident)
	}
	var n *model.Node
	err := s.db.InReadTx(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = s.getNodeIn(ctx, cached.InTx(tx), col, val, ident)
		return err
	})
	if err != nil {
		return nil, wrapUnlessTyped(err, "get node "+ident)
	}
	return n, nil
}

func (s *sqlStore) getNodeIn(ctx context.Context, q querier, col string, val any, ident string) (*model.Node, error) {
	ns, err := queryAll(ctx, q, nodeFields, nodeSelect+" WHERE "+quote(col)+" = ?", val)
	if err != nil {
		return nil, fmt.Errorf("get node %s: %w", ident, err)
	}
	if len(ns) == 0 {
		if col == "instance_uuid" {
			return nil, &NotFoundError{Kind: KindInstance, Ident: ident}
		}
		return nil, &NotFoundError{Kind: KindNode, Ident: ident}
	}
	if err := s.openNodes(ns); err != nil {
		return nil, err
	}
	if err := s.loadTraitsAndTags(ctx, q, ns); err != nil {
		return nil, err
	}
	return ns[0], nil
}

// GetNodeByID returns the node with primary key id, traits and tags loaded.
func (s *sqlStore) GetNodeByID(ctx context.Context, id int64) (*model.Node, error) {
	return s.getNode(ctx, "id", id, strconv.FormatInt(id, 10))
}

// GetNodeByUUID returns the node with that UUID.
func (s *sqlStore) GetNodeByUUID(ctx context.Context, u string) (*model.Node, error) {
	return s.getNode(ctx, "uuid", u, u)
}

// GetNodeByName returns the node with that name.
func (s *sqlStore) GetNodeByName(ctx context.Context, name string) (*model.Node, error) {
	return s.getNode(ctx, "name", name, name)
}

// GetNodeByInstance returns the node running that instance; the error is a
// NotFoundError of KindInstance (upstream InstanceNotFound).
func (s *sqlStore) GetNodeByInstance(ctx context.Context, instanceUUID string) (*model.Node, error) {
	return s.getNode(ctx, "instance_uuid", instanceUUID, instanceUUID)
}

// NodeCondition guards UpdateNodeIf: every non-nil field must match the
// stored row, or nothing is written and a ConflictError is returned.
type NodeCondition struct {
	// ProvisionState is the provision state the caller last saw.
	ProvisionState *string
	// Reservation is the lock holder the caller expects (its own tag).
	Reservation *string
}

// UpdateNode writes the named columns of n (every column when none are
// named) and sets updated_at. As upstream, changing provision_state also
// stamps provision_updated_at and maintains inspection_started_at and
// inspection_finished_at. The uuid cannot change. The node returned is n
// with what was written as a read gives it (asWritten), not a new read.
func (s *sqlStore) UpdateNode(ctx context.Context, n *model.Node, fields ...string) (*model.Node, error) {
	return s.UpdateNodeIf(ctx, n, NodeCondition{}, fields...)
}

// UpdateNodeIf is UpdateNode guarded by cond, checked under a row lock in
// the same transaction, so two writers cannot both move the provision
// state from the same starting point.
func (s *sqlStore) UpdateNodeIf(ctx context.Context, in *model.Node, cond NodeCondition, fields ...string) (*model.Node, error) {
	if slices.Contains(fields, "uuid") {
		return nil, &InvalidParameterError{Msg: "Cannot overwrite UUID for an existing Node."}
	}
	ident := strconv.FormatInt(in.ID, 10)
	var out *model.Node
	err := s.changeTx(ctx, func(tx *sql.Tx) error {
		n := *in
		var cur struct {
			provision   sql.NullString
			reservation sql.NullString
		}
		err := tx.QueryRowContext(ctx, "SELECT provision_state, reservation FROM nodes WHERE id = ?"+forUpdate(s.db), n.ID).
			Scan(&cur.provision, &cur.reservation)
		if err == sql.ErrNoRows {
			return &NotFoundError{Kind: KindNode, Ident: ident}
		}
		if err != nil {
			return err
		}
		if cond.ProvisionState != nil && cur.provision.String != *cond.ProvisionState {
			return &ConflictError{Kind: KindNode, Ident: in.UUID, Msg: fmt.Sprintf("provision state is %q, expected %q", cur.provision.String, *cond.ProvisionState)}
		}
		if cond.Reservation != nil && cur.reservation.String != *cond.Reservation {
			return &ConflictError{Kind: KindNode, Ident: in.UUID, Msg: fmt.Sprintf("reservation is %q, expected %q", cur.reservation.String, *cond.Reservation)}
		}
		names := slices.Clone(fields)
		provisionNamed := len(fields) == 0 && n.ProvisionState != cur.provision.String || slices.Contains(fields, "provision_state")
		if provisionNamed {
			now := s.clock()
			n.ProvisionUpdatedAt = &now
			names = append(names, "provision_updated_at")
			wasInspecting := cur.provision.String == states.Inspecting || cur.provision.String == states.InspectWait
			switch {
			case n.ProvisionState == states.Inspecting:
				n.InspectionStartedAt = &now
				n.InspectionFinishedAt = nil
				names = append(names, "inspection_started_at", "inspection_finished_at")
			case wasInspecting && n.ProvisionState == states.Manageable:
				n.InspectionFinishedAt = &now
				n.InspectionStartedAt = nil
				names = append(names, "inspection_started_at", "inspection_finished_at")
			case wasInspecting && n.ProvisionState == states.InspectFail:
				n.InspectionStartedAt = nil
				names = append(names, "inspection_started_at")
			}
		}
		if len(fields) == 0 {
			names = nil
		}
		fs, err := s.sealedFields(&n, names)
		if err != nil {
			return err
		}
		now := s.clock()
		set, args, err := s.updateSet(fs, names, now)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE nodes SET "+set+" WHERE id = ?", append(args, n.ID)...)
		if err != nil {
			if d := duplicate(err, KindNode, nodeDupValue(&n)); d != nil {
				if d.Field == "instance_uuid" {
					d.Node = n.UUID
				}
				return d
			}
			return err
		}
		if err := s.recordNode(ctx, tx, n.ID, nodeAction(names, n.ProvisionState != cur.provision.String), names); err != nil {
			return err
		}
		out, err = s.asWritten(&n, names, &now)
		return err
	})
	if err != nil {
		return nil, wrapUnlessTyped(err, "update node "+ident)
	}
	return out, nil
}

// forUpdate locks the read row on MySQL; SQLite's immediate transaction
// already holds the database's write lock.
func forUpdate(db *sqldb.DB) string {
	if db.Dialect() == sqldb.MySQL {
		return " FOR UPDATE"
	}
	return ""
}

// wrapUnlessTyped adds context to driver errors but returns the store's own
// typed errors as they are, so their messages stay Ironic's.
func wrapUnlessTyped(err error, what string) error {
	switch err.(type) {
	case nil:
		return nil
	case *NotFoundError, *DuplicateError, *NodeLockedError, *NodeNotLockedError,
		*MarkerNotFoundError, *InvalidParameterError, *NotEmptyError,
		*ConductorAlreadyRegisteredError, *ConflictError, *NodeAssociatedError,
		*DuplicateNodeOnLookupError:
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// nodeChildTables are the rows upstream's destroy_node removes with a node,
// in an order that satisfies the foreign keys.
var nodeChildTables = []string{
	"ports", "portgroups", "node_tags", "node_traits", "volume_connectors",
	"volume_targets", "bios_settings", "allocations", "node_history",
	"node_inventory", "firmware_information",
}

// DeleteNode removes the node and everything that belongs to it, as
// upstream's destroy_node: ports, portgroups, tags, traits, volume
// connectors and targets, BIOS settings, allocations, history, inventory
// and firmware components.
func (s *sqlStore) DeleteNode(ctx context.Context, id int64) error {
	ident := strconv.FormatInt(id, 10)
	err := s.changeTx(ctx, func(tx *sql.Tx) error {
		// Orphan the allocation first: nodes.allocation_id references it.
		if err := execOne(ctx, tx, &NotFoundError{Kind: KindNode, Ident: ident}, "UPDATE nodes SET allocation_id = NULL WHERE id = ?", id); err != nil {
			return err
		}
		subject, err := nodeSubject(ctx, tx, id)
		if err != nil {
			return err
		}
		for _, t := range nodeChildTables {
			if err := s.recordChildDeletions(ctx, tx, t, id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM "+t+" WHERE node_id = ?", id); err != nil {
				return fmt.Errorf("delete %s: %w", t, err)
			}
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM nodes WHERE id = ?", id); err != nil {
			return err
		}
		return s.recordChange(ctx, tx, subject, ChangeDeleted, nil)
	})
	return wrapUnlessTyped(err, "delete node "+ident)
}

// recordChildDeletions records on the change stream the deletion of the
// node's rows of table when the table is streamed (ports, portgroups,
// allocations): a subscriber following a port learns it went with its
// node.
func (s *sqlStore) recordChildDeletions(ctx context.Context, tx *sql.Tx, table string, nodeID int64) error {
	if _, ok := streamTables[table]; !ok {
		return nil
	}
	rows, err := tx.QueryContext(ctx, "SELECT id FROM "+table+" WHERE node_id = ? ORDER BY id", nodeID)
	if err != nil {
		return fmt.Errorf("list %s of node %d for the change stream: %w", table, nodeID, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("list %s of node %d for the change stream: %w", table, nodeID, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list %s of node %d for the change stream: %w", table, nodeID, err)
	}
	for _, id := range ids {
		if err := s.recordRow(ctx, tx, table, id, ChangeDeleted, nil); err != nil {
			return err
		}
	}
	return nil
}

// NodeFilter selects nodes as upstream's get_node_list filters do. A nil
// field does not filter; a non-nil empty slice matches nothing.
type NodeFilter struct {
	// Associated: instance_uuid is (not) set.
	Associated *bool
	// Reserved: reservation is (not) set.
	Reserved *bool
	// ReservedByAnyOf: reservation is one of these hosts.
	ReservedByAnyOf []string
	Maintenance     *bool
	Retired         *bool
	ConsoleEnabled  *bool
	ProvisionState  *string
	// ProvisionStateIn: provision_state is one of these.
	ProvisionStateIn []string
	Driver           *string
	ResourceClass    *string
	// ChassisUUID: the node is in this chassis; an unknown chassis is a
	// NotFoundError, as upstream.
	ChassisUUID    *string
	ConductorGroup *string
	Owner          *string
	Lessee         *string
	// Project: owner or lessee is this project.
	Project *string
	// ShardIn: shard is one of these.
	ShardIn []string
	// Sharded: shard is (not) set.
	Sharded *bool
	// ParentNode: children of this node (UUID). Without it, and unless
	// IncludeChildren, only nodes without a parent are listed.
	ParentNode      *string
	IncludeChildren bool
	// DescriptionContains: description LIKE %value%.
	DescriptionContains *string
	InstanceUUID        *string
	InstanceName        *string
	Fault               *string
	UUID                *string
	// UUIDIn: uuid is one of these.
	UUIDIn []string
	// ProvisionedBefore: provision_updated_at is older than now minus this.
	ProvisionedBefore *time.Duration
	// InspectionStartedBefore: inspection_started_at is older than now
	// minus this.
	InspectionStartedBefore *time.Duration
	// WithPowerState: power_state is (not) set.
	WithPowerState *bool
	// IDAbove: id is greater than this (when > 0). Periodic tasks page
	// with it rather than a marker, which a node deleted between two pages
	// would turn into an error.
	IDAbove int64
}

func (s *sqlStore) nodeWhere(ctx context.Context, f NodeFilter) (*where, error) {
	w := &where{}
	nullable := func(col string, set *bool) {
		if set == nil {
			return
		}
		if *set {
			w.add(col + " IS NOT NULL")
		} else {
			w.add(col + " IS NULL")
		}
	}
	eq := func(col string, v any, set bool) {
		if set {
			w.add(col+" = ?", v)
		}
	}
	nullable("instance_uuid", f.Associated)
	nullable("reservation", f.Reserved)
	nullable("power_state", f.WithPowerState)
	nullable("shard", f.Sharded)
	if f.ReservedByAnyOf != nil {
		w.in("reservation", f.ReservedByAnyOf)
	}
	if f.ProvisionStateIn != nil {
		w.in("provision_state", f.ProvisionStateIn)
	}
	if f.ShardIn != nil {
		w.in("shard", f.ShardIn)
	}
	if f.UUIDIn != nil {
		w.in("uuid", f.UUIDIn)
	}
	eq("maintenance", model.Deref(f.Maintenance), f.Maintenance != nil)
	eq("retired", model.Deref(f.Retired), f.Retired != nil)
	eq("console_enabled", model.Deref(f.ConsoleEnabled), f.ConsoleEnabled != nil)
	for _, c := range []struct {
		col string
		v   *string
	}{
		{"provision_state", f.ProvisionState}, {"driver", f.Driver},
		{"resource_class", f.ResourceClass}, {"conductor_group", f.ConductorGroup},
		{"owner", f.Owner}, {"lessee", f.Lessee}, {"instance_uuid", f.InstanceUUID},
		{"instance_name", f.InstanceName}, {"fault", f.Fault}, {"uuid", f.UUID},
	} {
		eq(c.col, model.Deref(c.v), c.v != nil)
	}
	if f.ChassisUUID != nil {
		c, err := s.GetChassisByUUID(ctx, *f.ChassisUUID)
		if err != nil {
			return nil, err
		}
		w.add("chassis_id = ?", c.ID)
	}
	if f.ProvisionedBefore != nil {
		w.add("provision_updated_at < ?", s.db.Time(s.clock().Add(-*f.ProvisionedBefore)))
	}
	if f.InspectionStartedBefore != nil {
		w.add("inspection_started_at < ?", s.db.Time(s.clock().Add(-*f.InspectionStartedBefore)))
	}
	if f.IDAbove > 0 {
		w.add("id > ?", f.IDAbove)
	}
	if f.DescriptionContains != nil {
		w.add("description LIKE ?", "%"+*f.DescriptionContains+"%")
	}
	if f.Project != nil {
		w.add("(owner = ? OR lessee = ?)", *f.Project, *f.Project)
	}
	if !f.IncludeChildren {
		if f.ParentNode != nil {
			w.add("parent_node = ?", *f.ParentNode)
		} else {
			w.add("parent_node IS NULL")
		}
	}
	return w, nil
}

// ListNodes returns one page of nodes matching f, traits and tags loaded.
func (s *sqlStore) ListNodes(ctx context.Context, f NodeFilter, o ListOptions) ([]*model.Node, error) {
	w, err := s.nodeWhere(ctx, f)
	if err != nil {
		return nil, err
	}
	// One read transaction, so that traits and tags are of the rows' moment.
	var ns []*model.Node
	err = s.db.InReadTx(ctx, func(tx *sql.Tx) error {
		tail, err := s.paginate(ctx, tx, "nodes", "", nodeColumnNames, "uuid", w, o)
		if err != nil {
			return err
		}
		if ns, err = queryAll(ctx, tx, nodeFields, nodeSelect+w.sql()+tail, w.args...); err != nil {
			return fmt.Errorf("list nodes: %w", err)
		}
		if err := s.openNodes(ns); err != nil {
			return err
		}
		return s.loadTraitsAndTags(ctx, tx, ns)
	})
	if err != nil {
		return nil, wrapUnlessTyped(err, "list nodes")
	}
	return ns, nil
}

// ListNodeColumns is ListNodes reading only the named columns (and id),
// as upstream's get_node_list with fields; the other fields stay zero.
// "traits" and "tags" load those too. An unknown name is an
// InvalidParameterError.
func (s *sqlStore) ListNodeColumns(ctx context.Context, f NodeFilter, o ListOptions, columns []string) ([]*model.Node, error) {
	want := map[string]bool{"id": true}
	labels := false
	for _, c := range columns {
		switch _, ok := nodeColumnNames[c]; {
		case c == "traits" || c == "tags":
			labels = true
		case !ok:
			return nil, &InvalidParameterError{Msg: fmt.Sprintf("unknown node field %q", c)}
		}
		want[c] = true
	}
	// A sealed value opens only with its node's UUID.
	want["uuid"] = want["uuid"] || holdsSecrets(columns)
	fieldsOf := func(n *model.Node) []field {
		return slices.DeleteFunc(nodeFields(n), func(f field) bool { return !want[f.name] })
	}
	w, err := s.nodeWhere(ctx, f)
	if err != nil {
		return nil, err
	}
	var ns []*model.Node
	read := func(ctx context.Context, q querier) error {
		tail, err := s.paginate(ctx, q, "nodes", "", nodeColumnNames, "uuid", w, o)
		if err != nil {
			return err
		}
		if ns, err = queryAll(ctx, q, fieldsOf, "SELECT "+columnList(fieldsOf(&model.Node{}))+" FROM nodes"+w.sql()+tail, w.args...); err != nil {
			return fmt.Errorf("list nodes: %w", err)
		}
		if err := s.openNodes(ns); err != nil {
			return err
		}
		if labels {
			return s.loadTraitsAndTags(ctx, q, ns)
		}
		return nil
	}
	if !labels {
		// Without traits and tags the rows alone are one moment.
		if err := read(ctx, s.db); err != nil {
			return nil, wrapUnlessTyped(err, "list nodes")
		}
		return ns, nil
	}
	if err := s.db.InReadTx(ctx, func(tx *sql.Tx) error { return read(ctx, tx) }); err != nil {
		return nil, wrapUnlessTyped(err, "list nodes")
	}
	return ns, nil
}

// labelQuery reads col of table (traits or tags) for n node ids.
func labelQuery(table, col string, n int) string {
	in := "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
	return "SELECT node_id, " + col + " FROM " + table + " WHERE node_id IN " + in + " ORDER BY " + col
}

// traitsOfOne and tagsOfOne are labelQuery's texts for one node.
var (
	traitsOfOne = labelQuery("node_traits", "trait", 1)
	tagsOfOne   = labelQuery("node_tags", "tag", 1)
)

// labelTables are the tables loadLabels reads: traits, then tags.
var labelTables = []struct{ table, col string }{{"node_traits", "trait"}, {"node_tags", "tag"}}

// loadTraitsAndTags fills Traits and Tags of ns with two queries, as
// upstream's selectin loading does.
func (s *sqlStore) loadTraitsAndTags(ctx context.Context, q querier, ns []*model.Node) error {
	return s.loadLabels(ctx, q, ns, labelTables)
}

// loadLabels fills the labels of tables (of labelTables) of ns.
func (s *sqlStore) loadLabels(ctx context.Context, q querier, ns []*model.Node, tables []struct{ table, col string }) error {
	if len(ns) == 0 {
		return nil
	}
	byID := make(map[int64]*model.Node, len(ns))
	for _, n := range ns {
		n.Traits = []string{}
		if len(tables) > 1 {
			n.Tags = []string{}
		}
		byID[n.ID] = n
	}
	const chunk = 500
	for start := 0; start < len(ns); start += chunk {
		part := ns[start:min(start+chunk, len(ns))]
		ids := make([]any, len(part))
		for i, n := range part {
			ids[i] = n.ID
		}
		for _, t := range tables {
			rows, err := q.QueryContext(ctx, labelQuery(t.table, t.col, len(ids)), ids...)
			if err != nil {
				return fmt.Errorf("load %s: %w", t.table, err)
			}
			for rows.Next() {
				var id int64
				var v string
				if err := rows.Scan(&id, &v); err != nil {
					rows.Close()
					return fmt.Errorf("load %s: %w", t.table, err)
				}
				if t.table == "node_traits" {
					byID[id].Traits = append(byID[id].Traits, v)
				} else {
					byID[id].Tags = append(byID[id].Tags, v)
				}
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return fmt.Errorf("load %s: %w", t.table, err)
			}
		}
	}
	return nil
}

// GetNodeByPortAddresses returns the one node owning ports with any of
// these MAC addresses (the agent's lookup). No match is a NotFoundError;
// ports of several nodes a DuplicateNodeOnLookupError.
func (s *sqlStore) GetNodeByPortAddresses(ctx context.Context, addresses []string) (*model.Node, error) {
	w := &where{}
	w.in("address", addresses)
	w.add("node_id IS NOT NULL")
	ids, err := stringColumn(ctx, s.db, "SELECT DISTINCT node_id FROM ports"+w.sql(), w.args...)
	if err != nil {
		return nil, fmt.Errorf("look up node by port addresses: %w", err)
	}
	switch len(ids) {
	case 0:
		return nil, &NotFoundError{Kind: KindNode, Ident: fmt.Sprintf("with port addresses %v", addresses)}
	case 1:
		id, err := strconv.ParseInt(ids[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("look up node by port addresses: %w", err)
		}
		return s.GetNodeByID(ctx, id)
	}
	return nil, &DuplicateNodeOnLookupError{Addresses: slices.Clone(addresses)}
}

// TouchNodeProvisioning sets provision_updated_at (and, as every UPDATE
// of upstream's, updated_at) to now, which restarts the node's
// provisioning timeouts (a heartbeat from the agent).
func (s *sqlStore) TouchNodeProvisioning(ctx context.Context, nodeID int64) error {
	ident := strconv.FormatInt(nodeID, 10)
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		now := s.db.Time(s.clock())
		return execOne(ctx, tx, &NotFoundError{Kind: KindNode, Ident: ident}, "UPDATE nodes SET provision_updated_at = ?, updated_at = ? WHERE id = ?", now, now, nodeID)
	})
	return wrapUnlessTyped(err, "touch provisioning of node "+ident)
}

var logicalNameRe = regexp.MustCompile(`^[A-Za-z0-9._~-]{1,255}$`)

// CheckNodeList maps each ident (a node UUID or name) to the UUID of the
// node it names, as upstream's check_node_list; project, when not empty,
// restricts to nodes it owns or leases. Idents naming no node are listed,
// sorted, in one NotFoundError of KindNode.
func (s *sqlStore) CheckNodeList(ctx context.Context, idents []string, project string) (map[string]string, error) {
	mapping := map[string]string{}
	if len(idents) == 0 {
		return mapping, nil
	}
	var uuids, names, bad []string
	seen := map[string]bool{}
	for _, id := range idents {
		if seen[id] {
			continue
		}
		seen[id] = true
		switch {
		case isUUIDLike(id):
			uuids = append(uuids, id)
		case logicalNameRe.MatchString(id):
			names = append(names, id)
		default:
			bad = append(bad, id)
		}
	}
	missingErr := func(missing []string) error {
		slices.Sort(missing)
		return &NotFoundError{Kind: KindNode, Ident: strings.Join(missing, ", ")}
	}
	if len(bad) > 0 {
		return nil, missingErr(bad)
	}
	uw, nw, w := &where{}, &where{}, &where{}
	uw.in("uuid", uuids)
	nw.in("name", names)
	w.anyOf(uw, nw)
	if project != "" {
		w.add("(owner = ? OR lessee = ?)", project, project)
	}
	type row struct {
		uuid string
		name *string
	}
	rows, err := queryAll(ctx, s.db, func(r *row) []field {
		return []field{{name: "uuid", ptr: &r.uuid}, {name: "name", ptr: &r.name}}
	}, "SELECT uuid, name FROM nodes"+w.sql(), w.args...)
	if err != nil {
		return nil, fmt.Errorf("check node list: %w", err)
	}
	for _, r := range rows {
		if seen[r.uuid] {
			mapping[r.uuid] = r.uuid
		}
		if n := model.Deref(r.name); n != "" && seen[n] {
			mapping[n] = r.uuid
		}
	}
	var missing []string
	for id := range seen {
		if _, ok := mapping[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, missingErr(missing)
	}
	return mapping, nil
}

// isUUIDLike accepts what oslo's is_uuid_like does: a UUID in any case,
// with or without hyphens, braces or a urn:uuid: prefix.
func isUUIDLike(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil
}
