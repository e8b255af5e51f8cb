// Package store is Ironic's persistence layer: the Store interface the API
// and conductor use, and its SQL implementation over sqldb (SQLite or
// MariaDB/MySQL) on upstream's schema, so a database can be shared with or
// taken over from Python Ironic.
//
// Semantics follow ironic/db/sqlalchemy/api.py: the same filters, sort
// keys, marker pagination with a secondary sort on id, the node lock on
// nodes.reservation and conductor registration.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/secrets"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// Store is everything the API and the conductor read and write.
type Store interface {
	// Nodes.
	CreateNode(ctx context.Context, n *model.Node) (*model.Node, error)
	GetNodeByID(ctx context.Context, id int64) (*model.Node, error)
	GetNodeByUUID(ctx context.Context, uuid string) (*model.Node, error)
	GetNodeByName(ctx context.Context, name string) (*model.Node, error)
	GetNodeByInstance(ctx context.Context, instanceUUID string) (*model.Node, error)
	UpdateNode(ctx context.Context, n *model.Node, fields ...string) (*model.Node, error)
	UpdateNodeIf(ctx context.Context, n *model.Node, cond NodeCondition, fields ...string) (*model.Node, error)
	DeleteNode(ctx context.Context, id int64) error
	ListNodes(ctx context.Context, f NodeFilter, o ListOptions) ([]*model.Node, error)
	ListNodeColumns(ctx context.Context, f NodeFilter, o ListOptions, columns []string) ([]*model.Node, error)
	// CountNodesByState counts every node by provision state, power state
	// and maintenance, in the database (the /metrics node gauges).
	CountNodesByState(ctx context.Context) ([]NodeStateCount, error)
	// CountFleet counts the nodes f selects by provision state, power
	// state, maintenance, fault and conductor group.
	CountFleet(ctx context.Context, f NodeFilter) ([]FleetCount, error)
	// ListNodeRows is ListNodeColumns with the JSON columns as stored
	// text, for the list renderers; nil columns reads them all. Tags are
	// not read.
	ListNodeRows(ctx context.Context, f NodeFilter, o ListOptions, columns []string) ([]NodeRow, error)
	// GetNodeRow is the node with this UUID as ListNodeRows reads it, for
	// an answer about one node; no such node is a NotFoundError.
	GetNodeRow(ctx context.Context, uuid string, columns []string) (*NodeRow, error)
	// ListNodeSummaries is ListNodes reading only the columns of a
	// NodeSummary, for the periodic tasks.
	ListNodeSummaries(ctx context.Context, f NodeFilter, o ListOptions) ([]NodeSummary, error)
	// ReadNodesForPowerSync reads at most NodeReadBatch nodes by id in
	// one go, without the columns the power sync never reads.
	ReadNodesForPowerSync(ctx context.Context, ids []int64) ([]*model.Node, error)
	GetNodeByPortAddresses(ctx context.Context, addresses []string) (*model.Node, error)
	TouchNodeProvisioning(ctx context.Context, nodeID int64) error
	CheckNodeList(ctx context.Context, idents []string, project string) (map[string]string, error)

	// The node lock.
	ReserveNode(ctx context.Context, tag string, nodeID int64) (*model.Node, error)
	ReleaseNode(ctx context.Context, tag string, nodeID int64) error
	// SaveAndReleaseNode is a task's last save and its release in one
	// write transaction.
	SaveAndReleaseNode(ctx context.Context, tag string, n *model.Node, fields ...string) error
	// UpdateAndReleaseNode is SaveAndReleaseNode returning the node as a
	// read after it gives it.
	UpdateAndReleaseNode(ctx context.Context, tag string, n *model.Node, fields ...string) (*model.Node, error)
	// ReserveOrUpdateNode is a lock, a save and a release in one write
	// transaction, or the lock alone, as decide says of the node.
	ReserveOrUpdateNode(ctx context.Context, tag string, nodeID int64, uuid string, decide func(*model.Node) (NodeVerdict, error)) (*model.Node, error)
	ClearNodeReservationsForConductor(ctx context.Context, hostname string) ([]string, error)
	ClearNodeTargetPowerState(ctx context.Context, hostname string) ([]string, error)

	// Node traits and tags.
	SetNodeTraits(ctx context.Context, nodeID int64, traits []string, version string) ([]model.NodeTrait, error)
	UnsetNodeTraits(ctx context.Context, nodeID int64) error
	GetNodeTraits(ctx context.Context, nodeID int64) ([]model.NodeTrait, error)
	AddNodeTrait(ctx context.Context, nodeID int64, trait, version string) (*model.NodeTrait, error)
	DeleteNodeTrait(ctx context.Context, nodeID int64, trait string) error
	NodeTraitExists(ctx context.Context, nodeID int64, trait string) (bool, error)
	SetNodeTags(ctx context.Context, nodeID int64, tags []string) ([]model.NodeTag, error)
	UnsetNodeTags(ctx context.Context, nodeID int64) error
	GetNodeTags(ctx context.Context, nodeID int64) ([]model.NodeTag, error)
	AddNodeTag(ctx context.Context, nodeID int64, tag string) (*model.NodeTag, error)
	DeleteNodeTag(ctx context.Context, nodeID int64, tag string) error
	NodeTagExists(ctx context.Context, nodeID int64, tag string) (bool, error)

	// Ports.
	CreatePort(ctx context.Context, p *model.Port) (*model.Port, error)
	GetPortByID(ctx context.Context, id int64) (*model.Port, error)
	GetPortByUUID(ctx context.Context, uuid string) (*model.Port, error)
	GetPortByName(ctx context.Context, name string) (*model.Port, error)
	GetPortByAddress(ctx context.Context, address string) (*model.Port, error)
	UpdatePort(ctx context.Context, p *model.Port, fields ...string) (*model.Port, error)
	DeletePort(ctx context.Context, id int64) error
	ListPorts(ctx context.Context, f PortFilter, o ListOptions) ([]*model.Port, error)

	// Portgroups.
	CreatePortgroup(ctx context.Context, pg *model.Portgroup) (*model.Portgroup, error)
	GetPortgroupByID(ctx context.Context, id int64) (*model.Portgroup, error)
	GetPortgroupByUUID(ctx context.Context, uuid string) (*model.Portgroup, error)
	GetPortgroupByName(ctx context.Context, name string) (*model.Portgroup, error)
	GetPortgroupByAddress(ctx context.Context, address string) (*model.Portgroup, error)
	UpdatePortgroup(ctx context.Context, pg *model.Portgroup, fields ...string) (*model.Portgroup, error)
	DeletePortgroup(ctx context.Context, id int64) error
	ListPortgroups(ctx context.Context, f PortgroupFilter, o ListOptions) ([]*model.Portgroup, error)

	// Chassis.
	CreateChassis(ctx context.Context, c *model.Chassis) (*model.Chassis, error)
	GetChassisByID(ctx context.Context, id int64) (*model.Chassis, error)
	GetChassisByUUID(ctx context.Context, uuid string) (*model.Chassis, error)
	UpdateChassis(ctx context.Context, c *model.Chassis, fields ...string) (*model.Chassis, error)
	DeleteChassis(ctx context.Context, id int64) error
	ListChassis(ctx context.Context, o ListOptions) ([]*model.Chassis, error)

	// Conductors.
	RegisterConductor(ctx context.Context, hostname, group string, ifaces []model.ConductorHardwareInterface, update bool) (*model.Conductor, error)
	RegisterConductorHardwareInterfaces(ctx context.Context, conductorID int64, ifaces []model.ConductorHardwareInterface) error
	UnregisterConductorHardwareInterfaces(ctx context.Context, conductorID int64) error
	ListConductorHardwareInterfaces(ctx context.Context, conductorID int64) ([]model.ConductorHardwareInterface, error)
	TouchConductor(ctx context.Context, hostname string, online bool) error
	UnregisterConductor(ctx context.Context, hostname string) error
	DeleteConductor(ctx context.Context, hostname string) error
	GetConductor(ctx context.Context, hostname string, online *bool) (*model.Conductor, error)
	ListConductors(ctx context.Context, o ListOptions) ([]*model.Conductor, error)
	GetOnlineConductors(ctx context.Context, heartbeatTimeout time.Duration) ([]string, error)
	GetOfflineConductors(ctx context.Context, heartbeatTimeout time.Duration) ([]string, error)
	GetActiveHardwareTypeDict(ctx context.Context, heartbeatTimeout time.Duration) (map[string]map[string][]string, error)
	ListHardwareTypeInterfaces(ctx context.Context, hardwareTypes []string, heartbeatTimeout time.Duration) ([]model.ConductorHardwareInterface, error)

	// Allocations.
	CreateAllocation(ctx context.Context, a *model.Allocation) (*model.Allocation, error)
	GetAllocationByID(ctx context.Context, id int64) (*model.Allocation, error)
	GetAllocationByUUID(ctx context.Context, uuid string) (*model.Allocation, error)
	GetAllocationByName(ctx context.Context, name string) (*model.Allocation, error)
	ListAllocations(ctx context.Context, f AllocationFilter, o ListOptions) ([]*model.Allocation, error)
	UpdateAllocation(ctx context.Context, a *model.Allocation, fields ...string) (*model.Allocation, error)
	DeleteAllocation(ctx context.Context, id int64) error
	TakeOverAllocation(ctx context.Context, id, oldConductorID, newConductorID int64) (bool, error)
	TakeOverAllocations(ctx context.Context, fromConductorID, toConductorID int64) ([]*model.Allocation, error)

	// Deploy templates.
	CreateDeployTemplate(ctx context.Context, d *model.DeployTemplate) (*model.DeployTemplate, error)
	GetDeployTemplateByID(ctx context.Context, id int64) (*model.DeployTemplate, error)
	GetDeployTemplateByUUID(ctx context.Context, uuid string) (*model.DeployTemplate, error)
	GetDeployTemplateByName(ctx context.Context, name string) (*model.DeployTemplate, error)
	GetDeployTemplatesByNames(ctx context.Context, names []string) ([]*model.DeployTemplate, error)
	ListDeployTemplates(ctx context.Context, o ListOptions) ([]*model.DeployTemplate, error)
	UpdateDeployTemplate(ctx context.Context, d *model.DeployTemplate, fields ...string) (*model.DeployTemplate, error)
	DeleteDeployTemplate(ctx context.Context, id int64) error

	// Runbooks and their traits.
	CreateRunbook(ctx context.Context, r *model.Runbook) (*model.Runbook, error)
	GetRunbookByID(ctx context.Context, id int64) (*model.Runbook, error)
	GetRunbookByUUID(ctx context.Context, uuid string) (*model.Runbook, error)
	GetRunbookByName(ctx context.Context, name string) (*model.Runbook, error)
	GetRunbooksByNames(ctx context.Context, names []string) ([]*model.Runbook, error)
	ListRunbooks(ctx context.Context, f RunbookFilter, o ListOptions) ([]*model.Runbook, error)
	UpdateRunbook(ctx context.Context, r *model.Runbook, fields ...string) (*model.Runbook, error)
	DeleteRunbook(ctx context.Context, id int64) error
	SetRunbookTraits(ctx context.Context, runbookID int64, traits []string, version string) ([]model.RunbookTrait, error)
	UnsetRunbookTraits(ctx context.Context, runbookID int64) error
	GetRunbookTraits(ctx context.Context, runbookID int64) ([]model.RunbookTrait, error)
	AddRunbookTrait(ctx context.Context, runbookID int64, trait, version string) (*model.RunbookTrait, error)
	DeleteRunbookTrait(ctx context.Context, runbookID int64, trait string) error
	RunbookTraitExists(ctx context.Context, runbookID int64, trait string) (bool, error)

	// Volume connectors and targets.
	CreateVolumeConnector(ctx context.Context, c *model.VolumeConnector) (*model.VolumeConnector, error)
	GetVolumeConnectorByID(ctx context.Context, id int64) (*model.VolumeConnector, error)
	GetVolumeConnectorByUUID(ctx context.Context, uuid string) (*model.VolumeConnector, error)
	ListVolumeConnectors(ctx context.Context, f VolumeFilter, o ListOptions) ([]*model.VolumeConnector, error)
	UpdateVolumeConnector(ctx context.Context, c *model.VolumeConnector, fields ...string) (*model.VolumeConnector, error)
	DeleteVolumeConnector(ctx context.Context, id int64) error
	CreateVolumeTarget(ctx context.Context, v *model.VolumeTarget) (*model.VolumeTarget, error)
	GetVolumeTargetByID(ctx context.Context, id int64) (*model.VolumeTarget, error)
	GetVolumeTargetByUUID(ctx context.Context, uuid string) (*model.VolumeTarget, error)
	ListVolumeTargets(ctx context.Context, f VolumeFilter, o ListOptions) ([]*model.VolumeTarget, error)
	UpdateVolumeTarget(ctx context.Context, v *model.VolumeTarget, fields ...string) (*model.VolumeTarget, error)
	DeleteVolumeTarget(ctx context.Context, id int64) error

	// Node history, inventory, BIOS settings and firmware components.
	CreateNodeHistory(ctx context.Context, h *model.NodeHistory) (*model.NodeHistory, error)
	GetNodeHistoryByID(ctx context.Context, id int64) (*model.NodeHistory, error)
	GetNodeHistoryByUUID(ctx context.Context, uuid string) (*model.NodeHistory, error)
	ListNodeHistory(ctx context.Context, nodeID int64, o ListOptions) ([]*model.NodeHistory, error)
	DeleteNodeHistoryByUUID(ctx context.Context, uuid string) error
	NodeHistoryForPurge(ctx context.Context, conductorID int64, minAge time.Duration, maxEntries int) (map[int64][]int64, error)
	DeleteNodeHistoryRecords(ctx context.Context, ids []int64) error
	CreateNodeInventory(ctx context.Context, inv *model.NodeInventory) (*model.NodeInventory, error)
	GetNodeInventory(ctx context.Context, nodeID int64) (*model.NodeInventory, error)
	DeleteNodeInventory(ctx context.Context, nodeID int64) error
	CreateBIOSSettings(ctx context.Context, nodeID int64, settings []model.BIOSSetting, version string) ([]model.BIOSSetting, error)
	UpdateBIOSSettings(ctx context.Context, nodeID int64, settings []model.BIOSSetting, version string) ([]model.BIOSSetting, error)
	DeleteBIOSSettings(ctx context.Context, nodeID int64, names []string) error
	GetBIOSSetting(ctx context.Context, nodeID int64, name string) (*model.BIOSSetting, error)
	ListBIOSSettings(ctx context.Context, nodeID int64) ([]model.BIOSSetting, error)
	CreateFirmwareComponent(ctx context.Context, f *model.FirmwareComponent) (*model.FirmwareComponent, error)
	UpdateFirmwareComponent(ctx context.Context, f *model.FirmwareComponent, fields ...string) (*model.FirmwareComponent, error)
	GetFirmwareComponent(ctx context.Context, nodeID int64, component string) (*model.FirmwareComponent, error)
	ListFirmwareComponents(ctx context.Context, nodeID int64) ([]*model.FirmwareComponent, error)

	// Inspection rules.
	CreateInspectionRule(ctx context.Context, r *model.InspectionRule) (*model.InspectionRule, error)
	GetInspectionRuleByID(ctx context.Context, id int64) (*model.InspectionRule, error)
	GetInspectionRuleByUUID(ctx context.Context, uuid string) (*model.InspectionRule, error)
	ListInspectionRules(ctx context.Context, f InspectionRuleFilter, o ListOptions) ([]*model.InspectionRule, error)
	UpdateInspectionRule(ctx context.Context, r *model.InspectionRule, fields ...string) (*model.InspectionRule, error)
	DeleteInspectionRule(ctx context.Context, id int64) error
}

