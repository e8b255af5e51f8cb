package sqldb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// Many writers, each doing read-modify-write in its own transaction, must all
// succeed on a file database: the write gate, immediate transactions and busy_timeout turn
// contention into waiting, never into "database is locked".
func TestSQLiteConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	db, err := sqldb.Open(ctx, storetest.SQLiteURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.Exec(t, db,
		"CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)",
		"CREATE TABLE log (id INTEGER PRIMARY KEY, worker INTEGER, seq INTEGER)",
		"INSERT INTO counter (id, n) VALUES (1, 0)")
	// Retries would hide lock errors; this test wants none at all.
	noRetry := db.WithRetryPolicy(sqldb.RetryPolicy{Attempts: 1})
	const workers, writes = 20, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers*writes)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				err := noRetry.InTx(ctx, func(tx *sql.Tx) error {
					var n int
					if err := tx.QueryRowContext(ctx, "SELECT n FROM counter WHERE id = 1").Scan(&n); err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, "UPDATE counter SET n = ? WHERE id = 1", n+1); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, "INSERT INTO log (worker, seq) VALUES (?, ?)", w, i)
					return err
				})
				if err != nil {
					errs <- err
				}
				// Readers outside transactions run beside the writers.
				var c int
				if err := noRetry.QueryRowContext(ctx, "SELECT COUNT(*) FROM log").Scan(&c); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent write: %v", err)
	}
	var n, logged int
	if err := db.QueryRowContext(ctx, "SELECT n FROM counter").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM log").Scan(&logged); err != nil {
		t.Fatal(err)
	}
	if n != workers*writes || logged != workers*writes {
		t.Errorf("counter = %d, log rows = %d; want %d (lost updates)", n, logged, workers*writes)
	}
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q (%v), want wal", mode, err)
	}
}

// Every pooled connection of an in-memory database sees the same data, and
// two in-memory databases are separate.
func TestSQLiteMemoryShared(t *testing.T) {
	ctx := context.Background()
	a, err := sqldb.Open(ctx, "sqlite://")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqldb.Open(ctx, "sqlite://")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	storetest.Exec(t, a, "CREATE TABLE t (x INTEGER)")
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.InTx(ctx, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, "INSERT INTO t (x) VALUES (?)", i)
				return err
			}); err != nil {
				t.Errorf("insert: %v", err)
			}
		}()
	}
	wg.Wait()
	// Hold several connections at once so that reads go through different ones.
	var conns []*sql.Conn
	for range 4 {
		c, err := a.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		var n int
		if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 16 {
			t.Errorf("connection %d sees %d rows (%v), want 16", i, n, err)
		}
		c.Close()
	}
	var n int
	if err := b.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master WHERE name = 't'").Scan(&n); err != nil || n != 0 {
		t.Errorf("second in-memory database sees the first one's table (%d, %v)", n, err)
	}
}

// Upstream runs SQLite with foreign keys enforced (oslo.db sqlite_fk=True);
// MariaDB enforces them anyway.
func TestForeignKeysEnforced(t *testing.T) {
	for _, b := range storetest.EmptyBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			storetest.Exec(t, b.DB,
				"CREATE TABLE parent (id INTEGER NOT NULL, PRIMARY KEY (id))",
				"CREATE TABLE child (id INTEGER NOT NULL, parent_id INTEGER, PRIMARY KEY (id), FOREIGN KEY (parent_id) REFERENCES parent (id))")
			_, err := b.DB.ExecContext(context.Background(), "INSERT INTO child (id, parent_id) VALUES (1, 42)")
			if err == nil {
				t.Fatal("insert with a dangling foreign key succeeded")
			}
		})
	}
}

// Times go in as upstream stores them and come back as the same UTC instant.
func TestTimeRoundTrip(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.EmptyBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			storetest.Exec(t, b.DB, "CREATE TABLE ts (id INTEGER NOT NULL, at DATETIME, PRIMARY KEY (id))")
			in := time.Date(2026, 3, 4, 5, 6, 7, 891234567, time.FixedZone("CET", 3600))
			if _, err := b.DB.ExecContext(ctx, "INSERT INTO ts (id, at) VALUES (1, ?), (2, ?)", b.DB.Time(in), b.DB.Time(time.Time{})); err != nil {
				t.Fatal(err)
			}
			var out time.Time
			var null sql.NullTime
			if err := b.DB.QueryRowContext(ctx, "SELECT at FROM ts WHERE id = 1").Scan(&out); err != nil {
				t.Fatal(err)
			}
			if err := b.DB.QueryRowContext(ctx, "SELECT at FROM ts WHERE id = 2").Scan(&null); err != nil {
				t.Fatal(err)
			}
			want := time.Date(2026, 3, 4, 4, 6, 7, 891234000, time.UTC)
			stored := "2026-03-04 04:06:07.891234"
			if b.DB.Dialect() == sqldb.MySQL {
				want = time.Date(2026, 3, 4, 4, 6, 7, 0, time.UTC)
				stored = "2026-03-04 04:06:07"
			}
			if !out.Equal(want) || out.Location() != time.UTC {
				t.Errorf("read back %v, want %v in UTC", out, want)
			}
			if null.Valid {
				t.Errorf("zero time stored as %v, want NULL", null.Time)
			}
			var text string
			if err := b.DB.QueryRowContext(ctx, "SELECT CAST(at AS CHAR) FROM ts WHERE id = 1").Scan(&text); err != nil {
				t.Fatal(err)
			}
			if text != stored {
				t.Errorf("stored text %q, want upstream's %q", text, stored)
			}
			if now := b.DB.Now(); now.Location() != time.UTC || !now.Equal(b.DB.Truncate(now)) {
				t.Errorf("Now() = %v: not UTC at storage precision", now)
			}
		})
	}
}

