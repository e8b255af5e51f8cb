package store

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

// changeKey is what a test compares of a change.
type changeKey struct {
	Resource ChangeResource
	Action   ChangeAction
	UUID     string
}

func allChanges(t *testing.T, e env) []Change {
	t.Helper()
	cs, err := e.s.(ChangeLog).ChangesAfter(e.ctx, 0, 10000)
	if err != nil {
		t.Fatalf("ChangesAfter: %v", err)
	}
	for i, c := range cs {
		if c.Seq != int64(i+1) {
			t.Fatalf("change %d has seq %d: the sequence has a hole", i, c.Seq)
		}
	}
	return cs
}

// Every write of a streamed resource adds one change in its transaction,
// with the node's attributes; writes that fail add none.
func TestChangesRecordWrites(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{Name: model.Ptr("n1"), Owner: model.Ptr("p1"), ConductorGroup: "g1"})
		mustNode(t, e, model.Node{Name: model.Ptr("n2")})
		n.ProvisionState = "manageable"
		if _, err := e.s.UpdateNode(e.ctx, n, "provision_state"); err != nil {
			t.Fatal(err)
		}
		n.PowerState = "power on"
		if _, err := e.s.UpdateNode(e.ctx, n, "power_state"); err != nil {
			t.Fatal(err)
		}
		n.Name = model.Ptr("n2") // taken: refused, nothing recorded
		if _, err := e.s.UpdateNode(e.ctx, n, "name"); err == nil {
			t.Fatal("duplicate name accepted")
		}
		p, err := e.s.CreatePort(e.ctx, &model.Port{NodeID: &n.ID, Address: model.Ptr("52:54:00:00:00:01")})
		if err != nil {
			t.Fatal(err)
		}
		p.Extra = map[string]any{"a": "b"}
		if _, err := e.s.UpdatePort(e.ctx, p, "extra"); err != nil {
			t.Fatal(err)
		}
		if err := e.s.DeletePort(e.ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		a, err := e.s.CreateAllocation(e.ctx, &model.Allocation{ResourceClass: model.Ptr("x"), Owner: model.Ptr("p2")})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.s.DeleteAllocation(e.ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.RegisterConductor(e.ctx, "c1", "g1", nil, false); err != nil {
			t.Fatal(err)
		}
		if err := e.s.UnregisterConductor(e.ctx, "c1"); err != nil {
			t.Fatal(err)
		}
		if err := e.s.DeleteConductor(e.ctx, "c1"); err != nil {
			t.Fatal(err)
		}
		if err := e.s.DeleteNode(e.ctx, n.ID); err != nil {
			t.Fatal(err)
		}
		cs := allChanges(t, e)
		var got []changeKey
		for _, c := range cs {
			got = append(got, changeKey{c.Resource, c.Action, c.UUID})
		}
		want := []changeKey{
			{ChangeNode, ChangeCreated, n.UUID},
			{ChangeNode, ChangeCreated, cs[1].UUID},
			{ChangeNode, ChangeProvision, n.UUID},
			{ChangeNode, ChangePower, n.UUID},
			{ChangePort, ChangeCreated, p.UUID},
			{ChangePort, ChangeUpdated, p.UUID},
			{ChangePort, ChangeDeleted, p.UUID},
			{ChangeAllocation, ChangeCreated, a.UUID},
			{ChangeAllocation, ChangeDeleted, a.UUID},
			{ChangeConductor, ChangeCreated, "c1"},
			{ChangeConductor, ChangeUpdated, "c1"},
			{ChangeConductor, ChangeDeleted, "c1"},
			{ChangeNode, ChangeDeleted, n.UUID},
		}
		if !slices.Equal(got, want) {
			t.Fatalf("changes\n%v\nwant\n%v", got, want)
		}
		prov := cs[2]
		if prov.ProvisionState != "manageable" || prov.Owner != "p1" || prov.ConductorGroup != "g1" || prov.NodeUUID != n.UUID ||
			!slices.Equal(prov.Changed, []string{"provision_state", "provision_updated_at"}) {
			t.Errorf("provision change %+v", prov)
		}
		if port := cs[5]; port.NodeUUID != n.UUID || port.Owner != "p1" || !slices.Equal(port.Changed, []string{"extra"}) {
			t.Errorf("port change %+v", port)
		}
		if alloc := cs[8]; alloc.Owner != "p2" {
			t.Errorf("allocation deletion %+v: want its owner", alloc)
		}
		if del := cs[12]; del.Owner != "p1" || del.ProvisionState != "manageable" {
			t.Errorf("node deletion %+v: want the node's attributes before it", del)
		}
		if cond := cs[9]; cond.ConductorGroup != "g1" {
			t.Errorf("conductor change %+v: want its group", cond)
		}
	})
}

