package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// maxCachedStmts bounds the prepared statements one DB keeps. Callers only
// route fixed query texts through the cache, so it should never fill; if it
// does, further texts run unprepared rather than evicting a statement another
// goroutine may be about to use.
const maxCachedStmts = 256

// stmtCache holds one *sql.Stmt per query text. database/sql prepares each
// on a connection the first time it runs there and keeps it, so a hot query
// is compiled once per pooled connection instead of once per call.
type stmtCache struct {
	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	closed bool
}

// get returns the statement for query, preparing it on first use, or nil
// when the cache is full or closed (the caller then runs query directly).
// Preparation runs outside the lock so that a caller waiting for a free
// connection does not hold up hits on other texts.
func (c *stmtCache) get(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	st, ok := c.stmts[query]
	full := c.closed || len(c.stmts) >= maxCachedStmts
	c.mu.Unlock()
	if ok || full {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", query, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.stmts[query]; ok {
		// Another caller prepared the same text meanwhile.
		_ = st.Close()
		return prev, nil
	}
	if c.closed || len(c.stmts) >= maxCachedStmts {
		_ = st.Close()
		return nil, nil
	}
	if c.stmts == nil {
		c.stmts = make(map[string]*sql.Stmt)
	}
	c.stmts[query] = st
	return st, nil
}

// peek returns the cached statement for query, or nil: it never prepares.
func (c *stmtCache) peek(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stmts[query]
}

// close releases every cached statement; later lookups return nil.
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		_ = st.Close()
	}
	c.stmts = nil
	c.closed = true
}

// Cached runs fixed query texts of the hot paths through the DB's prepared
// statement cache on SQLite. It serves the pool only: preparing a missing
// text from inside a transaction would need a second connection while the
// transaction holds one, which can stall a full pool. On MySQL it is the
// plain pool: the connection interpolates arguments client-side
// (interpolateParams), one round trip and no server-side statement counted
// against the server's max_prepared_stmt_count.
type Cached struct{ db *DB }

// Cached returns the caching querier over the pool.
func (db *DB) Cached() Cached { return Cached{db: db} }

// stmt is the statement to run query with, or nil to run it directly.
func (c Cached) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if c.db.dialect != SQLite {
		return nil, nil
	}
	return c.db.stmts.get(ctx, c.db.DB, query)
}

// QueryContext is sql.DB.QueryContext through the cache.
func (c Cached) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.db.QueryContext(ctx, query, args...)
}

// QueryRowContext is sql.DB.QueryRowContext through the cache. When the text
// cannot be prepared it runs directly, which reports the same error from Scan.
func (c Cached) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st, err := c.stmt(ctx, query); err == nil && st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.db.QueryRowContext(ctx, query, args...)
}

// ExecContext is sql.DB.ExecContext through the cache.
func (c Cached) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st != nil {
		// A statement outside a transaction writes in its own: it queues
		// at the write gate as InTx does.
		release, err := c.db.enterWrite(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		return st.ExecContext(ctx, args...)
	}
	return c.db.ExecContext(ctx, query, args...)
}

// Prepare puts the texts in the cache on SQLite (nothing on MySQL), so that
// InTx finds them. It prepares on the pool: call it outside transactions.
func (c Cached) Prepare(ctx context.Context, queries ...string) error {
	if c.db.dialect != SQLite {
		return nil
	}
	for _, q := range queries {
		if _, err := c.db.stmts.get(ctx, c.db.DB, q); err != nil {
			return err
		}
	}
	return nil
}

// InTx is the cache's querier inside tx. A text already cached (Prepare)
// runs as tx's copy of its statement, which database/sql prepares once per
// connection and keeps; any other text runs directly. Nothing is prepared
// on the pool, which tx may have exhausted.
func (c Cached) InTx(tx *sql.Tx) CachedTx { return CachedTx{db: c.db, tx: tx} }

// CachedTx is a transaction's querier through the cache (Cached.InTx).
type CachedTx struct {
	db *DB
	tx *sql.Tx
}

// stmt is tx's copy of the cached statement for query, or nil.
func (c CachedTx) stmt(ctx context.Context, query string) *sql.Stmt {
	if c.db.dialect != SQLite {
		return nil
	}
	st := c.db.stmts.peek(query)
	if st == nil {
		return nil
	}
	return c.tx.StmtContext(ctx, st)
}

// QueryContext is sql.Tx.QueryContext through the cache.
func (c CachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.tx.QueryContext(ctx, query, args...)
}

// QueryRowContext is sql.Tx.QueryRowContext through the cache.
func (c CachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.tx.QueryRowContext(ctx, query, args...)
}

// ExecContext is sql.Tx.ExecContext through the cache.
func (c CachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := c.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return c.tx.ExecContext(ctx, query, args...)
}
