package conductor_test

import (
	"context"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// TestTakeOverFromDeadConductor: conductor-b dies holding locks; after
// heartbeat_timeout this conductor releases them, fails what was running,
// drops pending power actions and takes over its active nodes.
func TestTakeOverFromDeadConductor(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		dead, err := e.st.RegisterConductor(ctx, "conductor-b", "", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		deadID := dead.ID
		deploying := e.node(states.Deploying, func(n *model.Node) { n.TargetProvisionState = states.Active })
		cleaning := e.node(states.Cleaning, func(n *model.Node) {
			n.TargetProvisionState = states.Available
			n.CleanStep = map[string]any{"interface": "deploy", "step": "erase"}
		})
		powering := e.node(states.Manageable, func(n *model.Node) { n.TargetPowerState = states.PowerOn })
		active := e.node(states.Active, func(n *model.Node) { n.ConductorAffinity = &deadID })
		for _, n := range []*model.Node{deploying, cleaning, powering} {
			if _, err := e.st.ReserveNode(ctx, "conductor-b", n.ID); err != nil {
				t.Fatal(err)
			}
		}
		// Still alive: nothing happens.
		e.c.CheckOrphanNodes(ctx)
		if got := e.get(deploying); deref(got.Reservation) != "conductor-b" {
			t.Fatal("lock of a live conductor released")
		}
		e.clock.Advance(61 * time.Second)
		if err := e.st.TouchConductor(ctx, testHost, true); err != nil {
			t.Fatal(err)
		}
		e.c.CheckOrphanNodes(ctx)

		got := e.waitState(deploying, states.DeployFail)
		e.expect(got, states.DeployFail, states.Active, "Operation was aborted due to conductor take over")
		got = e.waitState(cleaning, states.CleanFail)
		e.expect(got, states.CleanFail, states.Available, "Operation was aborted due to conductor take over")
		if !got.Maintenance || deref(got.Fault) != "clean failure" {
			t.Fatalf("cleaning take over: maintenance %v fault %q", got.Maintenance, deref(got.Fault))
		}
		got = e.waitUnlocked(powering)
		if got.TargetPowerState != "" || deref(got.LastError) != "Pending power operation was aborted due to conductor take over" {
			t.Fatalf("power take over: target %q last_error %q", got.TargetPowerState, deref(got.LastError))
		}
		if h := e.history(got); len(h) != 1 || h[0] != "ERROR|takeover|Pending power operation was aborted due to conductor take over|manageable" {
			t.Fatalf("history %v", h)
		}

		e.c.SyncLocalState(ctx)
		got = e.waitUnlocked(active)
		if got.ConductorAffinity == nil || *got.ConductorAffinity != e.c.ID() {
			t.Fatalf("active node not taken over: affinity %v", got.ConductorAffinity)
		}
	})
}

func TestRestartUnderSameHostClearsOwnLocks(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Active)
		if _, err := e.st.ReserveNode(ctx, testHost, n.ID); err != nil {
			t.Fatal(err)
		}
		// A second process under the same name (the restarted pod).
		again := e.newConductor(testHost, nil, nil)
		e.start(again)
		if got := e.get(n); got.Reservation != nil || got.ProvisionState != states.Active {
			t.Fatalf("after restart: reservation %v state %q", deref(got.Reservation), got.ProvisionState)
		}
	})
}
