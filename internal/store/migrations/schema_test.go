package migrations_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/store/migrations"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

type specSchema struct {
	Alembic struct {
		Head string `json:"head"`
	} `json:"alembic"`
	Counts map[string]int    `json:"counts"`
	Tables map[string]*table `json:"tables"`
}

func loadSpec(t *testing.T) *specSchema {
	t.Helper()
	var s specSchema
	spectest.LoadJSON(t, "ironic/core/db-schema/tables.json", &s)
	if len(s.Tables) != s.Counts["tables"] {
		t.Fatalf("tables.json: %d tables, counts say %d", len(s.Tables), s.Counts["tables"])
	}
	return &s
}

func TestAlembicHeadMatchesSpec(t *testing.T) {
	if s := loadSpec(t); s.Alembic.Head != migrations.AlembicHead {
		t.Errorf("AlembicHead = %q, upstream head is %q", migrations.AlembicHead, s.Alembic.Head)
	}
}

// An empty database migrated by Upgrade has exactly upstream's schema at
// its Alembic head, as tables.json describes it. Our own VersionTable is the
// one table allowed beyond it.
func TestSchemaMatchesTablesJSON(t *testing.T) {
	spec := loadSpec(t)
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			got := introspect(t, b.DB)
			if _, ok := got[migrations.VersionTable]; !ok {
				t.Errorf("our version table %s is missing", migrations.VersionTable)
			}
			delete(got, migrations.VersionTable)
			var diffs []string
			for name := range spec.Tables {
				if got[name] == nil {
					diffs = append(diffs, "missing table "+name)
				}
			}
			for name, tb := range got {
				want := spec.Tables[name]
				if want == nil {
					diffs = append(diffs, "extra table "+name)
					continue
				}
				if b.DB.Dialect() == sqldb.MySQL {
					diffs = append(diffs, compareMySQL(name, tb, want)...)
				} else {
					diffs = append(diffs, compareSQLite(name, tb, want)...)
				}
			}
			sort.Strings(diffs)
			for _, d := range diffs {
				t.Error(d)
			}
		})
	}
}

func sortedByName[T any](xs []T, name func(T) string) []T {
	out := append([]T(nil), xs...)
	sort.Slice(out, func(i, j int) bool { return name(out[i]) < name(out[j]) })
	return out
}

func compareList[T any](table, what string, got, want []T, name func(T) string) []string {
	var diffs []string
	g := map[string]T{}
	for _, x := range got {
		g[name(x)] = x
	}
	w := map[string]T{}
	for _, x := range want {
		w[name(x)] = x
		gx, ok := g[name(x)]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s: missing %s %+v", table, what, x))
		case !reflect.DeepEqual(gx, x):
			diffs = append(diffs, fmt.Sprintf("%s: %s %s is %+v, want %+v", table, what, name(x), gx, x))
		}
	}
	for _, x := range got {
		if _, ok := w[name(x)]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: extra %s %+v", table, what, x))
		}
	}
	return diffs
}

func compareMySQL(name string, got, want *table) []string {
	var diffs []string
	if got.Options != want.Options {
		diffs = append(diffs, fmt.Sprintf("%s: table options %+v, want %+v", name, got.Options, want.Options))
	}
	for i := range max(len(got.Columns), len(want.Columns)) {
		switch {
		case i >= len(got.Columns):
			diffs = append(diffs, fmt.Sprintf("%s: missing column %s", name, want.Columns[i].Name))
		case i >= len(want.Columns):
			diffs = append(diffs, fmt.Sprintf("%s: extra column %s", name, got.Columns[i].Name))
		default:
			g, w := got.Columns[i], want.Columns[i]
			if g.Name != w.Name || g.Position != w.Position || g.Type != w.Type || g.Nullable != w.Nullable ||
				str(g.Default) != str(w.Default) || str(g.Extra) != str(w.Extra) || str(g.Key) != str(w.Key) ||
				str(g.Charset) != str(w.Charset) || str(g.Collation) != str(w.Collation) {
				diffs = append(diffs, fmt.Sprintf("%s: column %d is %s %s null=%v default=%s extra=%s key=%s %s/%s; want %s %s null=%v default=%s extra=%s key=%s %s/%s",
					name, i+1, g.Name, g.Type, g.Nullable, str(g.Default), str(g.Extra), str(g.Key), str(g.Charset), str(g.Collation),
					w.Name, w.Type, w.Nullable, str(w.Default), str(w.Extra), str(w.Key), str(w.Charset), str(w.Collation)))
			}
		}
	}
	if !reflect.DeepEqual(got.PrimaryKey, want.PrimaryKey) {
		diffs = append(diffs, fmt.Sprintf("%s: primary key %v, want %v", name, got.PrimaryKey, want.PrimaryKey))
	}
	idxName := func(i index) string { return i.Name }
	diffs = append(diffs, compareList(name, "index", got.Indexes, want.Indexes, idxName)...)
	diffs = append(diffs, compareList(name, "unique constraint", got.Uniques, want.Uniques, idxName)...)
	diffs = append(diffs, compareList(name, "foreign key", got.ForeignKeys, want.ForeignKeys, func(f foreignKey) string {
		// SQLite leaves most foreign keys unnamed: the columns tell them apart.
		return f.Name + "(" + strings.Join(f.Columns, ",") + ")"
	})...)
	return diffs
}

