package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// A big fleet is enrolled through the API only up to a first count (the
// creation figure); the rest is cloned from those rows in SQL, in the
// schema the service's own dbsync made, so that 100,000 nodes take
// seconds instead of an hour against upstream. Clones differ from their
// template in id, uuid and name, and start in the template's state at
// creation (enroll, empty driver_internal_info, no reservation).

// templates are the rows enrolled through the API.
type templates struct {
	minID, count int
	// state and internalInfo are the first row's at creation.
	state, internalInfo string
	// source is the table clones are read from: nodes itself on SQLite;
	// on MariaDB a copy made at creation, because an INSERT ... SELECT
	// from its own table goes through a temporary table on disk.
	source string
}

// templateCopy is the MariaDB copy of the templates, in the throw-away
// database.
const templateCopy = "bench_node_templates"

func readTemplates(ctx context.Context, driver string, db *sql.DB) (*templates, error) {
	t := &templates{source: "nodes"}
	if driver == "mysql" {
		t.source = templateCopy
		if _, err := db.ExecContext(ctx, "CREATE TABLE "+templateCopy+" AS SELECT * FROM nodes"); err != nil {
			return nil, fmt.Errorf("templates: %w", err)
		}
	}
	if err := db.QueryRowContext(ctx, "SELECT MIN(id), COUNT(*) FROM nodes").Scan(&t.minID, &t.count); err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	var maxID int
	if err := db.QueryRowContext(ctx, "SELECT MAX(id) FROM nodes").Scan(&maxID); err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	// The clone addresses templates by id: they must be contiguous.
	if maxID-t.minID+1 != t.count {
		return nil, fmt.Errorf("templates: ids %d..%d hold %d rows, want contiguous ids", t.minID, maxID, t.count)
	}
	var dii sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT provision_state, driver_internal_info FROM nodes WHERE id = ?", t.minID).Scan(&t.state, &dii); err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	t.internalInfo = dii.String
	return t, nil
}

// cloneBatch bounds one INSERT ... SELECT.
const cloneBatch = 5000

// cloneStatement builds the INSERT ... SELECT that copies templates ids
// [?, ?] (last two arguments) with index id + delta (first arguments).
// uuid and name follow the index: bench-NNNNNN like the API-created ones,
// and a fixed-prefix UUID.
func cloneStatement(driver, source string, columns []string) (string, int) {
	var uuidExpr, nameExpr string
	if driver == "mysql" {
		uuidExpr = "CONCAT('b0000000-0000-4000-8000-', LPAD(LOWER(HEX(id + ?)), 12, '0'))"
		nameExpr = "CONCAT('bench-', LPAD(id + ?, 6, '0'))"
	} else {
		uuidExpr = "'b0000000-0000-4000-8000-' || printf('%012x', id + ?)"
		nameExpr = "'bench-' || printf('%06d', id + ?)"
	}
	var cols, exprs []string
	deltas := 0
	for _, c := range columns {
		var e string
		switch c {
		case "id":
			continue
		case "uuid":
			e = uuidExpr
			deltas++
		case "name":
			e = nameExpr
			deltas++
		case "provision_state", "driver_internal_info":
			e = "?"
		case "reservation", "instance_uuid", "allocation_id":
			e = "NULL"
		default:
			e = c
		}
		cols = append(cols, c)
		exprs = append(exprs, e)
	}
	return fmt.Sprintf("INSERT INTO nodes (%s) SELECT %s FROM %s WHERE id BETWEEN ? AND ? ORDER BY id",
		strings.Join(cols, ", "), strings.Join(exprs, ", "), source), deltas
}

// growFleet clones templates until the table holds want nodes.
func growFleet(ctx context.Context, driver string, db *sql.DB, t *templates, want int) error {
	var have int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM nodes").Scan(&have); err != nil {
		return fmt.Errorf("grow fleet: %w", err)
	}
	rows, err := db.QueryContext(ctx, "SELECT * FROM nodes WHERE 1 = 0")
	if err != nil {
		return fmt.Errorf("grow fleet: %w", err)
	}
	columns, err := rows.Columns()
	rows.Close()
	if err != nil {
		return fmt.Errorf("grow fleet: %w", err)
	}
	query, deltas := cloneStatement(driver, t.source, columns)
	for have < want {
		n := min(want-have, t.count, cloneBatch)
		var args []any
		// Template id minID+k becomes node index have+k.
		for _, c := range columns {
			switch c {
			case "uuid", "name":
				args = append(args, have-t.minID)
			case "provision_state":
				args = append(args, t.state)
			case "driver_internal_info":
				args = append(args, t.internalInfo)
			}
		}
		if len(args) != deltas+2 {
			return fmt.Errorf("grow fleet: nodes has no uuid/name/provision_state/driver_internal_info column")
		}
		args = append(args, t.minID, t.minID+n-1)
		if _, err := db.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("grow fleet to %d: %w", want, err)
		}
		have += n
	}
	return nil
}

// allUUIDs lists the fleet's node UUIDs, for requests on random nodes.
func allUUIDs(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT uuid FROM nodes ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("uuids: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("uuids: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("uuids: %w", err)
	}
	return out, nil
}

// Heartbeat nodes wait in deploy wait ('wait call-back') with an agent token and a known
// agent URL, as while an agent runs a deploy step: the heartbeat path
// takes the shared lock, checks the token, upgrades the lock and saves
// the agent's fields; the fake deploy interface does nothing more.
const (
	beatToken       = "bench-agent-token"
	beatCallbackURL = "http://127.0.0.1:9999"
)

// beatNodes is how many templates wait for heartbeats: the last ones by
// id, so that the first list page (ids from the lowest) stays unchanged.
func beatNodes(t *templates) int { return min(1000, t.count/2) }

// prepareBeatNodes puts the heartbeat nodes in deploy wait and returns
// their UUIDs.
func prepareBeatNodes(ctx context.Context, db *sql.DB, t *templates) ([]string, error) {
	first := t.minID + t.count - beatNodes(t)
	last := t.minID + t.count - 1
	dii := fmt.Sprintf(`{"agent_secret_token": %q, "agent_url": %q}`, beatToken, beatCallbackURL)
	if _, err := db.ExecContext(ctx, "UPDATE nodes SET provision_state = 'wait call-back', driver_internal_info = ? WHERE id BETWEEN ? AND ?", dii, first, last); err != nil {
		return nil, fmt.Errorf("heartbeat nodes: %w", err)
	}
	rows, err := db.QueryContext(ctx, "SELECT uuid FROM nodes WHERE id BETWEEN ? AND ? ORDER BY id", first, last)
	if err != nil {
		return nil, fmt.Errorf("heartbeat nodes: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("heartbeat nodes: %w", err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