func TestIsDuplicate(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.EmptyBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			storetest.Exec(t, b.DB,
				"CREATE TABLE widgets (id INTEGER NOT NULL, uuid VARCHAR(36), name VARCHAR(255), a INTEGER, c INTEGER, "+
					"PRIMARY KEY (id), CONSTRAINT uniq_widgets0uuid UNIQUE (uuid), CONSTRAINT uniq_widgets0name UNIQUE (name), "+
					"CONSTRAINT uniq_widgets0a0c UNIQUE (a, c))",
				"INSERT INTO widgets (id, uuid, name, a, c) VALUES (1, 'u-1', 'n-1', 1, 2)")
			cases := []struct {
				name, stmt string
				columns    []string
				constraint string
			}{
				{"uuid", "INSERT INTO widgets (id, uuid) VALUES (2, 'u-1')", []string{"uuid"}, "uniq_widgets0uuid"},
				{"name", "INSERT INTO widgets (id, name) VALUES (2, 'n-1')", []string{"name"}, "uniq_widgets0name"},
				{"two columns", "INSERT INTO widgets (id, a, c) VALUES (2, 1, 2)", []string{"a", "c"}, "uniq_widgets0a0c"},
				{"primary key", "INSERT INTO widgets (id) VALUES (1)", nil, "PRIMARY"},
			}
			for _, tc := range cases {
				_, err := b.DB.ExecContext(ctx, tc.stmt)
				d, ok := sqldb.IsDuplicate(err)
				if !ok {
					t.Errorf("%s: IsDuplicate(%v) = false", tc.name, err)
					continue
				}
				if d.Constraint != tc.constraint && (b.DB.Dialect() == sqldb.MySQL || tc.constraint == "PRIMARY") {
					t.Errorf("%s: constraint %q, want %q", tc.name, d.Constraint, tc.constraint)
				}
				if tc.columns != nil && fmt.Sprint(d.Columns) != fmt.Sprint(tc.columns) {
					t.Errorf("%s: columns %v, want %v", tc.name, d.Columns, tc.columns)
				}
				if b.DB.Dialect() == sqldb.SQLite && d.Table != "widgets" {
					t.Errorf("%s: table %q, want widgets", tc.name, d.Table)
				}
			}
			_, err := b.DB.ExecContext(ctx, "INSERT INTO nowhere (x) VALUES (1)")
			if _, ok := sqldb.IsDuplicate(err); ok || err == nil {
				t.Errorf("IsDuplicate(%v) = true for a missing table", err)
			}
			if _, ok := sqldb.IsDuplicate(nil); ok {
				t.Error("IsDuplicate(nil) = true")
			}
		})
	}
}

