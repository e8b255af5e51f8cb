package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// reservationOf reads the node's uuid and lock holder.
func reservationOf(ctx context.Context, q querier, nodeID int64) (string, sql.NullString, error) {
	var u string
	var holder sql.NullString
	err := q.QueryRowContext(ctx, reservationQuery, nodeID).Scan(&u, &holder)
	if errors.Is(err, sql.ErrNoRows) {
		return "", holder, &NotFoundError{Kind: KindNode, Ident: strconv.FormatInt(nodeID, 10)}
	}
	if err != nil {
		return "", holder, fmt.Errorf("read reservation of node %d: %w", nodeID, err)
	}
	return u, holder, nil
}

const (
	reservationQuery = "SELECT uuid, reservation FROM nodes WHERE id = ?"
	reserveQuery     = "UPDATE nodes SET reservation = ?, updated_at = ? WHERE id = ? AND reservation IS NULL"
	releaseQuery     = "UPDATE nodes SET reservation = NULL, updated_at = ? WHERE id = ? AND reservation = ?"
)

// nodeByIDQuery is getNode's text for a read by id, so that the lock's
// read shares its prepared statement.
var nodeByIDQuery = nodeSelect + " WHERE " + quote("id") + " = ?"

// ReserveNode takes the node's lock for tag (a conductor hostname) with
// one conditional UPDATE, the only concurrency control upstream has on
// nodes, and reads the node in the same write transaction, as upstream's
// reserve_node does: the node returned is the one the lock protects, and
// the lock costs one transaction. A held lock gives a NodeLockedError
// naming the holder. Taking the lock stamps updated_at, as oslo.db's
// onupdate does for upstream's UPDATE.
//
// Callers that know the node is reserved (a summary read just before)
// fail fast without calling it, which spares the write lock.
func (s *sqlStore) ReserveNode(ctx context.Context, tag string, nodeID int64) (*model.Node, error) {
	ident := strconv.FormatInt(nodeID, 10)
	cached := s.db.Cached()
	if err := cached.Prepare(ctx, reserveQuery, reservationQuery, nodeByIDQuery, traitsOfOne, tagsOfOne); err != nil {
		return nil, fmt.Errorf("reserve node %s: %w", ident, err)
	}
	var n *model.Node
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		q := cached.InTx(tx)
		res, err := q.ExecContext(ctx, reserveQuery, tag, s.db.Time(s.clock()), nodeID)
		if err != nil {
			return err
		}
		affected, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if affected != 1 {
			u, holder, err := reservationOf(ctx, q, nodeID)
			if err != nil {
				return err
			}
			return &NodeLockedError{Node: u, Host: holder.String}
		}
		n, err = s.getNodeIn(ctx, q, "id", nodeID, ident)
		return err
	})
	if err != nil {
		if sqldb.LostConnection(err) {
			// The COMMIT may have been kept without our knowing: give
			// the lock back rather than leave the node reserved by a task
			// that failed.
			s.dropLost(ctx, tag, nodeID)
		}
		return nil, wrapUnlessTyped(err, "reserve node "+ident)
	}
	return n, nil
}

// NodeVerdict is what ReserveOrUpdateNode's decide makes of the node.
type NodeVerdict struct {
	// Reserve takes the node's lock for the caller, as ReserveNode.
	Reserve bool
	// Fields names the columns decide changed on the node, written
	// without taking the lock. None, without Reserve, writes nothing.
	Fields []string
}

// errNothingToWrite rolls back a ReserveOrUpdateNode that writes nothing.
var errNothingToWrite = errors.New("nothing to write")

