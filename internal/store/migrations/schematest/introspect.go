// Package schematest describes a database's schema as the database itself
// does, in the shape of upstream's tables.json, and compares it with that
// file: the schema tests of migrations and the take-over test share it.
package schematest

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/store/sqldb"
)

// The schema as the database itself describes it (information_schema on
// MySQL, pragmas and sqlite_master on SQLite), in the shape of tables.json.

// Column is a column as tables.json describes one.
type Column struct {
	Name      string  `json:"name"`
	Position  int     `json:"position"`
	Type      string  `json:"column_type"`
	Nullable  bool    `json:"nullable"`
	Default   *string `json:"default"`
	Extra     *string `json:"extra"`
	Key       *string `json:"key"`
	Charset   *string `json:"charset"`
	Collation *string `json:"collation"`
}

// Index is an index or a unique constraint.
type Index struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
	Unique  bool     `json:"unique"`
}

// ForeignKey is a foreign key constraint.
type ForeignKey struct {
	Name       string         `json:"name"`
	Columns    []string       `json:"columns"`
	RefTable   string         `json:"referred_table"`
	RefColumns []string       `json:"referred_columns"`
	Options    map[string]any `json:"options"`
}

// Table is a table as tables.json describes one.
type Table struct {
	Options struct {
		Engine    string `json:"engine"`
		Collation string `json:"collation"`
	} `json:"table_options"`
	Columns     []Column     `json:"columns"`
	PrimaryKey  []string     `json:"primary_key"`
	Indexes     []Index      `json:"indexes"`
	Uniques     []Index      `json:"unique_constraints"`
	ForeignKeys []ForeignKey `json:"foreign_keys"`
	// SQL is SQLite's stored CREATE TABLE text, whitespace collapsed.
	SQL string `json:"-"`
}

// Introspect describes every table of the database.
func Introspect(t testing.TB, db *sqldb.DB) map[string]*Table {
	t.Helper()
	if db.Dialect() == sqldb.MySQL {
		return introspectMySQL(t, db)
	}
	return introspectSQLite(t, db)
}

func query(t testing.TB, db *sqldb.DB, q string, args []any, scan func(*sql.Rows) error) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func nullable(s sql.NullString) *string {
	if !s.Valid || s.String == "" {
		return nil
	}
	return &s.String
}

