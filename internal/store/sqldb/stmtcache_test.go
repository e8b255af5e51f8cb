package sqldb_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// Cached statements answer like plain queries, are prepared once per text,
// survive a schema change and are released by Close.
func TestCachedSQLite(t *testing.T) {
	ctx := context.Background()
	db, err := sqldb.Open(ctx, storetest.SQLiteURL(t))
	if err != nil {
		t.Fatal(err)
	}
	storetest.Exec(t, db, "CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)")
	c := db.Cached()
	const ins = "INSERT INTO kv (k, v) VALUES (?, ?)"
	for i := range 3 {
		if _, err := c.ExecContext(ctx, ins, fmt.Sprint("k", i), fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := sqldb.CachedStatements(db); n != 1 {
		t.Errorf("after three inserts of one text: %d cached statements, want 1", n)
	}
	var v string
	if err := c.QueryRowContext(ctx, "SELECT v FROM kv WHERE k = ?", "k2").Scan(&v); err != nil || v != "v2" {
		t.Errorf("QueryRow k2 = %q, %v; want v2", v, err)
	}
	// A statement prepared before ALTER TABLE must see the new column.
	const all = "SELECT * FROM kv WHERE k = ?"
	if _, err := c.QueryContext(ctx, all, "k0"); err != nil {
		t.Fatal(err)
	}
	storetest.Exec(t, db, "ALTER TABLE kv ADD COLUMN w TEXT DEFAULT 'new'")
	rows, err := c.QueryContext(ctx, all, "k0")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	var k, w string
	if !rows.Next() {
		t.Fatal("no row for k0")
	}
	if err := rows.Scan(&k, &v, &w); err != nil || len(cols) != 3 || w != "new" {
		t.Errorf("after ALTER TABLE: columns %v, row (%q, %q, %q), %v", cols, k, v, w, err)
	}
	rows.Close()
	if _, err := c.ExecContext(ctx, "INSERT INTO nosuch VALUES (?)", 1); err == nil {
		t.Error("insert into a missing table succeeded")
	}
	if err := c.QueryRowContext(ctx, "SELECT v FROM nosuch WHERE k = ?", 1).Scan(&v); err == nil {
		t.Error("select from a missing table succeeded")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n := sqldb.CachedStatements(db); n != 0 {
		t.Errorf("after Close: %d cached statements, want 0", n)
	}
}

// Past its bound the cache stops growing and further texts still run.
func TestCachedBounded(t *testing.T) {
	ctx := context.Background()
	db, err := sqldb.Open(ctx, "sqlite://")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := range sqldb.MaxCachedStatements + 10 {
		var got int
		if err := db.Cached().QueryRowContext(ctx, fmt.Sprintf("SELECT %d + ?", i), 1).Scan(&got); err != nil || got != i+1 {
			t.Fatalf("SELECT %d + 1 = %d, %v", i, got, err)
		}
	}
	if n := sqldb.CachedStatements(db); n != sqldb.MaxCachedStatements {
		t.Errorf("%d cached statements, want the bound %d", n, sqldb.MaxCachedStatements)
	}
}

// Many goroutines share the cached statements over the whole pool (run
// with -race), reading and writing through them.
func TestCachedConcurrent(t *testing.T) {
	ctx := context.Background()
	db, err := sqldb.Open(ctx, storetest.SQLiteURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.Exec(t, db, "CREATE TABLE n (id INTEGER PRIMARY KEY, c INTEGER NOT NULL)", "INSERT INTO n (id, c) VALUES (1, 0)")
	const workers, each = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range each {
				err := db.Retry(ctx, func(ctx context.Context) error {
					_, err := db.Cached().ExecContext(ctx, "UPDATE n SET c = c + 1 WHERE id = ?", 1)
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				var c int
				if err := db.Cached().QueryRowContext(ctx, "SELECT c FROM n WHERE id = ?", 1).Scan(&c); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var c int
	if err := db.QueryRowContext(ctx, "SELECT c FROM n WHERE id = 1").Scan(&c); err != nil || c != workers*each {
		t.Errorf("counter = %d, %v; want %d", c, err, workers*each)
	}
}

// On MariaDB nothing is prepared: arguments are interpolated client-side,
// which must round-trip quotes, backslashes, NUL and 4-byte UTF-8 intact.
func TestCachedMySQLInterpolates(t *testing.T) {
	ctx := context.Background()
	db, err := sqldb.Open(ctx, storetest.MySQLURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.Exec(t, db, "CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT, b BLOB) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4")
	tricky := []string{`it's`, `back\slash`, `"q" ' \' \\'`, "nul\x00byte", "emoji 🚀 ü", "-- comment", "'; DROP TABLE kv; --"}
	for i, s := range tricky {
		if _, err := db.Cached().ExecContext(ctx, "INSERT INTO kv (k, v, b) VALUES (?, ?, ?)", i, s, []byte(s)); err != nil {
			t.Fatalf("insert %q: %v", s, err)
		}
	}
	for i, s := range tricky {
		var v string
		var b []byte
		if err := db.Cached().QueryRowContext(ctx, "SELECT v, b FROM kv WHERE k = ? AND v = ?", i, s).Scan(&v, &b); err != nil || v != s || string(b) != s {
			t.Errorf("row %d = %q, %q, %v; want %q", i, v, b, err, s)
		}
	}
	if n := sqldb.CachedStatements(db); n != 0 {
		t.Errorf("%d statements cached on MySQL, want 0", n)
	}
}

// Inside a transaction the cache serves the texts prepared beforehand and
// runs the others directly, preparing nothing on the pool.
func TestCachedInTx(t *testing.T) {
	ctx := context.Background()
	db, err := sqldb.Open(ctx, storetest.SQLiteURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.Exec(t, db, "CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT)", "INSERT INTO kv (k, v) VALUES ('a', '1'), ('b', '2')")
	const byKey = "SELECT v FROM kv WHERE k = ?"
	if err := db.Cached().Prepare(ctx, byKey, byKey); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		err := db.InReadTx(ctx, func(tx *sql.Tx) error {
			q := db.Cached().InTx(tx)
			var v string
			if err := q.QueryRowContext(ctx, byKey, "b").Scan(&v); err != nil || v != "2" {
				return fmt.Errorf("prepared text: %q, %v", v, err)
			}
			if err := q.QueryRowContext(ctx, "SELECT k FROM kv WHERE v = ?", "1").Scan(&v); err != nil || v != "a" {
				return fmt.Errorf("other text: %q, %v", v, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := sqldb.CachedStatements(db); n != 1 {
		t.Errorf("%d cached statements, want the one prepared", n)
	}
}
