package sqldb_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/openkeel/ironic/internal/config"
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
		def.Recycle != 0 || def.SQLMode != nil || def.WsrepSyncWait != nil || def.Retry != nil || def.SQLiteUnsynchronous {
		t.Errorf("defaults: %+v", def)
	}
	s := sqldb.SettingsFromConfig(databaseConf(t, map[string]string{
		"max_retries": "-1", "retry_interval": "2", "max_pool_size": "7", "max_overflow": "3",
		"connection_recycle_time": "60", "mysql_sql_mode": "ANSI", "mysql_wsrep_sync_wait": "1",
		"use_db_reconnect": "true", "db_max_retries": "4", "db_retry_interval": "2", "db_max_retry_interval": "5",
		"sqlite_synchronous": "false", "connection_parameters": "read_timeout=7",
	}))
	if s.ConnectRetries != -1 || s.RetryInterval != 2*time.Second || s.MaxIdle != 7 || s.MaxOpen != 10 || s.Recycle != time.Minute ||
		*s.SQLMode != "ANSI" || *s.WsrepSyncWait != 1 || !s.SQLiteUnsynchronous || s.Parameters != "read_timeout=7" {
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
