package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// Issue 23 item 7: a node deployed for a project is leased to it
// ([conductor]/automatic_lessee_source = instance, upstream's default) and
// tear down takes the lease back; a node that has a lessee keeps it, and
// the source "none" leases nothing.
func TestAutomaticLessee(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		forProject := func(p string) func(*model.Node) {
			return func(n *model.Node) { n.InstanceInfo = map[string]any{"project_id": p} }
		}
		n := e.node(states.Available, forProject("tenant-a"))
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Active)
		if deref(got.Lessee) != "tenant-a" {
			t.Fatalf("lessee after deploy = %q, want tenant-a", deref(got.Lessee))
		}
		if err := e.api.DoNodeTearDown(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		if got := e.waitState(n, states.Available); got.Lessee != nil {
			t.Errorf("lessee after tear down = %q, want none", deref(got.Lessee))
		}

		own := "operator-lease"
		m := e.node(states.Available, forProject("tenant-b"), func(n *model.Node) { n.Lessee = &own })
		if err := e.api.DoNodeDeploy(ctx, "", m.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		if got := e.waitState(m, states.Active); deref(got.Lessee) != own {
			t.Errorf("a node's own lessee became %q", deref(got.Lessee))
		}
	})
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "automatic_lessee_source", "none"))
		n := e.node(states.Available, func(n *model.Node) { n.InstanceInfo = map[string]any{"project_id": "tenant-a"} })
		if err := e.api.DoNodeDeploy(context.Background(), "", n.UUID, false, nil, nil); err != nil {
			t.Fatal(err)
		}
		if got := e.waitState(n, states.Active); got.Lessee != nil {
			t.Errorf("source none: lessee %q", deref(got.Lessee))
		}
	})
}

// Issue 23 item 7: [conductor]/disallowed_deployment_boot_modes refuses
// to deploy a node of that boot mode with upstream's 400
// BootModeNotAllowed, leaving it as it was; other modes deploy.
func TestDisallowedDeploymentBootModes(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		e := newEnv(t, db, withConf("conductor", "disallowed_deployment_boot_modes", "bios"))
		withMode := func(m string) func(*model.Node) {
			return func(n *model.Node) { n.Properties = map[string]any{"boot_mode": m} }
		}
		n := e.node(states.Available, withMode("BIOS"))
		err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil)
		if ee, ok := errs.As(err); !ok || ee.Class != errs.ClassBootModeNotAllowed || ee.Code != 400 ||
			ee.Message != "'bios' boot mode is not allowed for provisioning operation." {
			t.Fatalf("deploy of a bios node: %v", err)
		}
		if got := e.get(n); got.ProvisionState != states.Available || got.Reservation != nil {
			t.Errorf("refused deploy changed the node: %s %v", got.ProvisionState, deref(got.Reservation))
		}
		m := e.node(states.Available, withMode("uefi"))
		if err := e.api.DoNodeDeploy(ctx, "", m.UUID, false, nil, nil); err != nil {
			t.Fatalf("deploy of a uefi node: %v", err)
		}
		e.waitState(m, states.Active)
	})
}
