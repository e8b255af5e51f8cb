package sqldb

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// Which failures retry the whole transaction: those after which nothing
// was kept, never one whose COMMIT (or autocommit statement) may have run.
func TestIsRetryableGaleraAndConnections(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"certification failure at commit", fmt.Errorf("commit transaction: %w", &mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock; try restarting transaction"}), true},
		{"lock wait timeout", &mysql.MySQLError{Number: 1205}, true},
		{"galera node not ready", &mysql.MySQLError{Number: 1047, Message: "WSREP has not yet prepared node for application use"}, true},
		{"server shutting down", &mysql.MySQLError{Number: 1053}, true},
		{"connection killed", &mysql.MySQLError{Number: 1927}, true},
		{"server unreachable", &connectError{refused}, true},
		{"dead pooled connection", fmt.Errorf("begin transaction: %w", driver.ErrBadConn), true},
		{"connection broken inside a transaction", uncommitted(fmt.Errorf("update node: %w", mysql.ErrInvalidConn)), true},
		{"connection broken at commit", fmt.Errorf("commit transaction: %w", mysql.ErrInvalidConn), false},
		{"connection broken under an autocommit statement", fmt.Errorf("reserve node: %w", mysql.ErrInvalidConn), false},
		{"duplicate key", &mysql.MySQLError{Number: 1062}, false},
		{"too many connections", &mysql.MySQLError{Number: 1040}, false},
		{"not found", sql.ErrNoRows, false},
		{"another peer refusing", refused, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := IsRetryable(c.err); got != c.want {
				t.Errorf("IsRetryable(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}

// The mark leaves every other error as it was: callers compare some
// directly.
func TestUncommittedKeepsOtherErrors(t *testing.T) {
	for _, err := range []error{nil, sql.ErrNoRows, &mysql.MySQLError{Number: 1062}} {
		if got := uncommitted(err); got != err {
			t.Errorf("uncommitted(%v) = %v, want it unchanged", err, got)
		}
	}
}

// A repeatable statement lost with its connection is retried; the loss
// itself is recognised through wrapping.
func TestRepeatableAndLostConnection(t *testing.T) {
	lost := fmt.Errorf("release node 1: %w", mysql.ErrInvalidConn)
	if IsRetryable(lost) {
		t.Error("a lost autocommit statement is retried without being marked repeatable")
	}
	if !IsRetryable(Repeatable(lost)) {
		t.Error("a repeatable statement lost with its connection is not retried")
	}
	if !LostConnection(fmt.Errorf("reserve node 1: %w", lost)) || LostConnection(&mysql.MySQLError{Number: 1213}) {
		t.Error("LostConnection does not tell a broken connection from a server error")
	}
	if err := Repeatable(sql.ErrNoRows); err != sql.ErrNoRows {
		t.Errorf("Repeatable changed %v", err)
	}
}
