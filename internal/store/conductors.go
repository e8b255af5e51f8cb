package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

func conductorFields(c *model.Conductor) []field {
	return rowFields(&c.ID, nil, &c.CreatedAt, &c.UpdatedAt, &c.Version, []field{
		{name: "hostname", ptr: &c.Hostname},
		{name: "drivers", ptr: &c.Drivers},
		{name: "online", ptr: &c.Online},
		{name: "conductor_group", ptr: &c.ConductorGroup},
	})
}

func hwIfaceFields(h *model.ConductorHardwareInterface) []field {
	return rowFields(&h.ID, nil, &h.CreatedAt, &h.UpdatedAt, &h.Version, []field{
		{name: "conductor_id", ptr: &h.ConductorID},
		{name: "hardware_type", ptr: &h.HardwareType},
		{name: "interface_type", ptr: &h.InterfaceType},
		{name: "interface_name", ptr: &h.InterfaceName},
		{name: "default", ptr: &h.Default},
	})
}

var (
	conductorColumns = fieldNames(conductorFields(&model.Conductor{}))
	conductorSelect  = "SELECT " + columnList(conductorFields(&model.Conductor{})) + " FROM conductors"
	hwIfaceSelect    = "SELECT " + prefixed("h.", hwIfaceFields(&model.ConductorHardwareInterface{})) + " FROM conductor_hardware_interfaces h"
)

func prefixed(p string, fs []field) string {
	cols := make([]string, len(fs))
	for i, f := range fs {
		cols[i] = p + quote(f.name)
	}
	return strings.Join(cols, ", ")
}

// RegisterConductor records hostname as online in group, stamping the
// heartbeat. An online conductor of that name is a
// ConductorAlreadyRegisteredError unless update is set; an offline one is
// taken over, as upstream's register_conductor. When ifaces is not nil the
// conductor's hardware interfaces are replaced by them in the same
// transaction.
func (s *sqlStore) RegisterConductor(ctx context.Context, hostname, group string, ifaces []model.ConductorHardwareInterface, update bool) (*model.Conductor, error) {
	// Upstream registers the conductor with the names of its enabled
	// hardware types, which GET /v1/conductors shows as "drivers".
	drivers := []string{}
	for _, i := range ifaces {
		if !slices.Contains(drivers, i.HardwareType) {
			drivers = append(drivers, i.HardwareType)
		}
	}
	driversJSON, err := json.Marshal(drivers)
	if err != nil {
		return nil, fmt.Errorf("register conductor %s: %w", hostname, err)
	}
	var id int64
	err = s.changeTx(ctx, func(tx *sql.Tx) error {
		now := s.clock()
		var online bool
		action := ChangeUpdated
		err := tx.QueryRowContext(ctx, "SELECT id, online FROM conductors WHERE hostname = ?"+forUpdate(s.db), hostname).Scan(&id, &online)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			c := model.Conductor{Hostname: hostname, ConductorGroup: group, Online: true, Drivers: drivers, CreatedAt: now, UpdatedAt: &now,
				Version: s.conductorVersion}
			id, err = s.insert(ctx, tx, "conductors", conductorFields(&c))
			if err != nil {
				return err
			}
			action = ChangeCreated
		case err != nil:
			return err
		default:
			if online && !update {
				return &ConductorAlreadyRegisteredError{Hostname: hostname}
			}
			q, args := "UPDATE conductors SET conductor_group = ?, online = ?, updated_at = ?", []any{group, true, s.db.Time(now)}
			if ifaces != nil {
				q, args = q+", drivers = ?", append(args, string(driversJSON))
			}
			if s.conductorVersion != "" {
				q, args = q+", version = ?", append(args, s.conductorVersion)
			}
			if _, err := tx.ExecContext(ctx, q+" WHERE id = ?", append(args, id)...); err != nil {
				return err
			}
		}
		if ifaces != nil {
			if _, err := tx.ExecContext(ctx, "DELETE FROM conductor_hardware_interfaces WHERE conductor_id = ?", id); err != nil {
				return err
			}
			if err := s.insertHWIfaces(ctx, tx, id, ifaces); err != nil {
				return err
			}
		}
		return s.recordConductor(ctx, tx, hostname, action, nil)
	})
	if err != nil {
		if d := duplicate(err, KindHWIface, func(string) string { return hostname }); d != nil {
			return nil, d
		}
		return nil, wrapUnlessTyped(err, "register conductor "+hostname)
	}
	return s.GetConductor(ctx, hostname, nil)
}

func (s *sqlStore) insertHWIfaces(ctx context.Context, tx *sql.Tx, conductorID int64, ifaces []model.ConductorHardwareInterface) error {
	now := s.clock()
	for _, h := range ifaces {
		h.ConductorID = conductorID
		h.CreatedAt = now
		h.UpdatedAt = nil
		if _, err := s.insert(ctx, tx, "conductor_hardware_interfaces", hwIfaceFields(&h)); err != nil {
			return err
		}
	}
	return nil
}

