package sqldb_test

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// databaseConf loads a file with opts in [database], as an operator's
// ironic.conf sets them.
func databaseConf(t *testing.T, opts map[string]string) *config.Config {
	t.Helper()
	var b strings.Builder
	b.WriteString("[database]\n")
	for k, v := range opts {
		b.WriteString(k + " = " + v + "\n")
	}
	f := filepath.Join(t.TempDir(), "ironic.conf")
	if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.LoadOptions{Files: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Issue 21 leftover: oslo.db's [database] options map to the pool, the
// session and the retries; options left at their defaults keep ours.
func TestSettingsFromConfig(t *testing.T) {
	def := sqldb.SettingsFromConfig(databaseConf(t, nil))
	if def.ConnectRetries != 10 || def.RetryInterval != 10*time.Second || def.MaxOpen != 0 || def.MaxIdle != 0 ||
		def.Recycle != 0 || def.SQLMode != nil || def.WsrepSyncWait != nil || def.Retry != nil || def.SQLiteUnsynchronous ||
		def.PoolTimeout != 0 || def.SQLiteNoRetries || def.SQLiteLockWait != 10*time.Second {
		t.Errorf("defaults: %+v", def)
	}
	s := sqldb.SettingsFromConfig(databaseConf(t, map[string]string{
		"max_retries": "-1", "retry_interval": "2", "max_pool_size": "7", "max_overflow": "3",
		"connection_recycle_time": "60", "mysql_sql_mode": "ANSI", "mysql_wsrep_sync_wait": "1",
		"use_db_reconnect": "true", "db_max_retries": "4", "db_retry_interval": "2", "db_max_retry_interval": "5",
		"sqlite_synchronous": "false", "connection_parameters": "read_timeout=7",
		"pool_timeout": "4", "sqlite_retries": "false", "sqlite_max_wait_for_retry": "3",
	}))
	if s.ConnectRetries != -1 || s.RetryInterval != 2*time.Second || s.MaxIdle != 7 || s.MaxOpen != 10 || s.Recycle != time.Minute ||
		*s.SQLMode != "ANSI" || *s.WsrepSyncWait != 1 || !s.SQLiteUnsynchronous || s.Parameters != "read_timeout=7" ||
		s.PoolTimeout != 4*time.Second || !s.SQLiteNoRetries || s.SQLiteLockWait != 3*time.Second {
		t.Errorf("set: %+v", s)
	}
	if p := *s.Retry; p.Attempts != 5 || p.Initial != 2*time.Second || p.Max != 5*time.Second {
		t.Errorf("use_db_reconnect retry policy %+v, want 5 tries from 2 s growing to 5 s", p)
	}
	flat := sqldb.SettingsFromConfig(databaseConf(t, map[string]string{"use_db_reconnect": "true", "db_inc_retry_interval": "false"}))
	if p := *flat.Retry; p.Attempts != 21 || p.Initial != time.Second || p.Max != time.Second {
		t.Errorf("db_inc_retry_interval false: %+v", p)
	}
	if u := sqldb.SettingsFromConfig(databaseConf(t, map[string]string{"max_pool_size": "0"})); u.MaxOpen != -1 || u.MaxIdle != -1 {
		t.Errorf("max_pool_size 0 (no limit): %+v", u)
	}
}

// The settings reach the store's connections: on MariaDB the session
// variables and the pool bound, on SQLite the synchronous pragma; the
// transaction retries follow db_max_retries under use_db_reconnect.
func TestSettingsReachConnections(t *testing.T) {
	ctx := context.Background()
	for _, b := range storetest.EmptyBackends(t) {
		t.Run(b.Name, func(t *testing.T) {
			conf := databaseConf(t, map[string]string{
				"max_pool_size": "2", "max_overflow": "1", "connection_recycle_time": "30",
				"mysql_sql_mode": "ANSI_QUOTES", "mysql_wsrep_sync_wait": "1", "sqlite_synchronous": "false",
				"use_db_reconnect": "true", "db_max_retries": "2", "db_retry_interval": "0",
			})
			db, err := sqldb.OpenWith(ctx, b.URL, sqldb.SettingsFromConfig(conf))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			switch db.Dialect() {
			case sqldb.MySQL:
				var mode string
				var wait int
				if err := db.QueryRowContext(ctx, "SELECT @@SESSION.sql_mode, @@SESSION.wsrep_sync_wait").Scan(&mode, &wait); err != nil {
					t.Fatal(err)
				}
				if mode != "ANSI_QUOTES" || wait != 1 {
					t.Errorf("session sql_mode %q wsrep_sync_wait %d, want ANSI_QUOTES and 1", mode, wait)
				}
				if got := db.Stats().MaxOpenConnections; got != 3 {
					t.Errorf("pool bound %d, want max_pool_size + max_overflow = 3", got)
				}
			case sqldb.SQLite:
				var sync int
				if err := db.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
					t.Fatal(err)
				}
				if sync != 0 {
					t.Errorf("PRAGMA synchronous = %d, want 0 (OFF)", sync)
				}
			}
			tries := 0
			err = db.Retry(ctx, func(context.Context) error {
				tries++
				return &mysql.MySQLError{Number: 1213, Message: "Deadlock found"}
			})
			if tries != 3 || err == nil {
				t.Errorf("db_max_retries 2: %d tries (%v), want 3", tries, err)
			}
		})
	}
}

// [database]/max_retries: a server that cannot be reached at start is
// tried again max_retries times, retry_interval apart; connection_parameters
// reach the connection (a unix_socket that does not exist is not reachable).
func TestConnectRetriesAtStart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var accepts atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepts.Add(1)
			c.Close() // no handshake: the server is not there yet
		}
	}()
	url := "mysql+pymysql://ironic:pw@" + l.Addr().String() + "/ironic"
	ctx := context.Background()
	count := func(retries int) int64 {
		before := accepts.Load()
		_, err := sqldb.OpenWith(ctx, url, sqldb.Settings{ConnectRetries: retries})
		if err == nil || !sqldb.IsUnavailable(err) {
			t.Fatalf("max_retries %d: %v, want a connection failure", retries, err)
		}
		return accepts.Load() - before
	}
	once, thrice := count(0), count(2)
	if once == 0 || thrice != 3*once {
		t.Errorf("connections: %d with max_retries 0, %d with 2; want three times as many", once, thrice)
	}
	_, err = sqldb.OpenWith(ctx, "mysql+pymysql://ironic:pw@127.0.0.1:1/ironic", sqldb.Settings{Parameters: "unix_socket=/nonexistent/mysqld.sock"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/mysqld.sock") && !errors.Is(err, net.ErrClosed) {
		t.Errorf("connection_parameters unix_socket: %v", err)
	}
	if _, err := sqldb.OpenWith(ctx, url, sqldb.Settings{Parameters: "a=%zz"}); err == nil || !strings.Contains(err.Error(), "connection_parameters") {
		t.Errorf("malformed connection_parameters: %v", err)
	}
}

