package migrations_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/store/migrations"
	"github.com/openkeel/ironic/internal/store/migrations/schematest"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// snapshot returns every row of every table as the database stores it
// (SQLite quote(), MySQL hex of the raw bytes), in primary-key order.
func snapshot(t *testing.T, db *sqldb.DB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for name, tb := range schematest.Introspect(t, db) {
		var exprs []string
		for _, c := range tb.Columns {
			if db.Dialect() == sqldb.MySQL {
				exprs = append(exprs, fmt.Sprintf("COALESCE(HEX(CAST(`%s` AS BINARY)), 'NULL')", c.Name))
			} else {
				exprs = append(exprs, fmt.Sprintf(`quote("%s")`, c.Name))
			}
		}
		q := "SELECT " + strings.Join(exprs, ", ") + " FROM " + name
		if len(tb.PrimaryKey) > 0 {
			q += " ORDER BY " + strings.Join(tb.PrimaryKey, ", ")
		}
		rows, err := db.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatalf("snapshot %s: %v", name, err)
		}
		vals := make([]string, len(exprs))
		ptrs := make([]any, len(exprs))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		out[name] = []string{}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("snapshot %s: %v", name, err)
			}
			out[name] = append(out[name], strings.Join(vals, "|"))
		}
		rows.Close()
	}
	return out
}

func TestVersionOfEmptyDatabase(t *testing.T) {
	for _, b := range storetest.EmptyBackends(t) {
		ours, alembic, err := migrations.Version(context.Background(), b.DB)
		if err != nil || ours != 0 || alembic != "" {
			t.Errorf("%s: Version = %d, %q, %v; want 0, \"\", nil", b.Name, ours, alembic, err)
		}
	}
}

func TestUpgradeIsIdempotent(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			latest, err := migrations.Latest(b.DB.Dialect())
			if err != nil || latest < 1 {
				t.Fatalf("Latest = %d, %v", latest, err)
			}
			ours, alembic, err := migrations.Version(ctx, b.DB)
			if err != nil || ours != latest || alembic != migrations.AlembicHead {
				t.Fatalf("after Upgrade: Version = %d, %q, %v; want %d, %q", ours, alembic, err, latest, migrations.AlembicHead)
			}
			schema, rows := schematest.Introspect(t, b.DB), snapshot(t, b.DB)
			if n := len(rows[migrations.VersionTable]); n != latest {
				t.Errorf("%s has %d rows, want %d", migrations.VersionTable, n, latest)
			}
			if err := migrations.Upgrade(ctx, b.DB); err != nil {
				t.Fatalf("second Upgrade: %v", err)
			}
			if !reflect.DeepEqual(schematest.Introspect(t, b.DB), schema) {
				t.Error("second Upgrade changed the schema")
			}
			if got := snapshot(t, b.DB); !reflect.DeepEqual(got, rows) {
				t.Errorf("second Upgrade changed rows:\n%v\nbefore:\n%v", got, rows)
			}
		})
	}
}

// Several processes upgrading one fresh database at once: all succeed and
// the migrations run once.
func TestConcurrentUpgrades(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.EmptyBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			var wg sync.WaitGroup
			for i := range 4 {
				db, err := sqldb.Open(ctx, b.URL)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := migrations.Upgrade(ctx, db); err != nil {
						t.Errorf("Upgrade %d: %v", i, err)
					}
				}()
			}
			wg.Wait()
			rows := snapshot(t, b.DB)
			latest, _ := migrations.Latest(b.DB.Dialect())
			if len(rows[migrations.VersionTable]) != latest || len(rows["alembic_version"]) != 1 {
				t.Errorf("version rows %v, alembic rows %v; want %d and 1", rows[migrations.VersionTable], rows["alembic_version"], latest)
			}
		})
	}
}

