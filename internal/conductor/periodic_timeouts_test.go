package conductor_test

import (
	"context"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestCallbackTimeouts(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "rescue_callback_timeout", "1800"))
		ctx := context.Background()

		dep := e.node(states.Available, scriptedNode)
		e.steps.set("deploy_wait", states.DeployWait, nil)
		if err := e.api.DoNodeDeploy(ctx, "", dep.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		e.waitState(dep, states.DeployWait)

		cln := e.node(states.Manageable, scriptedNode)
		e.steps.set("async_step", states.CleanWait, nil)
		if err := e.api.DoNodeClean(ctx, "", cln.UUID, []map[string]any{{"interface": "vendor", "step": "async_step"}}, false); err != nil {
			t.Fatal(err)
		}
		e.waitState(cln, states.CleanWait)

		svc := e.node(states.Active, scriptedNode)
		e.steps.set("svc_async", states.ServiceWait, nil)
		if err := e.api.DoNodeService(ctx, "", svc.UUID, []map[string]any{{"interface": "vendor", "step": "svc_async"}}, false); err != nil {
			t.Fatal(err)
		}
		e.waitState(svc, states.ServiceWait)

		res := e.node(states.Active)
		if err := e.api.DoNodeRescue(ctx, "", res.UUID, "pw"); err != nil {
			t.Fatal(err)
		}
		e.waitState(res, states.Rescue)
		// The fake rescue finishes at once; put a node in rescue wait by hand.
		now := e.clock.Now()
		rw := e.node(states.RescueWait, func(n *model.Node) {
			n.TargetProvisionState = states.Rescue
			n.PowerState = states.PowerOn
			n.ProvisionUpdatedAt = &now
		})

		insp := e.node(states.Manageable)
		if err := e.api.InspectHardware(ctx, "", insp.UUID); err != nil {
			t.Fatal(err)
		}
		e.waitState(insp, states.Manageable)

		// Nothing times out before the timeouts.
		runAll := func() {
			e.c.CheckDeployTimeouts(ctx)
			e.c.CheckCleanWaitTimeouts(ctx)
			e.c.CheckServiceWaitTimeouts(ctx)
			e.c.CheckRescueWaitTimeouts(ctx)
			e.c.CheckInspectWaitTimeouts(ctx)
		}
		runAll()
		for _, n := range []*model.Node{dep, cln, svc, rw} {
			if got := e.waitUnlocked(n); states.FailureStates.Contains(got.ProvisionState) {
				t.Fatalf("%s failed early: %q", n.UUID, got.ProvisionState)
			}
		}
		e.clock.Advance(1801 * time.Second)
		runAll()

		got := e.waitState(dep, states.DeployFail)
		msg := "Timeout reached while waiting for callback for node " + dep.UUID
		e.expect(got, states.DeployFail, states.Active, msg)

		got = e.waitState(cln, states.CleanFail)
		msg = "Timeout reached while cleaning the node. Please check if the ramdisk responsible for the cleaning is running on the node. Failed on step {'interface': 'vendor', 'step': 'async_step', 'priority': 0, 'abortable': False}."
		e.expect(got, states.CleanFail, states.Manageable, msg)
		if !got.Maintenance || deref(got.Fault) != "clean failure" {
			t.Fatalf("clean timeout: maintenance %v fault %q", got.Maintenance, deref(got.Fault))
		}

		got = e.waitState(svc, states.ServiceFail)
		msg = "Timeout reached while servicing the node. Please check if the ramdisk responsible for the servicing is running on the node. Failed on step {'interface': 'vendor', 'step': 'svc_async', 'priority': 0, 'abortable': False}."
		e.expect(got, states.ServiceFail, states.Active, msg)

		got = e.waitState(rw, states.RescueFail)
		e.expect(got, states.RescueFail, states.Rescue, "Timeout reached while waiting for rescue ramdisk callback for node")
		if got.PowerState != states.PowerOff {
			t.Fatalf("rescue timeout left power %q", got.PowerState)
		}
	})
}

func TestInspectWaitTimeout(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.InspectWait, func(n *model.Node) { n.TargetProvisionState = states.Manageable })
		started := e.clock.Now()
		cur := e.get(n)
		cur.InspectionStartedAt = &started
		if _, err := e.st.UpdateNode(ctx, cur, "inspection_started_at"); err != nil {
			t.Fatal(err)
		}
		e.c.CheckInspectWaitTimeouts(ctx)
		if got := e.waitUnlocked(n); got.ProvisionState != states.InspectWait {
			t.Fatalf("failed early: %q", got.ProvisionState)
		}
		e.clock.Advance(1801 * time.Second)
		e.c.CheckInspectWaitTimeouts(ctx)
		got := e.waitState(n, states.InspectFail)
		e.expect(got, states.InspectFail, states.Manageable, "Timeout reached while inspecting the node. Please check if the ramdisk responsible for the inspection is running on the node.")
	})
}

// TestPeriodicLoopsRun checks the wiring: with check_provision_state_interval
// set, the conductor's own loop fails a timed-out deployment.
func TestPeriodicLoopsRun(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "check_provision_state_interval", "1"))
		now := e.clock.Now()
		n := e.node(states.DeployWait, func(n *model.Node) { n.TargetProvisionState = states.Active; n.ProvisionUpdatedAt = &now })
		e.clock.Advance(1801 * time.Second)
		e.expect(e.waitState(n, states.DeployFail), states.DeployFail, states.Active, "Timeout reached while waiting for callback for node "+n.UUID)
	})
}
