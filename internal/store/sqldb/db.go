// Package sqldb opens Ironic's database (MariaDB/MySQL or SQLite) from an
// oslo.db connection URL and supplies what the store needs to stay portable
// across both: transactions with retry on deadlocks, upstream's time storage
// format and duplicate-key detection.
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is a connection pool together with the dialect it speaks.
type DB struct {
	*sql.DB
	dialect Dialect
	// keep holds an in-memory database alive (see Open).
	keep  *sql.Conn
	retry RetryPolicy
	stmts *stmtCache // shared by WithRetryPolicy copies
	// writer is SQLite's write gate (nil on MySQL): one slot, so this
	// process's writers queue for SQLite's single write lock in Go, first
	// come first served, instead of each polling it through busy_timeout.
	// SQLite's busy handler sleeps between polls, so under load a writer
	// could lose every poll to the others for the whole timeout, retry
	// after retry (seen as SQLITE_BUSY with 50 contenders on 2 loaded
	// cores). busy_timeout still covers other processes on the same file.
	writer chan struct{}
	// writeWait bounds a wait at the gate (busy_timeout; shorter in tests).
	writeWait time.Duration
	// poolTimeout, when positive, bounds a transaction's wait for a pooled
	// connection ([database]/pool_timeout; MySQL only).
	poolTimeout time.Duration
}

// Pool sizes. SQLite has one writer at a time whatever the pool size, but
// readers in WAL mode run beside it. MySQL's limit is a sane default for one
// process; the server's max_connections is shared by all conductors and APIs.
const (
	sqliteMaxOpen = 8
	mysqlMaxOpen  = 32
)

// Open parses an oslo.db URL, opens the pool and checks that the database
// answers. The caller closes the DB.
func Open(ctx context.Context, rawURL string) (*DB, error) {
	return open(ctx, rawURL, Settings{})
}

// open is Open with the settings of OpenWith.
func open(ctx context.Context, rawURL string, s Settings) (*DB, error) {
	c, err := parseConnection(rawURL)
	if err != nil {
		return nil, err
	}
	s.apply(c)
	var sqlDB *sql.DB
	switch c.dialect {
	case MySQL:
		if c.tls != nil {
			var host string // no name to check on a unix socket
			if c.mysql.Net == "tcp" {
				host, _, _ = net.SplitHostPort(c.mysql.Addr)
			}
			tlsCfg, err := c.tls.config(host)
			if err != nil {
				return nil, fmt.Errorf("database connection %q: %w", redact(rawURL), err)
			}
			c.mysql.TLS = tlsCfg
		}
		connector, err := mysql.NewConnector(c.mysql)
		if err != nil {
			return nil, fmt.Errorf("database connection %q: %w", redact(rawURL), err)
		}
		sqlDB = sql.OpenDB(outageConnector{connector})
		sqlDB.SetMaxOpenConns(mysqlMaxOpen)
		sqlDB.SetMaxIdleConns(mysqlMaxOpen / 4)
		// Below the server's default wait_timeout (8 h) and below what
		// proxies such as HAProxy in front of Galera usually allow.
		sqlDB.SetConnMaxLifetime(time.Hour)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
		s.sizePool(sqlDB)
	case SQLite:
		sqlDB, err = sql.Open("sqlite", c.dsn)
		if err != nil {
			return nil, fmt.Errorf("database connection %q: %w", redact(rawURL), err)
		}
		sqlDB.SetMaxOpenConns(sqliteMaxOpen)
		sqlDB.SetMaxIdleConns(sqliteMaxOpen)
		// An in-memory database disappears with its last connection, so its
		// connections must never be recycled.
		sqlDB.SetConnMaxLifetime(0)
		sqlDB.SetConnMaxIdleTime(0)
	}
	db := &DB{DB: sqlDB, dialect: c.dialect, retry: DefaultRetryPolicy(), stmts: &stmtCache{}}
	if c.dialect == SQLite {
		db.writer = make(chan struct{}, 1)
		db.writeWait = sqliteBusyTimeout
		if s.SQLiteLockWait > 0 {
			db.writeWait = s.SQLiteLockWait
		}
	} else {
		db.poolTimeout = max(s.PoolTimeout, 0)
	}
	if s.Retry != nil {
		db.retry = *s.Retry
	}
	if c.dialect == SQLite && s.SQLiteNoRetries {
		db.retry.Attempts = 1
	}
	if err := db.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("connect to database %q: %w", redact(rawURL), err)
	}
	if c.memory {
		// Hold one connection for the life of the pool so the in-memory
		// database is not dropped when every other connection is idle-closed.
		conn, err := sqlDB.Conn(ctx)
		if err != nil {
			_ = sqlDB.Close()
			return nil, fmt.Errorf("connect to database %q: %w", redact(rawURL), err)
		}
		db.keep = conn
	}
	return db, nil
}

// Dialect reports the backend.
func (db *DB) Dialect() Dialect { return db.dialect }

// Close releases the cached statements and the pool (and with it an
// in-memory database).
func (db *DB) Close() error {
	db.stmts.close()
	if db.keep != nil {
		_ = db.keep.Close()
	}
	return db.DB.Close()
}