// ReserveOrUpdateNode is, for a node nobody holds, a lock taken, a save
// and a release in one write transaction (issue 29: a heartbeat that only
// records the agent's fields cost a reservation and a save-and-release).
// The node (by id or, when uuid is not empty, by UUID) is read in a
// write transaction that also locks its row, so that no one can reserve
// or change it until the transaction ends; decide sees it and either
// changes it (the named columns are written, the reservation left
// empty), or asks for the lock (the node is reserved for tag, as
// ReserveNode does, and returned so), or neither. decide must not wait
// on anything: every writer waits for it. A held lock gives
// NodeLockedError, as ReserveNode's, without calling decide; decide's
// error is returned and nothing is written. The node returned is as a
// read after the transaction gives it.
func (s *sqlStore) ReserveOrUpdateNode(ctx context.Context, tag string, nodeID int64, uuid string, decide func(*model.Node) (NodeVerdict, error)) (*model.Node, error) {
	col, val, ident := "id", any(nodeID), strconv.FormatInt(nodeID, 10)
	if uuid != "" {
		col, val, ident = "uuid", uuid, uuid
	}
	// Its texts are prepared once on SQLite, as ReserveNode's: parsing
	// them would cost more than running them.
	rowQuery := "SELECT id, reservation FROM nodes WHERE " + quote(col) + " = ?" + forUpdate(s.db)
	cached := s.db.Cached()
	if err := cached.Prepare(ctx, rowQuery, reserveQuery, nodeByIDQuery, traitsOfOne, tagsOfOne); err != nil {
		return nil, fmt.Errorf("reserve or update node %s: %w", ident, err)
	}
	var out *model.Node
	var id int64
	recorded, reserving := false, false
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		q := cached.InTx(tx)
		var holder sql.NullString
		err := q.QueryRowContext(ctx, rowQuery, val).Scan(&id, &holder)
		if err == sql.ErrNoRows {
			return &NotFoundError{Kind: KindNode, Ident: ident}
		}
		if err != nil {
			return err
		}
		if holder.Valid {
			u := uuid
			if u == "" {
				u = ident
			}
			return &NodeLockedError{Node: u, Host: holder.String}
		}
		n, err := s.getNodeIn(ctx, q, "id", id, ident)
		if err != nil {
			return err
		}
		v, err := decide(n)
		if err != nil {
			return err
		}
		now := s.clock()
		switch {
		case v.Reserve:
			reserving = true
			if _, err := q.ExecContext(ctx, reserveQuery, tag, s.db.Time(now), id); err != nil {
				return err
			}
			n.Reservation = &tag
			out, err = s.asWritten(n, []string{"reservation"}, &now)
			return err
		case len(v.Fields) == 0:
			out = n
			return errNothingToWrite
		case slices.Contains(v.Fields, "uuid") || slices.Contains(v.Fields, "provision_state"):
			// UpdateNodeIf's business: the UUID never changes, and a
			// state change stamps its timestamps.
			return fmt.Errorf("node %s: %v cannot be written without its lock", n.UUID, v.Fields)
		}
		fs, err := s.sealedFields(n, v.Fields)
		if err != nil {
			return err
		}
		set, args, err := s.updateSet(fs, v.Fields, now)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE nodes SET "+set+" WHERE id = ?", append(args, id)...); err != nil {
			if d := duplicate(err, KindNode, nodeDupValue(n)); d != nil {
				return d
			}
			return err
		}
		if err := s.recordNode(ctx, tx, id, nodeAction(v.Fields, false), v.Fields); err != nil {
			return err
		}
		recorded = true
		out, err = s.asWritten(n, v.Fields, &now)
		return err
	})
	if err == nil && recorded {
		// A reservation records no change: only a save wakes the stream.
		s.changeCommitted(ctx)
	}
	if errors.Is(err, errNothingToWrite) {
		return out, nil
	}
	if err != nil {
		if reserving && sqldb.LostConnection(err) {
			// As ReserveNode's: a COMMIT kept without our knowing must
			// not leave the node reserved by a task that failed.
			s.dropLost(ctx, tag, id)
		}
		return nil, wrapUnlessTyped(err, "reserve or update node "+ident)
	}
	return out, nil
}

