package store

import (
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
