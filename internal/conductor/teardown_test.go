package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestTearDownCleansToAvailable(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Available)
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, "cd", nil); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.Active)
		inst := "6a5e6d4c-3a0c-4d8b-9d56-0c3f1f8d4a11"
		cur := e.get(n)
		cur.InstanceUUID = &inst
		if _, err := e.st.UpdateNode(ctx, cur, "instance_uuid"); err != nil {
			t.Fatal(err)
		}
		if err := e.api.DoNodeTearDown(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Available)
		e.expect(got, states.Available, "", "")
		if got.InstanceUUID != nil || len(got.InstanceInfo) != 0 {
			t.Fatalf("instance kept: %v %v", deref(got.InstanceUUID), got.InstanceInfo)
		}
		if err := e.api.DoNodeTearDown(ctx, "", n.UUID); class(err) != "InvalidStateRequested" {
			t.Fatalf("tear down of an available node: %v", err)
		}
	})
}

func TestTearDownDeletesAllocation(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		rc := "gold"
		n := e.node(states.Active, func(n *model.Node) { n.ResourceClass = &rc })
		id := n.ID
		a, err := e.api.CreateAllocation(ctx, "", &model.Allocation{ResourceClass: &rc, NodeID: &id})
		if err != nil {
			t.Fatal(err)
		}
		if a.State != states.Active || a.NodeID == nil || *a.NodeID != n.ID {
			t.Fatalf("backfilled allocation %+v", a)
		}
		if got := e.get(n); got.AllocationID == nil || deref(got.InstanceUUID) != a.UUID {
			t.Fatalf("node not bound: %v %v", got.AllocationID, deref(got.InstanceUUID))
		}
		if err := e.api.DoNodeTearDown(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Available)
		if got.AllocationID != nil || got.InstanceUUID != nil {
			t.Fatalf("allocation kept: %v %v", got.AllocationID, deref(got.InstanceUUID))
		}
		if _, err := e.st.GetAllocationByID(ctx, a.ID); err == nil {
			t.Fatal("allocation not deleted")
		}
	})
}

func TestTearDownOfRetiredNodeEndsManageable(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		reason := "end of life"
		n := e.node(states.Active, func(n *model.Node) { n.Retired = true; n.RetiredReason = &reason })
		if err := e.api.DoNodeTearDown(context.Background(), "", n.UUID); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")
	})
}