// sqliteType is how SQLAlchemy renders each of upstream's MariaDB column
// types for SQLite (Boolean as BOOLEAN, LONGTEXT variants as Text).
func sqliteType(mysqlType string) string {
	switch {
	case strings.HasPrefix(mysqlType, "varchar("):
		return strings.ToUpper(mysqlType)
	case mysqlType == "int(11)":
		return "INTEGER"
	case mysqlType == "bigint(20)":
		return "BIGINT"
	case mysqlType == "tinyint(1)":
		return "BOOLEAN"
	case mysqlType == "text", mysqlType == "longtext":
		return "TEXT"
	case mysqlType == "datetime":
		return "DATETIME"
	}
	return "unmapped " + mysqlType
}

// compareSQLite checks what SQLite can hold of tables.json. Column order is
// the models' order on SQLite (upstream's create_schema), not the
// migrations' order, so positions are not compared here; the test against
// upstream's own SQLite DDL compares them. MariaDB creates an index for each
// foreign key that has none; SQLite does not, so such indexes may be absent.
func compareSQLite(name string, got, want *table) []string {
	var diffs []string
	byName := map[string]column{}
	for _, c := range got.Columns {
		byName[c.Name] = c
	}
	for _, w := range want.Columns {
		g, ok := byName[w.Name]
		if !ok {
			diffs = append(diffs, fmt.Sprintf("%s: missing column %s", name, w.Name))
			continue
		}
		delete(byName, w.Name)
		wantDefault := w.Default
		if wantDefault != nil && *wantDefault == "NULL" {
			wantDefault = nil
		}
		if g.Type != sqliteType(w.Type) || g.Nullable != w.Nullable || str(g.Default) != str(wantDefault) {
			diffs = append(diffs, fmt.Sprintf("%s: column %s is %s null=%v default=%s; want %s null=%v default=%s",
				name, w.Name, g.Type, g.Nullable, str(g.Default), sqliteType(w.Type), w.Nullable, str(wantDefault)))
		}
	}
	for extra := range byName {
		diffs = append(diffs, fmt.Sprintf("%s: extra column %s", name, extra))
	}
	if !reflect.DeepEqual(got.PrimaryKey, want.PrimaryKey) {
		diffs = append(diffs, fmt.Sprintf("%s: primary key %v, want %v", name, got.PrimaryKey, want.PrimaryKey))
	}
	idxName := func(i index) string { return i.Name }
	diffs = append(diffs, compareList(name, "unique constraint", got.Uniques, want.Uniques, idxName)...)
	var wantIdx []index
	for _, i := range want.Indexes {
		if i.Unique {
			// A unique index is the unique constraint's, compared above.
			continue
		}
		if !hasIndex(got.Indexes, i.Name) && backsForeignKey(i, want.ForeignKeys) {
			continue
		}
		wantIdx = append(wantIdx, i)
	}
	diffs = append(diffs, compareList(name, "index", got.Indexes, wantIdx, idxName)...)
	type fkShape struct {
		Columns, RefColumns []string
		RefTable            string
		Options             map[string]any
	}
	shape := func(f foreignKey) fkShape { return fkShape{f.Columns, f.RefColumns, f.RefTable, f.Options} }
	fkKey := func(f foreignKey) string { return strings.Join(f.Columns, ",") }
	var gotFK, wantFK []fkShape
	for _, f := range sortedByName(got.ForeignKeys, fkKey) {
		gotFK = append(gotFK, shape(f))
		if f.Name != "" && !hasFKName(want.ForeignKeys, f.Name) {
			diffs = append(diffs, fmt.Sprintf("%s: foreign key on %v is named %s, unknown upstream", name, f.Columns, f.Name))
		}
	}
	for _, f := range sortedByName(want.ForeignKeys, fkKey) {
		wantFK = append(wantFK, shape(f))
	}
	if !reflect.DeepEqual(gotFK, wantFK) {
		diffs = append(diffs, fmt.Sprintf("%s: foreign keys %+v, want %+v", name, gotFK, wantFK))
	}
	return diffs
}

func hasIndex(xs []index, name string) bool {
	for _, x := range xs {
		if x.Name == name {
			return true
		}
	}
	return false
}

func hasFKName(fks []foreignKey, name string) bool {
	for _, f := range fks {
		if f.Name == name {
			return true
		}
	}
	return false
}

func backsForeignKey(i index, fks []foreignKey) bool {
	for _, f := range fks {
		if reflect.DeepEqual(f.Columns, i.Columns) {
			return true
		}
	}
	return false
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
			a, u := introspect(t, b.DB), introspect(t, up.DB)
			delete(a, migrations.VersionTable)
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
				for _, d := range compareMySQL(name, a[name], ut) {
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
	rows, err := db.QueryContext(context.Background(), "SELECT name, COALESCE(sql, '') FROM sqlite_master WHERE type = 'index'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n, s string
		if err := rows.Scan(&n, &s); err != nil {
			t.Fatal(err)
		}
		out[n] = spaceRe.ReplaceAllString(s, " ")
	}
	return out
}
