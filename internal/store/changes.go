package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openkeel/ironic/internal/store/sqldb"
)

// The change stream's record (docs/changes.md): every write of a node,
// port, portgroup, allocation or conductor adds one row to
// openkeel_changes in its own transaction, so that the stream never shows
// a write that was rolled back and never misses one that committed.

// ChangeResource names the kind of object a change is about.
type ChangeResource string

// The resources of the change stream.
const (
	ChangeNode       ChangeResource = "node"
	ChangePort       ChangeResource = "port"
	ChangePortgroup  ChangeResource = "portgroup"
	ChangeAllocation ChangeResource = "allocation"
	ChangeConductor  ChangeResource = "conductor"
)

// ChangeAction says what happened to the object.
type ChangeAction string

// The actions of the change stream. Provision and power are updates that
// moved the node's provision state or wrote its power state; they are
// told apart because they are what clients poll for.
const (
	ChangeCreated   ChangeAction = "created"
	ChangeUpdated   ChangeAction = "updated"
	ChangeDeleted   ChangeAction = "deleted"
	ChangeProvision ChangeAction = "provision"
	ChangePower     ChangeAction = "power"
)

// Change is one row of the change stream's table.
type Change struct {
	// Seq is the database's sequence number of the change: strictly
	// increasing in commit order, without holes.
	Seq      int64
	Time     time.Time
	Resource ChangeResource
	Action   ChangeAction
	// UUID is the object's UUID; a conductor's hostname for conductors.
	UUID string
	// NodeUUID is the node the object belongs to ("" for none); the
	// node's own UUID for a node.
	NodeUUID string
	// Changed names the fields written; nil when the whole object was
	// (creation, deletion, an update of every column).
	Changed []string
	// The node's attributes right after the change (before it, for a
	// deletion), for the stream's filters and for the policy check of a
	// deleted object. Owner is the allocation's owner for an allocation.
	ProvisionState string
	ConductorGroup string
	Shard          string
	Owner          string
	Lessee         string
}

// ChangeLog reads the change stream's table; the SQL store is one.
type ChangeLog interface {
	// ChangesAfter returns up to limit changes with a seq above after, in
	// seq order, without holes: it never returns a seq while a lower one
	// is still being committed.
	ChangesAfter(ctx context.Context, after int64, limit int) ([]Change, error)
	// ChangeBounds returns the oldest seq still kept (0 when none is) and
	// the latest seq given out.
	ChangeBounds(ctx context.Context) (oldest, latest int64, err error)
	// ChangeSignal returns a channel closed when a change is next
	// committed through this process's store.
	ChangeSignal() <-chan struct{}
	// PurgeChanges deletes the changes recorded before t and returns how
	// many.
	PurgeChanges(ctx context.Context, before time.Time) (int64, error)
}

var _ ChangeLog = (*sqlStore)(nil)

// WithChangeRetention makes the store delete changes older than d, every
// changePurgeEvery changes it records ([openkeel_changes]/retention); 0
// keeps them all.
func WithChangeRetention(d time.Duration) Option {
	return func(s *sqlStore) { s.changes.retention = d }
}

// changePurgeEvery is how many changes apart a store purges old ones: a
// purge is one indexed DELETE, cheap at that rate.
const changePurgeEvery = 1024

// changeState is the store's part of the change stream: the wake-up of
// this process's readers and the purge schedule.
type changeState struct {
	mu        sync.Mutex
	committed chan struct{}
	retention time.Duration
	purgeDue  atomic.Bool
}

// ChangeSignal implements ChangeLog.
func (s *sqlStore) ChangeSignal() <-chan struct{} {
	s.changes.mu.Lock()
	defer s.changes.mu.Unlock()
	if s.changes.committed == nil {
		s.changes.committed = make(chan struct{})
	}
	return s.changes.committed
}

// changeTx is InTx for a write that records a change: once it commits,
// this process's readers are woken (others find it by polling) and, every
// changePurgeEvery changes, old ones are purged.
func (s *sqlStore) changeTx(ctx context.Context, fn func(*sql.Tx) error) error {
	if err := s.db.InTx(ctx, fn); err != nil {
		return err
	}
	s.changeCommitted(ctx)
	return nil
}

// changeCommitted is what follows the commit of a change row: the
// stream's waiters are woken, and the purge runs when due.
func (s *sqlStore) changeCommitted(ctx context.Context) {
	s.changes.mu.Lock()
	if s.changes.committed != nil {
		close(s.changes.committed)
		s.changes.committed = nil
	}
	s.changes.mu.Unlock()
	if s.changes.retention > 0 && s.changes.purgeDue.CompareAndSwap(true, false) {
		// Best effort: the next purge catches up what this one missed.
		_, _ = s.PurgeChanges(context.WithoutCancel(ctx), s.now().Add(-s.changes.retention))
	}
}

// changeSubject is what a change row says of its object besides the
// action: read in the change's transaction.
type changeSubject struct {
	resource ChangeResource
	uuid     string
	nodeUUID string
	owner    string // an allocation's owner
	node     nodeAttrs
}

