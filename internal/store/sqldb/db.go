// Package sqldb opens Ironic's database (MariaDB/MySQL or SQLite) from an
// oslo.db connection URL and supplies what the store needs to stay portable
// across both: transactions with retry on deadlocks, upstream's time storage
// format and duplicate-key detection.
package sqldb

import (
	"context"
	"database/sql"
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
	if s.Retry != nil {
		db.retry = *s.Retry
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

func (db *DB) tx(ctx context.Context, opts *sql.TxOptions, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return uncommitted(fmt.Errorf("begin transaction: %w", err))
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return uncommitted(err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}

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