func introspectMySQL(t testing.TB, db *sqldb.DB) map[string]*Table {
	t.Helper()
	tables := map[string]*Table{}
	query(t, db, `SELECT table_name, engine, table_collation FROM information_schema.tables
		WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'`, nil, func(r *sql.Rows) error {
		var name string
		tb := &Table{}
		if err := r.Scan(&name, &tb.Options.Engine, &tb.Options.Collation); err != nil {
			return err
		}
		tables[name] = tb
		return nil
	})
	query(t, db, `SELECT table_name, column_name, ordinal_position, column_type, is_nullable, column_default,
		extra, column_key, character_set_name, collation_name FROM information_schema.columns
		WHERE table_schema = DATABASE() ORDER BY table_name, ordinal_position`, nil, func(r *sql.Rows) error {
		var tn, isNull string
		var def, extra, key, cs, coll sql.NullString
		var c Column
		if err := r.Scan(&tn, &c.Name, &c.Position, &c.Type, &isNull, &def, &extra, &key, &cs, &coll); err != nil {
			return err
		}
		c.Nullable = isNull == "YES"
		if def.Valid {
			c.Default = &def.String
		}
		c.Extra, c.Key, c.Charset, c.Collation = nullable(extra), nullable(key), nullable(cs), nullable(coll)
		tables[tn].Columns = append(tables[tn].Columns, c)
		return nil
	})
	query(t, db, `SELECT table_name, index_name, non_unique, column_name FROM information_schema.statistics
		WHERE table_schema = DATABASE() ORDER BY table_name, index_name, seq_in_index`, nil, func(r *sql.Rows) error {
		var tn, name, col string
		var nonUnique int
		if err := r.Scan(&tn, &name, &nonUnique, &col); err != nil {
			return err
		}
		tb := tables[tn]
		if name == "PRIMARY" {
			tb.PrimaryKey = append(tb.PrimaryKey, col)
			return nil
		}
		if n := len(tb.Indexes); n > 0 && tb.Indexes[n-1].Name == name {
			tb.Indexes[n-1].Columns = append(tb.Indexes[n-1].Columns, col)
		} else {
			tb.Indexes = append(tb.Indexes, Index{Name: name, Columns: []string{col}, Unique: nonUnique == 0})
		}
		return nil
	})
	query(t, db, `SELECT tc.table_name, tc.constraint_name, k.column_name
		FROM information_schema.table_constraints tc JOIN information_schema.key_column_usage k
		  ON k.constraint_schema = tc.constraint_schema AND k.table_name = tc.table_name AND k.constraint_name = tc.constraint_name
		WHERE tc.constraint_schema = DATABASE() AND tc.constraint_type = 'UNIQUE'
		ORDER BY tc.table_name, tc.constraint_name, k.ordinal_position`, nil, func(r *sql.Rows) error {
		var tn, name, col string
		if err := r.Scan(&tn, &name, &col); err != nil {
			return err
		}
		tb := tables[tn]
		if n := len(tb.Uniques); n > 0 && tb.Uniques[n-1].Name == name {
			tb.Uniques[n-1].Columns = append(tb.Uniques[n-1].Columns, col)
		} else {
			tb.Uniques = append(tb.Uniques, Index{Name: name, Columns: []string{col}})
		}
		return nil
	})
	query(t, db, `SELECT k.table_name, k.constraint_name, k.column_name, k.referenced_table_name, k.referenced_column_name,
		rc.update_rule, rc.delete_rule
		FROM information_schema.key_column_usage k JOIN information_schema.referential_constraints rc
		  ON rc.constraint_schema = k.constraint_schema AND rc.table_name = k.table_name AND rc.constraint_name = k.constraint_name
		WHERE k.table_schema = DATABASE() AND k.referenced_table_name IS NOT NULL
		ORDER BY k.table_name, k.constraint_name, k.ordinal_position`, nil, func(r *sql.Rows) error {
		var tn, name, col, refTable, refCol, onUpdate, onDelete string
		if err := r.Scan(&tn, &name, &col, &refTable, &refCol, &onUpdate, &onDelete); err != nil {
			return err
		}
		tb := tables[tn]
		if n := len(tb.ForeignKeys); n > 0 && tb.ForeignKeys[n-1].Name == name {
			tb.ForeignKeys[n-1].Columns = append(tb.ForeignKeys[n-1].Columns, col)
			tb.ForeignKeys[n-1].RefColumns = append(tb.ForeignKeys[n-1].RefColumns, refCol)
			return nil
		}
		// tables.json lists only options that were set; MariaDB's default is RESTRICT.
		opts := map[string]any{}
		if onUpdate != "RESTRICT" {
			opts["onupdate"] = onUpdate
		}
		if onDelete != "RESTRICT" {
			opts["ondelete"] = onDelete
		}
		tb.ForeignKeys = append(tb.ForeignKeys, ForeignKey{Name: name, Columns: []string{col}, RefTable: refTable, RefColumns: []string{refCol}, Options: opts})
		return nil
	})
	return tables
}

var (
	sqliteUniqueRe = regexp.MustCompile(`CONSTRAINT (\w+) UNIQUE \(([^)]*)\)`)
	sqliteFKNameRe = regexp.MustCompile(`CONSTRAINT (\w+) FOREIGN KEY ?\(([^)]*)\)`)
	spaceRe        = regexp.MustCompile(`\s+`)
)

func splitCols(s string) []string {
	var cols []string
	for _, c := range strings.Split(s, ",") {
		cols = append(cols, strings.Trim(strings.TrimSpace(c), `"`+"`"))
	}
	return cols
}

