package sqldb

// CachedStatements is the number of statements db's cache holds.
func CachedStatements(db *DB) int {
	db.stmts.mu.Lock()
	defer db.stmts.mu.Unlock()
	return len(db.stmts.stmts)
}

// MaxCachedStatements exposes the cache bound to tests.
const MaxCachedStatements = maxCachedStmts
