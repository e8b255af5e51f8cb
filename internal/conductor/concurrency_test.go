package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// Issue 23 item 4: with max_concurrent_deploy nodes deploying or waiting
// on the agent, a further deploy is refused before the node is locked
// (503 ConcurrentActionLimit, upstream's message without the limit); tear
// downs and manual cleans count deleting and cleaning nodes against
// max_concurrent_clean; with max_concurrent_per_conductor_group only the
// conductor's own group counts.
func TestConcurrentActionLimits(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		e := newEnv(t, db, withConf("conductor", "max_concurrent_deploy", "2"), withConf("conductor", "max_concurrent_clean", "1"))
		e.node(states.Deploying)
		e.node(states.DeployWait)
		n := e.node(states.Available)
		err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil)
		wantLimit(t, err, "provisioning")
		if got := e.get(n); got.ProvisionState != states.Available || got.Reservation != nil {
			t.Fatalf("refused deploy changed the node: %s, reservation %v", got.ProvisionState, deref(got.Reservation))
		}

		e.node(states.CleanWait)
		active := e.node(states.Active)
		wantLimit(t, e.api.DoNodeTearDown(ctx, "", active.UUID), "unprovisioning")
		manageable := e.node(states.Manageable)
		wantLimit(t, e.api.DoNodeClean(ctx, "", manageable.UUID, []map[string]any{{"interface": "deploy", "step": "erase_devices"}}, false), "cleaning")
	})
}

func TestConcurrentActionLimitPerConductorGroup(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		inGroup := func(g string) func(*model.Node) { return func(n *model.Node) { n.ConductorGroup = g } }
		e := newEnv(t, db, withConf("conductor", "max_concurrent_deploy", "1"),
			withConf("conductor", "max_concurrent_per_conductor_group", "true"))
		// A node of another group deploying does not count against ours.
		e.node(states.DeployWait, inGroup("rack2"))
		n := e.node(states.Available)
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
			t.Fatalf("deploy with the other group's node deploying: %v", err)
		}
		e.waitState(n, states.Active)
		e.node(states.Deploying)
		m := e.node(states.Available)
		wantLimit(t, e.api.DoNodeDeploy(ctx, "", m.UUID, false, nil, nil), "provisioning")
	})
}

func wantLimit(t *testing.T, err error, taskType string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok || e.Class != errs.ClassConcurrentActionLimit || e.Code != 503 {
		t.Fatalf("%s: got %v, want 503 ConcurrentActionLimit", taskType, err)
	}
	want := "Unable to process request at this time. The concurrent action limit for " + taskType +
		" has been reached. Please contact your administrator and try again later."
	if e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
}
