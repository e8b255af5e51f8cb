package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"

	"github.com/go-sql-driver/mysql"
	"modernc.org/sqlite"

	"github.com/openkeel/ironic/internal/errs"
)

// MySQL/MariaDB server errors that say the server cannot serve now rather
// than that the statement is wrong.
const (
	mysqlTooManyConnections = 1040 // ER_CON_COUNT_ERROR
	mysqlServerShutdown     = 1053 // ER_SERVER_SHUTDOWN
	// Galera answers ER_UNKNOWN_COM_ERROR ("WSREP has not yet prepared
	// node for application use") while a node is out of its cluster.
	mysqlWsrepNotReady    = 1047
	mysqlQueryInterrupted = 1317 // ER_QUERY_INTERRUPTED: the server killed it
	mysqlConnectionKilled = 1927 // ER_CONNECTION_KILLED
)

// connectError marks a failure to reach the database server at all
// (connection refused, no route, name not resolved, connect timeout).
// Only the connector sees where an error comes from: the same net errors
// from another peer (a BMC, Swift) are not a database outage.
type connectError struct{ err error }

func (e *connectError) Error() string { return e.err.Error() }
func (e *connectError) Unwrap() error { return e.err }

// outageConnector marks the network errors of Connect as connectError.
type outageConnector struct{ driver.Connector }

func (c outageConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	var ne net.Error
	if err != nil && errors.As(err, &ne) {
		return nil, &connectError{err}
	}
	return conn, err
}

// IsUnavailable reports whether err says the database cannot serve now,
// so that a later try may succeed: the server could not be reached, a
// connection broke during the statement (the driver's bad or invalid
// connection), the server refused or killed it while shutting down, full
// or out of its cluster, the pool had no free connection within
// pool_timeout, or a lock conflict outlived the retries of Retry
// (deadlock, lock wait timeout; SQLite busy or locked).
func IsUnavailable(err error) bool {
	var ce *connectError
	if errors.As(err, &ce) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case mysqlTooManyConnections, mysqlServerShutdown, mysqlWsrepNotReady, mysqlQueryInterrupted,
			mysqlConnectionKilled, mysqlDeadlock, mysqlLockWaitTimeout:
			return true
		}
		return false
	}
	if errors.Is(err, ErrWriteBusy) || errors.Is(err, ErrPoolTimeout) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		primary := se.Code() & 0xff
		return primary == sqliteBusy || primary == sqliteLocked
	}
	return false
}

// Fault returns err as the fault a client should see: a database outage
// (IsUnavailable) becomes errs.Unavailable, a 503 TemporaryFailure with
// Retry-After wrapping err, so that clients retry instead of reading a
// 500. Errors that already are Ironic errors, and every other error, are
// returned unchanged.
func Fault(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errs.As(err); ok || !IsUnavailable(err) {
		return err
	}
	return errs.Unavailable(err)
}