// [database]/pool_timeout on MariaDB: with every connection of the pool
// held, a transaction waits pool_timeout for one, then fails once (no
// retry, which would only wait again) with a 503; the pool serves again
// once the connection is back.
func TestPoolTimeout(t *testing.T) {
	ctx := context.Background()
	conf := databaseConf(t, map[string]string{"max_pool_size": "1", "max_overflow": "0", "pool_timeout": "1"})
	db, err := sqldb.OpenWith(ctx, storetest.MySQLURL(t), sqldb.SettingsFromConfig(conf))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.InTx(ctx, func(*sql.Tx) error {
		ran := 0
		err := db.InTx(ctx, func(*sql.Tx) error { ran++; return nil })
		if ran != 0 || !errors.Is(err, sqldb.ErrPoolTimeout) || sqldb.IsRetryable(err) {
			t.Errorf("transaction with the pool exhausted: ran %d, err %v; want not run, ErrPoolTimeout, not retryable", ran, err)
		}
		if e, ok := errs.As(sqldb.Fault(err)); !ok || e.Code != http.StatusServiceUnavailable {
			t.Errorf("fault of a pool timeout: %v, want a 503", sqldb.Fault(err))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("transaction holding the pool: %v", err)
	}
	if err := db.InTx(ctx, func(tx *sql.Tx) error { _, err := tx.ExecContext(ctx, "SELECT 1"); return err }); err != nil {
		t.Errorf("transaction after the connection came back: %v", err)
	}
}

// [database]/sqlite_max_wait_for_retry bounds a writer's wait for SQLite's
// write lock, at the gate of this process and through busy_timeout for
// others; sqlite_retries = False stops the retries of a locked database.
func TestSQLiteLockWaitAndRetries(t *testing.T) {
	ctx := context.Background()
	open := func(opts map[string]string) *sqldb.DB {
		t.Helper()
		db, err := sqldb.OpenWith(ctx, storetest.SQLiteURL(t), sqldb.SettingsFromConfig(databaseConf(t, opts)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	db := open(map[string]string{"sqlite_max_wait_for_retry": "1", "sqlite_retries": "false"})
	var busy int
	if err := db.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
		t.Fatal(err)
	}
	if busy != 1000 {
		t.Errorf("PRAGMA busy_timeout = %d, want 1000 ms", busy)
	}
	err := db.InTx(ctx, func(*sql.Tx) error {
		ran := false
		err := db.InTx(ctx, func(*sql.Tx) error { ran = true; return nil })
		if ran || !errors.Is(err, sqldb.ErrWriteBusy) {
			t.Errorf("writer behind a held lock: ran %v, err %v; want ErrWriteBusy after sqlite_max_wait_for_retry", ran, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tries := func(db *sqldb.DB) int {
		n := 0
		_ = db.Retry(ctx, func(context.Context) error { n++; return sqldb.ErrWriteBusy })
		return n
	}
	if n := tries(db); n != 1 {
		t.Errorf("sqlite_retries false: %d tries of a locked database, want 1", n)
	}
	reconnect := map[string]string{"use_db_reconnect": "true", "db_max_retries": "2", "db_retry_interval": "0"}
	if n := tries(open(reconnect)); n != 3 {
		t.Errorf("sqlite_retries true: %d tries of a locked database, want 3", n)
	}
	reconnect["sqlite_retries"] = "false"
	if n := tries(open(reconnect)); n != 1 {
		t.Errorf("sqlite_retries false with use_db_reconnect: %d tries, want 1", n)
	}
}