// ReleaseNode drops the lock only when tag holds it: a lock held by
// another host gives a NodeLockedError, no lock a NodeNotLockedError.
// Dropping it stamps updated_at, as taking it does. The release is one
// statement; the node is read only to explain a refusal.
func (s *sqlStore) ReleaseNode(ctx context.Context, tag string, nodeID int64) error {
	return s.releaseAt(ctx, tag, nodeID, s.clock())
}

// releaseAt is ReleaseNode stamping updated_at with now.
func (s *sqlStore) releaseAt(ctx context.Context, tag string, nodeID int64, now time.Time) error {
	var affected int64
	lost := false
	err := s.db.Retry(ctx, func(ctx context.Context) error {
		res, err := s.db.Cached().ExecContext(ctx, releaseQuery, s.db.Time(now), nodeID, tag)
		if err != nil {
			// A release whose connection broke is run again, whether or
			// not it was kept: a node left reserved refuses every task.
			lost = lost || sqldb.LostConnection(err)
			return sqldb.Repeatable(err)
		}
		affected, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("release node %d: %w", nodeID, err)
	}
	if affected == 1 || (lost && s.releasedAfterLoss(ctx, tag, nodeID)) {
		return nil
	}
	return s.notReleased(ctx, nodeID)
}

// releasedAfterLoss reports, after a release whose answer was lost with
// its connection, whether tag no longer holds the node: the lost try was
// kept.
func (s *sqlStore) releasedAfterLoss(ctx context.Context, tag string, nodeID int64) bool {
	var holder sql.NullString
	err := s.db.Retry(ctx, func(ctx context.Context) error {
		var err error
		_, holder, err = reservationOf(ctx, s.db.Cached(), nodeID)
		return err
	})
	return err == nil && holder.String != tag
}

// dropLost gives back a lock that a reservation lost with its connection
// may have taken, best effort: what it cannot release the conductor's
// restart does, as after a crash.
func (s *sqlStore) dropLost(ctx context.Context, tag string, nodeID int64) {
	_ = s.db.Retry(ctx, func(ctx context.Context) error {
		_, err := s.db.Cached().ExecContext(ctx, "UPDATE nodes SET reservation = NULL WHERE id = ? AND reservation = ?", nodeID, tag)
		return sqldb.Repeatable(err)
	})
}

// notReleased explains why tag's release of the node changed nothing.
func (s *sqlStore) notReleased(ctx context.Context, nodeID int64) error {
	u, holder, err := reservationOf(ctx, s.db.Cached(), nodeID)
	if err != nil {
		return err
	}
	if !holder.Valid {
		return &NodeNotLockedError{Node: u}
	}
	return &NodeLockedError{Node: u, Host: holder.String}
}

// SaveAndReleaseNode writes the named columns of n and drops tag's lock
// on it in one conditional UPDATE: a task's last save and its release
// cost one write transaction instead of two. The write happens only
// while tag holds the lock; otherwise nothing is written and the error
// is ReleaseNode's. A change of provision_state, whose timestamps
// UpdateNodeIf maintains, is saved by UpdateNodeIf under the lock and
// then released.
func (s *sqlStore) SaveAndReleaseNode(ctx context.Context, tag string, n *model.Node, fields ...string) error {
	_, err := s.saveAndRelease(ctx, tag, n, false, fields)
	return err
}

// UpdateAndReleaseNode is SaveAndReleaseNode returning the node as a
// read after the release gives it (asWritten): no reservation, the
// write's updated_at.
func (s *sqlStore) UpdateAndReleaseNode(ctx context.Context, tag string, n *model.Node, fields ...string) (*model.Node, error) {
	return s.saveAndRelease(ctx, tag, n, true, fields)
}

// saveAndRelease is SaveAndReleaseNode; the node as written is made only
// when asked for (written): it re-encodes the written columns.
func (s *sqlStore) saveAndRelease(ctx context.Context, tag string, n *model.Node, written bool, fields []string) (*model.Node, error) {
	if len(fields) == 0 || slices.Contains(fields, "provision_state") {
		saved, err := s.UpdateNodeIf(ctx, n, NodeCondition{Reservation: &tag}, fields...)
		if err != nil {
			return nil, err
		}
		now := s.clock()
		if err := s.releaseAt(ctx, tag, n.ID, now); err != nil || !written {
			return nil, err
		}
		saved.Reservation = nil
		return s.asWritten(saved, []string{"reservation"}, &now)
	}
	if slices.Contains(fields, "uuid") {
		return nil, &InvalidParameterError{Msg: "Cannot overwrite UUID for an existing Node."}
	}
	v := *n
	fs, err := s.sealedFields(&v, fields)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	set, args, err := s.updateSet(fs, fields, now)
	if err != nil {
		return nil, err
	}
	var affected int64
	err = s.changeTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE nodes SET "+set+", reservation = NULL WHERE id = ? AND reservation = ?", append(args, n.ID, tag)...)
		if err != nil {
			if d := duplicate(err, KindNode, nodeDupValue(&v)); d != nil {
				if d.Field == "instance_uuid" {
					d.Node = v.UUID
				}
				return d
			}
			return err
		}
		affected, err = res.RowsAffected()
		if err != nil || affected != 1 {
			return err
		}
		return s.recordNode(ctx, tx, n.ID, nodeAction(fields, false), fields)
	})
	if err != nil {
		if sqldb.LostConnection(err) {
			if s.releasedAfterLoss(ctx, tag, n.ID) {
				affected = 1 // the lost COMMIT was kept
				err = nil
			} else {
				// Not kept: the write failed, and the lock must not
				// outlive the task.
				_ = s.ReleaseNode(ctx, tag, n.ID)
			}
		}
		if err != nil {
			return nil, wrapUnlessTyped(err, "save and release node "+n.UUID)
		}
	}
	if affected != 1 {
		return nil, s.notReleased(ctx, n.ID)
	}
	if !written {
		return nil, nil
	}
	v.Reservation = nil
	return s.asWritten(&v, append(slices.Clone(fields), "reservation"), &now)
}

