package takeover

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/store/migrations"
	"github.com/openkeel/ironic/internal/store/migrations/schematest"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/cluster"
)

// intermediate is a revision between 2023.1 and the head a take-over also
// starts from: the head of 2025.1.
const intermediate = "21c48150dea9"

// Debian's Ironic 21.4 makes and fills a database; `ironic dbsync upgrade`
// takes it over; the schema is then upstream's head (tables.json) and our
// service serves every resource as 21.4 served it, modulo the fields newer
// versions add. On SQLite the same database brought first to 2025.1's
// revision is taken over to the very same rows.
func TestTakeOverIronic214(t *testing.T) {
	requireDebianIronic(t)
	bin := cluster.Binary(t)
	for _, b := range []string{string(sqldb.SQLite), string(sqldb.MySQL)} {
		t.Run(b, func(t *testing.T) {
			dir := t.TempDir()
			var dbURL string
			if b == string(sqldb.MySQL) {
				dbURL = storetest.MySQLURL(t) // skips without IRONIC_TEST_MYSQL_DSN
			} else {
				dbURL = "sqlite:///" + filepath.Join(dir, "ironic.sqlite")
			}
			port := freePort(t)
			base := fmt.Sprintf("http://127.0.0.1:%d", port)
			conf := writeConf(t, dir, dbURL, port)

			// SQLite cannot run upstream's migrations (they alter
			// constraints), so upstream makes a SQLite database from its
			// models; MariaDB deployments run the migrations.
			op := "upgrade"
			if b == string(sqldb.SQLite) {
				op = "create_schema"
			}
			start := time.Now()
			run(t, dir, debianPython, "/usr/bin/ironic-dbsync", "--config-file", conf, op)
			upstream := startService(t, dir, "ironic-21.4", base, debianPython, "/usr/bin/ironic", "--config-file", conf)
			c := client{t: t, base: base}
			paths := fill(c)
			want := record(c, paths)
			upstream.Stop(t)
			t.Logf("Ironic 21.4 made, filled and stopped in %s", time.Since(start).Round(time.Millisecond))

			var copyURL string
			if b == string(sqldb.SQLite) {
				copyURL = "sqlite:///" + filepath.Join(dir, "at-2025.1.sqlite")
				copyFile(t, filepath.Join(dir, "ironic.sqlite"), filepath.Join(dir, "at-2025.1.sqlite"))
			}

			if out := run(t, dir, bin, "--config-file", conf, "dbsync", "version"); !strings.Contains(out, "schema 0 (Ironic alembic "+migrations.OldestAlembic+")") {
				t.Errorf("dbsync version of Ironic 21.4's database: %s", out)
			}
			start = time.Now()
			if out := run(t, dir, bin, "--config-file", conf, "dbsync", "upgrade"); strings.Contains(out, "ERROR") {
				t.Errorf("dbsync upgrade:\n%s", out)
			}
			t.Logf("dbsync upgrade took %s", time.Since(start).Round(time.Millisecond))
			if out := run(t, dir, bin, "--config-file", conf, "dbsync", "version"); !strings.Contains(out, fmt.Sprintf("schema %d (Ironic alembic %s)", latestSchema(t), migrations.AlembicHead)) {
				t.Errorf("dbsync version after the take-over: %s", out)
			}
			db := open(t, dbURL)
			for _, d := range schematest.CompareWithSpec(t, db) {
				t.Errorf("schema: %s", d)
			}

			// The rows as the take-over left them, before our service
			// registers its conductor.
			var takenOver map[string][]string
			if copyURL != "" {
				takenOver = rows(t, db)
			}

			ours := startService(t, dir, "openkeel-ironic", base, bin, "--config-file", conf, "all-in-one")
			got := record(client{t: t, base: base}, paths)
			ours.Stop(t)
			compared := 0
			for _, p := range paths {
				ds := differences(p, want[p], got[p])
				for _, d := range ds {
					t.Error(d)
				}
				if len(ds) == 0 {
					compared++
				}
			}
			t.Logf("%d of %d answers of Ironic 21.4 served alike after the take-over", compared, len(paths))

			if copyURL != "" {
				t.Run("from 2025.1", func(t *testing.T) { takeOverFrom2025(t, copyURL, takenOver) })
			}
		})
	}
}

