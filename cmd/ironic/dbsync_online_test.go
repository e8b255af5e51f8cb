package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// onlineFixture writes what master's online migrations move: two nodes on
// the inspector interface (one inspecting, which stays), two runbooks
// without traits (one with), and rows at old object versions.
func onlineFixture(t *testing.T, db *sqldb.DB) {
	t.Helper()
	ctx := context.Background()
	now := db.Time(db.Now())
	for i, n := range []struct{ state, inspect, version string }{
		{"manageable", "inspector", "1.40"}, {"inspect wait", "inspector", "1.44"}, {"available", "agent", "1.44"},
	} {
		if _, err := db.ExecContext(ctx, `INSERT INTO nodes (uuid, driver, provision_state, inspect_interface, version, created_at)
			VALUES (?, 'fake-hardware', ?, ?, ?, ?)`, fmt.Sprintf("00000000-0000-4000-8000-00000000000%d", i), n.state, n.inspect, n.version, now); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range []string{"CUSTOM_A", "CUSTOM_B", "CUSTOM_C"} {
		if _, err := db.ExecContext(ctx, `INSERT INTO runbooks (uuid, name, disable_ramdisk, public, version, created_at) VALUES (?, ?, 0, 0, '1.2', ?)`,
			fmt.Sprintf("10000000-0000-4000-8000-00000000000%d", i), name, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO runbook_traits (runbook_id, trait, version, created_at)
		SELECT id, 'CUSTOM_OWN', '1.0', ? FROM runbooks WHERE name = 'CUSTOM_C'`, now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO chassis (uuid, version, created_at) VALUES ('20000000-0000-4000-8000-000000000000', '1.3', ?)`, now); err != nil {
		t.Fatal(err)
	}
}

func onlineRun(t *testing.T, conf string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"ironic", "--config-file", conf, "dbsync", "online_data_migrations"}, args...), &out, &errOut)
	return out.String(), errOut.String(), code
}

// Issue 23 item 7: `ironic dbsync online_data_migrations` runs master's
// three online migrations (inspector → agent inspection, runbook names to
// traits, object versions to master's) with upstream's --max-count
// batches, --option parsing, printed lines and exit codes, on both
// backends.
func TestOnlineDataMigrations(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			onlineFixture(t, b.DB)
			dir := t.TempDir()
			conf := writeConf(t, dir, "[DEFAULT]\nenabled_inspect_interfaces = agent,no-inspect\n[database]\nconnection = "+b.URL+"\n")

			out, _, code := onlineRun(t, conf, "--max-count", "2")
			want := "migrate_to_builtin_inspection() migrated 1 of 2 objects.\n" +
				"migrate_runbook_names_to_traits() migrated 1 of 2 objects.\n" +
				"Data migrations have not completed. Please re-run.\n"
			if code != 1 || out != want {
				t.Fatalf("--max-count 2: exit %d\n%s\nwant exit 1\n%s", code, out, want)
			}
			// Then the rest in batches: the inspecting node stays, the
			// last runbook gets its trait, the node at 1.40 and the
			// chassis at 1.3 are stamped with master's versions.
			out, _, code = onlineRun(t, conf)
			if code != 0 || !strings.HasPrefix(out, "Running batches of 50 until migrations have been completed.\n") ||
				!strings.Contains(out, "migrate_runbook_names_to_traits() migrated 1 of 1 objects.\n") ||
				!strings.HasSuffix(out, "update_to_latest_versions() migrated 2 of 2 objects.\nData migrations have completed.\n") {
				t.Fatalf("batches: exit %d\n%s", code, out)
			}
			var inspector, agent, traits, stale int
			ctx := context.Background()
			_ = b.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM nodes WHERE inspect_interface = 'inspector'").Scan(&inspector)
			_ = b.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM nodes WHERE inspect_interface = 'agent'").Scan(&agent)
			if err := b.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM runbook_traits WHERE trait IN ('CUSTOM_A', 'CUSTOM_B')").Scan(&traits); err != nil {
				t.Fatal(err)
			}
			_ = b.DB.QueryRowContext(ctx, "SELECT (SELECT COUNT(*) FROM nodes WHERE version <> '1.44') + (SELECT COUNT(*) FROM chassis WHERE version <> '1.4') + (SELECT COUNT(*) FROM runbooks WHERE version <> '1.2')").Scan(&stale)
			if inspector != 1 || agent != 2 || traits != 2 || stale != 0 {
				t.Errorf("after migrations: %d inspector nodes (want the inspecting one), %d agent, %d name traits (want 2), %d stale versions", inspector, agent, traits, stale)
			}
			out, _, code = onlineRun(t, conf, "--max-count", "5")
			if code != 0 || !strings.HasSuffix(out, "Data migrations have completed.\n") {
				t.Errorf("nothing left: exit %d\n%s", code, out)
			}

			for _, tc := range []struct {
				args []string
				code int
				text string
			}{
				{[]string{"--max-count", "0"}, 127, `"max-count" must be a positive value.`},
				{[]string{"--option", "nodot"}, 127, "Malformed option nodot"},
				{[]string{"--option", "update_to_latest_versions.batch=3"}, 1, "Error while running update_to_latest_versions: got an unexpected keyword argument 'batch'."},
			} {
				out, errOut, code := onlineRun(t, conf, tc.args...)
				if code != tc.code || !strings.Contains(out+errOut, tc.text) {
					t.Errorf("%v: exit %d\n%s%s\nwant exit %d with %q", tc.args, code, out, errOut, tc.code, tc.text)
				}
			}
			// A row at a version no release knows: a newer release wrote it.
			if _, err := b.DB.ExecContext(ctx, "UPDATE chassis SET version = '1.99'"); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := onlineRun(t, conf)
			if code != 2 || !strings.Contains(errOut, "The database is not compatible with this release of ironic") {
				t.Errorf("unknown version: exit %d\n%s", code, errOut)
			}
		})
	}
}