// InTx runs fn in a write transaction (BEGIN IMMEDIATE on SQLite) and commits
// it, retrying the whole transaction on deadlock, lock-wait timeout or busy.
// fn may run more than once: it must not have effects outside the transaction.
func (db *DB) InTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.Retry(ctx, func(ctx context.Context) error {
		return db.tx(ctx, nil, fn)
	})
}

// InReadTx runs fn in a read-only transaction, which on SQLite takes no write
// lock and so runs beside the writer; it is retried like InTx.
func (db *DB) InReadTx(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.Retry(ctx, func(ctx context.Context) error {
		return db.tx(ctx, &sql.TxOptions{ReadOnly: true}, fn)
	})
}

// InLockingReadTx runs fn in a transaction meant for locking reads (SELECT
// … LOCK IN SHARE MODE) on MySQL: READ COMMITTED, so that the reads take
// no gap locks and block no inserter, and a locking read sees the newest
// rows (waiting for those of transactions still committing) rather than a
// snapshot. On SQLite, where writers commit one at a time in order, it is
// InReadTx.
func (db *DB) InLockingReadTx(ctx context.Context, fn func(*sql.Tx) error) error {
	if db.dialect != MySQL {
		return db.InReadTx(ctx, fn)
	}
	return db.Retry(ctx, func(ctx context.Context) error {
		return db.tx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted}, fn)
	})
}

func (db *DB) tx(ctx context.Context, opts *sql.TxOptions, fn func(*sql.Tx) error) error {
	if opts == nil || !opts.ReadOnly {
		release, err := db.enterWrite(ctx)
		if err != nil {
			return uncommitted(fmt.Errorf("begin transaction: %w", err))
		}
		defer release()
	}
	tx, done, err := db.begin(ctx, opts)
	if err != nil {
		return uncommitted(fmt.Errorf("begin transaction: %w", err))
	}
	defer done()
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return uncommitted(err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}

// begin starts a transaction and returns what to call once it ended. With
// a pool timeout it first takes a connection from the pool, waiting at
// most poolTimeout: database/sql would wait for one as long as ctx lasts,
// and the transaction itself must still live as long as ctx.
func (db *DB) begin(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, func(), error) {
	if db.poolTimeout <= 0 {
		tx, err := db.BeginTx(ctx, opts)
		return tx, func() {}, err
	}
	wctx, cancel := context.WithTimeout(ctx, db.poolTimeout)
	conn, err := db.Conn(wctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return nil, nil, fmt.Errorf("%w (%s)", ErrPoolTimeout, db.poolTimeout)
		}
		return nil, nil, err
	}
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	return tx, func() { _ = conn.Close() }, nil
}

// ErrPoolTimeout is a transaction's wait for a pooled connection outlasting
// [database]/pool_timeout: every connection the pool may open is busy, as
// SQLAlchemy's "QueuePool limit … reached, connection timed out" says. It
// is answered 503 and not retried, which would only wait again.
var ErrPoolTimeout = errors.New("database connection pool exhausted: no connection became free within pool_timeout")

// enterWrite waits for the write gate (SQLite only; a no-op on MySQL) and
// returns its release. Channel senders are served in arrival order, so no
// writer starves. The wait is bounded as busy_timeout bounds SQLite's: past
// it the writer gets ErrWriteBusy, which Retry retries and Fault answers as
// a 503, as it would SQLITE_BUSY; a write opened inside another write
// transaction thus fails as it did without the gate instead of hanging.
func (db *DB) enterWrite(ctx context.Context) (func(), error) {
	if db.writer == nil {
		return func() {}, nil
	}
	select {
	case db.writer <- struct{}{}:
		return func() { <-db.writer }, nil
	default:
	}
	timer := time.NewTimer(db.writeWait)
	defer timer.Stop()
	select {
	case db.writer <- struct{}{}:
		return func() { <-db.writer }, nil
	case <-timer.C:
		return nil, ErrWriteBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ErrWriteBusy is a writer's wait for SQLite's write gate outlasting
// busy_timeout: the database is busy, as SQLITE_BUSY says.
var ErrWriteBusy = errors.New("database is locked: another writer held it for the whole busy timeout")

// Now is the current time as upstream stores it: UTC without zone, whole
// seconds on MySQL (DATETIME has no fraction there) and microseconds on
// SQLite (SQLAlchemy writes six fractional digits).
func (db *DB) Now() time.Time { return db.Truncate(time.Now()) }

// Truncate converts t to UTC at the precision the backend keeps, so a value
// read back equals the value written.
func (db *DB) Truncate(t time.Time) time.Time {
	if db.dialect == MySQL {
		return t.UTC().Truncate(time.Second)
	}
	return t.UTC().Truncate(time.Microsecond)
}

// sqliteTimeLayout is SQLAlchemy's SQLite DATETIME storage format.
const sqliteTimeLayout = "2006-01-02 15:04:05.000000"

// Time is the argument to bind for a DATETIME column, in upstream's stored
// form (see Now). A zero time binds NULL. Scanning the column gives back a
// UTC time.Time on both backends.
func (db *DB) Time(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	t = db.Truncate(t)
	if db.dialect == SQLite {
		return t.Format(sqliteTimeLayout)
	}
	return t
}

// TimePtr is Time for an optional value.
func (db *DB) TimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return db.Time(*t)
}