// ListOptions are upstream's pagination parameters.
type ListOptions struct {
	// Limit caps the number of rows; 0 means no limit.
	Limit int
	// Marker is the UUID (hostname for conductors) of the last row of the
	// previous page; the page starts after it.
	Marker string
	// SortKey is a column name; "" sorts on id only.
	SortKey string
	// SortDir is "asc" (default) or "desc".
	SortDir string
}

// Option configures New.
type Option func(*sqlStore)

// WithClock makes the store read the time from now (tests use a fake
// clock to cross heartbeat timeouts without sleeping).
func WithClock(now func() time.Time) Option {
	return func(s *sqlStore) { s.now = now }
}

// WithConductorVersion registers conductors with version v of upstream's
// Conductor object, the one [DEFAULT]/pin_release_version names: an
// upstream Ironic sharing the database refuses a conductor row of a newer
// version, or of none.
func WithConductorVersion(v string) Option {
	return func(s *sqlStore) { s.conductorVersion = v }
}

// New returns a Store over db, whose schema must be migrated.
func New(db *sqldb.DB, opts ...Option) Store {
	s := &sqlStore{db: db, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

type sqlStore struct {
	db  *sqldb.DB
	now func() time.Time
	// changes is the change stream's state (changes.go).
	changes changeState
	// ring seals and opens nodes' secret values; nil: stored plain.
	ring *secrets.KeyRing
	// conductorVersion is the Conductor object version conductor rows
	// are registered with ("" leaves the column as it is: NULL when new).
	conductorVersion string
}

var _ Store = (*sqlStore)(nil)

// clock is the current time at the precision the backend stores.
func (s *sqlStore) clock() time.Time { return s.db.Truncate(s.now()) }

// queryAll runs a SELECT of fs's columns and returns one T per row.
func queryAll[T any](ctx context.Context, q querier, fieldsOf func(*T) []field, query string, args ...any) ([]*T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	// The fields and scanners are made once, on a staging value that
	// each row is then copied from.
	var cur T
	sc := scanners(fieldsOf(&cur))
	var out []*T
	for rows.Next() {
		if err := rows.Scan(sc...); err != nil {
			return nil, err
		}
		v := new(T)
		*v = cur
		out = append(out, v)
	}
	return out, rows.Err()
}

// insert writes fs (without id) and returns the new id.
func (s *sqlStore) insert(ctx context.Context, q querier, table string, fs []field) (int64, error) {
	var cols []field
	for _, f := range fs {
		if f.name != "id" {
			cols = append(cols, f)
		}
	}
	args, err := bindAll(s.db, cols)
	if err != nil {
		return 0, err
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")
	res, err := q.ExecContext(ctx, "INSERT INTO "+table+" ("+columnList(cols)+") VALUES ("+marks+")", args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// updateSet builds "SET a=?, b=?" for the named fields (all writable ones
// when names is empty), always setting updated_at.
func (s *sqlStore) updateSet(fs []field, names []string, now time.Time) (string, []any, error) {
	byName := fieldNames(fs)
	if len(names) == 0 {
		for _, f := range fs {
			names = append(names, f.name)
		}
	}
	var sets []string
	var args []any
	seen := map[string]bool{}
	for _, name := range names {
		switch name {
		case "id", "uuid", "created_at", "updated_at":
			continue
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		f, ok := byName[name]
		if !ok {
			return "", nil, &InvalidParameterError{Msg: fmt.Sprintf("cannot update unknown field %q", name)}
		}
		v, err := bind(s.db, f)
		if err != nil {
			return "", nil, err
		}
		sets = append(sets, quote(name)+" = ?")
		args = append(args, v)
	}
	sets = append(sets, "`updated_at` = ?")
	args = append(args, s.db.Time(now))
	return strings.Join(sets, ", "), args, nil
}

// where accumulates SQL conditions joined by AND.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// in adds "col IN (...)"; an empty list matches nothing, as SQLAlchemy's
// in_([]) does.
func (w *where) in(col string, vals []string) {
	if len(vals) == 0 {
		w.add("1 = 0")
		return
	}
	marks, args := inList(vals)
	w.add(col+" IN "+marks, args...)
}

// anyOf adds the disjunction of the conditions of each of ws (each one's
// own conditions joined by AND).
func (w *where) anyOf(ws ...*where) {
	var ors []string
	var args []any
	for _, o := range ws {
		ors = append(ors, "("+strings.Join(o.conds, " AND ")+")")
		args = append(args, o.args...)
	}
	w.add("("+strings.Join(ors, " OR ")+")", args...)
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// paginate appends upstream's ordering and marker condition (oslo.db
// paginate_query with sort keys [sort_key, id], one direction for both) to w
// and returns the ORDER BY / LIMIT tail. markerCol is the column the marker
// names (uuid, or hostname for conductors).
func (s *sqlStore) paginate(ctx context.Context, q querier, table, prefix string, valid map[string]field, markerCol string, w *where, o ListOptions) (string, error) {
	keys := []string{"id"}
	if o.SortKey != "" && o.SortKey != "id" {
		if _, ok := valid[o.SortKey]; !ok {
			return "", &InvalidParameterError{Msg: fmt.Sprintf("The sort_key value %q is an invalid field for sorting", o.SortKey)}
		}
		keys = []string{o.SortKey, "id"}
	}
	dir := strings.ToLower(o.SortDir)
	switch dir {
	case "":
		dir = "asc"
	case "asc", "desc":
	default:
		return "", &InvalidParameterError{Msg: fmt.Sprintf("Invalid sort direction: %s. Acceptable values are 'asc' or 'desc'", o.SortDir)}
	}
	if o.Marker != "" {
		vals := make([]any, len(keys))
		ptrs := make([]any, len(keys))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		cols := make([]string, len(keys))
		for i, k := range keys {
			cols[i] = quote(k)
		}
		err := q.QueryRowContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+table+" WHERE "+quote(markerCol)+" = ?", o.Marker).Scan(ptrs...)
		if errors.Is(err, sql.ErrNoRows) {
			return "", &MarkerNotFoundError{Marker: o.Marker}
		}
		if err != nil {
			return "", fmt.Errorf("read marker %s: %w", o.Marker, err)
		}
		op := ">"
		if dir == "desc" {
			op = "<"
		}
		// As oslo.db: a NULL marker value drops its term, relying on id
		// (always last and never NULL) to move past the marker.
		var ors []string
		var args []any
		for i := range keys {
			if vals[i] == nil {
				continue
			}
			var ands []string
			for j := 0; j < i; j++ {
				if vals[j] != nil {
					ands = append(ands, prefix+quote(keys[j])+" = ?")
					args = append(args, normalizeArg(s.db, vals[j]))
				}
			}
			ands = append(ands, prefix+quote(keys[i])+" "+op+" ?")
			args = append(args, normalizeArg(s.db, vals[i]))
			ors = append(ors, "("+strings.Join(ands, " AND ")+")")
		}
		w.add("("+strings.Join(ors, " OR ")+")", args...)
	}
	order := make([]string, len(keys))
	for i, k := range keys {
		order[i] = prefix + quote(k) + " " + strings.ToUpper(dir)
	}
	tail := " ORDER BY " + strings.Join(order, ", ")
	if o.Limit > 0 {
		tail += fmt.Sprintf(" LIMIT %d", o.Limit)
	}
	return tail, nil
}

// duplicate maps a unique violation to a DuplicateError naming the column,
// or returns nil when err is not one.
func duplicate(err error, kind string, value func(col string) string) *DuplicateError {
	d, ok := sqldb.IsDuplicate(err)
	if !ok {
		return nil
	}
	col := "uuid"
	if len(d.Columns) > 0 {
		col = d.Columns[0]
	}
	return &DuplicateError{Kind: kind, Field: col, Value: value(col)}
}
