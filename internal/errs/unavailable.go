package errs

import (
	"errors"
	"net/http"
	"strconv"
)

// RetryAfterSeconds is the Retry-After of every 503 fault. Two seconds is
// the pace python-ironicclient and Nova's ironic driver already retry at
// (their default retry interval), and longer than the measured recovery
// of the service after a database restart (under a second); a conductor
// that died stays unreachable until the hash ring drops it, and a client
// retrying every two seconds until then costs the API one refused
// connection per retry.
const RetryAfterSeconds = 2

// headerRetryAfter is the response header clients read to pace retries.
const headerRetryAfter = "Retry-After"

// Unavailable is the fault for a backing service that failed in a way a
// later try may not meet: a conductor that cannot be reached or died
// during the call, a database that is down or whose lock conflicts
// outlived their retries. Upstream has no single class for these; its
// TemporaryFailure (503, "Resource temporarily unavailable, please
// retry.") is the parent of its own retryable conditions
// (NoFreeConductorWorker, ConcurrentActionLimit…), so it is what clients
// that retry 503 already know. cause is kept for logs (errors.Unwrap) and
// for debuginfo when debug_tracebacks_in_api is set, never for the
// faultstring, which must not leak addresses or driver text.
func Unavailable(cause error) *Error {
	e := TemporaryFailure()
	e.cause = cause
	e.Headers = map[string]string{headerRetryAfter: strconv.Itoa(RetryAfterSeconds)}
	return e
}

// IsUnavailable reports whether err is (or wraps) a 503 fault, which
// clients are expected to retry.
func IsUnavailable(err error) bool {
	e, ok := As(err)
	return ok && e.Code == http.StatusServiceUnavailable
}

// Cause is the failure behind err when err is (or wraps) an Unavailable
// fault, nil otherwise: what a log line should show beside the fault.
func Cause(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e.cause
	}
	return nil
}
