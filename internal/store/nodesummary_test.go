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