// RegisterConductorHardwareInterfaces adds interface rows; a row already
// present is a DuplicateError (ConductorHardwareInterfacesAlreadyRegistered).
func (s *sqlStore) RegisterConductorHardwareInterfaces(ctx context.Context, conductorID int64, ifaces []model.ConductorHardwareInterface) error {
	err := s.db.InTx(ctx, func(tx *sql.Tx) error { return s.insertHWIfaces(ctx, tx, conductorID, ifaces) })
	if d := duplicate(err, KindHWIface, func(string) string { return strconv.FormatInt(conductorID, 10) }); d != nil {
		return d
	}
	return wrapUnlessTyped(err, "register hardware interfaces of conductor "+strconv.FormatInt(conductorID, 10))
}

// UnregisterConductorHardwareInterfaces removes all of a conductor's
// interface rows.
func (s *sqlStore) UnregisterConductorHardwareInterfaces(ctx context.Context, conductorID int64) error {
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM conductor_hardware_interfaces WHERE conductor_id = ?", conductorID)
		return err
	})
	return wrapUnlessTyped(err, "unregister hardware interfaces of conductor "+strconv.FormatInt(conductorID, 10))
}

// ListConductorHardwareInterfaces lists a conductor's interface rows.
func (s *sqlStore) ListConductorHardwareInterfaces(ctx context.Context, conductorID int64) ([]model.ConductorHardwareInterface, error) {
	rows, err := queryAll(ctx, s.db, hwIfaceFields, hwIfaceSelect+" WHERE h.conductor_id = ? ORDER BY h.id", conductorID)
	if err != nil {
		return nil, fmt.Errorf("list hardware interfaces of conductor %d: %w", conductorID, err)
	}
	return derefAll(rows), nil
}

func derefAll[T any](rows []*T) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = *r
	}
	return out
}

// TouchConductor is the heartbeat: updated_at = now and online as given.
func (s *sqlStore) TouchConductor(ctx context.Context, hostname string, online bool) error {
	return s.conductorExec(ctx, hostname, "UPDATE conductors SET updated_at = ?, online = ? WHERE hostname = ?", s.db.Time(s.clock()), online, hostname)
}

// UnregisterConductor marks an online conductor offline (on shutdown); an
// unknown or already offline one is a NotFoundError.
func (s *sqlStore) UnregisterConductor(ctx context.Context, hostname string) error {
	err := s.changeTx(ctx, func(tx *sql.Tx) error {
		err := execOne(ctx, tx, &NotFoundError{Kind: KindConductor, Ident: hostname}, "UPDATE conductors SET online = ? WHERE hostname = ? AND online = ?", false, hostname, true)
		if err != nil {
			return err
		}
		return s.recordConductor(ctx, tx, hostname, ChangeUpdated, []string{"online"})
	})
	return wrapUnlessTyped(err, "conductor "+hostname)
}

func (s *sqlStore) conductorExec(ctx context.Context, hostname, query string, args ...any) error {
	err := s.db.InTx(ctx, func(tx *sql.Tx) error {
		return execOne(ctx, tx, &NotFoundError{Kind: KindConductor, Ident: hostname}, query, args...)
	})
	return wrapUnlessTyped(err, "conductor "+hostname)
}

// DeleteConductor removes a conductor as upstream's delete_conductor: its
// node locks and pending power targets are cleared, node affinities to it
// dropped and its interface rows deleted.
func (s *sqlStore) DeleteConductor(ctx context.Context, hostname string) error {
	if _, err := s.ClearNodeReservationsForConductor(ctx, hostname); err != nil {
		return err
	}
	if _, err := s.ClearNodeTargetPowerState(ctx, hostname); err != nil {
		return err
	}
	err := s.changeTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM conductors WHERE hostname = ?", hostname).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return &NotFoundError{Kind: KindConductor, Ident: hostname}
		}
		if err != nil {
			return err
		}
		// Clearing the affinity stamps the nodes' updated_at, as upstream's UPDATE does.
		if _, err := tx.ExecContext(ctx, "UPDATE nodes SET conductor_affinity = NULL, updated_at = ? WHERE conductor_affinity = ?", s.db.Time(s.clock()), id); err != nil {
			return err
		}
		// Recorded before the row goes: the change row keeps its group.
		if err := s.recordConductor(ctx, tx, hostname, ChangeDeleted, nil); err != nil {
			return err
		}
		for _, q := range []string{
			"DELETE FROM conductor_hardware_interfaces WHERE conductor_id = ?",
			"DELETE FROM conductors WHERE id = ?",
		} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return err
			}
		}
		return nil
	})
	return wrapUnlessTyped(err, "delete conductor "+hostname)
}

