package conductor_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

func flaky(n *model.Node) { n.PowerInterface = "flaky" }

func TestSyncPowerStatesForcesRecordedState(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable, flaky, func(n *model.Node) { n.PowerState = states.PowerOff })
		e.power.reading(states.PowerOn, nil)
		e.c.SyncPowerStates(ctx)
		got := e.get(n)
		if got.PowerState != states.PowerOff || got.Reservation != nil {
			t.Fatalf("power %q", got.PowerState)
		}
		if sets := e.power.Sets(); len(sets) != 1 || sets[0] != states.PowerOff {
			t.Fatalf("hardware not forced back: %v", sets)
		}
		// Excluded states and maintenance are left alone.
		e.power.reading(states.PowerOn, nil)
		w := e.node(states.CleanWait, flaky)
		m := e.node(states.Manageable, flaky, func(n *model.Node) { n.Maintenance = true })
		before := len(e.power.Sets())
		e.c.SyncPowerStates(ctx)
		if len(e.power.Sets()) != before+1 {
			t.Fatalf("sets %v", e.power.Sets())
		}
		if e.get(w).PowerState != states.PowerOff || e.get(m).PowerState != states.PowerOff {
			t.Fatal("excluded node changed")
		}
	})
}

func TestSyncPowerStatesRecordsWithoutForce(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "force_power_state_during_sync", "false"))
		n := e.node(states.Active, flaky, func(n *model.Node) { n.PowerState = states.PowerOn })
		unknown := e.node(states.Manageable, flaky, func(n *model.Node) { n.PowerState = "" })
		e.power.reading(states.PowerOff, nil)
		e.c.SyncPowerStates(context.Background())
		if got := e.get(n); got.PowerState != states.PowerOff {
			t.Fatalf("recorded power %q", got.PowerState)
		}
		if got := e.get(unknown); got.PowerState != states.PowerOff {
			t.Fatalf("unknown power state not recorded: %q", got.PowerState)
		}
		if len(e.power.Sets()) != 0 {
			t.Fatalf("hardware changed without force: %v", e.power.Sets())
		}
	})
}

func TestSyncPowerStatesMaintenanceAfterRetries(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "power_state_sync_max_retries", "2"))
		ctx := context.Background()
		n := e.node(states.Manageable, flaky, func(n *model.Node) { n.PowerState = states.PowerOn })
		e.power.reading("", errors.New("IPMI timeout"))
		for i := 0; i < 2; i++ {
			e.c.SyncPowerStates(ctx)
			if got := e.get(n); got.Maintenance || got.PowerState != states.PowerOn {
				t.Fatalf("pass %d: maintenance %v power %q", i+1, got.Maintenance, got.PowerState)
			}
		}
		e.c.SyncPowerStates(ctx)
		got := e.get(n)
		want := "During sync_power_state, max retries exceeded for node " + n.UUID +
			", node state None does not match expected state 'power on'. Updating DB state to 'None' Switching node to maintenance mode. Error: IPMI timeout"
		if !got.Maintenance || deref(got.Fault) != "power failure" || deref(got.MaintenanceReason) != want || got.PowerState != "" {
			t.Fatalf("maintenance %v fault %q reason %q power %q", got.Maintenance, deref(got.Fault), deref(got.MaintenanceReason), got.PowerState)
		}
		if deref(got.LastError) != want {
			t.Fatalf("last_error %q", deref(got.LastError))
		}
		if h := e.history(got); len(h) != 1 || h[0] != "ERROR|monitoring|"+want+"|manageable" {
			t.Fatalf("history %v", h)
		}

		// Once the BMC answers again, recovery takes the node out.
		e.power.reading(states.PowerOff, nil)
		e.c.PowerFailureRecovery(ctx)
		got = e.get(n)
		if got.Maintenance || got.Fault != nil || got.MaintenanceReason != nil || got.PowerState != states.PowerOff {
			t.Fatalf("after recovery: maintenance %v fault %v power %q", got.Maintenance, got.Fault, got.PowerState)
		}
	})
}

