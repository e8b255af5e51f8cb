package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/allocbudget"
)

// The continuous allocation check of a power-sync pass (issue 29, items
// 2 and 5): allocations do not depend on the machine's load, so a pass
// allocating more than allocbudget.Growth over the figure committed in
// syncAllocFile fails. After a deliberate change, or one that allocates
// much less, rewrite it with
//
//	IRONIC_UPDATE_ALLOCS=1 go test ./internal/conductor/ -run Alloc
//
// and commit the file.
const (
	syncAllocFile  = "testdata/allocs.json"
	syncAllocNodes = 200
)

func TestAllocsPerPowerSyncPass(t *testing.T) {
	if allocbudget.RaceEnabled() {
		t.Skip("the race detector changes allocations")
	}
	e := newEnv(t, storetest.Backends(t)[0].DB)
	for range syncAllocNodes {
		e.node(states.Active, flaky, func(n *model.Node) {
			n.PowerState = states.PowerOn
			n.DriverInfo = map[string]any{"ipmi_address": "192.0.2.1", "ipmi_username": "admin", "ipmi_password": "secret"}
			n.InstanceInfo = map[string]any{"image_source": "http://images.example/ubuntu.qcow2", "root_gb": 40}
		})
	}
	e.power.reading(states.PowerOn, nil)
	ctx := context.Background()
	e.c.SyncPowerStates(ctx)
	got := testing.AllocsPerRun(3, func() { e.c.SyncPowerStates(ctx) })
	if sets := e.power.Sets(); len(sets) != 0 {
		t.Fatalf("the pass changed power states: %v", sets)
	}
	allocbudget.Check(t, syncAllocFile, map[string]float64{"power_sync_pass_200_nodes": got})
}