// GetConductor returns the conductor; online, when not nil, must match.
func (s *sqlStore) GetConductor(ctx context.Context, hostname string, online *bool) (*model.Conductor, error) {
	q := conductorSelect + " WHERE hostname = ?"
	args := []any{hostname}
	if online != nil {
		q += " AND online = ?"
		args = append(args, *online)
	}
	rows, err := queryAll(ctx, s.db, conductorFields, q, args...)
	if err != nil {
		return nil, fmt.Errorf("get conductor %s: %w", hostname, err)
	}
	if len(rows) == 0 {
		return nil, &NotFoundError{Kind: KindConductor, Ident: hostname}
	}
	return rows[0], nil
}

// ListConductors returns one page of conductors; the marker is a hostname.
func (s *sqlStore) ListConductors(ctx context.Context, o ListOptions) ([]*model.Conductor, error) {
	w := &where{}
	tail, err := s.paginate(ctx, s.db, "conductors", "", conductorColumns, "hostname", w, o)
	if err != nil {
		return nil, err
	}
	rows, err := queryAll(ctx, s.db, conductorFields, conductorSelect+w.sql()+tail, w.args...)
	if err != nil {
		return nil, fmt.Errorf("list conductors: %w", err)
	}
	return rows, nil
}

// activeCond is upstream's _filter_active_conductors: online, and with a
// heartbeat no older than heartbeatTimeout when it is positive. Upstream
// skips the age test on SQLite (one process there); callers wanting that
// pass 0.
func (s *sqlStore) activeCond(prefix string, heartbeatTimeout time.Duration) (string, []any) {
	cond := prefix + "online = ?"
	args := []any{true}
	if heartbeatTimeout > 0 {
		cond += " AND " + prefix + "updated_at >= ?"
		args = append(args, s.db.Time(s.clock().Add(-heartbeatTimeout)))
	}
	return cond, args
}

// GetOnlineConductors lists the hostnames of active conductors.
func (s *sqlStore) GetOnlineConductors(ctx context.Context, heartbeatTimeout time.Duration) ([]string, error) {
	cond, args := s.activeCond("", heartbeatTimeout)
	hosts, err := stringColumn(ctx, s.db, "SELECT hostname FROM conductors WHERE "+cond+" ORDER BY hostname", args...)
	if err != nil {
		return nil, fmt.Errorf("list online conductors: %w", err)
	}
	return hosts, nil
}

// GetOfflineConductors lists the hostnames of conductors that are not
// active: unregistered, or silent for longer than heartbeatTimeout.
func (s *sqlStore) GetOfflineConductors(ctx context.Context, heartbeatTimeout time.Duration) ([]string, error) {
	q := "SELECT hostname FROM conductors WHERE online IS NULL OR online = ?"
	args := []any{false}
	if heartbeatTimeout > 0 {
		q += " OR updated_at IS NULL OR updated_at < ?"
		args = append(args, s.db.Time(s.clock().Add(-heartbeatTimeout)))
	}
	hosts, err := stringColumn(ctx, s.db, q+" ORDER BY hostname", args...)
	if err != nil {
		return nil, fmt.Errorf("list offline conductors: %w", err)
	}
	return hosts, nil
}

// GetActiveHardwareTypeDict is what the hash ring is built from: hardware
// type → conductor group → sorted hostnames of the active conductors that
// enabled that hardware type.
func (s *sqlStore) GetActiveHardwareTypeDict(ctx context.Context, heartbeatTimeout time.Duration) (map[string]map[string][]string, error) {
	cond, args := s.activeCond("c.", heartbeatTimeout)
	rows, err := s.db.QueryContext(ctx, "SELECT DISTINCT h.hardware_type, c.conductor_group, c.hostname FROM conductor_hardware_interfaces h JOIN conductors c ON h.conductor_id = c.id WHERE "+cond, args...)
	if err != nil {
		return nil, fmt.Errorf("read active hardware types: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string][]string{}
	for rows.Next() {
		var hw, group, host string
		if err := rows.Scan(&hw, &group, &host); err != nil {
			return nil, fmt.Errorf("read active hardware types: %w", err)
		}
		if out[hw] == nil {
			out[hw] = map[string][]string{}
		}
		if !slices.Contains(out[hw][group], host) {
			out[hw][group] = append(out[hw][group], host)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read active hardware types: %w", err)
	}
	for _, groups := range out {
		for _, hosts := range groups {
			slices.Sort(hosts)
		}
	}
	return out, nil
}

// ListHardwareTypeInterfaces lists the interface rows of active conductors
// for the given hardware types (the API's /v1/drivers detail).
func (s *sqlStore) ListHardwareTypeInterfaces(ctx context.Context, hardwareTypes []string, heartbeatTimeout time.Duration) ([]model.ConductorHardwareInterface, error) {
	w := &where{}
	w.in("h.hardware_type", hardwareTypes)
	cond, args := s.activeCond("c.", heartbeatTimeout)
	w.add(cond, args...)
	rows, err := queryAll(ctx, s.db, hwIfaceFields, hwIfaceSelect+" JOIN conductors c ON h.conductor_id = c.id"+w.sql()+" ORDER BY h.id", w.args...)
	if err != nil {
		return nil, fmt.Errorf("list hardware type interfaces: %w", err)
	}
	return derefAll(rows), nil
}
