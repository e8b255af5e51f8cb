package store

import (
	"reflect"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

func mustAllocation(t *testing.T, e env, a model.Allocation) *model.Allocation {
	t.Helper()
	got, err := e.s.CreateAllocation(e.ctx, &a)
	if err != nil {
		t.Fatalf("CreateAllocation: %v", err)
	}
	return got
}

func TestAllocationCRUD(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		a := mustAllocation(t, e, model.Allocation{Name: model.Ptr("a1"), ResourceClass: model.Ptr("gold"),
			Traits: []string{"CUSTOM_X"}, CandidateNodes: []string{"n1"}, Extra: map[string]any{"k": "v"}})
		if len(a.UUID) != 36 || a.State != states.Allocating || !a.CreatedAt.Equal(e.clock.Now()) || a.UpdatedAt != nil {
			t.Fatalf("defaults: %+v", a)
		}
		if !slices.Equal(a.Traits, []string{"CUSTOM_X"}) || !slices.Equal(a.CandidateNodes, []string{"n1"}) || a.Extra["k"] != "v" {
			t.Errorf("JSON columns: %+v", a)
		}
		b := mustAllocation(t, e, model.Allocation{State: "error"})
		if b.State != "error" || b.Traits != nil && len(b.Traits) != 0 {
			t.Errorf("given state / empty traits: %+v", b)
		}
		for name, get := range map[string]func() (*model.Allocation, error){
			"id":   func() (*model.Allocation, error) { return e.s.GetAllocationByID(e.ctx, a.ID) },
			"uuid": func() (*model.Allocation, error) { return e.s.GetAllocationByUUID(e.ctx, a.UUID) },
			"name": func() (*model.Allocation, error) { return e.s.GetAllocationByName(e.ctx, "a1") },
		} {
			if got, err := get(); err != nil || !reflect.DeepEqual(got, a) {
				t.Errorf("by %s: %+v %v", name, got, err)
			}
		}
		for _, c := range []struct {
			in    model.Allocation
			field string
		}{{model.Allocation{Name: model.Ptr("a1")}, "name"}, {model.Allocation{UUID: a.UUID}, "uuid"}} {
			_, err := e.s.CreateAllocation(e.ctx, &c.in)
			if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != c.field || d.Kind != KindAllocation {
				t.Errorf("duplicate %s: %+v", c.field, d)
			}
		}
		for _, err := range []error{
			func() error { _, err := e.s.GetAllocationByID(e.ctx, 999); return err }(),
			func() error { _, err := e.s.GetAllocationByName(e.ctx, "nope"); return err }(),
			func() error { _, err := e.s.UpdateAllocation(e.ctx, &model.Allocation{ID: 999}, "state"); return err }(),
			e.s.DeleteAllocation(e.ctx, 999),
		} {
			if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindAllocation {
				t.Errorf("kind %q", nf.Kind)
			}
		}
		b.Name = model.Ptr("a1")
		_, err := e.s.UpdateAllocation(e.ctx, b, "name")
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "name" {
			t.Errorf("update duplicate: %+v", d)
		}
		_, err = e.s.UpdateAllocation(e.ctx, b, "uuid")
		wantErr[*InvalidParameterError](t, err, ErrInvalidParameter)
		e.clock.Advance(60e9)
		b.State, b.LastError = "active", model.Ptr("x")
		got, err := e.s.UpdateAllocation(e.ctx, b, "state")
		if err != nil || got.State != "active" || got.LastError != nil || got.UpdatedAt == nil || !got.UpdatedAt.Equal(e.clock.Now()) {
			t.Errorf("partial update: %+v %v", got, err)
		}
		if err := e.s.DeleteAllocation(e.ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		_, err = e.s.GetAllocationByID(e.ctx, b.ID)
		wantErr[*NotFoundError](t, err, ErrNotFound)
	})
}

