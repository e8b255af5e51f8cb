package sqldb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-sql-driver/mysql"
	"modernc.org/sqlite"

	"github.com/openkeel/ironic/internal/clock"
)

// RetryPolicy bounds the retries of a transaction that lost a lock race.
type RetryPolicy struct {
	// Attempts is the total number of tries, the first included.
	Attempts int
	// Initial is the wait before the second try; it doubles each time, up to
	// Max, and each wait is drawn uniformly from [wait/2, wait] (jitter) so
	// that colliding writers do not collide again in lockstep.
	Initial, Max time.Duration
}

// DefaultRetryPolicy is what Open sets: in the spirit of oslo.db's
// wrap_db_retry as Ironic uses it for deadlocks (a handful of tries,
// sub-second waits growing to a few seconds).
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Attempts: 8, Initial: 20 * time.Millisecond, Max: 2 * time.Second}
}

// WithRetryPolicy returns a DB sharing the pool but retrying with p. Close
// the original, not the copy.
func (db *DB) WithRetryPolicy(p RetryPolicy) *DB {
	cp := *db
	cp.retry = p
	return &cp
}

// Retry calls fn until it succeeds, fails with an error that is not
// retryable (see IsRetryable), the attempts are used up or ctx ends. The
// last error is returned, wrapped with the number of attempts when they ran
// out.
func (db *DB) Retry(ctx context.Context, fn func(context.Context) error) error {
	p := db.retry
	if p.Attempts < 1 {
		p.Attempts = 1
	}
	wait := p.Initial
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil || !IsRetryable(err) {
			return err
		}
		if attempt >= p.Attempts {
			return fmt.Errorf("gave up after %d attempts: %w", attempt, err)
		}
		sleep := wait
		if sleep > 1 {
			sleep = sleep/2 + rand.N(sleep/2+1)
		}
		if serr := clock.Sleep(ctx, sleep); serr != nil {
			return fmt.Errorf("%w (while retrying after: %v)", serr, err)
		}
		wait *= 2
		if wait > p.Max {
			wait = p.Max
		}
	}
}

// MySQL/MariaDB server errors that mean "try the transaction again". Galera
// reports a certification failure as a deadlock too.
const (
	mysqlLockWaitTimeout = 1205
	mysqlDeadlock        = 1213
)

// SQLite primary result codes for lock contention (extended codes carry them
// in the low byte).
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)

// IsRetryable reports whether err is a lock conflict that a fresh
// transaction may not hit: MySQL deadlock (1213, also Galera's
// certification failure) or lock-wait timeout (1205), SQLite BUSY or
// LOCKED; or a failure after which nothing was kept and another node or
// connection may serve (see retry_conn.go).
func IsRetryable(err error) bool {
	if connectionRetryable(err) {
		return true
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return mysqlRetryable(me.Number)
	}
	if errors.Is(err, ErrWriteBusy) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		primary := se.Code() & 0xff
		return primary == sqliteBusy || primary == sqliteLocked
	}
	return false
}
