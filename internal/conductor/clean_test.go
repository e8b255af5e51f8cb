package conductor_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func scriptedNode(n *model.Node) { n.VendorInterface = "scripted" }

func TestProvideRunsAutomatedCleaning(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable, scriptedNode)
		close(gate(e))
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Available)
		e.expect(got, states.Available, "", "")
		// Only the enabled clean step (block, priority 50) ran.
		if ran := e.steps.Ran(); !reflect.DeepEqual(ran, []string{"block"}) {
			t.Fatalf("ran %v", ran)
		}
		if len(got.CleanStep) != 0 || got.DriverInternalInfo["clean_steps"] != nil {
			t.Fatalf("clean data left: %v %v", got.CleanStep, got.DriverInternalInfo)
		}
	})
}

func gate(e *env) chan struct{} {
	g := make(chan struct{})
	e.steps.mu.Lock()
	e.steps.gate = g
	e.steps.mu.Unlock()
	return g
}

func TestProvideSkipsCleaningWhenDisabled(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "automated_clean", "false"))
		n := e.node(states.Manageable, scriptedNode)
		if err := e.api.DoProvisioningAction(context.Background(), "", n.UUID, "provide"); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Available), states.Available, "", "")
		if ran := e.steps.Ran(); len(ran) != 0 {
			t.Fatalf("steps ran with automated cleaning off: %v", ran)
		}
		// The node's own setting wins over the option.
		on := true
		m := e.node(states.Manageable, scriptedNode, func(n *model.Node) { n.AutomatedClean = &on })
		close(gate(e))
		if err := e.api.DoProvisioningAction(context.Background(), "", m.UUID, "provide"); err != nil {
			t.Fatal(err)
		}
		e.waitState(m, states.Available)
		if ran := e.steps.Ran(); !reflect.DeepEqual(ran, []string{"block"}) {
			t.Fatalf("ran %v", ran)
		}
	})
}

func TestProvideGuards(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "allow_provisioning_in_maintenance", "false"))
		ctx := context.Background()
		m := e.node(states.Manageable, func(n *model.Node) { n.Maintenance = true })
		err := e.api.DoProvisioningAction(ctx, "", m.UUID, "provide")
		if class(err) != "NodeInMaintenance" || err.Error() != "The providing operation can't be performed on node "+m.UUID+" because it's in maintenance mode." {
			t.Fatalf("maintenance: %v", err)
		}
		r := e.node(states.Manageable, func(n *model.Node) { n.Retired = true })
		err = e.api.DoProvisioningAction(ctx, "", r.UUID, "provide")
		if class(err) != "NodeIsRetired" || err.Error() != "The providing operation can't be performed on node "+r.UUID+" because it is retired." {
			t.Fatalf("retired: %v", err)
		}
		a := e.node(states.Active)
		err = e.api.DoProvisioningAction(ctx, "", a.UUID, "provide")
		want := `The requested action "provide" can not be performed on node "` + a.UUID + `" while it is in state "active".`
		if class(err) != "InvalidStateRequested" || err.Error() != want {
			t.Fatalf("active: %v", err)
		}
		for _, n := range []*model.Node{m, r, a} {
			if got := e.get(n); got.Reservation != nil || got.TargetProvisionState != "" {
				t.Fatalf("refused request left %v / %q", deref(got.Reservation), got.TargetProvisionState)
			}
		}
	})
}

func TestManualCleanRunsUserStepsInOrder(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable, scriptedNode)
		close(gate(e))
		steps := []map[string]any{
			{"interface": "vendor", "step": "fail_step"},
			{"interface": "vendor", "step": "needs_args", "args": map[string]any{"size": 10}},
			{"interface": "bios", "step": "factory_reset"},
		}
		e.steps.set("fail_step", "", nil)
		if err := e.api.DoNodeClean(ctx, "", n.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if ran := e.steps.Ran(); !reflect.DeepEqual(ran, []string{"fail_step", "needs_args"}) {
			t.Fatalf("ran %v", ran)
		}
	})
}

func TestManualCleanValidationJoinsErrors(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable, scriptedNode)
		steps := []map[string]any{
			{"interface": "vendor", "step": "nope"},
			{"interface": "vendor", "step": "needs_args", "args": map[string]any{"colour": "red"}},
			{"interface": "vendor", "step": "hold"},
		}
		if err := e.api.DoNodeClean(ctx, "", n.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.CleanFail)
		want := "Cannot clean node " + n.UUID + ": node does not support this clean step: {'interface': 'vendor', 'step': 'nope'}" +
			"; clean step {'interface': 'vendor', 'step': 'needs_args', 'args': {'colour': 'red'}} has these unexpected arguments: colour" +
			"; clean step {'interface': 'vendor', 'step': 'needs_args', 'args': {'colour': 'red'}} is missing these required arguments: size (Size in GiB)"
		e.expect(got, states.CleanFail, states.Manageable, want)
		if got.Maintenance {
			t.Fatal("validation failure before any step put the node into maintenance")
		}
		h := e.history(got)
		if len(h) != 1 || h[0] != "ERROR|cleaning|"+want+"|cleaning" {
			t.Fatalf("history %v", h)
		}
		// Manual cleaning refuses a disallowed step up front.
		bad := []map[string]any{{"interface": "vendor", "step": "send_raw"}}
		m := e.node(states.Manageable)
		if err := e.api.DoNodeClean(ctx, "", m.UUID, bad, false); class(err) != "StepNotAllowed" {
			t.Fatalf("disallowed step: %v", err)
		}
	})
}

