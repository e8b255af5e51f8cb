package conductor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver/builtin"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/fakeclock"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// A BMC that stopped answering (its port closed) fails a power action
// after [redfish]connection_attempts (5) attempts 4 s apart: the node is
// unlocked after 16 s of (virtual) waiting, not the minutes a retry loop
// inside each attempt cost, with upstream's last_error. The power sync
// likewise gives the lock back after the same waits.
func TestHWRedfishDeadBMCReleasesTheNode(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.Off)).WithBasicAuth(oobUser, oobPassword)
		// The redfish driver's clock: every wait returns at once and is
		// added up, so that the test can tell how long the node would
		// have stayed locked.
		waits := fakeclock.NewWallInstant()
		e, logs := newHWEnv(t, db, redfishShipped, nil, func(o *builtin.Options) { o.Redfish.Clock = waits })
		ctx := context.Background()
		n := e.enrollRedfish(bmc, oobPassword)
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.Manageable)
		address := bmc.URL()
		bmc.Close()
		waits.TakeSleeps()

		if err := e.api.ChangeNodePowerState(ctx, "", n.UUID, states.PowerOn, 0); err != nil {
			t.Fatalf("power on: %v", err)
		}
		got := e.waitUnlocked(n)
		want := "Failed to change power state to 'power on': Redfish connection failed for node " + n.UUID +
			": Unable to connect to " + address + "/redfish/v1/"
		if le := deref(got.LastError); !strings.HasPrefix(le, want) || !strings.Contains(le, "connection refused") {
			t.Fatalf("last_error %q, want it to start %q and say the connection was refused", le, want)
		}
		if got.TargetPowerState != "" || got.PowerState != states.PowerOff {
			t.Fatalf("power %q target %q after the failed action", got.PowerState, got.TargetPowerState)
		}
		if list, sum := waits.TakeSleeps(); sum != 16*time.Second || len(list) != 4 {
			t.Fatalf("the node stayed locked through waits %v (%v), want four 4 s connection_retry_interval waits", list, sum)
		}

		e.c.SyncPowerStates(ctx)
		if got := e.get(n); got.Reservation != nil {
			t.Fatalf("power sync left the node locked by %q", deref(got.Reservation))
		}
		if list, sum := waits.TakeSleeps(); sum != 16*time.Second || len(list) != 4 {
			t.Fatalf("power sync waited %v (%v), want four 4 s waits", list, sum)
		}
		if n := strings.Count(logs.String(), "connection error from redfish BMC"); n != 10 {
			t.Errorf("%d connection errors logged, want one per attempt (10)", n)
		}
		e.secretFree(logs, oobPassword, n)
	})
}
