package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/config"
)

// Settings are oslo.db's [database] options that shape the pool, the
// session of each connection and the retries. The zero Settings is what
// Open uses: our own pool sizes and retry policy, no connect retries.
type Settings struct {
	// ConnectRetries is [database]/max_retries: how many times a first
	// connection that cannot reach the server is tried again at start
	// (-1: forever), RetryInterval apart ([database]/retry_interval).
	ConnectRetries int
	RetryInterval  time.Duration
	// MaxIdle and MaxOpen size a MySQL pool: [database]/max_pool_size
	// connections kept, max_overflow more opened under load, as
	// SQLAlchemy's QueuePool; 0 keeps our defaults, -1 is no limit.
	MaxIdle, MaxOpen int
	// Recycle is [database]/connection_recycle_time: a connection older is
	// closed rather than reused; 0 keeps our default (an hour, oslo.db's).
	Recycle time.Duration
	// SQLMode, when set, is [database]/mysql_sql_mode; a set empty value
	// leaves the server's own mode.
	SQLMode *string
	// WsrepSyncWait, when set, is [database]/mysql_wsrep_sync_wait, set on
	// each connection (Galera's causality checks).
	WsrepSyncWait *int
	// Parameters is [database]/connection_parameters, query parameters
	// added to the connection URL.
	Parameters string
	// SQLiteUnsynchronous is [database]/sqlite_synchronous = False: SQLite
	// does not wait for the disk (PRAGMA synchronous = OFF).
	SQLiteUnsynchronous bool
	// Retry, when set, bounds the transaction retries (oslo.db's
	// use_db_reconnect with db_max_retries, db_retry_interval,
	// db_inc_retry_interval and db_max_retry_interval).
	Retry *RetryPolicy
	// PoolTimeout is [database]/pool_timeout: how long a MySQL transaction
	// waits for a free pooled connection once the pool is at its bound, as
	// SQLAlchemy's QueuePool timeout; past it the transaction fails with
	// ErrPoolTimeout, a 503. 0 (unset) leaves the wait to the caller's
	// context.
	PoolTimeout time.Duration
	// SQLiteNoRetries is [database]/sqlite_retries = False: a transaction
	// that finds SQLite locked fails at once instead of being retried
	// (upstream's wrap_sqlite_retry switched off).
	SQLiteNoRetries bool
	// SQLiteLockWait is [database]/sqlite_max_wait_for_retry: how long a
	// writer waits for SQLite's write lock before it is told the database
	// is locked. Upstream polls the lock with tenacity for that long; here
	// writers of one process queue for it at the write gate and writers of
	// other processes poll it through busy_timeout, both bounded by it.
	// 0 keeps sqliteBusyTimeout.
	SQLiteLockWait time.Duration
}

// SettingsFromConfig reads the [database] options. Options left at their
// defaults keep our tuned pool (oslo.db's pool of 5 + 50 is sized for one
// Python worker per process) and retry policy; startup connect retries are
// oslo.db's defaults (10 tries, 10 s apart).
func SettingsFromConfig(c *config.Config) Settings {
	s := Settings{
		ConnectRetries:      c.IntOf(config.DatabaseMaxRetries),
		RetryInterval:       time.Duration(c.IntOf(config.DatabaseRetryInterval)) * time.Second,
		Parameters:          c.StringOf(config.DatabaseConnectionParameters),
		SQLiteUnsynchronous: !c.BoolOf(config.DatabaseSqliteSynchronous),
		PoolTimeout:         time.Duration(c.IntOf(config.DatabasePoolTimeout)) * time.Second,
		SQLiteNoRetries:     !c.BoolOf(config.DatabaseSqliteRetries),
		SQLiteLockWait:      time.Duration(c.IntOf(config.DatabaseSqliteMaxWaitForRetry)) * time.Second,
	}
	if c.IsSetOf(config.DatabaseMaxPoolSize) || c.IsSetOf(config.DatabaseMaxOverflow) {
		pool, overflow := c.IntOf(config.DatabaseMaxPoolSize), c.IntOf(config.DatabaseMaxOverflow)
		switch {
		case pool <= 0:
			// SQLAlchemy's pool_size 0: no limit at all.
			s.MaxIdle, s.MaxOpen = -1, -1
		case overflow < 0:
			s.MaxIdle, s.MaxOpen = pool, -1
		default:
			s.MaxIdle, s.MaxOpen = pool, pool+overflow
		}
	}
	if c.IsSetOf(config.DatabaseConnectionRecycleTime) {
		s.Recycle = time.Duration(c.IntOf(config.DatabaseConnectionRecycleTime)) * time.Second
	}
	if c.IsSetOf(config.DatabaseMysqlSQLMode) {
		m := c.StringOf(config.DatabaseMysqlSQLMode)
		s.SQLMode = &m
	}
	if c.HasOf(config.DatabaseMysqlWsrepSyncWait) {
		w := c.IntOf(config.DatabaseMysqlWsrepSyncWait)
		s.WsrepSyncWait = &w
	}
	if c.BoolOf(config.DatabaseUseDBReconnect) {
		p := RetryPolicy{
			Attempts: c.IntOf(config.DatabaseDBMaxRetries) + 1,
			Initial:  time.Duration(c.IntOf(config.DatabaseDBRetryInterval)) * time.Second,
			Max:      time.Duration(c.IntOf(config.DatabaseDBMaxRetryInterval)) * time.Second,
		}
		if c.IntOf(config.DatabaseDBMaxRetries) < 0 {
			p.Attempts = math.MaxInt32 // oslo.db's -1: until it works
		}
		if !c.BoolOf(config.DatabaseDBIncRetryInterval) {
			p.Max = p.Initial
		}
		s.Retry = &p
	}
	return s
}

