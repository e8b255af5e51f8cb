package migrations_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/store/migrations"
	"github.com/openkeel/ironic/internal/store/migrations/schematest"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

func TestAlembicHeadMatchesSpec(t *testing.T) {
	if s := schematest.LoadSpec(t); s.Alembic.Head != migrations.AlembicHead {
		t.Errorf("AlembicHead = %q, upstream head is %q", migrations.AlembicHead, s.Alembic.Head)
	}
}

// An empty database migrated by Upgrade has exactly upstream's schema at
// its Alembic head, as tables.json describes it. Our own VersionTable is the
// one table allowed beyond it.
func TestSchemaMatchesTablesJSON(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			if _, ok := schematest.Introspect(t, b.DB)[migrations.VersionTable]; !ok {
				t.Errorf("our version table %s is missing", migrations.VersionTable)
			}
			for _, d := range schematest.CompareWithSpec(t, b.DB) {
				t.Error(d)
			}
		})
	}
}

// Our VersionTable is the one schematest leaves out.
func TestSchematestKnowsVersionTable(t *testing.T) {
	if schematest.VersionTable != migrations.VersionTable {
		t.Errorf("schematest.VersionTable = %q, want %q", schematest.VersionTable, migrations.VersionTable)
	}
}

// Upstream's own DDL (spec schema-<backend>.sql, what ironic-dbsync makes)
// loaded into an empty database gives the very schema Upgrade makes: every
// table's SHOW CREATE TABLE on MariaDB, every stored CREATE statement on
// SQLite, and everything introspected.
func TestSchemaMatchesUpstreamDDL(t *testing.T) {
	ours := storetest.Backends(t)
	theirs := storetest.EmptyBackends(t)
	for i, b := range ours {
		up := theirs[i]
		t.Run(b.Name, func(t *testing.T) {
			storetest.LoadUpstreamSchema(t, up.DB)
			a, u := schematest.Introspect(t, b.DB), schematest.Introspect(t, up.DB)
			schematest.DropOurs(a)
			if len(a) != len(u) {
				t.Errorf("%d tables, upstream DDL makes %d", len(a), len(u))
			}
			for name, ut := range u {
				if a[name] == nil {
					t.Errorf("missing table %s", name)
					continue
				}
				// compareMySQL compares every introspected fact, so it
				// serves SQLite too (engine and charsets are blank there).
				for _, d := range schematest.CompareMySQL(name, a[name], ut) {
					t.Error(d)
				}
				if a[name].SQL != ut.SQL {
					t.Errorf("%s: CREATE TABLE text\n%s\nupstream:\n%s", name, a[name].SQL, ut.SQL)
				}
			}
			if b.DB.Dialect() == sqldb.MySQL {
				for name := range u {
					if g, w := showCreate(t, b.DB, name), showCreate(t, up.DB, name); g != w {
						t.Errorf("SHOW CREATE TABLE %s:\n%s\nupstream:\n%s", name, g, w)
					}
				}
				return
			}
			g, w := sqliteIndexSQL(t, b.DB), sqliteIndexSQL(t, up.DB)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("indexes %v, upstream %v", g, w)
			}
		})
	}
}

func showCreate(t *testing.T, db *sqldb.DB, table string) string {
	t.Helper()
	var name, ddl string
	if err := db.QueryRowContext(context.Background(), "SHOW CREATE TABLE `"+table+"`").Scan(&name, &ddl); err != nil {
		t.Fatalf("show create table %s: %v", table, err)
	}
	return ddl
}

func sqliteIndexSQL(t *testing.T, db *sqldb.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	rows, err := db.QueryContext(context.Background(), "SELECT name, COALESCE(sql, '') FROM sqlite_master WHERE type = 'index' AND tbl_name NOT LIKE ?", schematest.OurPrefix+"%")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n, s string
		if err := rows.Scan(&n, &s); err != nil {
			t.Fatal(err)
		}
		out[n] = schematest.CollapseSpace(s)
	}
	return out
}
