package store

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

func TestCountNodesByState(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		for _, n := range []model.Node{
			{ProvisionState: states.Available, PowerState: states.PowerOff},
			{ProvisionState: states.Available, PowerState: states.PowerOff},
			{ProvisionState: states.Available, PowerState: states.PowerOff, Maintenance: true},
			{ProvisionState: states.Active, PowerState: states.PowerOn},
			{},
		} {
			mustNode(t, e, n)
		}
		got, err := e.s.CountNodesByState(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []NodeStateCount{
			{ProvisionState: states.Active, PowerState: states.PowerOn, Count: 1},
			{ProvisionState: states.Available, PowerState: states.PowerOff, Count: 2},
			{ProvisionState: states.Available, PowerState: states.PowerOff, Maintenance: true, Count: 1},
			{ProvisionState: states.Enroll, Count: 1},
		}
		cmp := func(a, b NodeStateCount) int {
			if a.ProvisionState != b.ProvisionState {
				return strings.Compare(a.ProvisionState, b.ProvisionState)
			}
			if a.Maintenance != b.Maintenance {
				if a.Maintenance {
					return 1
				}
				return -1
			}
			return strings.Compare(a.PowerState, b.PowerState)
		}
		slices.SortFunc(got, cmp)
		if !slices.Equal(got, want) {
			t.Errorf("counts %+v, want %+v", got, want)
		}
	})
}

// The fleet overview's counts: grouped by state, maintenance, fault and
// conductor group, limited to a project (owner or lessee) when asked, with
// child nodes counted when IncludeChildren.
func TestCountFleet(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		parent := mustNode(t, e, model.Node{ProvisionState: states.Active, PowerState: states.PowerOn, Owner: model.Ptr("p1")})
		for _, n := range []model.Node{
			{ProvisionState: states.Active, PowerState: states.PowerOn, Owner: model.Ptr("p1")},
			{ProvisionState: states.Available, PowerState: states.PowerOff, Maintenance: true, Fault: model.Ptr("power failure"), ConductorGroup: "rack2", Lessee: model.Ptr("p1")},
			{ProvisionState: states.Available, PowerState: states.PowerOff, ConductorGroup: "rack2", Owner: model.Ptr("p2")},
			{ProvisionState: states.Active, PowerState: states.PowerOn, Owner: model.Ptr("p1"), ParentNode: &parent.UUID},
		} {
			mustNode(t, e, n)
		}
		sum := func(cs []FleetCount) map[FleetCount]int64 {
			out := map[FleetCount]int64{}
			for _, c := range cs {
				n := c.Count
				c.Count = 0
				out[c] += n
			}
			return out
		}
		key := func(prov, power string, maint bool, fault, group string) FleetCount {
			return FleetCount{NodeStateCount: NodeStateCount{ProvisionState: prov, PowerState: power, Maintenance: maint}, Fault: fault, ConductorGroup: group}
		}
		all, err := e.s.CountFleet(e.ctx, NodeFilter{IncludeChildren: true})
		if err != nil {
			t.Fatal(err)
		}
		want := map[FleetCount]int64{
			key(states.Active, states.PowerOn, false, "", ""):                      3,
			key(states.Available, states.PowerOff, true, "power failure", "rack2"): 1,
			key(states.Available, states.PowerOff, false, "", "rack2"):             1,
		}
		if got := sum(all); !maps.Equal(got, want) {
			t.Errorf("every node: %v, want %v", got, want)
		}
		p1, err := e.s.CountFleet(e.ctx, NodeFilter{IncludeChildren: true, Project: model.Ptr("p1")})
		if err != nil {
			t.Fatal(err)
		}
		want = map[FleetCount]int64{
			key(states.Active, states.PowerOn, false, "", ""):                      3,
			key(states.Available, states.PowerOff, true, "power failure", "rack2"): 1,
		}
		if got := sum(p1); !maps.Equal(got, want) {
			t.Errorf("project p1: %v, want %v", got, want)
		}
		top, err := e.s.CountFleet(e.ctx, NodeFilter{Project: model.Ptr("p1")})
		if err != nil {
			t.Fatal(err)
		}
		if got := sum(top)[key(states.Active, states.PowerOn, false, "", "")]; got != 2 {
			t.Errorf("p1 without children: %d active nodes, want 2", got)
		}
	})
}
