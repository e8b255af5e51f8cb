package migrations

import (
	"context"
	"embed"
	"fmt"
	"path"
	"strings"

	"github.com/openkeel/ironic/internal/store/sqldb"
)

// OldestAlembic is the oldest upstream Alembic revision a take-over
// accepts: the head of Ironic 21.x (2023.1), which Debian 12 ships.
const OldestAlembic = "4dbec778866e"

// revision is one of upstream's Alembic revisions between OldestAlembic
// and AlembicHead.
type revision struct {
	// id is upstream's revision id, what alembic_version holds.
	id string
	// name is the rest of upstream's file name for it, and of ours: the
	// step is alembic/<dialect>/<id>_<name>.sql.
	name string
	// release is the upstream release whose head this revision is, if any.
	release string
	// after runs once the file's statements have, for what SQL cannot say
	// without knowing the database (nil for most revisions).
	after func(ctx context.Context, d sqldb.Dialect, q querier) error
}

// alembicChain lists upstream's revisions from OldestAlembic to AlembicHead,
// each one's down_revision being the one before it. The first is only a
// starting point: its schema is what a take-over starts from.
func alembicChain() []revision {
	return []revision{
		{id: OldestAlembic, name: "create_node_shard", release: "2023.1"},
		{id: "fe222f476baf", name: "add_parent_node_field"},
		{id: "163040c5513f", name: "add_firmware_information"},
		{id: "d163df1bab88", name: "remove_extra_fk_constraint_in_", after: dropAllocationForeignKeys},
		{id: "aa2384fee727", name: "add_service_steps"},
		{id: "01f21d5e5195", name: "increase_length_of_user_column", release: "2024.1"},
		{id: "66bd9c5604d5", name: "add_runbook_and_runbook_step"},
		{id: "6e9cf6acce0b", name: "node_disable_power_off"},
		{id: "21c48150dea9", name: "add_inspection_rules", release: "2025.1"},
		{id: "1c14278d6e33", name: "port_description"},
		{id: "e4827561979d", name: "add_vendor_attribute_to_port_object"},
		{id: "3ef27505c9fb", name: "add_category_attribute_to_port_object", release: "2025.2"},
		{id: "d0821744f9e2", name: "add_physical_network_to_portgroup"},
		{id: "763b2f62d215", name: "add_category_attribute_to_portgroup_"},
		{id: "15e9d00367b0", name: "add_instance_name_field_to_nodes"},
		{id: "9f8c7d6e5b4a", name: "add_node_health_fields"},
		{id: "9c0446cb6bc3", name: "set_upper_bound_to_bigint"},
		{id: "c1fd28861bb9", name: "migrate_to_utf8mb4", after: checkUTF8MB4},
		{id: "2a3b4c5d6e7f", name: "add_dynamic_portgroup_fields", release: "2026.1"},
		{id: "e2d316b60d9e", name: "add_runbook_traits_and_description"},
		{id: "16990309ad9d", name: "add_project_to_node_history"},
		{id: "772c0e7e8299", name: "add_firmware_identity_fields"},
		{id: AlembicHead, name: "add_state_and_timestamps_to_node_history", release: "2026.2"},
	}
}

//go:embed alembic
var alembicFiles embed.FS

// AlembicRevisions lists the upstream revisions a take-over accepts, oldest
// first, ending with AlembicHead.
func AlembicRevisions() []string {
	chain := alembicChain()
	ids := make([]string, len(chain))
	for i, r := range chain {
		ids[i] = r.id
	}
	return ids
}

// acceptedRange names the revisions a take-over accepts, for messages.
func acceptedRange() string {
	return fmt.Sprintf("%s (Ironic 2023.1) to the head %s (2026.2)", OldestAlembic, AlembicHead)
}

// chainIndex is the position of rev in the chain, or -1.
func chainIndex(chain []revision, rev string) int {
	for i, r := range chain {
		if r.id == rev {
			return i
		}
	}
	return -1
}

// walkChain brings an upstream database from revision from to revision to
// (both in the chain, from not after to) by upstream's steps, recording
// each reached revision in alembic_version as upstream's alembic does, so
// that a MySQL upgrade stopped half-way (its DDL is not transactional)
// resumes where it stopped.
func walkChain(ctx context.Context, d sqldb.Dialect, q querier, from, to string) error {
	chain := alembicChain()
	i, j := chainIndex(chain, from), chainIndex(chain, to)
	if i < 0 || j < 0 || i > j {
		return fmt.Errorf("upgrade schema: no way along upstream's revisions from %s to %s", from, to)
	}
	for _, r := range chain[i+1 : j+1] {
		if err := runRevision(ctx, d, q, r); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `UPDATE alembic_version SET version_num = ?`, r.id); err != nil {
			return fmt.Errorf("upgrade schema: record alembic %s: %w", r.id, err)
		}
	}
	return nil
}

func runRevision(ctx context.Context, d sqldb.Dialect, q querier, r revision) error {
	file := path.Join("alembic", string(d), r.id+"_"+r.name+".sql")
	src, err := alembicFiles.ReadFile(file)
	if err != nil {
		return fmt.Errorf("upgrade schema: upstream revision %s: %w", r.id, err)
	}
	for i, stmt := range splitStatements(string(src)) {
		if _, err := q.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("upgrade schema: upstream revision %s (%s), statement %d: %w", r.id, r.name, i+1, err)
		}
	}
	if r.after != nil {
		if err := r.after(ctx, d, q); err != nil {
			return fmt.Errorf("upgrade schema: upstream revision %s (%s): %w", r.id, r.name, err)
		}
	}
	return nil
}