func TestAllocationNodeBinding(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{InstanceInfo: map[string]any{"image_source": "img"}})
		busy := mustNode(t, e, model.Node{InstanceUUID: model.Ptr("aaaaaaaa-0000-0000-0000-000000000001")})
		a := mustAllocation(t, e, model.Allocation{Traits: []string{"CUSTOM_GPU"}})
		plain := mustAllocation(t, e, model.Allocation{})

		// Not writing node_id leaves nodes alone.
		a.NodeID = &n.ID
		if _, err := e.s.UpdateAllocation(e.ctx, a, "state"); err != nil {
			t.Fatal(err)
		}
		if got, _ := e.s.GetNodeByID(e.ctx, n.ID); got.AllocationID != nil || got.InstanceUUID != nil {
			t.Fatalf("node bound without node_id written: %+v", got)
		}

		got, err := e.s.UpdateAllocation(e.ctx, a, "node_id")
		if err != nil || model.Deref(got.NodeID) != n.ID {
			t.Fatalf("bind: %+v %v", got, err)
		}
		node, _ := e.s.GetNodeByID(e.ctx, n.ID)
		if model.Deref(node.AllocationID) != a.ID || model.Deref(node.InstanceUUID) != a.UUID {
			t.Errorf("node not bound: allocation %v instance %v", node.AllocationID, node.InstanceUUID)
		}
		wantInfo := map[string]any{"image_source": "img", "traits": []any{"CUSTOM_GPU"}}
		if !reflect.DeepEqual(node.InstanceInfo, wantInfo) {
			t.Errorf("instance_info = %v, want %v", node.InstanceInfo, wantInfo)
		}
		// Rebinding the same allocation is allowed (instance is its own).
		if _, err := e.s.UpdateAllocation(e.ctx, a); err != nil {
			t.Errorf("rebind same allocation: %v", err)
		}

		cases := []struct {
			name  string
			node  int64
			check func(error)
		}{
			{"node with another instance", busy.ID, func(err error) {
				na := wantErr[*NodeAssociatedError](t, err, ErrNodeAssociated)
				if na.Node != busy.UUID || na.Instance != *busy.InstanceUUID {
					t.Errorf("%+v", na)
				}
			}},
			{"node taken by another allocation", n.ID, func(err error) { wantErr[*NodeAssociatedError](t, err, ErrNodeAssociated) }},
			{"missing node", 9999, func(err error) {
				if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindNode {
					t.Errorf("kind %q", nf.Kind)
				}
			}},
		}
		for _, c := range cases {
			plain.NodeID = &c.node
			_, err := e.s.UpdateAllocation(e.ctx, plain, "node_id")
			c.check(err)
			// The failed binding rolled back the allocation write too.
			if got, _ := e.s.GetAllocationByID(e.ctx, plain.ID); got.NodeID != nil {
				t.Errorf("%s: allocation kept node_id %v", c.name, *got.NodeID)
			}
		}

		// Another node already carrying this allocation's UUID as instance.
		clash := mustNode(t, e, model.Node{InstanceUUID: &plain.UUID})
		free := mustNode(t, e, model.Node{})
		plain.NodeID = &free.ID
		_, err = e.s.UpdateAllocation(e.ctx, plain, "node_id")
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "instance_uuid" || d.Value != plain.UUID || d.Node != free.UUID {
			t.Errorf("InstanceAssociated: %+v", d)
		}
		_ = clash

		// Deleting the allocation frees its node.
		if err := e.s.DeleteAllocation(e.ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		node, _ = e.s.GetNodeByID(e.ctx, n.ID)
		if node.AllocationID != nil || node.InstanceUUID != nil {
			t.Errorf("node still bound after delete: %+v", node)
		}
		if other, _ := e.s.GetNodeByID(e.ctx, busy.ID); model.Deref(other.InstanceUUID) == "" {
			t.Errorf("delete cleared another node's instance")
		}
	})
}