// upstreamRows are realistic rows an upstream Ironic leaves behind: JSON in
// the dict columns, naive UTC timestamps in upstream's per-backend format.
func upstreamRows(d sqldb.Dialect) []string {
	ts := func(s string) string {
		if d == sqldb.SQLite {
			return "'" + s + ".123456'"
		}
		return "'" + s + "'"
	}
	return []string{
		`INSERT INTO conductors (created_at, updated_at, id, hostname, drivers, online, version, conductor_group)
		 VALUES (` + ts("2026-01-02 03:04:05") + `, ` + ts("2026-01-02 03:05:05") + `, 1, 'ironic-conductor-0.ironic-conductor:8089', '["ipmi", "redfish"]', 1, '1.4', '')`,
		`INSERT INTO nodes (created_at, updated_at, id, uuid, name, power_state, provision_state, driver, driver_info, properties, extra,
		   instance_info, driver_internal_info, maintenance, conductor_affinity, conductor_group, protected, retired, disable_power_off,
		   resource_class, version, provision_updated_at, network_interface, boot_interface, deploy_interface)
		 VALUES (` + ts("2026-01-02 03:04:06") + `, ` + ts("2026-01-02 04:00:00") + `, 1, '1be26c0b-03f2-4d2e-ae87-c02d7f33c123', 'node-0', 'power off',
		   'available', 'redfish', '{"redfish_address": "https://10.0.0.1", "redfish_username": "root", "redfish_password": "s3cr\u00e9t", "redfish_system_id": "/redfish/v1/Systems/1"}',
		   '{"cpus": 64, "memory_mb": 262144, "local_gb": 894, "cpu_arch": "x86_64", "capabilities": "boot_mode:uefi"}', '{"rack": "r12", "\u00e9t\u00e9": true}',
		   '{}', '{"clean_steps": null, "agent_version": "10.1.0", "last_power_state_change": "2026-01-02T04:00:00.123456"}', 0, 1, '', 0, 0, 0,
		   'baremetal.gold', '1.41', ` + ts("2026-01-02 04:00:00") + `, 'flat', 'ipxe', 'direct')`,
		`INSERT INTO nodes (created_at, id, uuid, provision_state, driver, driver_info, conductor_group, protected, maintenance, maintenance_reason, version)
		 VALUES (` + ts("2026-01-03 00:00:00") + `, 2, '7a8c5d58-9f34-4bd2-9bd4-63d8c6b1e0aa', 'enroll', 'ipmi', '{"ipmi_address": "10.0.0.2"}', 'rack-b', 1, 1, 'fan failure', '1.41')`,
		`INSERT INTO ports (created_at, id, uuid, address, node_id, extra, local_link_connection, pxe_enabled, internal_info, physical_network, version, available_for_dynamic_portgroup)
		 VALUES (` + ts("2026-01-02 03:04:07") + `, 1, '5c4a6a2b-6a2b-4c4e-9d5e-0a1b2c3d4e5f', '52:54:00:12:34:56', 1, '{}',
		   '{"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Ethernet3/1", "switch_info": "tor-12"}', 1, '{"tenant_vif_port_id": "9f3c"}', 'physnet1', '1.12', 1)`,
		`INSERT INTO node_traits (created_at, node_id, trait, version) VALUES (` + ts("2026-01-02 03:04:08") + `, 1, 'CUSTOM_GOLD', '1.0')`,
	}
}

// An upstream Ironic database at the Alembic head is taken over: our
// version table is created and records migration 1; nothing of upstream's
// changes, not one byte of one row.
func TestTakeOverUpstreamDatabase(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.EmptyBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			storetest.LoadUpstreamSchema(t, b.DB)
			storetest.Exec(t, b.DB, "INSERT INTO alembic_version (version_num) VALUES ('"+migrations.AlembicHead+"')")
			storetest.Exec(t, b.DB, upstreamRows(b.DB.Dialect())...)
			schemaBefore, rowsBefore := schematest.Introspect(t, b.DB), snapshot(t, b.DB)
			if len(rowsBefore["nodes"]) != 2 || len(rowsBefore["ports"]) != 1 {
				t.Fatalf("fixture rows not loaded: %v", rowsBefore)
			}

			if err := migrations.Upgrade(ctx, b.DB); err != nil {
				t.Fatalf("Upgrade: %v", err)
			}
			ours, alembic, err := migrations.Version(ctx, b.DB)
			latest, _ := migrations.Latest(b.DB.Dialect())
			if err != nil || ours != latest || alembic != migrations.AlembicHead {
				t.Errorf("Version = %d, %q, %v; want %d, %q", ours, alembic, err, latest, migrations.AlembicHead)
			}
			var name string
			if err := b.DB.QueryRowContext(ctx, "SELECT name FROM "+migrations.VersionTable+" WHERE version = 1").Scan(&name); err != nil {
				t.Fatalf("version 1 not recorded: %v", err)
			}
			if !strings.Contains(name, "taken over") {
				t.Errorf("version 1 recorded as %q, want a take-over note", name)
			}

			schemaAfter, rowsAfter := schematest.Introspect(t, b.DB), snapshot(t, b.DB)
			if _, ok := schemaAfter[migrations.VersionTable]; !ok {
				t.Errorf("%s not created", migrations.VersionTable)
			}
			schematest.DropOurs(schemaAfter)
			for table := range rowsAfter {
				if strings.HasPrefix(table, schematest.OurPrefix) {
					delete(rowsAfter, table)
				}
			}
			if !reflect.DeepEqual(schemaAfter, schemaBefore) {
				t.Error("take-over changed upstream's schema")
			}
			for table, rows := range rowsBefore {
				if !reflect.DeepEqual(rowsAfter[table], rows) {
					t.Errorf("take-over changed rows of %s:\n%q\nbefore:\n%q", table, rowsAfter[table], rows)
				}
			}

			again := snapshot(t, b.DB)
			if err := migrations.Upgrade(ctx, b.DB); err != nil {
				t.Fatalf("Upgrade after take-over: %v", err)
			}
			if got := snapshot(t, b.DB); !reflect.DeepEqual(got, again) {
				t.Error("Upgrade after take-over changed rows")
			}
		})
	}
}