// 1,000 changes from concurrent writers on several nodes: a reader tailing
// the table meanwhile never sees a seq before every lower one is visible
// (seq order is commit order), and sees each change once, in each node's
// write order.
func TestChangesConcurrentWritersInCommitOrder(t *testing.T) {
	const writers, perWriter = 8, 125
	eachBackend(t, func(t *testing.T, e env) {
		log := e.s.(ChangeLog)
		nodes := make([]*model.Node, writers)
		for i := range nodes {
			nodes[i] = mustNode(t, e, model.Node{})
		}
		_, base, err := log.ChangeBounds(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(e.ctx)
		defer cancel()
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := *nodes[w]
				for i := range perWriter {
					n.Description = model.Ptr(fmt.Sprintf("%d", i))
					if _, err := e.s.UpdateNode(ctx, &n, "description"); err != nil {
						t.Errorf("writer %d: %v", w, err)
						return
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		var seen []Change
		last := base
		for finished := false; ; {
			select {
			case <-done:
				finished = true
			default:
			}
			cs, err := log.ChangesAfter(e.ctx, last, 500)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cs {
				if c.Seq != last+1 {
					t.Fatalf("read seq %d after %d: a later commit was visible before an earlier one", c.Seq, last)
				}
				last = c.Seq
				seen = append(seen, c)
			}
			if finished && len(cs) == 0 {
				break
			}
		}
		if len(seen) != writers*perWriter {
			t.Fatalf("saw %d changes, want %d", len(seen), writers*perWriter)
		}
		per := map[string]int{}
		for _, c := range seen {
			per[c.UUID]++
		}
		for _, n := range nodes {
			if per[n.UUID] != perWriter {
				t.Errorf("node %s: %d changes, want %d", n.UUID, per[n.UUID], perWriter)
			}
		}
	})
}

// Purging keeps the sequence: the bounds show what is gone.
func TestChangesPurgeAndBounds(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		log := e.s.(ChangeLog)
		mustNode(t, e, model.Node{})
		e.clock.Advance(time.Hour)
		mustNode(t, e, model.Node{})
		n, err := log.PurgeChanges(e.ctx, e.clock.Now().Add(-time.Minute))
		if err != nil || n != 1 {
			t.Fatalf("PurgeChanges = %d, %v; want 1", n, err)
		}
		oldest, latest, err := log.ChangeBounds(e.ctx)
		if err != nil || oldest != 2 || latest != 2 {
			t.Fatalf("ChangeBounds = %d, %d, %v; want 2, 2", oldest, latest, err)
		}
	})
}

// A committed change wakes this process's readers.
func TestChangeSignal(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		sig := e.s.(ChangeLog).ChangeSignal()
		mustNode(t, e, model.Node{})
		select {
		case <-sig:
		default:
			t.Fatal("no wake-up after a committed change")
		}
	})
}

// A node's traits are a node field: setting, adding and removing them is a
// node update naming "traits" (a no-op add records nothing); deleting the
// node records the deletion of its ports, portgroups and allocations
// before its own.
func TestChangesTraitsAndCascade(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{Owner: model.Ptr("p1")})
		pg, err := e.s.CreatePortgroup(e.ctx, &model.Portgroup{NodeID: &n.ID, Address: model.Ptr("52:54:00:00:01:00")})
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.s.CreatePort(e.ctx, &model.Port{NodeID: &n.ID, Address: model.Ptr("52:54:00:00:01:01")})
		if err != nil {
			t.Fatal(err)
		}
		_, before, err := e.s.(ChangeLog).ChangeBounds(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.SetNodeTraits(e.ctx, n.ID, []string{"CUSTOM_A", "CUSTOM_B"}, "1.0"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.AddNodeTrait(e.ctx, n.ID, "CUSTOM_C", "1.0"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.AddNodeTrait(e.ctx, n.ID, "CUSTOM_C", "1.0"); err != nil {
			t.Fatal(err)
		}
		if err := e.s.DeleteNodeTrait(e.ctx, n.ID, "CUSTOM_A"); err != nil {
			t.Fatal(err)
		}
		if err := e.s.DeleteNodeTrait(e.ctx, n.ID, "CUSTOM_MISSING"); err == nil {
			t.Fatal("deleting a missing trait succeeded")
		}
		if err := e.s.UnsetNodeTraits(e.ctx, n.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.s.UnsetNodeTraits(e.ctx, n.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.s.DeleteNode(e.ctx, n.ID); err != nil {
			t.Fatal(err)
		}
		cs, err := e.s.(ChangeLog).ChangesAfter(e.ctx, before, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []changeKey
		for _, c := range cs {
			got = append(got, changeKey{c.Resource, c.Action, c.UUID})
			if c.Resource == ChangeNode && c.Action == ChangeUpdated && !slices.Equal(c.Changed, []string{"traits"}) {
				t.Errorf("trait change %+v: want changed [traits]", c)
			}
			if c.Resource == ChangePort && (c.NodeUUID != n.UUID || c.Owner != "p1") {
				t.Errorf("port deletion %+v: want the node's UUID and owner", c)
			}
		}
		traits := changeKey{ChangeNode, ChangeUpdated, n.UUID}
		want := []changeKey{traits, traits, traits, traits,
			{ChangePort, ChangeDeleted, p.UUID},
			{ChangePortgroup, ChangeDeleted, pg.UUID},
			{ChangeNode, ChangeDeleted, n.UUID},
		}
		if !slices.Equal(got, want) {
			t.Fatalf("changes\n%v\nwant\n%v", got, want)
		}
	})
}
