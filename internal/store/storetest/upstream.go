package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// LoadUpstreamSchema creates upstream Ironic's own schema at its Alembic
// head in an empty database, from the DDL in the spec folder (MariaDB dump
// or SQLite create_schema), as an upstream deployment would have it.
func LoadUpstreamSchema(t testing.TB, db *sqldb.DB) {
	t.Helper()
	file := "ironic/core/db-schema/schema-sqlite.sql"
	if db.Dialect() == sqldb.MySQL {
		file = "ironic/core/db-schema/schema-mariadb.sql"
	}
	ctx := context.Background()
	// One connection: the dump's session settings must hold for every
	// statement after them.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, stmt := range statements(string(spectest.ReadFile(t, file))) {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v\n%s", file, err, stmt)
		}
	}
}

// statements splits a SQL file at semicolons ending a line, skipping "--"
// comment lines.
func statements(src string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		cur.WriteString(line + "\n")
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			if s := strings.TrimSpace(cur.String()); s != ";" {
				out = append(out, strings.TrimSuffix(s, ";"))
			}
			cur.Reset()
		}
	}
	return out
}