func TestCleanStepFailurePutsNodeInMaintenance(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(states.Manageable, scriptedNode)
		e.steps.set("fail_step", "", errors.New("disk on fire"))
		steps := []map[string]any{{"interface": "vendor", "step": "fail_step"}}
		if err := e.api.DoNodeClean(context.Background(), "", n.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.CleanFail)
		want := "Node " + n.UUID + " failed step {'interface': 'vendor', 'step': 'fail_step', 'priority': 0, 'abortable': False}: disk on fire"
		e.expect(got, states.CleanFail, states.Manageable, want)
		if !got.Maintenance || deref(got.Fault) != "clean failure" || deref(got.MaintenanceReason) != want {
			t.Fatalf("maintenance %v fault %q reason %q", got.Maintenance, deref(got.Fault), deref(got.MaintenanceReason))
		}
		if len(got.CleanStep) != 0 {
			t.Fatalf("clean_step kept: %v", got.CleanStep)
		}
	})
}

func TestAsyncCleanStepWaitsAndContinues(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable, scriptedNode)
		e.steps.set("async_step", states.CleanWait, nil)
		steps := []map[string]any{
			{"interface": "vendor", "step": "async_step"},
			{"interface": "bios", "step": "factory_reset"},
		}
		if err := e.api.DoNodeClean(ctx, "", n.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.CleanWait)
		e.expect(got, states.CleanWait, states.Manageable, "")
		if got.CleanStep["step"] != "async_step" || got.DriverInternalInfo["clean_step_index"] != float64(0) {
			t.Fatalf("clean_step %v index %v", got.CleanStep, got.DriverInternalInfo["clean_step_index"])
		}
		if err := e.api.ContinueNodeClean(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")

		// The agent may ask for the current step to run again.
		e.steps.set("async_step", states.CleanWait, nil)
		if err := e.api.DoNodeClean(ctx, "", n.UUID, steps[:1], false); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(n, states.CleanWait)
		got.DriverInternalInfo["skip_current_clean_step"] = false
		if _, err := e.st.UpdateNode(ctx, got, "driver_internal_info"); err != nil {
			t.Fatal(err)
		}
		before := len(e.steps.Ran())
		if err := e.api.ContinueNodeClean(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.CleanWait)
		if ran := e.steps.Ran(); len(ran) != before+1 || ran[len(ran)-1] != "async_step" {
			t.Fatalf("current step not repeated: %v", ran)
		}
		// continue_node_clean outside clean wait is refused (a cast drops it).
		m := e.node(states.Manageable)
		err := e.c.ContinueNodeClean(ctx, "", m.UUID)
		if class(err) != "InvalidStateRequested" || !strings.Contains(err.Error(), "should be clean wait") {
			t.Fatalf("continue in manageable: %v", err)
		}
		if err := e.api.ContinueNodeClean(ctx, "", m.UUID); err != nil {
			t.Fatalf("cast reported an error: %v", err)
		}
	})
}

func TestCleanHoldAndUnhold(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable, scriptedNode)
		steps := []map[string]any{
			{"interface": "vendor", "step": "hold"},
			{"interface": "bios", "step": "factory_reset"},
		}
		if err := e.api.DoNodeClean(ctx, "", n.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.CleanHold), states.CleanHold, states.Manageable, "")
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "unhold"); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.CleanWait), states.CleanWait, states.Manageable, "")
		if err := e.api.ContinueNodeClean(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")
	})
}

func TestCleanWaitStepWithSecondsResumes(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(states.Manageable, scriptedNode)
		steps := []map[string]any{
			{"interface": "vendor", "step": "wait", "args": map[string]any{"seconds": 0}},
			{"interface": "vendor", "step": "fail_step"},
		}
		if err := e.api.DoNodeClean(context.Background(), "", n.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")
		if ran := e.steps.Ran(); !reflect.DeepEqual(ran, []string{"fail_step"}) {
			t.Fatalf("ran %v", ran)
		}
	})
}

func TestPowerStepsInCleaning(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(states.Manageable, scriptedNode)
		steps := []map[string]any{{"interface": "power", "step": "power_on"}}
		if err := e.api.DoNodeClean(context.Background(), "", n.UUID, steps, false); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		if got.PowerState != states.PowerOn || got.TargetPowerState != "" {
			t.Fatalf("power %q target %q", got.PowerState, got.TargetPowerState)
		}
	})
}
