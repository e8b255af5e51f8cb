package schematest

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// Spec is upstream's tables.json.
type Spec struct {
	Alembic struct {
		Head string `json:"head"`
	} `json:"alembic"`
	Counts map[string]int    `json:"counts"`
	Tables map[string]*Table `json:"tables"`
}

// LoadSpec reads tables.json from the spec folder.
func LoadSpec(t testing.TB) *Spec {
	t.Helper()
	var s Spec
	spectest.LoadJSON(t, "ironic/core/db-schema/tables.json", &s)
	if len(s.Tables) != s.Counts["tables"] {
		t.Fatalf("tables.json: %d tables, counts say %d", len(s.Tables), s.Counts["tables"])
	}
	return &s
}

// VersionTable is our own table of schema versions, the one table allowed
// beyond upstream's (the migrations package's VersionTable; not imported,
// so that its tests may use this package).
const VersionTable = "openkeel_schema_version"

// OurPrefix starts the name of every table of ours (the version table, the
// change stream's): upstream has none so named.
const OurPrefix = "openkeel_"

// DropOurs removes our own tables from an introspected schema, leaving
// upstream's.
func DropOurs(tables map[string]*Table) {
	for name := range tables {
		if strings.HasPrefix(name, OurPrefix) {
			delete(tables, name)
		}
	}
}

// CompareWithSpec lists every difference between the database's schema and
// tables.json, sorted; our own tables are left out.
func CompareWithSpec(t testing.TB, db *sqldb.DB) []string {
	t.Helper()
	spec := LoadSpec(t)
	got := Introspect(t, db)
	DropOurs(got)
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
		if db.Dialect() == sqldb.MySQL {
			diffs = append(diffs, CompareMySQL(name, tb, want)...)
		} else {
			diffs = append(diffs, CompareSQLite(name, tb, want)...)
		}
	}
	sort.Strings(diffs)
	return diffs
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

// CompareMySQL lists how a table differs from its description, every
// introspected fact compared (on SQLite, engine and charsets are blank).
func CompareMySQL(name string, got, want *Table) []string {
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
	idxName := func(i Index) string { return i.Name }
	diffs = append(diffs, compareList(name, "index", got.Indexes, want.Indexes, idxName)...)
	diffs = append(diffs, compareList(name, "unique constraint", got.Uniques, want.Uniques, idxName)...)
	diffs = append(diffs, compareList(name, "foreign key", got.ForeignKeys, want.ForeignKeys, func(f ForeignKey) string {
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

// CompareSQLite checks what SQLite can hold of tables.json. Column order is
// the models' order on SQLite (upstream's create_schema), not the
// migrations' order, so positions are not compared here; the test against
// upstream's own SQLite DDL compares them. MariaDB creates an index for each
// foreign key that has none; SQLite does not, so such indexes may be absent.
func CompareSQLite(name string, got, want *Table) []string {
	var diffs []string
	byName := map[string]Column{}
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
	idxName := func(i Index) string { return i.Name }
	diffs = append(diffs, compareList(name, "unique constraint", got.Uniques, want.Uniques, idxName)...)
	var wantIdx []Index
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
	shape := func(f ForeignKey) fkShape { return fkShape{f.Columns, f.RefColumns, f.RefTable, f.Options} }
	fkKey := func(f ForeignKey) string { return strings.Join(f.Columns, ",") }
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

func hasIndex(xs []Index, name string) bool {
	for _, x := range xs {
		if x.Name == name {
			return true
		}
	}
	return false
}

func hasFKName(fks []ForeignKey, name string) bool {
	for _, f := range fks {
		if f.Name == name {
			return true
		}
	}
	return false
}

func backsForeignKey(i Index, fks []ForeignKey) bool {
	for _, f := range fks {
		if reflect.DeepEqual(f.Columns, i.Columns) {
			return true
		}
	}
	return false
}
