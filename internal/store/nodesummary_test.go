package store

import (
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/model"
)

func TestListNodeSummaries(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		cond, err := e.s.RegisterConductor(e.ctx, "host-1", "g1", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		a := mustNode(t, e, model.Node{ConductorGroup: "g1", ProvisionState: "active", Reservation: model.Ptr("host-1"),
			ConductorAffinity: &cond.ID, DriverInfo: map[string]any{"ipmi_address": "192.0.2.1"}})
		b := mustNode(t, e, model.Node{Maintenance: true, Fault: model.Ptr("power failure"), TargetPowerState: "power on"})
		c := mustNode(t, e, model.Node{ProvisionState: "deploy wait"})
		sum := func(n *model.Node) NodeSummary {
			return NodeSummary{ID: n.ID, UUID: n.UUID, Driver: n.Driver, ConductorGroup: n.ConductorGroup,
				ProvisionState: n.ProvisionState, TargetPowerState: n.TargetPowerState, Maintenance: n.Maintenance,
				Reservation: n.Reservation, Fault: n.Fault, ConductorAffinity: n.ConductorAffinity}
		}
		cases := []struct {
			name string
			f    NodeFilter
			o    ListOptions
			want []NodeSummary
		}{
			{"all", NodeFilter{}, ListOptions{}, []NodeSummary{sum(a), sum(b), sum(c)}},
			{"filtered", NodeFilter{Maintenance: model.Ptr(false)}, ListOptions{}, []NodeSummary{sum(a), sum(c)}},
			{"first page", NodeFilter{}, ListOptions{Limit: 2}, []NodeSummary{sum(a), sum(b)}},
			{"next page", NodeFilter{IDAbove: b.ID}, ListOptions{Limit: 2}, []NodeSummary{sum(c)}},
			{"sorted", NodeFilter{}, ListOptions{SortKey: "provision_state", SortDir: "desc"}, []NodeSummary{sum(b), sum(c), sum(a)}},
		}
		for _, tc := range cases {
			got, err := e.s.ListNodeSummaries(e.ctx, tc.f, tc.o)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
			}
		}
		_, err = e.s.ListNodeSummaries(e.ctx, NodeFilter{}, ListOptions{SortKey: "bogus"})
		wantErr[*InvalidParameterError](t, err, ErrInvalidParameter)
	})
}

// TestReadNodes: a batch is read whole, traits and tags included, in id
// order; ids gone are left out and a batch too long is refused.
func TestReadNodes(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		var ids []int64
		for range 3 {
			ids = append(ids, mustNode(t, e, model.Node{Properties: map[string]any{"cpus": 8}}).ID)
		}
		if _, err := e.s.SetNodeTraits(e.ctx, ids[1], []string{"CUSTOM_B", "CUSTOM_A"}, "1.0"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.SetNodeTags(e.ctx, ids[2], []string{"rack1"}); err != nil {
			t.Fatal(err)
		}
		got, err := e.s.ReadNodes(e.ctx, []int64{ids[2], 99999, ids[0], ids[1]})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].ID != ids[0] || got[1].ID != ids[1] || got[2].ID != ids[2] {
			t.Fatalf("read %d nodes: %+v", len(got), got)
		}
		want, _ := e.s.GetNodeByID(e.ctx, ids[1])
		if !reflect.DeepEqual(got[1], want) {
			t.Errorf("batch read %+v\nsingle read %+v", got[1], want)
		}
		if !reflect.DeepEqual(got[2].Tags, []string{"rack1"}) || len(got[0].Traits) != 0 || got[0].Traits == nil {
			t.Errorf("labels: %v %v", got[2].Tags, got[0].Traits)
		}
		_, err = e.s.ReadNodes(e.ctx, make([]int64, NodeReadBatch+1))
		wantErr[*InvalidParameterError](t, err, ErrInvalidParameter)
	})
}