func TestPeriodicsOnlyTouchOwnedNodes(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		var mine string
		e := newEnv(t, db, withOwns(func(n *model.Node) bool { return n.UUID == mine }))
		a := e.node(states.Manageable, flaky, func(n *model.Node) { n.PowerState = states.PowerOff })
		e.node(states.Manageable, flaky, func(n *model.Node) { n.PowerState = states.PowerOff })
		mine = a.UUID
		e.power.reading(states.PowerOn, nil)
		e.c.SyncPowerStates(context.Background())
		if sets := e.power.Sets(); len(sets) != 1 {
			t.Fatalf("%d power actions, want 1 (owned node only)", len(sets))
		}
	})
}

// TestSyncPowerStatesLogsClearedLastError: the sync drops a node's
// last_error once the power state is confirmed or first recorded, and
// says so with the message it drops, as upstream's "Clearing last_error
// for node ... after ...".
func TestSyncPowerStatesLogsClearedLastError(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withoutStart())
		logs := &hwLog{}
		c, err := conductor.New(conductor.Options{Store: e.st, Drivers: e.drivers, Config: e.cfg, Host: testHost, Clock: e.clock, Logger: logs.logger()})
		if err != nil {
			t.Fatal(err)
		}
		e.c = c
		e.start(c)
		failed := func(msg string) func(*model.Node) { return func(n *model.Node) { n.LastError = &msg } }
		match := e.node(states.Active, flaky, failed("Deploy failed: conductor went away"), func(n *model.Node) { n.PowerState = states.PowerOff })
		unknown := e.node(states.Manageable, flaky, failed("Failed to get power state"), func(n *model.Node) { n.PowerState = "" })
		e.power.reading(states.PowerOff, nil)
		c.SyncPowerStates(context.Background())
		for _, tc := range []struct {
			n              *model.Node
			reason, before string
		}{
			{match, "confirmed power state match", "Deploy failed: conductor went away"},
			{unknown, "no previous known state", "Failed to get power state"},
		} {
			if got := e.get(tc.n); got.LastError != nil {
				t.Fatalf("%s: last_error %q not cleared", tc.reason, *got.LastError)
			}
			want := fmt.Sprintf("Clearing last_error for node %s after %s.", tc.n.UUID, tc.reason)
			var line string
			for l := range strings.SplitSeq(logs.String(), "\n") {
				if strings.Contains(l, want) {
					line = l
				}
			}
			if line == "" || !strings.Contains(line, tc.before) {
				t.Fatalf("no line %q with the cleared message %q in:\n%s", want, tc.before, logs.String())
			}
		}
	})
}

// TestSyncPowerStatesRereadsStaleBatch: the sync reads its nodes a batch
// at a time, and a node whose turn comes more than a second after that
// read is read again. The first node's BMC takes two seconds (on the fake
// clock) while the second node goes into maintenance: the fresh read sees
// it, and its BMC is left alone.
func TestSyncPowerStatesRereadsStaleBatch(t *testing.T) {
	ctx := context.Background()
	for _, slow := range []bool{false, true} {
		t.Run(fmt.Sprintf("slow=%v", slow), func(t *testing.T) {
			e := newEnv(t, storetest.Backends(t)[0].DB)
			on := func(n *model.Node) { n.PowerState = states.PowerOn }
			a := e.node(states.Active, flaky, on)
			b := e.node(states.Active, flaky, on)
			e.power.reading(states.PowerOn, nil)
			var mu sync.Mutex
			var read []string
			e.power.onGet = func(dt *driver.Task) {
				mu.Lock()
				read = append(read, dt.Node.UUID)
				mu.Unlock()
				if dt.Node.UUID != a.UUID {
					return
				}
				n, err := e.st.GetNodeByID(ctx, b.ID)
				if err != nil {
					t.Error(err)
					return
				}
				n.Maintenance = true
				if _, err := e.st.UpdateNode(ctx, n, "maintenance"); err != nil {
					t.Error(err)
				}
				if slow {
					e.clock.Advance(2 * time.Second)
				}
			}
			e.c.SyncPowerStates(ctx)
			want := []string{a.UUID, b.UUID}
			if slow {
				want = want[:1]
			}
			if !slices.Equal(read, want) {
				t.Errorf("BMCs read %v, want %v", read, want)
			}
		})
	}
}
