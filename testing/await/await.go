// Package await waits, in tests, for a condition that something outside
// the test's control makes true and that offers no hook to be told of it:
// another process exiting, a conductor worker finishing in the background.
// Where the code under test can announce the moment (a channel, a callback,
// the shared fake clock of testing/fakeclock), prefer that.
package await

import (
	"testing"
	"time"
)

// interval is how often the condition is checked; it only paces the
// checks, the outcome never depends on it.
const interval = 5 * time.Millisecond

// Until checks cond until it holds, and fails the test naming what it
// waited for when it still does not hold after within, a bound generous
// enough for a loaded machine.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	UntilReason(t, within, what, func() (bool, string) { return cond(), "" })
}

// UntilReason is Until for a condition that says why it does not hold
// yet: the failure shows the last reason given.
func UntilReason(t testing.TB, within time.Duration, what string, cond func() (ok bool, why string)) {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		ok, why := cond()
		if ok {
			return
		}
		select {
		case <-deadline.C:
			if ok, why = cond(); ok {
				return
			}
			if why != "" {
				t.Fatalf("still waiting for %s after %v: %s", what, within, why)
			}
			t.Fatalf("still waiting for %s after %v", what, within)
		case <-tick.C:
		}
	}
}
