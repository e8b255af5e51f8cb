package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/openkeel/ironic/internal/model"
)

// reservationOf reads the node's uuid and lock holder.
func (s *sqlStore) reservationOf(ctx context.Context, nodeID int64) (string, sql.NullString, error) {
	var u string
	var holder sql.NullString
	err := s.db.Cached().QueryRowContext(ctx, "SELECT uuid, reservation FROM nodes WHERE id = ?", nodeID).Scan(&u, &holder)
	if errors.Is(err, sql.ErrNoRows) {
		return "", holder, &NotFoundError{Kind: KindNode, Ident: strconv.FormatInt(nodeID, 10)}
	}
	if err != nil {
		return "", holder, fmt.Errorf("read reservation of node %d: %w", nodeID, err)
	}
	return u, holder, nil
}

// ReserveNode takes the node's lock for tag (a conductor hostname) with
// one conditional UPDATE, the only concurrency control upstream has on
// nodes. A held lock gives a NodeLockedError naming the holder. Taking the
// lock stamps updated_at, as oslo.db's onupdate does for upstream's UPDATE.
func (s *sqlStore) ReserveNode(ctx context.Context, tag string, nodeID int64) (*model.Node, error) {
	u, holder, err := s.reservationOf(ctx, nodeID)
	if err != nil {
		return nil, err
	}
	if holder.Valid {
		// Fail fast without taking a write lock, as upstream does.
		return nil, &NodeLockedError{Node: u, Host: holder.String}
	}
	var affected int64
	err = s.db.Retry(ctx, func(ctx context.Context) error {
		res, err := s.db.Cached().ExecContext(ctx, "UPDATE nodes SET reservation = ?, updated_at = ? WHERE id = ? AND reservation IS NULL", tag, s.db.Time(s.clock()), nodeID)
		if err != nil {
			return err
		}
		affected, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reserve node %s: %w", u, err)
	}
	if affected != 1 {
		_, holder, err := s.reservationOf(ctx, nodeID)
		if err != nil {
			return nil, err
		}
		return nil, &NodeLockedError{Node: u, Host: holder.String}
	}
	return s.GetNodeByID(ctx, nodeID)
}

// ReleaseNode drops the lock only when tag holds it: a lock held by
// another host gives a NodeLockedError, no lock a NodeNotLockedError.
// Dropping it stamps updated_at, as taking it does.
func (s *sqlStore) ReleaseNode(ctx context.Context, tag string, nodeID int64) error {
	u, holder, err := s.reservationOf(ctx, nodeID)
	if err != nil {
		return err
	}
	var affected int64
	err = s.db.Retry(ctx, func(ctx context.Context) error {
		res, err := s.db.Cached().ExecContext(ctx, "UPDATE nodes SET reservation = NULL, updated_at = ? WHERE id = ? AND reservation = ?", s.db.Time(s.clock()), nodeID, tag)
		if err != nil {
			return err
		}
		affected, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("release node %s: %w", u, err)
	}
	if affected == 1 {
		return nil
	}
	if !holder.Valid {
		return &NodeNotLockedError{Node: u}
	}
	return &NodeLockedError{Node: u, Host: holder.String}
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
