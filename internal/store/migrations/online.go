package migrations

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/store/sqldb"
)

// OnlineMigration is one of upstream's online data migrations
// (ironic/command/dbsync.py ONLINE_MIGRATIONS): it migrates at most
// maxCount rows (0: all) and reports how many needed it when it began and
// how many it migrated.
type OnlineMigration struct {
	// Name is upstream's function name, which `--option <name>.<key>=<value>`
	// and the printed summary use.
	Name string
	Run  func(ctx context.Context, db *sqldb.DB, maxCount int, opts map[string]string) (total, migrated int, err error)
}

// OnlineMigrations are master's ONLINE_MIGRATIONS in upstream's order, the
// version stamp last. Each applies to our schema, which is upstream's.
// enabledInspect is [DEFAULT]/enabled_inspect_interfaces, which decides
// whether nodes move from inspector to agent inspection.
func OnlineMigrations(enabledInspect []string) []OnlineMigration {
	return []OnlineMigration{
		{"migrate_to_builtin_inspection", noOptions(func(ctx context.Context, db *sqldb.DB, maxCount int) (int, int, error) {
			return migrateToBuiltinInspection(ctx, db, maxCount, enabledInspect)
		})},
		{"migrate_runbook_names_to_traits", noOptions(migrateRunbookNamesToTraits)},
		{"update_to_latest_versions", noOptions(updateToLatestVersions)},
	}
}

// noOptions refuses options, as upstream's migration functions take no
// keyword argument and fail on one.
func noOptions(f func(context.Context, *sqldb.DB, int) (int, int, error)) func(context.Context, *sqldb.DB, int, map[string]string) (int, int, error) {
	return func(ctx context.Context, db *sqldb.DB, maxCount int, opts map[string]string) (int, int, error) {
		for k := range opts {
			return 0, 0, fmt.Errorf("got an unexpected keyword argument '%s'", k)
		}
		return f(ctx, db, maxCount)
	}
}

// versioned is a table of an object class with a version column, in the
// order upstream's update_to_latest_versions walks its models (definition
// order, Node last). key is the column rows are picked by when a batch is
// smaller than the rows to migrate.
type versioned struct {
	class, table, key, latest string
	// supported are the versions of the class in any release of master's
	// release_mappings.py (get_object_versions()).
	supported []string
}

var versionedTables = []versioned{
	{"Chassis", "chassis", "id", "1.4", []string{"1.3", "1.4"}},
	{"Conductor", "conductors", "id", "1.6", []string{"1.2", "1.3", "1.4", "1.5", "1.6"}},
	{"Port", "ports", "id", "1.16", dotted(1, 7, 16)},
	{"Portgroup", "portgroups", "id", "1.9", dotted(1, 3, 9)},
	{"VolumeConnector", "volume_connectors", "id", "1.1", dotted(1, 0, 1)},
	{"VolumeTarget", "volume_targets", "id", "1.1", dotted(1, 0, 1)},
	// bios_settings has no id; upstream picks its rows by node_id.
	{"BIOSSetting", "bios_settings", "node_id", "1.2", dotted(1, 0, 2)},
	{"Allocation", "allocations", "id", "1.3", dotted(1, 0, 3)},
	{"DeployTemplate", "deploy_templates", "id", "1.2", dotted(1, 0, 2)},
	{"NodeHistory", "node_history", "id", "1.3", dotted(1, 0, 3)},
	{"NodeInventory", "node_inventory", "id", "1.1", dotted(1, 0, 1)},
	{"FirmwareComponent", "firmware_information", "id", "1.2", dotted(1, 0, 2)},
	{"Runbook", "runbooks", "id", "1.2", dotted(1, 0, 2)},
	// runbook_traits has neither id nor node_id (upstream would fail on
	// a partial batch); its rows are picked by runbook_id.
	{"RunbookTrait", "runbook_traits", "runbook_id", "1.0", dotted(1, 0, 0)},
	{"InspectionRule", "inspection_rules", "id", "1.1", dotted(1, 0, 1)},
	{"Node", "nodes", "id", "1.44", dotted(1, 21, 44)},
}

func dotted(major, from, to int) []string {
	var out []string
	for m := from; m <= to; m++ {
		out = append(out, fmt.Sprintf("%d.%d", major, m))
	}
	return out
}

// IncompatibleVersions is upstream's check_versions: the object classes
// with rows at a version no release of master's mappings knows, which a
// database written by a release too new or too old for this one has. It is
// empty when online migrations may run. Rows without a version are those
// openkeel wrote (upstream's check refuses them, so upstream could not take
// such a database back before update_to_latest_versions stamps them); they
// are not refused here.
func IncompatibleVersions(ctx context.Context, db *sqldb.DB) ([]string, error) {
	var out []string
	for _, v := range versionedTables {
		marks := strings.TrimSuffix(strings.Repeat("?,", len(v.supported)), ",")
		args := make([]any, len(v.supported))
		for i, s := range v.supported {
			args[i] = s
		}
		var n int
		q := fmt.Sprintf("SELECT COUNT(*) FROM %s WHERE version IS NOT NULL AND version NOT IN (%s)", v.table, marks)
		if err := db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			return nil, fmt.Errorf("check versions of %s: %w", v.table, err)
		}
		if n > 0 {
			out = append(out, v.class)
		}
	}
	return out, nil
}

