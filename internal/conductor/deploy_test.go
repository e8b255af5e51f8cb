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

func TestDeployAndRebuild(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Available, scriptedNode)
		steps := []map[string]any{{"interface": "vendor", "step": "deploy_fail", "args": map[string]any{}, "priority": 90}}
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, "H4sICDrive", steps); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Active)
		e.expect(got, states.Active, "", "")
		if got.InstanceInfo["configdrive"] != "H4sICDrive" {
			t.Fatalf("configdrive not stored: %v", got.InstanceInfo)
		}
		if ran := e.steps.Ran(); !reflect.DeepEqual(ran, []string{"deploy_fail", "deploy_wait"}) {
			t.Fatalf("user step (priority 90) then driver step (80): ran %v", ran)
		}
		if got.ConductorAffinity == nil || *got.ConductorAffinity != e.c.ID() {
			t.Fatalf("conductor_affinity %v", got.ConductorAffinity)
		}
		if got.DriverInternalInfo["deploy_steps"] != nil || len(got.DeployStep) != 0 {
			t.Fatalf("deploy data left: %v %v", got.DeployStep, got.DriverInternalInfo)
		}
		// A clean deployment records only its start and end
		// ([conductor]/record_step_flows_in_history, stepflows_test.go).
		h := e.history(got)
		if len(h) != 2 || !strings.HasPrefix(h[0], "INFO|deployment_start|") || !strings.HasPrefix(h[1], "INFO|deployment_end|") {
			t.Fatalf("a clean deployment recorded history %v", h)
		}
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); class(err) != "InvalidStateRequested" {
			t.Fatalf("deploy of an active node: %v", err)
		}
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, true, map[string]any{"meta_data": map[string]any{}}, nil); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(n, states.Active)
		if _, ok := got.InstanceInfo["configdrive"].(map[string]any); !ok {
			t.Fatalf("rebuild configdrive: %v", got.InstanceInfo["configdrive"])
		}
	})
}

func TestDeployGuards(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		m := e.node(states.Available, func(n *model.Node) { n.Maintenance = true })
		if err := e.api.DoNodeDeploy(ctx, "", m.UUID, false, nil, nil); class(err) != "NodeInMaintenance" {
			t.Fatalf("maintenance: %v", err)
		}
		p := e.node(states.Active, func(n *model.Node) { n.Protected = true })
		if err := e.api.DoNodeDeploy(ctx, "", p.UUID, true, nil, nil); class(err) != "NodeProtected" {
			t.Fatalf("protected rebuild: %v", err)
		}
		if err := e.api.DoNodeTearDown(ctx, "", p.UUID); class(err) != "NodeProtected" {
			t.Fatalf("protected tear down: %v", err)
		}
		bad := e.node(states.Available, scriptedNode)
		steps := []map[string]any{{"interface": "deploy", "step": "deploy", "args": map[string]any{}, "priority": 10}}
		err := e.api.DoNodeDeploy(ctx, "", bad.UUID, false, nil, steps)
		want := "Failed to validate deploy or power info for node " + bad.UUID + `: Validation of deploy steps from "deploy steps" argument failed.` +
			"deploy step deploy on interface deploy is a core step and cannot be overridden by user steps. It may be disabled by setting the priority to 0"
		if class(err) != "InstanceDeployFailure" || err.Error() != want {
			t.Fatalf("core step override: %v", err)
		}
		tr := e.node(states.Available, func(n *model.Node) { n.InstanceInfo = map[string]any{"traits": []any{"CUSTOM_X"}} })
		err = e.api.DoNodeDeploy(ctx, "", tr.UUID, false, nil, nil)
		if class(err) != "InstanceDeployFailure" || !strings.HasSuffix(err.Error(), "Node "+tr.UUID+" is missing traits CUSTOM_X") {
			t.Fatalf("instance traits: %v", err)
		}
		if got := e.get(bad); got.ProvisionState != states.Available || got.Reservation != nil {
			t.Fatalf("refused deploy moved the node: %q", got.ProvisionState)
		}
	})
}

func TestDeployStepFailure(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(states.Available, scriptedNode)
		e.steps.set("deploy_fail", "", errors.New("image corrupt"))
		steps := []map[string]any{{"interface": "vendor", "step": "deploy_fail", "args": map[string]any{}, "priority": 90}}
		if err := e.api.DoNodeDeploy(context.Background(), "", n.UUID, false, nil, steps); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.DeployFail)
		want := "Deploy step vendor.deploy_fail failed: image corrupt."
		e.expect(got, states.DeployFail, states.Active, want)
		h := e.history(got)
		if len(h) != 3 || !strings.HasPrefix(h[1], "ERROR|deployment_end|Deployment aborted at step 'deploy_fail' with steps=") ||
			h[2] != "ERROR|deploying|"+want+"|deploying" {
			t.Fatalf("history %v", h)
		}
		if len(got.DeployStep) != 0 || got.DriverInternalInfo["deploy_steps"] != nil {
			t.Fatalf("deploy data left: %v", got.DriverInternalInfo)
		}
	})
}