// takeOverFrom2025 brings the copy of the 2023.1 database to 2025.1's
// revision along upstream's chain, adds a runbook as 2025.1 would have
// written it, takes the database over, and finds the very rows of the
// database taken over from 2023.1, and the runbook with its name as its
// trait (upstream's migrate_runbook_names_to_traits).
func takeOverFrom2025(t *testing.T, url string, direct map[string][]string) {
	ctx := context.Background()
	db := open(t, url)
	if err := migrations.UpgradeUpstream(ctx, db, intermediate); err != nil {
		t.Fatal(err)
	}
	if ours, alembic, err := migrations.Version(ctx, db); err != nil || ours != 0 || alembic != intermediate {
		t.Fatalf("Version at 2025.1 = %d, %q, %v; want 0, %q", ours, alembic, err, intermediate)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO runbooks (version, created_at, id, uuid, name, disable_ramdisk, public, extra)
 VALUES ('1.0', '2025-04-01 10:00:00.000000', 7, 'f0b5ac3c-3c9b-4b55-8d1e-0c5c7b6d9a11', 'CUSTOM_FIRMWARE_UPDATE', 0, 1, '{}')`); err != nil {
		t.Fatal(err)
	}
	if err := migrations.Upgrade(ctx, db); err != nil {
		t.Fatal(err)
	}
	for _, d := range schematest.CompareWithSpec(t, db) {
		t.Errorf("schema: %s", d)
	}
	got := rows(t, db)
	for _, table := range []string{"runbooks", "runbook_traits"} {
		if len(direct[table]) != 0 {
			t.Errorf("%s of the database taken over from 2023.1: %q, want none", table, direct[table])
		}
		delete(got, table)
		delete(direct, table)
	}
	for table := range direct {
		if !reflect.DeepEqual(direct[table], got[table]) {
			t.Errorf("%s after a take-over from 2025.1:\n%q\nfrom 2023.1:\n%q", table, got[table], direct[table])
		}
	}
	var version, trait, traitVersion string
	err := db.QueryRowContext(ctx, `SELECT r.version, t.trait, t.version FROM runbooks r JOIN runbook_traits t ON t.runbook_id = r.id`).
		Scan(&version, &trait, &traitVersion)
	if err != nil || version != "1.2" || trait != "CUSTOM_FIRMWARE_UPDATE" || traitVersion != "1.0" {
		t.Errorf("runbook after the take-over: version %q, trait %q (version %q), %v; want 1.2, CUSTOM_FIRMWARE_UPDATE (1.0)", version, trait, traitVersion, err)
	}
}

// rows is every row of every table of upstream's in a SQLite database, as
// text, in primary key order.
func rows(t *testing.T, db *sqldb.DB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for name, tb := range schematest.Introspect(t, db) {
		if strings.HasPrefix(name, schematest.OurPrefix) {
			continue
		}
		var cols []string
		for _, c := range tb.Columns {
			cols = append(cols, `quote("`+c.Name+`")`)
		}
		q := "SELECT " + strings.Join(cols, ", ") + " FROM " + name + " ORDER BY " + strings.Join(tb.PrimaryKey, ", ")
		r, err := db.QueryContext(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		vals := make([]string, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		out[name] = []string{}
		for r.Next() {
			if err := r.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out[name] = append(out[name], strings.Join(vals, "|"))
		}
		r.Close()
	}
	return out
}

func open(t *testing.T, url string) *sqldb.DB {
	t.Helper()
	db, err := sqldb.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// latestSchema is our newest schema version, the one dbsync upgrade
// leaves a taken-over database at.
func latestSchema(t *testing.T) int {
	t.Helper()
	n, err := migrations.Latest(sqldb.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