// updateToLatestVersions is upstream's update_to_latest_versions: rows of
// every versioned table not at master's latest version of their class are
// stamped with it, at most maxCount in all, table by table in separate
// transactions as upstream. Unlike upstream, rows without a version (which
// upstream's SQL comparison skips, and which only openkeel writes) are
// stamped too, so that upstream's own check accepts the database.
func updateToLatestVersions(ctx context.Context, db *sqldb.DB, maxCount int) (int, int, error) {
	const stale = "(version IS NULL OR version <> ?)"
	total := 0
	for _, v := range versionedTables {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+v.table+" WHERE "+stale, v.latest).Scan(&n); err != nil {
			return 0, 0, fmt.Errorf("update_to_latest_versions: count %s: %w", v.table, err)
		}
		total += n
	}
	if total == 0 {
		return 0, 0, nil
	}
	left := maxCount
	if left == 0 {
		left = total
	}
	migrated := 0
	for _, v := range versionedTables {
		var n int64
		err := db.InTx(ctx, func(tx *sql.Tx) error {
			// A batch picks the first rows by key: SQL's LIMIT in an
			// UPDATE is MySQL's only, so the keys are read first, as
			// upstream slices its query.
			keys, err := firstKeys(ctx, tx, v, stale, left)
			if err != nil {
				return err
			}
			if len(keys) == 0 {
				n = 0
				return nil
			}
			marks := strings.TrimSuffix(strings.Repeat("?,", len(keys)), ",")
			args := append([]any{v.latest, v.latest}, keys...)
			res, err := tx.ExecContext(ctx, "UPDATE "+v.table+" SET version = ? WHERE "+stale+" AND "+v.key+" IN ("+marks+")", args...)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return 0, 0, fmt.Errorf("update_to_latest_versions: %s: %w", v.table, err)
		}
		migrated += int(n)
		left -= int(n)
		if left <= 0 {
			break
		}
	}
	return total, migrated, nil
}

// firstKeys are the distinct keys of the first limit stale rows of v.
func firstKeys(ctx context.Context, tx *sql.Tx, v versioned, stale string, limit int) ([]any, error) {
	rows, err := tx.QueryContext(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %s LIMIT %d", v.key, v.table, stale, v.key, limit), v.latest)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []any
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		if len(keys) == 0 || keys[len(keys)-1] != any(k) {
			keys = append(keys, k)
		}
	}
	return keys, rows.Err()
}

// migrateToBuiltinInspection is upstream's migrate_to_builtin_inspection:
// when agent inspection is enabled and inspector's is not, nodes using the
// removed inspector interface move to agent, except those inspecting now.
// The total counts every inspector node, the migrated only those moved.
func migrateToBuiltinInspection(ctx context.Context, db *sqldb.DB, maxCount int, enabled []string) (int, int, error) {
	if !slices.Contains(enabled, "agent") || slices.Contains(enabled, "inspector") {
		return 0, 0, nil
	}
	var total int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM nodes WHERE inspect_interface = 'inspector'").Scan(&total); err != nil {
		return 0, 0, fmt.Errorf("migrate_to_builtin_inspection: %w", err)
	}
	if total == 0 {
		return 0, 0, nil
	}
	const movable = "inspect_interface = 'inspector' AND provision_state NOT IN ('inspecting', 'inspect wait', 'inspect failed')"
	var migrated int64
	err := db.InTx(ctx, func(tx *sql.Tx) error {
		q := "SELECT id FROM nodes WHERE " + movable + " ORDER BY id"
		if maxCount > 0 {
			q += fmt.Sprintf(" LIMIT %d", maxCount)
		}
		rows, err := tx.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		var ids []any
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		migrated = 0
		if len(ids) == 0 {
			return nil
		}
		marks := strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")
		res, err := tx.ExecContext(ctx, "UPDATE nodes SET inspect_interface = 'agent' WHERE "+movable+" AND id IN ("+marks+")", ids...)
		if err != nil {
			return err
		}
		migrated, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("migrate_to_builtin_inspection: %w", err)
	}
	if migrated == 0 {
		// Upstream answers (0, 0) when every inspector node is busy.
		return 0, 0, nil
	}
	return total, int(migrated), nil
}

// migrateRunbookNamesToTraits is upstream's migrate_runbook_names_to_traits:
// a runbook with no trait gets one named after it, which keeps the runbooks
// of releases that matched by name usable now that matching is by trait.
func migrateRunbookNamesToTraits(ctx context.Context, db *sqldb.DB, maxCount int) (int, int, error) {
	total, migrated := 0, 0
	err := db.InTx(ctx, func(tx *sql.Tx) error {
		const without = "FROM runbooks r LEFT JOIN runbook_traits t ON t.runbook_id = r.id WHERE t.runbook_id IS NULL"
		if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) "+without).Scan(&total); err != nil {
			return err
		}
		migrated = 0
		if total == 0 {
			return nil
		}
		q := "SELECT r.id, r.name " + without + " ORDER BY r.id"
		if maxCount > 0 && maxCount < total {
			q += fmt.Sprintf(" LIMIT %d", maxCount)
		}
		rows, err := tx.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		type runbook struct {
			id   int64
			name string
		}
		var todo []runbook
		for rows.Next() {
			var r runbook
			if err := rows.Scan(&r.id, &r.name); err != nil {
				rows.Close()
				return err
			}
			todo = append(todo, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		now := db.Time(db.Now())
		for _, r := range todo {
			if _, err := tx.ExecContext(ctx, "INSERT INTO runbook_traits (runbook_id, trait, version, created_at) VALUES (?, ?, '1.0', ?)",
				r.id, r.name, now); err != nil {
				return err
			}
			migrated++
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("migrate_runbook_names_to_traits: %w", err)
	}
	return total, migrated, nil
}
