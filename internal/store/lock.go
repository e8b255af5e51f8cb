package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"

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

// ReleaseNode drops the lock only when tag holds it: a lock held by
// another host gives a NodeLockedError, no lock a NodeNotLockedError.
// Dropping it stamps updated_at, as taking it does. The release is one
// statement; the node is read only to explain a refusal.
func (s *sqlStore) ReleaseNode(ctx context.Context, tag string, nodeID int64) error {
	var affected int64
	lost := false
	err := s.db.Retry(ctx, func(ctx context.Context) error {
		res, err := s.db.Cached().ExecContext(ctx, releaseQuery, s.db.Time(s.clock()), nodeID, tag)
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
	if len(fields) == 0 || slices.Contains(fields, "provision_state") {
		if _, err := s.UpdateNodeIf(ctx, n, NodeCondition{Reservation: &tag}, fields...); err != nil {
			return err
		}
		return s.ReleaseNode(ctx, tag, n.ID)
	}
	if slices.Contains(fields, "uuid") {
		return &InvalidParameterError{Msg: "Cannot overwrite UUID for an existing Node."}
	}
	v := *n
	fs, err := s.sealedFields(&v, fields)
	if err != nil {
		return err
	}
	set, args, err := s.updateSet(fs, fields, s.clock())
	if err != nil {
		return err
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
				return nil // the lost COMMIT was kept
			}
			// Not kept: the write failed, and the lock must not outlive
			// the task.
			_ = s.ReleaseNode(ctx, tag, n.ID)
		}
		return wrapUnlessTyped(err, "save and release node "+n.UUID)
	}
	if affected == 1 {
		return nil
	}
	return s.notReleased(ctx, n.ID)
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