// OpenWith is Open with the [database] settings s: the connection
// parameters are added to rawURL, the session variables set on every
// connection, the pool sized, and a server that cannot be reached is tried
// again s.ConnectRetries times before the error is returned (oslo.db's
// _test_connection).
func OpenWith(ctx context.Context, rawURL string, s Settings) (*DB, error) {
	u, err := withParameters(rawURL, s.Parameters)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		db, err := open(ctx, u, s)
		if err == nil {
			return db, nil
		}
		if !IsUnavailable(err) || s.ConnectRetries >= 0 && attempt >= s.ConnectRetries {
			return nil, err
		}
		slog.WarnContext(ctx, "SQL connection failed, retrying", "left", retriesLeft(s.ConnectRetries, attempt), "error", err)
		if serr := clock.Sleep(ctx, s.RetryInterval); serr != nil {
			return nil, fmt.Errorf("%w (while retrying after: %v)", serr, err)
		}
	}
}

func retriesLeft(max, attempt int) string {
	if max < 0 {
		return "infinite"
	}
	return strconv.Itoa(max - attempt)
}

// withParameters adds connection_parameters ("a=1&b=2") to the URL's query.
func withParameters(rawURL, params string) (string, error) {
	if params == "" {
		return rawURL, nil
	}
	if _, err := url.ParseQuery(params); err != nil {
		return "", fmt.Errorf("[database]connection_parameters: %w", err)
	}
	sep := "?"
	if strings.Contains(rawURL, "?") {
		sep = "&"
	}
	return rawURL + sep + params, nil
}

// sizePool applies the pool settings of s to a MySQL pool (oslo.db sizes no
// SQLite pool either).
func (s Settings) sizePool(p *sql.DB) {
	if s.MaxOpen != 0 {
		p.SetMaxOpenConns(max(s.MaxOpen, 0))
	}
	switch {
	case s.MaxIdle < 0:
		// database/sql keeps none for n <= 0; no limit is a large one.
		p.SetMaxIdleConns(math.MaxInt32)
	case s.MaxIdle > 0:
		p.SetMaxIdleConns(s.MaxIdle)
	}
	if s.Recycle != 0 {
		p.SetConnMaxLifetime(max(s.Recycle, 0))
	}
}

// apply sets the connection parameters of s on c before the pool opens.
func (s Settings) apply(c *connection) {
	switch c.dialect {
	case MySQL:
		if s.SQLMode != nil {
			if *s.SQLMode == "" {
				delete(c.mysql.Params, "sql_mode")
			} else {
				c.mysql.Params["sql_mode"] = "'" + strings.ReplaceAll(*s.SQLMode, "'", "") + "'"
			}
		}
		if s.WsrepSyncWait != nil {
			c.mysql.Params["wsrep_sync_wait"] = strconv.Itoa(*s.WsrepSyncWait)
		}
		c.dsn = c.mysql.FormatDSN()
	case SQLite:
		if s.SQLiteLockWait > 0 {
			c.dsn = strings.Replace(c.dsn, url.QueryEscape(busyTimeoutPragma(sqliteBusyTimeout)), url.QueryEscape(busyTimeoutPragma(s.SQLiteLockWait)), 1)
		}
		if s.SQLiteUnsynchronous {
			c.dsn = strings.Replace(c.dsn, url.QueryEscape("synchronous(NORMAL)"), url.QueryEscape("synchronous(OFF)"), 1)
			if !strings.Contains(c.dsn, url.QueryEscape("synchronous(OFF)")) {
				c.dsn += "&_pragma=" + url.QueryEscape("synchronous(OFF)")
			}
		}
	}
}
