package sqldb

import "time"

// CachedStatements is the number of statements db's cache holds.
func CachedStatements(db *DB) int {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	return len(db.stmts.stmts)
}

// MaxCachedStatements exposes the cache bound to tests.
const MaxCachedStatements = maxCachedStmts

// WithWriteWait returns a copy of db whose writers wait at most d at
// SQLite's write gate.
func WithWriteWait(db *DB, d time.Duration) *DB {
	cp := *db
	cp.writeWait = d
	return &cp
}