// dropAllocationForeignKeys removes the foreign keys from allocations to
// conductors and nodes that MySQL named when 2023.1's schema was made, with
// the indexes MySQL made for them, which a database made at 2023.2 or later
// never had. Upstream drops only the keys (and only when the first exists),
// leaving the two indexes behind; dropping them too gives such a database
// the very schema of a fresh one. On SQLite the revision's file rebuilds the
// table instead.
func dropAllocationForeignKeys(ctx context.Context, d sqldb.Dialect, q querier) error {
	if d != sqldb.MySQL {
		return nil
	}
	for _, fk := range []struct{ name, index string }{
		{"allocations_ibfk_1", "conductor_affinity"},
		{"allocations_ibfk_2", "node_id"},
	} {
		var n int
		err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.table_constraints
 WHERE table_schema = DATABASE() AND table_name = 'allocations' AND constraint_type = 'FOREIGN KEY' AND constraint_name = ?`, fk.name).Scan(&n)
		if err != nil {
			return fmt.Errorf("look for foreign key %s: %w", fk.name, err)
		}
		if n == 0 {
			continue
		}
		if _, err := q.ExecContext(ctx, "ALTER TABLE `allocations` DROP FOREIGN KEY `"+fk.name+"`"); err != nil {
			return fmt.Errorf("drop foreign key %s: %w", fk.name, err)
		}
		err = q.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.statistics
 WHERE table_schema = DATABASE() AND table_name = 'allocations' AND index_name = ?`, fk.index).Scan(&n)
		if err != nil {
			return fmt.Errorf("look for index %s: %w", fk.index, err)
		}
		if n == 0 {
			continue
		}
		if _, err := q.ExecContext(ctx, "ALTER TABLE `allocations` DROP INDEX `"+fk.index+"`"); err != nil {
			return fmt.Errorf("drop index %s: %w", fk.index, err)
		}
	}
	return nil
}

// checkUTF8MB4 refuses to go on when a table of Ironic's is still not in
// utf8mb4 after the conversion, as upstream does: later revisions and the
// service assume every table holds four-byte characters.
func checkUTF8MB4(ctx context.Context, d sqldb.Dialect, q querier) error {
	if d != sqldb.MySQL {
		return nil
	}
	// The tables the conversion converts: every table of Ironic's then.
	tables := []any{"chassis", "conductors", "conductor_hardware_interfaces", "nodes", "ports", "portgroups",
		"node_tags", "volume_connectors", "volume_targets", "node_traits", "bios_settings", "allocations",
		"deploy_templates", "deploy_template_steps", "node_history", "node_inventory", "firmware_information",
		"runbooks", "runbook_steps", "inspection_rules"}
	rows, err := q.QueryContext(ctx, `SELECT table_name, COALESCE(table_collation, '')
 FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(tables)), ", ")+`)
 AND (table_collation IS NULL OR table_collation NOT LIKE 'utf8mb4%')`, tables...)
	if err != nil {
		return fmt.Errorf("check table character sets: %w", err)
	}
	defer rows.Close()
	var bad []string
	for rows.Next() {
		var name, coll string
		if err := rows.Scan(&name, &coll); err != nil {
			return fmt.Errorf("check table character sets: %w", err)
		}
		bad = append(bad, name+" ("+coll+")")
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check table character sets: %w", err)
	}
	if len(bad) > 0 {
		return fmt.Errorf("tables not in utf8mb4 after the conversion: %s", strings.Join(bad, ", "))
	}
	return nil
}

// migrateData does what upstream leaves to `ironic-dbsync
// online_data_migrations` after an upgrade, which a database taken over
// from an older release has not had and which newer code assumes:
//
//   - migrate_runbook_names_to_traits: runbooks matched a node's traits by
//     their name before 2026.2, by their traits since; a runbook without
//     traits gets one equal to its name.
//   - update_to_latest_versions: every versioned row is marked as written at
//     its object's latest version (rows without a version stay so), so that
//     an upstream Ironic of the head's release accepts the database.
//     updated_at is left alone: the rows' contents do not change.
//
// migrate_to_builtin_inspection is not done: it depends on the service's
// configuration (it moves nodes off the "inspector" inspect interface only
// when "agent" is enabled), which an upgrade of the schema does not read.
func migrateData(ctx context.Context, db *sqldb.DB, q querier) error {
	// The versions of upstream's versioned objects at AlembicHead, by the
	// table that stores them (upstream's release mapping for master; tables
	// whose model is not a versioned object are absent).
	latest := []struct{ table, version string }{
		{"allocations", "1.3"},
		{"bios_settings", "1.2"},
		{"chassis", "1.4"},
		{"conductors", "1.6"},
		{"deploy_templates", "1.2"},
		{"firmware_information", "1.2"},
		{"inspection_rules", "1.1"},
		{"node_history", "1.3"},
		{"node_inventory", "1.1"},
		{"nodes", "1.44"},
		{"portgroups", "1.9"},
		{"ports", "1.16"},
		{"runbook_traits", "1.0"},
		{"runbooks", "1.2"},
		{"volume_connectors", "1.1"},
		{"volume_targets", "1.1"},
	}
	_, err := q.ExecContext(ctx, `INSERT INTO runbook_traits (created_at, version, runbook_id, trait)
 SELECT ?, '1.0', r.id, r.name FROM runbooks r
 WHERE NOT EXISTS (SELECT 1 FROM runbook_traits t WHERE t.runbook_id = r.id)`, db.Time(db.Now()))
	if err != nil {
		return fmt.Errorf("upgrade schema: give runbooks their names as traits: %w", err)
	}
	for _, o := range latest {
		if _, err := q.ExecContext(ctx, `UPDATE `+o.table+` SET version = ? WHERE version <> ?`, o.version, o.version); err != nil {
			return fmt.Errorf("upgrade schema: update %s to object version %s: %w", o.table, o.version, err)
		}
	}
	return nil
}