// nodeAttrs are the node columns a change row keeps.
type nodeAttrs struct {
	provisionState, conductorGroup, shard, owner, lessee sql.NullString
}

const nodeAttrsQuery = "SELECT uuid, provision_state, conductor_group, shard, owner, lessee FROM nodes WHERE id = ?"

// nodeSubject reads the node's UUID and attributes in q.
func nodeSubject(ctx context.Context, q querier, nodeID int64) (changeSubject, error) {
	c := changeSubject{resource: ChangeNode}
	a := &c.node
	err := q.QueryRowContext(ctx, nodeAttrsQuery, nodeID).Scan(&c.uuid, &a.provisionState, &a.conductorGroup, &a.shard, &a.owner, &a.lessee)
	if err != nil {
		return c, fmt.Errorf("read node %d for the change stream: %w", nodeID, err)
	}
	c.nodeUUID = c.uuid
	return c, nil
}

// streamTables are the tables of the generic resources whose writes are
// recorded, with their stream resource.
var streamTables = map[string]ChangeResource{
	"ports":       ChangePort,
	"portgroups":  ChangePortgroup,
	"allocations": ChangeAllocation,
}

// rowSubject reads what a change of row id of table (one of
// streamTables) records; ok is false for a table not streamed.
func rowSubject(ctx context.Context, q querier, table string, id int64) (changeSubject, bool, error) {
	res, ok := streamTables[table]
	if !ok {
		return changeSubject{}, false, nil
	}
	c := changeSubject{resource: res}
	var nodeID sql.NullInt64
	var owner sql.NullString
	query := "SELECT uuid, node_id, NULL FROM " + table + " WHERE id = ?"
	if res == ChangeAllocation {
		query = "SELECT uuid, node_id, owner FROM allocations WHERE id = ?"
	}
	if err := q.QueryRowContext(ctx, query, id).Scan(&c.uuid, &nodeID, &owner); err != nil {
		return c, false, fmt.Errorf("read %s %d for the change stream: %w", table, id, err)
	}
	c.owner = owner.String
	if nodeID.Valid {
		n, err := nodeSubject(ctx, q, nodeID.Int64)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return c, false, err
		}
		c.nodeUUID, c.node = n.uuid, n.node
	}
	return c, true, nil
}

// recordRow records a change of row id of table, read in tx, when the
// table is streamed.
func (s *sqlStore) recordRow(ctx context.Context, tx *sql.Tx, table string, id int64, action ChangeAction, changed []string) error {
	c, ok, err := rowSubject(ctx, tx, table, id)
	if err != nil || !ok {
		return err
	}
	return s.recordChange(ctx, tx, c, action, changed)
}

// recordNode records a change of the node, read in tx.
func (s *sqlStore) recordNode(ctx context.Context, tx *sql.Tx, nodeID int64, action ChangeAction, changed []string) error {
	c, err := nodeSubject(ctx, tx, nodeID)
	if err != nil {
		return err
	}
	return s.recordChange(ctx, tx, c, action, changed)
}

// nodeAction is the action of an update writing fields (every column
// when nil): provision when it moved the provision state, power when it
// wrote the power state.
func nodeAction(fields []string, provisionMoved bool) ChangeAction {
	switch {
	case provisionMoved:
		return ChangeProvision
	case slices.Contains(fields, "power_state") || slices.Contains(fields, "target_power_state"):
		return ChangePower
	}
	return ChangeUpdated
}

