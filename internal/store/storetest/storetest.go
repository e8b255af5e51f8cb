// Package storetest gives tests fresh databases on every backend available:
// SQLite always (a file in t.TempDir()), MariaDB/MySQL when
// IRONIC_TEST_MYSQL_DSN is set (a uniquely named database on that server,
// dropped when the test ends).
//
// IRONIC_TEST_MYSQL_DSN is in go-sql-driver form, e.g.
// root@tcp(127.0.0.1:3306)/ironic_test; only its user, password and address
// are used.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/openkeel/ironic/internal/store/migrations"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// MySQLEnv names the variable holding the MariaDB/MySQL server to test on.
const MySQLEnv = "IRONIC_TEST_MYSQL_DSN"

// Backend is one database to run a test against.
type Backend struct {
	// Name is the dialect ("sqlite" or "mysql"), used as the subtest name.
	Name string
	DB   *sqldb.DB
	// URL is the oslo.db connection URL the DB was opened with, for tests
	// that open a second pool (another "process") on the same database.
	URL string
}

// Backends returns a fresh database migrated to the latest schema on each
// available backend. They are closed (and the MariaDB one dropped) by
// t.Cleanup.
func Backends(t testing.TB) []Backend {
	t.Helper()
	bs := EmptyBackends(t)
	for _, b := range bs {
		if err := migrations.Upgrade(context.Background(), b.DB); err != nil {
			t.Fatalf("migrate %s test database: %v", b.Name, err)
		}
	}
	return bs
}

// EmptyBackends is Backends without the migration: empty databases.
func EmptyBackends(t testing.TB) []Backend {
	t.Helper()
	bs := []Backend{openBackend(t, SQLiteURL(t))}
	if os.Getenv(MySQLEnv) != "" {
		bs = append(bs, openBackend(t, MySQLURL(t)))
	}
	return bs
}

// ForEachBackend runs fn as a subtest per backend, each with a fresh
// migrated database.
func ForEachBackend(t *testing.T, fn func(t *testing.T, db *sqldb.DB)) {
	t.Helper()
	for _, name := range names() {
		t.Run(name, func(t *testing.T) {
			var url string
			if name == string(sqldb.MySQL) {
				url = MySQLURL(t)
			} else {
				url = SQLiteURL(t)
			}
			b := openBackend(t, url)
			if err := migrations.Upgrade(context.Background(), b.DB); err != nil {
				t.Fatalf("migrate %s test database: %v", b.Name, err)
			}
			fn(t, b.DB)
		})
	}
}

func names() []string {
	n := []string{string(sqldb.SQLite)}
	if os.Getenv(MySQLEnv) != "" {
		n = append(n, string(sqldb.MySQL))
	}
	return n
}

func openBackend(t testing.TB, url string) Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sqldb.Open(ctx, url)
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return Backend{Name: string(db.Dialect()), DB: db, URL: url}
}

// SQLiteURL returns the URL of a new, not yet created SQLite file in
// t.TempDir().
func SQLiteURL(t testing.TB) string {
	t.Helper()
	return "sqlite:///" + filepath.Join(t.TempDir(), "ironic.sqlite")
}

// MySQLURL creates an empty database with a unique name on the server of
// IRONIC_TEST_MYSQL_DSN, registers its drop with t.Cleanup and returns its
// oslo.db URL. The test is skipped when the variable is unset.
func MySQLURL(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(MySQLEnv)
	if dsn == "" {
		t.Skipf("%s not set: no MariaDB/MySQL server to test on", MySQLEnv)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("%s: %v", MySQLEnv, err)
	}
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatalf("%s: %v", MySQLEnv, err)
	}
	defer admin.Close()
	name := "ironic_t_" + randomHex(t, 8)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The same database defaults as upstream's dumped schema, so a table
	// created without options (as an upstream migration would) matches.
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Errorf("drop test database %s: %v", name, err)
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	u := url.URL{Scheme: "mysql+pymysql", Path: "/" + name, RawQuery: "charset=utf8"}
	if cfg.Passwd != "" {
		u.User = url.UserPassword(cfg.User, cfg.Passwd)
	} else {
		u.User = url.User(cfg.User)
	}
	if cfg.Net == "unix" {
		u.RawQuery += "&unix_socket=" + url.QueryEscape(cfg.Addr)
	} else {
		u.Host = cfg.Addr
	}
	return u.String()
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("random name: %v", err)
	}
	return hex.EncodeToString(b)
}

// Exec runs statements on db, failing the test on the first error.
func Exec(t testing.TB, db *sqldb.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("exec %q: %v", truncate(s), err)
		}
	}
}

func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