func TestAllocationListAndTakeOver(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c1, err := e.s.RegisterConductor(e.ctx, "c1", "", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := e.s.RegisterConductor(e.ctx, "c2", "", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		n := mustNode(t, e, model.Node{})
		mk := func(name string, a model.Allocation) *model.Allocation {
			a.Name = model.Ptr(name)
			return mustAllocation(t, e, a)
		}
		a := mk("a", model.Allocation{ResourceClass: model.Ptr("gold"), Owner: model.Ptr("p1"), ConductorAffinity: &c1.ID})
		b := mk("b", model.Allocation{State: "active", NodeID: &n.ID, ConductorAffinity: &c1.ID})
		c := mk("c", model.Allocation{ResourceClass: model.Ptr("silver"), ConductorAffinity: &c2.ID})
		d := mk("d", model.Allocation{ConductorAffinity: &c1.ID})
		cases := []struct {
			name string
			f    AllocationFilter
			want []string
		}{
			{"none", AllocationFilter{}, []string{"a", "b", "c", "d"}},
			{"state", AllocationFilter{State: model.Ptr(states.Allocating)}, []string{"a", "c", "d"}},
			{"resource class", AllocationFilter{ResourceClass: model.Ptr("gold")}, []string{"a"}},
			{"owner", AllocationFilter{Owner: model.Ptr("p1")}, []string{"a"}},
			{"node id", AllocationFilter{NodeID: &n.ID}, []string{"b"}},
			{"node uuid", AllocationFilter{NodeUUID: &n.UUID}, []string{"b"}},
			{"unknown node uuid", AllocationFilter{NodeUUID: model.Ptr("bbbbbbbb-0000-0000-0000-000000000000")}, nil},
			{"conductor id", AllocationFilter{ConductorAffinity: &c2.ID}, []string{"c"}},
			{"conductor hostname", AllocationFilter{ConductorHostname: model.Ptr("c1")}, []string{"a", "b", "d"}},
			{"combined", AllocationFilter{ConductorHostname: model.Ptr("c1"), State: model.Ptr("active")}, []string{"b"}},
		}
		for _, tc := range cases {
			as, err := e.s.ListAllocations(e.ctx, tc.f, ListOptions{SortKey: "name"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range as {
				got = append(got, *x.Name)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
			}
		}
		page, err := e.s.ListAllocations(e.ctx, AllocationFilter{}, ListOptions{Limit: 2, Marker: b.UUID, SortKey: "name", SortDir: "desc"})
		if err != nil || len(page) != 1 || page[0].ID != a.ID {
			t.Errorf("desc page after b: %v %v", page, err)
		}
		_, err = e.s.ListAllocations(e.ctx, AllocationFilter{}, ListOptions{Marker: "cccccccc-0000-0000-0000-000000000000"})
		wantErr[*MarkerNotFoundError](t, err, ErrMarkerNotFound)

		// Single take-over is a compare-and-swap on conductor_affinity.
		ok, err := e.s.TakeOverAllocation(e.ctx, c.ID, c1.ID, c2.ID)
		if err != nil || ok {
			t.Errorf("take over from wrong conductor: %v %v", ok, err)
		}
		ok, err = e.s.TakeOverAllocation(e.ctx, c.ID, c2.ID, c1.ID)
		if got, _ := e.s.GetAllocationByID(e.ctx, c.ID); err != nil || !ok || model.Deref(got.ConductorAffinity) != c1.ID {
			t.Errorf("take over: %v %v %+v", ok, err, got)
		}
		_, err = e.s.TakeOverAllocation(e.ctx, 999, c1.ID, c2.ID)
		wantErr[*NotFoundError](t, err, ErrNotFound)

		// Bulk take-over moves only allocations still allocating.
		moved, err := e.s.TakeOverAllocations(e.ctx, c1.ID, c2.ID)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, m := range moved {
			ids = append(ids, m.ID)
			if model.Deref(m.ConductorAffinity) != c2.ID {
				t.Errorf("returned allocation %d not moved", m.ID)
			}
		}
		if !slices.Equal(ids, []int64{a.ID, c.ID, d.ID}) {
			t.Errorf("moved %v, want %v", ids, []int64{a.ID, c.ID, d.ID})
		}
		if got, _ := e.s.GetAllocationByID(e.ctx, b.ID); model.Deref(got.ConductorAffinity) != c1.ID {
			t.Errorf("active allocation taken over")
		}
		if moved, err := e.s.TakeOverAllocations(e.ctx, c1.ID, c2.ID); err != nil || len(moved) != 0 {
			t.Errorf("second take over: %v %v", moved, err)
		}
	})
}