// changedFields are the field names a change row lists: the columns
// written without the timestamps every write stamps.
func changedFields(fields []string) []string {
	if len(fields) == 0 {
		return nil
	}
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		switch f {
		case "id", "uuid", "created_at", "updated_at":
			continue
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// recordChange adds the change row, taking its seq from the counter row.
// It is the last statement of the transaction's writes: the counter's row
// lock, held to the commit, serialises committing writers for as short a
// time as possible, and orders them.
func (s *sqlStore) recordChange(ctx context.Context, tx *sql.Tx, c changeSubject, action ChangeAction, changed []string) error {
	seq, err := s.nextChangeSeq(ctx, tx)
	if err != nil {
		return err
	}
	var changedJSON any
	if changed = changedFields(changed); changed != nil {
		b, err := json.Marshal(changed)
		if err != nil {
			return fmt.Errorf("record change: %w", err)
		}
		changedJSON = string(b)
	}
	owner := c.node.owner
	if c.resource == ChangeAllocation {
		owner = sql.NullString{String: c.owner, Valid: c.owner != ""}
	}
	_, err = tx.ExecContext(ctx, "INSERT INTO openkeel_changes (seq, created_at, resource, action, uuid, node_uuid, changed, provision_state, conductor_group, shard, owner, lessee) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		seq, s.db.Time(s.clock()), string(c.resource), string(action), c.uuid, nullIfEmpty(c.nodeUUID), changedJSON,
		c.node.provisionState, c.node.conductorGroup, c.node.shard, owner, c.node.lessee)
	if err != nil {
		return fmt.Errorf("record change %d: %w", seq, err)
	}
	if seq%changePurgeEvery == 0 {
		s.changes.purgeDue.Store(true)
	}
	return nil
}

func nullIfEmpty(v string) any {
	if v == "" {
		return nil
	}
	return v
}

// nextChangeSeq increments the counter row and returns its new value:
// with MySQL's LAST_INSERT_ID(expr) or SQLite's RETURNING, one statement.
func (s *sqlStore) nextChangeSeq(ctx context.Context, tx *sql.Tx) (int64, error) {
	var seq int64
	if s.db.Dialect() == sqldb.MySQL {
		res, err := tx.ExecContext(ctx, "UPDATE openkeel_change_seq SET seq = LAST_INSERT_ID(seq + 1) WHERE id = 1")
		if err == nil {
			seq, err = res.LastInsertId()
		}
		if err != nil {
			return 0, fmt.Errorf("next change seq: %w", err)
		}
		return seq, nil
	}
	if err := tx.QueryRowContext(ctx, "UPDATE openkeel_change_seq SET seq = seq + 1 WHERE id = 1 RETURNING seq").Scan(&seq); err != nil {
		return 0, fmt.Errorf("next change seq: %w", err)
	}
	return seq, nil
}

const changeColumns = "seq, created_at, resource, action, uuid, node_uuid, changed, provision_state, conductor_group, shard, owner, lessee"

// ChangesAfter implements ChangeLog.
//
// On MySQL the read is a locking one. InnoDB may let a transaction that
// took a later seq (after the earlier one released the counter's lock)
// become visible to a snapshot before the earlier one does: a plain
// SELECT can then return seq n+1 without n (seen once in 15 runs of
// TestChangesConcurrentWritersInCommitOrder on MariaDB 10.11), and a
// reader that moved past n would never see it. A locking read sees the
// newest rows instead of a snapshot and waits for a row whose transaction
// is still committing, so no seq is skipped.
func (s *sqlStore) ChangesAfter(ctx context.Context, after int64, limit int) ([]Change, error) {
	var out []Change
	err := s.db.InLockingReadTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = s.changesAfter(ctx, tx, after, limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read changes after %d: %w", after, err)
	}
	return out, nil
}

func (s *sqlStore) changesAfter(ctx context.Context, tx *sql.Tx, after int64, limit int) ([]Change, error) {
	query := "SELECT " + changeColumns + " FROM openkeel_changes WHERE seq > ? ORDER BY seq LIMIT ?"
	if s.db.Dialect() == sqldb.MySQL {
		query += " LOCK IN SHARE MODE"
	}
	rows, err := tx.QueryContext(ctx, query, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Change
	for rows.Next() {
		var c Change
		var at any
		var nodeUUID, changed, prov, group, shard, owner, lessee sql.NullString
		var res, act string
		if err := rows.Scan(&c.Seq, &at, &res, &act, &c.UUID, &nodeUUID, &changed, &prov, &group, &shard, &owner, &lessee); err != nil {
			return nil, err
		}
		c.Time, err = asTime(at)
		if err != nil {
			return nil, fmt.Errorf("read change %d: %w", c.Seq, err)
		}
		c.Resource, c.Action = ChangeResource(res), ChangeAction(act)
		c.NodeUUID, c.ProvisionState, c.ConductorGroup = nodeUUID.String, prov.String, group.String
		c.Shard, c.Owner, c.Lessee = shard.String, owner.String, lessee.String
		if changed.Valid {
			if err := json.Unmarshal([]byte(changed.String), &c.Changed); err != nil {
				return nil, fmt.Errorf("read change %d: changed: %w", c.Seq, err)
			}
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ChangeBounds implements ChangeLog.
func (s *sqlStore) ChangeBounds(ctx context.Context) (oldest, latest int64, err error) {
	var min sql.NullInt64
	err = s.db.InReadTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, "SELECT seq FROM openkeel_change_seq WHERE id = 1").Scan(&latest); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, "SELECT MIN(seq) FROM openkeel_changes").Scan(&min)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("read change stream bounds: %w", err)
	}
	return min.Int64, latest, nil
}

// PurgeChanges implements ChangeLog.
func (s *sqlStore) PurgeChanges(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM openkeel_changes WHERE created_at < ?", s.db.Time(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("purge changes before %s: %w", before.Format(time.RFC3339), err)
	}
	return n, nil
}

// recordConductor records a change of the conductor, read in tx; its
// hostname is the change's UUID and its group the change's group.
func (s *sqlStore) recordConductor(ctx context.Context, tx *sql.Tx, hostname string, action ChangeAction, changed []string) error {
	c := changeSubject{resource: ChangeConductor, uuid: hostname}
	if err := tx.QueryRowContext(ctx, "SELECT conductor_group FROM conductors WHERE hostname = ?", hostname).Scan(&c.node.conductorGroup); err != nil {
		return fmt.Errorf("read conductor %s for the change stream: %w", hostname, err)
	}
	return s.recordChange(ctx, tx, c, action, changed)
}