func TestUpgradeRefuses(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		setup func(t *testing.T, db *sqldb.DB)
		want  []string
		// ours is the version of ours the database must still report.
		ours int
	}{
		{
			name: "unknown alembic revision",
			setup: func(t *testing.T, db *sqldb.DB) {
				storetest.LoadUpstreamSchema(t, db)
				storetest.Exec(t, db, "INSERT INTO alembic_version (version_num) VALUES ('abcdef123456')")
			},
			want: []string{"Ironic alembic revision abcdef123456", "head " + migrations.AlembicHead, "ironic-dbsync"},
		},
		{
			name: "upstream revision older than 2023.1",
			setup: func(t *testing.T, db *sqldb.DB) {
				storetest.LoadUpstreamSchema(t, db)
				// A 2023.1-era revision before that release's last one,
				// 4dbec778866e, the oldest a take-over accepts.
				storetest.Exec(t, db, "INSERT INTO alembic_version (version_num) VALUES ('c0455649680c')")
			},
			want: []string{"revision c0455649680c", migrations.OldestAlembic, "head " + migrations.AlembicHead, "upgrade it with ironic-dbsync of Ironic 2023.1 or newer first"},
		},
		{
			name:  "empty alembic_version",
			setup: func(t *testing.T, db *sqldb.DB) { storetest.LoadUpstreamSchema(t, db) },
			want:  []string{"no revision", migrations.AlembicHead},
		},
		{
			name: "foreign tables",
			setup: func(t *testing.T, db *sqldb.DB) {
				storetest.Exec(t, db, "CREATE TABLE instances (id INTEGER NOT NULL, PRIMARY KEY (id))")
			},
			want: []string{"instances", "alembic_version", migrations.VersionTable},
		},
		{
			name: "newer schema of ours",
			setup: func(t *testing.T, db *sqldb.DB) {
				if err := migrations.Upgrade(ctx, db); err != nil {
					t.Fatal(err)
				}
				if _, err := db.ExecContext(ctx, "INSERT INTO "+migrations.VersionTable+" (version, name, applied_at) VALUES (999, 'from_the_future', ?)", db.Time(db.Now())); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"999", "newer"},
			ours: 999,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, b := range storetest.EmptyBackends(t) {
				t.Run(b.Name, func(t *testing.T) {
					tc.setup(t, b.DB)
					before := snapshot(t, b.DB)
					err := migrations.Upgrade(ctx, b.DB)
					if !errors.Is(err, migrations.ErrRefused) {
						t.Fatalf("Upgrade = %v, want a refusal", err)
					}
					for _, w := range tc.want {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("error %q does not mention %q", err, w)
						}
					}
					if got := snapshot(t, b.DB); !reflect.DeepEqual(got, before) {
						t.Error("a refused Upgrade changed the database")
					}
					if ours, _, err := migrations.Version(ctx, b.DB); err != nil || ours != tc.ours {
						t.Errorf("Version after refusal = %d, %v; want %d", ours, err, tc.ours)
					}
				})
			}
		})
	}
}