func TestRetryRetriesDeadlocks(t *testing.T) {
	ctx := context.Background()
	db, err := sqldb.Open(ctx, "sqlite://")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fast := db.WithRetryPolicy(sqldb.RetryPolicy{Attempts: 5, Initial: time.Millisecond, Max: 4 * time.Millisecond})
	for _, code := range []uint16{1213, 1205} {
		calls := 0
		err := fast.Retry(ctx, func(context.Context) error {
			calls++
			if calls < 3 {
				return fmt.Errorf("update node: %w", &mysql.MySQLError{Number: code, Message: "fake"})
			}
			return nil
		})
		if err != nil || calls != 3 {
			t.Errorf("error %d: Retry = %v after %d calls, want success after 3", code, err, calls)
		}
	}
	calls := 0
	err = fast.Retry(ctx, func(context.Context) error {
		calls++
		return &mysql.MySQLError{Number: 1213, Message: "fake deadlock"}
	})
	var me *mysql.MySQLError
	if calls != 5 || !errors.As(err, &me) || me.Number != 1213 {
		t.Errorf("persistent deadlock: %d calls, err %v; want 5 calls and the deadlock error", calls, err)
	}
	calls = 0
	dup := &mysql.MySQLError{Number: 1062, Message: "Duplicate entry 'x' for key 'uniq_nodes0name'"}
	if err := fast.Retry(ctx, func(context.Context) error { calls++; return dup }); !errors.Is(err, dup) || calls != 1 {
		t.Errorf("non-retryable error: %d calls, err %v; want 1 call", calls, err)
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	db, err := sqldb.Open(context.Background(), "sqlite://")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	slow := db.WithRetryPolicy(sqldb.RetryPolicy{Attempts: 1000, Initial: time.Hour, Max: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	done := make(chan error)
	go func() {
		done <- slow.Retry(ctx, func(context.Context) error {
			calls++
			return &mysql.MySQLError{Number: 1213, Message: "fake deadlock"}
		})
	}()
	cancel()
	err = <-done
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("Retry after cancel: %d calls, err %v; want 1 call and context.Canceled", calls, err)
	}
}

// A real deadlock on MariaDB: two transactions lock two rows in opposite
// orders. The server kills one with 1213; InTx retries it and both commit.
func TestInTxSurvivesRealDeadlock(t *testing.T) {
	ctx := context.Background()
	url := storetest.MySQLURL(t)
	db, err := sqldb.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.Exec(t, db,
		"CREATE TABLE rows2 (id INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB",
		"INSERT INTO rows2 (id, n) VALUES (1, 0), (2, 0)")
	fast := db.WithRetryPolicy(sqldb.RetryPolicy{Attempts: 5, Initial: 5 * time.Millisecond, Max: 50 * time.Millisecond})
	var firstLocked sync.WaitGroup
	firstLocked.Add(2)
	attempts := make([]int, 2)
	var wg sync.WaitGroup
	for i, order := range [][2]int{{1, 2}, {2, 1}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := fast.InTx(ctx, func(tx *sql.Tx) error {
				attempts[i]++
				if _, err := tx.ExecContext(ctx, "UPDATE rows2 SET n = n + 1 WHERE id = ?", order[0]); err != nil {
					return err
				}
				if attempts[i] == 1 {
					// Both hold their first row before either asks for the second.
					firstLocked.Done()
					firstLocked.Wait()
				}
				_, err := tx.ExecContext(ctx, "UPDATE rows2 SET n = n + 1 WHERE id = ?", order[1])
				return err
			})
			if err != nil {
				t.Errorf("transaction %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if attempts[0]+attempts[1] < 3 {
		t.Errorf("attempts %v: no deadlock happened, so the retry was not exercised", attempts)
	}
	var total int
	if err := db.QueryRowContext(ctx, "SELECT SUM(n) FROM rows2").Scan(&total); err != nil || total != 4 {
		t.Errorf("sum = %d (%v), want 4: each transaction committed once", total, err)
	}
}

// A file name with characters that mean something in a SQLite URI opens
// (and creates) exactly that file.
func TestSQLiteOddFileName(t *testing.T) {
	dir := t.TempDir()
	name := "ironic #1 100%.sqlite"
	db, err := sqldb.Open(context.Background(), "sqlite:///"+dir+"/"+name)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Exec(t, db, "CREATE TABLE t (x INTEGER)")
	db.Close()
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Errorf("database file not created under its own name: %v", err)
	}
}

// SQLite's writers queue at the process's write gate: a writer whose context
// ends while it waits leaves without running, and a write opened inside
// another write transaction (which SQLite could never grant) fails as busy,
// retryable and answered as a 503, instead of hanging.
func TestSQLiteWriteGate(t *testing.T) {
	ctx := context.Background()
	db, err := sqldb.Open(ctx, storetest.SQLiteURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	storetest.Exec(t, db, "CREATE TABLE t (n INTEGER)")
	once := sqldb.WithWriteWait(db.WithRetryPolicy(sqldb.RetryPolicy{Attempts: 1}), 50*time.Millisecond)

	err = once.InTx(ctx, func(*sql.Tx) error {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		ran := false
		err := once.InTx(cctx, func(*sql.Tx) error { ran = true; return nil })
		if ran || !errors.Is(err, context.Canceled) {
			t.Errorf("writer with an ended context: ran %v, err %v; want not run, context.Canceled", ran, err)
		}
		err = once.InTx(ctx, func(*sql.Tx) error { ran = true; return nil })
		if ran || !errors.Is(err, sqldb.ErrWriteBusy) || !sqldb.IsRetryable(err) || !sqldb.IsUnavailable(err) {
			t.Errorf("nested writer: ran %v, err %v; want not run, ErrWriteBusy, retryable and unavailable", ran, err)
		}
		// Readers do not queue at the gate.
		return once.InReadTx(ctx, func(tx *sql.Tx) error {
			var n int
			return tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n)
		})
	})
	if err != nil {
		t.Fatalf("outer write transaction: %v", err)
	}
	// The gate is free again once the transaction ended.
	if err := once.InTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO t (n) VALUES (1)")
		return err
	}); err != nil {
		t.Errorf("write after the gate was released: %v", err)
	}
}