// introspectSQLite reads what SQLite keeps. SQLite stores no names for
// unique constraints or foreign keys apart from the CREATE TABLE text, so
// those names are read from that text.
func introspectSQLite(t testing.TB, db *sqldb.DB) map[string]*Table {
	t.Helper()
	tables := map[string]*Table{}
	query(t, db, `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`, nil, func(r *sql.Rows) error {
		var name, ddl string
		if err := r.Scan(&name, &ddl); err != nil {
			return err
		}
		tables[name] = &Table{SQL: strings.TrimSpace(spaceRe.ReplaceAllString(ddl, " "))}
		return nil
	})
	for name, tb := range tables {
		type pkCol struct {
			name string
			pos  int
		}
		var pk []pkCol
		query(t, db, `SELECT cid, name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`, []any{name}, func(r *sql.Rows) error {
			var c Column
			var notNull, pkPos int
			var def sql.NullString
			if err := r.Scan(&c.Position, &c.Name, &c.Type, &notNull, &def, &pkPos); err != nil {
				return err
			}
			c.Position++
			c.Nullable = notNull == 0
			if def.Valid {
				d := strings.TrimSuffix(strings.TrimPrefix(def.String, "("), ")")
				c.Default = &d
			}
			if pkPos > 0 {
				pk = append(pk, pkCol{c.Name, pkPos})
			}
			tb.Columns = append(tb.Columns, c)
			return nil
		})
		sort.Slice(pk, func(i, j int) bool { return pk[i].pos < pk[j].pos })
		for _, p := range pk {
			tb.PrimaryKey = append(tb.PrimaryKey, p.name)
		}
		uniqueNames := map[string]string{}
		for _, m := range sqliteUniqueRe.FindAllStringSubmatch(tb.SQL, -1) {
			uniqueNames[strings.Join(splitCols(m[2]), ",")] = m[1]
		}
		type idx struct {
			name   string
			unique bool
			origin string
		}
		var idxs []idx
		query(t, db, `SELECT name, "unique", origin FROM pragma_index_list(?)`, []any{name}, func(r *sql.Rows) error {
			var i idx
			var u int
			if err := r.Scan(&i.name, &u, &i.origin); err != nil {
				return err
			}
			i.unique = u == 1
			idxs = append(idxs, i)
			return nil
		})
		for _, i := range idxs {
			var cols []string
			query(t, db, `SELECT name FROM pragma_index_info(?) ORDER BY seqno`, []any{i.name}, func(r *sql.Rows) error {
				var c string
				if err := r.Scan(&c); err != nil {
					return err
				}
				cols = append(cols, c)
				return nil
			})
			switch i.origin {
			case "pk":
			case "u":
				n, ok := uniqueNames[strings.Join(cols, ",")]
				if !ok {
					n = "(unnamed: " + i.name + ")"
				}
				tb.Uniques = append(tb.Uniques, Index{Name: n, Columns: cols})
			default:
				tb.Indexes = append(tb.Indexes, Index{Name: i.name, Columns: cols, Unique: i.unique})
			}
		}
		fkNames := map[string]string{}
		for _, m := range sqliteFKNameRe.FindAllStringSubmatch(tb.SQL, -1) {
			fkNames[strings.Join(splitCols(m[2]), ",")] = m[1]
		}
		byID := map[int]*ForeignKey{}
		var ids []int
		query(t, db, `SELECT id, "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq`, []any{name}, func(r *sql.Rows) error {
			var id int
			var ref, from, to, onUpdate, onDelete string
			if err := r.Scan(&id, &ref, &from, &to, &onUpdate, &onDelete); err != nil {
				return err
			}
			fk, ok := byID[id]
			if !ok {
				opts := map[string]any{}
				if onUpdate != "NO ACTION" {
					opts["onupdate"] = onUpdate
				}
				if onDelete != "NO ACTION" {
					opts["ondelete"] = onDelete
				}
				fk = &ForeignKey{RefTable: ref, Options: opts}
				byID[id] = fk
				ids = append(ids, id)
			}
			fk.Columns = append(fk.Columns, from)
			fk.RefColumns = append(fk.RefColumns, to)
			return nil
		})
		sort.Ints(ids)
		for _, id := range ids {
			fk := byID[id]
			fk.Name = fkNames[strings.Join(fk.Columns, ",")]
			tb.ForeignKeys = append(tb.ForeignKeys, *fk)
		}
	}
	return tables
}

func str(p *string) string {
	if p == nil {
		return "<none>"
	}
	return fmt.Sprintf("%q", *p)
}

// CollapseSpace collapses every run of white space in s to one space, as
// Table.SQL holds SQLite's DDL text.
func CollapseSpace(s string) string { return spaceRe.ReplaceAllString(s, " ") }
