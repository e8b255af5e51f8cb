package sqldb_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

func TestIsUnavailable(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"bad connection", fmt.Errorf("get node: %w", driver.ErrBadConn), true},
		{"connection broken mid-statement", fmt.Errorf("list nodes: %w", mysql.ErrInvalidConn), true},
		{"transaction on a closed connection", sql.ErrConnDone, true},
		{"lock wait timeout after the retries", fmt.Errorf("gave up after 8 attempts: %w", &mysql.MySQLError{Number: 1205}), true},
		{"deadlock after the retries", &mysql.MySQLError{Number: 1213}, true},
		{"too many connections", &mysql.MySQLError{Number: 1040}, true},
		{"server shutting down", &mysql.MySQLError{Number: 1053}, true},
		{"galera node not ready", &mysql.MySQLError{Number: 1047}, true},
		{"duplicate key", &mysql.MySQLError{Number: 1062}, false},
		{"syntax error", &mysql.MySQLError{Number: 1064}, false},
		{"not found", sql.ErrNoRows, false},
		// The same network error from another peer is not the database's.
		{"a BMC refusing", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, false},
		{"an Ironic error", errs.NodeLocked("n", "h"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := sqldb.IsUnavailable(tc.err); got != tc.want {
				t.Errorf("IsUnavailable(%v) = %v, want %v", tc.err, got, tc.want)
			}
			f := sqldb.Fault(tc.err)
			if errs.IsUnavailable(f) != tc.want {
				t.Errorf("Fault(%v) = %v: 503 is %v, want %v", tc.err, f, !tc.want, tc.want)
			}
			if tc.want && !errors.Is(f, tc.err) {
				t.Errorf("Fault(%v) lost its cause", tc.err)
			}
			if !tc.want && f != tc.err {
				t.Errorf("Fault(%v) = %v, want it unchanged", tc.err, f)
			}
		})
	}
}

// A MariaDB server nobody listens for any more is an outage from the
// first connection on: the pool's connect error is marked as such.
func TestUnreachableMySQLIsUnavailable(t *testing.T) {
	raw := storetest.MySQLURL(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = dead
	_, err = sqldb.Open(context.Background(), u.String())
	if !sqldb.IsUnavailable(err) || !errs.IsUnavailable(sqldb.Fault(err)) {
		t.Fatalf("open %s: %v, want an outage", dead, err)
	}
}
