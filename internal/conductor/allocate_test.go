package conductor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
)

func (e *env) waitAllocation(a *model.Allocation) *model.Allocation {
	e.t.Helper()
	var got *model.Allocation
	await.UntilReason(e.t, 15*time.Second, "allocation "+a.UUID+" to leave allocating", func() (bool, string) {
		var err error
		if got, err = e.st.GetAllocationByID(context.Background(), a.ID); err != nil {
			e.t.Fatal(err)
		}
		return got.State != states.Allocating, fmt.Sprintf("allocation %s still allocating", a.UUID)
	})
	return got
}

func TestAllocate(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		gold, silver := "gold", "silver"
		owner := "proj-1"
		e.node(states.Available, func(n *model.Node) { n.ResourceClass = &silver })
		e.node(states.Available, func(n *model.Node) { n.ResourceClass = &gold; n.Maintenance = true })
		fit := e.node(states.Available, func(n *model.Node) { n.ResourceClass = &gold; n.Owner = &owner })
		if err := e.api.AddNodeTraits(ctx, "", fit.UUID, []string{"CUSTOM_GPU"}, false); err != nil {
			t.Fatal(err)
		}
		e.node(states.Available, func(n *model.Node) { n.ResourceClass = &gold; n.Owner = &owner })

		a, err := e.api.CreateAllocation(ctx, "", &model.Allocation{ResourceClass: &gold, Traits: []string{"CUSTOM_GPU"}, Owner: &owner})
		if err != nil {
			t.Fatal(err)
		}
		if a.State != states.Allocating || a.ConductorAffinity == nil || *a.ConductorAffinity != e.c.ID() {
			t.Fatalf("created allocation %+v", a)
		}
		got := e.waitAllocation(a)
		if got.State != states.Active || got.NodeID == nil || *got.NodeID != fit.ID {
			t.Fatalf("allocation %+v, want node %d", got, fit.ID)
		}
		// The allocation is saved under the node's lock, released just after.
		n := e.waitUnlocked(fit)
		if deref(n.InstanceUUID) != a.UUID || n.AllocationID == nil || *n.AllocationID != a.ID {
			t.Fatalf("node binding: instance %q allocation %v", deref(n.InstanceUUID), n.AllocationID)
		}

		none, err := e.api.CreateAllocation(ctx, "", &model.Allocation{ResourceClass: &gold, Traits: []string{"CUSTOM_FPGA"}})
		if err != nil {
			t.Fatal(err)
		}
		got = e.waitAllocation(none)
		if got.State != states.Error || deref(got.LastError) != "Failed to process allocation "+none.UUID+": no suitable nodes have the requested traits CUSTOM_FPGA." {
			t.Fatalf("no match: %q %q", got.State, deref(got.LastError))
		}
		bronze := "bronze"
		nothing, err := e.api.CreateAllocation(ctx, "", &model.Allocation{ResourceClass: &bronze})
		if err != nil {
			t.Fatal(err)
		}
		got = e.waitAllocation(nothing)
		if deref(got.LastError) != "Failed to process allocation "+nothing.UUID+": no available nodes match the resource class bronze." {
			t.Fatalf("no nodes: %q", deref(got.LastError))
		}

		// Deleting the allocation of an active node is refused.
		act := e.node(states.Active, func(n *model.Node) { n.ResourceClass = &gold })
		id := act.ID
		b, err := e.api.CreateAllocation(ctx, "", &model.Allocation{ResourceClass: &gold, NodeID: &id})
		if err != nil {
			t.Fatal(err)
		}
		err = e.api.DestroyAllocation(ctx, "", b)
		want := "Cannot remove allocation " + b.UUID + " for node " + act.UUID + ", because the node is active (and maintenance mode is off)"
		if class(err) != "InvalidState" || err.Error() != want {
			t.Fatalf("destroy active allocation: %v", err)
		}
		if err := e.api.DestroyAllocation(ctx, "", got); err != nil {
			t.Fatal(err)
		}

		// Backfilling a node that is not active fails the allocation.
		avail := e.node(states.Available, func(n *model.Node) { n.ResourceClass = &gold })
		aid := avail.ID
		_, err = e.api.CreateAllocation(ctx, "", &model.Allocation{ResourceClass: &gold, NodeID: &aid})
		if class(err) != "AllocationFailed" {
			t.Fatalf("backfill of an available node: %v", err)
		}
	})
}

func TestConcurrentAllocationsGetDistinctNodes(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		rc := "bulk"
		for i := 0; i < 5; i++ {
			e.node(states.Available, func(n *model.Node) { n.ResourceClass = &rc })
		}
		var allocs []*model.Allocation
		for i := 0; i < 5; i++ {
			a, err := e.api.CreateAllocation(ctx, "", &model.Allocation{ResourceClass: &rc})
			if err != nil {
				t.Fatal(err)
			}
			allocs = append(allocs, a)
		}
		seen := map[int64]bool{}
		for _, a := range allocs {
			got := e.waitAllocation(a)
			if got.State != states.Active || got.NodeID == nil {
				t.Fatalf("allocation %s: %q %q", a.UUID, got.State, deref(got.LastError))
			}
			if seen[*got.NodeID] {
				t.Fatalf("node %d given twice", *got.NodeID)
			}
			seen[*got.NodeID] = true
		}
	})
}

func TestOrphanAllocationsAreResumed(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		dead, err := e.st.RegisterConductor(ctx, "conductor-b", "", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		rc := "gold"
		n := e.node(states.Available, func(n *model.Node) { n.ResourceClass = &rc })
		id := dead.ID
		a, err := e.st.CreateAllocation(ctx, &model.Allocation{ResourceClass: &rc, State: states.Allocating, ConductorAffinity: &id})
		if err != nil {
			t.Fatal(err)
		}
		e.c.CheckOrphanAllocations(ctx)
		if got, _ := e.st.GetAllocationByID(ctx, a.ID); got.State != states.Allocating {
			t.Fatal("allocation of a live conductor taken")
		}
		e.clock.Advance(61 * time.Second)
		if err := e.st.TouchConductor(ctx, testHost, true); err != nil {
			t.Fatal(err)
		}
		e.c.CheckOrphanAllocations(ctx)
		got, err := e.st.GetAllocationByID(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != states.Active || got.NodeID == nil || *got.NodeID != n.ID || *got.ConductorAffinity != e.c.ID() {
			t.Fatalf("resumed allocation %+v", got)
		}
	})
}