func TestAsyncDeployStepAndAbort(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Available, scriptedNode)
		// deploy_wait is a driver step (priority 80, abortable); user deploy
		// steps carry no abortable flag, so only driver steps abort at once.
		e.steps.set("deploy_wait", states.DeployWait, nil)
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.DeployWait)
		e.expect(got, states.DeployWait, states.Active, "")
		if got.DeployStep["step"] != "deploy_wait" || got.DeployStep["abortable"] != true {
			t.Fatalf("deploy_step %v", got.DeployStep)
		}
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "abort"); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(n, states.DeployFail)
		e.expect(got, states.DeployFail, states.Active, `By request, the deploy operation was aborted during or after the completion of step "vendor.deploy_wait"`)

		// Continuing an asynchronous step runs the rest of the list.
		m := e.node(states.Available, scriptedNode)
		if err := e.api.DoNodeDeploy(ctx, "", m.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		e.waitState(m, states.DeployWait)
		if err := e.api.ContinueNodeDeploy(ctx, "", m.UUID); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(m, states.Active), states.Active, "", "")
	})
}

func TestDeployAbortAfterNonAbortableStep(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Available, scriptedNode)
		e.steps.set("deploy_async", states.DeployWait, nil)
		steps := []map[string]any{{"interface": "vendor", "step": "deploy_async", "args": map[string]any{}, "priority": 200}}
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, steps); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.DeployWait)
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "abort"); err != nil {
			t.Fatal(err)
		}
		got := e.waitUnlocked(n)
		e.expect(got, states.DeployWait, states.Active, "")
		if got.DeployStep["abort_after"] != true {
			t.Fatalf("abort_after not set: %v", got.DeployStep)
		}
		if err := e.api.ContinueNodeDeploy(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(n, states.DeployFail)
		e.expect(got, states.DeployFail, states.Active, `By request, the deploy operation was aborted during or after the completion of step "vendor.deploy_async"`)
	})
}

func TestDeployTemplatesOfInstanceTraits(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		if _, err := e.st.CreateDeployTemplate(ctx, &model.DeployTemplate{Name: "CUSTOM_RAID", Steps: []model.DeployTemplateStep{
			{Interface: "vendor", Step: "deploy_fail", Args: map[string]any{}, Priority: 95},
			{Interface: "vendor", Step: "deploy_wait", Args: map[string]any{}, Priority: 0},
		}}); err != nil {
			t.Fatal(err)
		}
		n := e.node(states.Available, scriptedNode, func(n *model.Node) {
			n.InstanceInfo = map[string]any{"traits": []any{"CUSTOM_RAID"}}
		})
		if err := e.api.AddNodeTraits(ctx, "", n.UUID, []string{"CUSTOM_RAID"}, false); err != nil {
			t.Fatal(err)
		}
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Active), states.Active, "", "")
		// The template runs deploy_fail and disables the driver's deploy_wait.
		if ran := e.steps.Ran(); !reflect.DeepEqual(ran, []string{"deploy_fail"}) {
			t.Fatalf("ran %v", ran)
		}

		// A template step the driver does not have fails validation.
		if _, err := e.st.CreateDeployTemplate(ctx, &model.DeployTemplate{Name: "CUSTOM_BAD", Steps: []model.DeployTemplateStep{
			{Interface: "bios", Step: "no_such_step", Args: map[string]any{}, Priority: 10},
		}}); err != nil {
			t.Fatal(err)
		}
		m := e.node(states.Available, func(n *model.Node) { n.InstanceInfo = map[string]any{"traits": []any{"CUSTOM_BAD"}} })
		if err := e.api.AddNodeTraits(ctx, "", m.UUID, []string{"CUSTOM_BAD"}, false); err != nil {
			t.Fatal(err)
		}
		// Validation before the ramdisk runs skips unknown steps; the
		// worker's composition does too, so the deployment proceeds.
		if err := e.api.DoNodeDeploy(ctx, "", m.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		e.waitState(m, states.Active)
		got, err := e.api.ValidateDriverInterfaces(ctx, "", m.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if r := got["deploy"]; r.Result == nil || !*r.Result {
			t.Fatalf("deploy validation %+v", r)
		}
	})
}
