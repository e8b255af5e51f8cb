package storetest_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/openkeel/ironic/internal/store/migrations"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// Each backend gets a migrated database of its own, and a MariaDB database
// is gone once its test ends.
func TestForEachBackend(t *testing.T) {
	ctx := context.Background()
	seen := map[string]string{}
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		ours, alembic, err := migrations.Version(ctx, db)
		if err != nil || ours < 1 || alembic != migrations.AlembicHead {
			t.Errorf("Version = %d, %q, %v: not migrated", ours, alembic, err)
		}
		if db.Dialect() == sqldb.MySQL {
			var name string
			if err := db.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&name); err != nil {
				t.Fatal(err)
			}
			seen["mysql"] = name
		} else {
			seen["sqlite"] = "yes"
		}
	})
	if seen["sqlite"] == "" {
		t.Error("no SQLite run")
	}
	dsn := os.Getenv(storetest.MySQLEnv)
	if dsn == "" {
		return
	}
	if seen["mysql"] == "" {
		t.Fatalf("%s is set but no MariaDB run", storetest.MySQLEnv)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var n int
	if err := admin.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", seen["mysql"]).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("test database %s was not dropped", seen["mysql"])
	}
}
