package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestRescueAndUnrescue(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Active, func(n *model.Node) { n.RescueInterface = "fake" })
		if err := e.api.DoNodeRescue(ctx, "", n.UUID, "s3cret"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Rescue)
		e.expect(got, states.Rescue, "", "")
		if got.InstanceInfo["rescue_password"] != "s3cret" {
			t.Fatalf("rescue password not stored: %v", got.InstanceInfo)
		}
		if err := e.api.DoNodeUnrescue(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Active), states.Active, "", "")

		if err := e.api.DoNodeUnrescue(ctx, "", n.UUID); class(err) != "InvalidStateRequested" {
			t.Fatalf("unrescue of an active node: %v", err)
		}
		m := e.node(states.Active, func(n *model.Node) { n.Maintenance = true })
		if err := e.api.DoNodeRescue(ctx, "", m.UUID, "x"); class(err) != "NodeInMaintenance" {
			t.Fatalf("rescue in maintenance: %v", err)
		}
		av := e.node(states.Available)
		if err := e.api.DoNodeRescue(ctx, "", av.UUID, "x"); class(err) != "InvalidStateRequested" {
			t.Fatalf("rescue of an available node: %v", err)
		}
		if got := e.get(av); got.InstanceInfo["rescue_password"] != nil {
			t.Fatal("refused rescue kept the password")
		}
	})
}

func TestRescueNotSupported(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(states.Active, func(n *model.Node) { n.RescueInterface = "no-rescue" })
		err := e.api.DoNodeRescue(context.Background(), "", n.UUID, "x")
		if class(err) != "InstanceRescueFailure" {
			t.Fatalf("no-rescue: %v", err)
		}
		if got := e.get(n); got.ProvisionState != states.Active || got.InstanceInfo["rescue_password"] != nil {
			t.Fatalf("refused rescue changed the node: %q %v", got.ProvisionState, got.InstanceInfo)
		}
	})
}
