package store

import (
	"fmt"
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

// TestReadNodesForPowerSync: a batch is read in id order with every
// column but the skipped ones, which stay zero, and without labels; ids
// gone are left out and a batch too long is refused.
func TestReadNodesForPowerSync(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		var ids []int64
		for i := range 3 {
			ids = append(ids, mustNode(t, e, model.Node{
				Properties: map[string]any{"cpus": 8}, DriverInfo: map[string]any{"ipmi_address": fmt.Sprint("192.0.2.", i)},
				InstanceInfo: map[string]any{"image_source": "http://images.example/x.qcow2"}, Extra: map[string]any{"foo": "bar"},
				NetworkData: map[string]any{"links": []any{}}, Description: model.Ptr("rack 1"),
			}).ID)
		}
		if _, err := e.s.SetNodeTraits(e.ctx, ids[1], []string{"CUSTOM_B", "CUSTOM_A"}, "1.0"); err != nil {
			t.Fatal(err)
		}
		got, err := e.s.ReadNodesForPowerSync(e.ctx, []int64{ids[2], 99999, ids[0], ids[1]})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].ID != ids[0] || got[1].ID != ids[1] || got[2].ID != ids[2] {
			t.Fatalf("read %d nodes: %+v", len(got), got)
		}
		whole, err := e.s.GetNodeByID(e.ctx, ids[1])
		if err != nil {
			t.Fatal(err)
		}
		// The whole node with the skipped columns and the labels zeroed
		// is what the batch read.
		want := *whole
		want.Extra, want.CleanStep, want.DeployStep, want.ServiceStep = nil, nil, nil, nil
		want.RAIDConfig, want.TargetRAIDConfig, want.NetworkData, want.Description = nil, nil, nil, nil
		want.Traits, want.Tags = nil, nil
		if !reflect.DeepEqual(got[1], &want) {
			t.Errorf("batch read %+v\nwhole node less the skipped columns %+v", got[1], &want)
		}
		if got[0].DriverInfo["ipmi_address"] != "192.0.2.0" || got[2].Properties["cpus"] != float64(8) {
			t.Errorf("read columns: %v %v", got[0].DriverInfo, got[2].Properties)
		}
		_, err = e.s.ReadNodesForPowerSync(e.ctx, make([]int64, NodeReadBatch+1))
		wantErr[*InvalidParameterError](t, err, ErrInvalidParameter)
	})
}
