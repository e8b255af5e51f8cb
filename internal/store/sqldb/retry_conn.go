package sqldb

import (
	"database/sql/driver"
	"errors"

	"github.com/go-sql-driver/mysql"
)

// What a Galera cluster adds to the lock conflicts of one server, and how
// far a retry of the whole transaction is safe (as oslo.db's
// wrap_db_retry retries DBDeadlock and DBConnectionError for Ironic):
//
//   - A certification failure at commit is reported as a deadlock (1213):
//     the transaction was rolled back, a new one may pass.
//   - A node out of the primary component refuses every statement with
//     1047 (WSREP has not yet prepared node for application use), a node
//     shutting down with 1053, a connection killed with 1927: the
//     statement did not run, and neither did the rest of its transaction.
//   - A server that cannot be reached (connectError) or a pooled
//     connection found dead before anything was sent (driver.ErrBadConn)
//     ran nothing.
//   - A connection that broke in the middle of an explicit transaction,
//     before its COMMIT was sent, leaves nothing either: the server rolls
//     back what a lost client had not committed.
//
// A connection that broke while a COMMIT or an autocommit statement was
// in flight is not retried: it may have been carried out, and doing it
// again could take a lock twice (a reservation the caller would then see
// as held by another) or apply a write twice. It reaches the client as a
// 503 (see Fault), whose outcome the client treats as unknown.

// mysqlRetryable says which server errors mean "the transaction did not
// happen, try it again".
func mysqlRetryable(number uint16) bool {
	switch number {
	case mysqlDeadlock, mysqlLockWaitTimeout, mysqlWsrepNotReady, mysqlServerShutdown, mysqlConnectionKilled:
		return true
	}
	return false
}

// uncommittedError marks an error of a transaction before its COMMIT was
// sent: nothing of it was kept.
type uncommittedError struct{ err error }

func (e *uncommittedError) Error() string { return e.err.Error() }
func (e *uncommittedError) Unwrap() error { return e.err }

// uncommitted marks err, returned by BEGIN or by a statement of an open
// transaction, as leaving nothing behind when it is a broken connection.
// Other errors are returned as they are: callers compare some of them
// directly (sql.ErrNoRows, the store's DuplicateError).
func uncommitted(err error) error {
	if !errors.Is(err, mysql.ErrInvalidConn) {
		return err
	}
	return &uncommittedError{err}
}

// Repeatable marks err, from a statement that may run twice without harm
// (a release of a lock by its holder), as retryable on a lost connection
// even outside a transaction: whether or not the first run was kept,
// running it again leaves the same state.
func Repeatable(err error) error {
	return uncommitted(err)
}

// LostConnection reports whether err is a connection that broke with a
// statement in flight: the statement may or may not have been carried
// out.
func LostConnection(err error) bool {
	return errors.Is(err, mysql.ErrInvalidConn)
}

// connectionRetryable reports whether err is a lost or unreachable
// database connection after which nothing was kept.
func connectionRetryable(err error) bool {
	var ce *connectError
	if errors.As(err, &ce) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	var ue *uncommittedError
	return errors.Is(err, mysql.ErrInvalidConn) && errors.As(err, &ue)
}