// ClearNodeReservationsForConductor releases every lock held under
// hostname (compared case-insensitively, as upstream's ILIKE), which a
// conductor does at start for locks its previous run left behind, stamping
// their updated_at. It returns the UUIDs of the nodes released.
func (s *sqlStore) ClearNodeReservationsForConductor(ctx context.Context, hostname string) ([]string, error) {
	var uuids []string
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		uuids, err = stringColumn(ctx, tx, "SELECT uuid FROM nodes WHERE LOWER(reservation) = LOWER(?)", hostname)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE nodes SET reservation = NULL, updated_at = ? WHERE LOWER(reservation) = LOWER(?)", s.db.Time(s.clock()), hostname)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("clear reservations of %s: %w", hostname, err)
	}
	return uuids, nil
}

// AbortedPowerOperation is the last_error upstream leaves on nodes whose
// pending power operation died with their conductor.
const AbortedPowerOperation = "Pending power operation was aborted due to conductor restart"

// ClearNodeTargetPowerState clears target_power_state (and records why in
// last_error) on nodes locked by hostname, whose power operation was cut
// short by a restart, stamping updated_at. It returns the UUIDs of the
// nodes changed.
func (s *sqlStore) ClearNodeTargetPowerState(ctx context.Context, hostname string) ([]string, error) {
	const cond = " WHERE LOWER(reservation) = LOWER(?) AND target_power_state IS NOT NULL"
	var uuids []string
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		uuids, err = stringColumn(ctx, tx, "SELECT uuid FROM nodes"+cond, hostname)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE nodes SET target_power_state = NULL, last_error = ?, updated_at = ?"+cond, AbortedPowerOperation, s.db.Time(s.clock()), hostname)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("clear target power state of nodes locked by %s: %w", hostname, err)
	}
	return uuids, nil
}

func stringColumn(ctx context.Context, q querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
