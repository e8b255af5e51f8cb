package conductor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestServiceRunsStepsAndReturnsToActive(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Active, scriptedNode)
		steps := []map[string]any{{"interface": "vendor", "step": "log_passthrough"}, {"interface": "vendor", "step": "svc_fail"}}
		if err := e.api.DoNodeService(ctx, "", n.UUID, steps, false); class(err) != "" {
			t.Fatal(err)
		}
		// log_passthrough is the fake vendor's; the scripted vendor lacks it.
		// Unknown steps are left for a ramdisk to validate; the fake deploy
		// boots none, so, as upstream, the steps run as given and the
		// unknown one fails as a step does, in maintenance.
		got := e.waitState(n, states.ServiceFail)
		want := "Node " + n.UUID + " failed step {'interface': 'vendor', 'step': 'log_passthrough'}: Interface vendor has no step log_passthrough"
		if !got.Maintenance || deref(got.LastError) != want {
			t.Fatalf("unknown service step: maintenance %v, last_error %q, want %q", got.Maintenance, deref(got.LastError), want)
		}
		m := e.node(states.Active, scriptedNode)
		if err := e.api.DoNodeService(ctx, "", m.UUID, steps[1:], false); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(m, states.Active), states.Active, "", "")
		if err := e.api.DoNodeService(ctx, "", e.node(states.Available).UUID, steps, false); class(err) != "InvalidStateRequested" {
			t.Fatalf("service of an available node: %v", err)
		}
	})
}

func TestServiceAsyncHoldAbortAndFailure(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Active, scriptedNode)
		e.steps.set("svc_abortable", states.ServiceWait, nil)
		if err := e.api.DoNodeService(ctx, "", n.UUID, []map[string]any{{"interface": "vendor", "step": "svc_abortable"}}, false); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.ServiceWait), states.ServiceWait, states.Active, "")
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "abort"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Active)
		e.expect(got, states.Active, "", `By request, the service operation was aborted during or after the completion of step "vendor.svc_abortable"`)

		// hold, then unhold continues with the next step.
		h := e.node(states.Active, scriptedNode)
		if err := e.api.DoNodeService(ctx, "", h.UUID, []map[string]any{{"interface": "vendor", "step": "hold"}, {"interface": "vendor", "step": "svc_fail"}}, false); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(h, states.ServiceHold), states.ServiceHold, states.Active, "")
		if err := e.api.DoProvisioningAction(ctx, "", h.UUID, "unhold"); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(h, states.Active), states.Active, "", "")

		// A failing step: service failed, maintenance with fault.
		f := e.node(states.Active, scriptedNode)
		e.steps.set("svc_fail", "", errors.New("firmware refused"))
		if err := e.api.DoNodeService(ctx, "", f.UUID, []map[string]any{{"interface": "vendor", "step": "svc_fail"}}, false); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(f, states.ServiceFail)
		want := "Node " + f.UUID + " failed step {'interface': 'vendor', 'step': 'svc_fail', 'priority': 0, 'abortable': False}: firmware refused"
		e.expect(got, states.ServiceFail, states.Active, want)
		if !got.Maintenance || deref(got.Fault) != "service failure" {
			t.Fatalf("maintenance %v fault %q", got.Maintenance, deref(got.Fault))
		}
		// service failed + abort (out of maintenance) goes back to active.
		got.Maintenance, got.Fault, got.MaintenanceReason = false, nil, nil
		if _, err := e.st.UpdateNode(ctx, got, "maintenance", "fault", "maintenance_reason"); err != nil {
			t.Fatal(err)
		}
		if err := e.api.DoProvisioningAction(ctx, "", f.UUID, "abort"); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(f, states.Active), states.Active, "", "By request, the service operation was aborted")
	})
}
