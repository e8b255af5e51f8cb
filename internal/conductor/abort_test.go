package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestAbortCleaning(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()

		// An abortable step in clean wait: abort at once, manual target kept.
		n := e.node(states.Manageable, scriptedNode)
		e.steps.set("abortable_async", states.CleanWait, nil)
		if err := e.api.DoNodeClean(ctx, "", n.UUID, []map[string]any{{"interface": "vendor", "step": "abortable_async"}}, false); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.CleanWait)
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "abort"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.CleanFail)
		want := `By request, the clean operation was aborted during or after the completion of step "vendor.abortable_async"`
		e.expect(got, states.CleanFail, states.Manageable, want)
		if len(got.CleanStep) != 0 || got.Maintenance {
			t.Fatalf("clean_step %v maintenance %v", got.CleanStep, got.Maintenance)
		}

		// A non-abortable step: flagged, aborted when it completes.
		m := e.node(states.Manageable, scriptedNode)
		e.steps.set("async_step", states.CleanWait, nil)
		if err := e.api.DoNodeClean(ctx, "", m.UUID, []map[string]any{{"interface": "vendor", "step": "async_step"}, {"interface": "vendor", "step": "fail_step"}}, false); err != nil {
			t.Fatal(err)
		}
		e.waitState(m, states.CleanWait)
		if err := e.api.DoProvisioningAction(ctx, "", m.UUID, "abort"); err != nil {
			t.Fatal(err)
		}
		got = e.waitUnlocked(m)
		e.expect(got, states.CleanWait, states.Manageable, "")
		if got.CleanStep["abort_after"] != true {
			t.Fatalf("abort_after: %v", got.CleanStep)
		}
		if err := e.api.ContinueNodeClean(ctx, "", m.UUID); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(m, states.CleanFail)
		e.expect(got, states.CleanFail, states.Manageable, `By request, the clean operation was aborted during or after the completion of step "vendor.async_step"`)
		for _, s := range e.steps.Ran() {
			if s == "fail_step" {
				t.Fatal("a step after the aborted one ran")
			}
		}
	})
}

func TestAbortCleanHoldAndDeployHold(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable, scriptedNode)
		if err := e.api.DoNodeClean(ctx, "", n.UUID, []map[string]any{{"interface": "vendor", "step": "hold"}}, false); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.CleanHold)
		// The hold step is the conductor's own: it has no abortable flag,
		// so the abort waits for it, as upstream.
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "abort"); err != nil {
			t.Fatal(err)
		}
		got := e.waitUnlocked(n)
		if got.ProvisionState != states.CleanHold || got.CleanStep["abort_after"] != true {
			t.Fatalf("clean hold abort: %q %v", got.ProvisionState, got.CleanStep)
		}

		d := e.node(states.Available, scriptedNode)
		steps := []map[string]any{{"interface": "vendor", "step": "hold", "priority": 150}}
		if err := e.api.DoNodeDeploy(ctx, "", d.UUID, false, nil, steps); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(d, states.DeployHold), states.DeployHold, states.Active, "")
		if err := e.api.DoProvisioningAction(ctx, "", d.UUID, "abort"); err != nil {
			t.Fatal(err)
		}
		// deploy hold aborts into deploy failed and the instance is torn
		// down there; cleaning waits for an undeploy.
		got = e.waitState(d, states.DeployFail)
		e.expect(got, states.DeployFail, states.Active, "")
		if len(got.InstanceInfo) != 0 {
			t.Fatalf("instance_info kept: %v", got.InstanceInfo)
		}
	})
}

func TestAbortRefusedOutsideAbortableStates(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(states.Active)
		err := e.api.DoProvisioningAction(context.Background(), "", n.UUID, "abort")
		if class(err) != "InvalidStateRequested" {
			t.Fatalf("abort in active: %v", err)
		}
		sf := e.node(states.ServiceFail, func(n *model.Node) { n.Maintenance = true; n.TargetProvisionState = states.Active })
		err = e.api.DoProvisioningAction(context.Background(), "", sf.UUID, "abort")
		want := `Can not abort service on node "` + sf.UUID + `" while it is in maintenance mode. Please remove the node from maintenance prior to issuing the request to abort the service operation.`
		if class(err) != "InvalidState" || err.Error() != want {
			t.Fatalf("service failed in maintenance: %v", err)
		}
	})
}

func TestAbortRescueWaitAndServiceHold(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		r := e.node(states.RescueWait, func(n *model.Node) {
			n.TargetProvisionState = states.Rescue
			n.InstanceInfo = map[string]any{"rescue_password": "pw"}
		})
		if err := e.api.DoProvisioningAction(ctx, "", r.UUID, "abort"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(r, states.RescueFail)
		e.expect(got, states.RescueFail, states.Rescue, "")
		if got.InstanceInfo["rescue_password"] != nil {
			t.Fatal("rescue password kept after abort")
		}
		if h := e.history(got); len(h) != 1 || h[0] != "INFO|rescue|By request, the rescue operation was aborted.|rescue failed" {
			t.Fatalf("history %v", h)
		}

		s := e.node(states.Active, scriptedNode)
		if err := e.api.DoNodeService(ctx, "", s.UUID, []map[string]any{{"interface": "vendor", "step": "hold"}}, false); err != nil {
			t.Fatal(err)
		}
		e.waitState(s, states.ServiceHold)
		if err := e.api.DoProvisioningAction(ctx, "", s.UUID, "abort"); err != nil {
			t.Fatal(err)
		}
		got = e.waitUnlocked(s)
		if got.ProvisionState != states.ServiceHold || got.ServiceStep["abort_after"] != true {
			t.Fatalf("service hold abort: %q %v", got.ProvisionState, got.ServiceStep)
		}
	})
}
