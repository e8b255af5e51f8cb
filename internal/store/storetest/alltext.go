package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/store/sqldb"
)

// AllText is the text of every column of every row of every table of db,
// one "table: value" line each: what a database dump or a backup holds,
// for tests that look for what must not be stored (plain secrets).
func AllText(t testing.TB, db *sqldb.DB) string {
	t.Helper()
	q := "SELECT name FROM sqlite_master WHERE type = 'table'"
	if db.Dialect() == sqldb.MySQL {
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
	}
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("list tables: %v", err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	var b strings.Builder
	for _, table := range tables {
		rows, err := db.Query("SELECT * FROM `" + table + "`")
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%s: %v\n", table, v)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
	}
	return b.String()
}
