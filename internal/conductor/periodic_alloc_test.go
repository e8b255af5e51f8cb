package conductor_test

import (
	"context"
	"encoding/json"
	"os"
	"runtime/debug"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// The continuous allocation check of a power-sync pass (issue 29, items
// 2 and 5): allocations do not depend on the machine's load, so a pass
// allocating more than syncAllocGrowth over the figure committed in
// syncAllocFile fails. After a deliberate change, or one that allocates
// much less, rewrite it with
//
//	IRONIC_UPDATE_ALLOCS=1 go test ./internal/conductor/ -run Alloc
//
// and commit the file.
const (
	syncAllocFile   = "testdata/allocs.json"
	syncAllocGrowth = 0.20
	syncAllocNodes  = 200
)

func TestAllocsPerPowerSyncPass(t *testing.T) {
	if raceEnabled() {
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
	key := "power_sync_pass_200_nodes"
	if os.Getenv("IRONIC_UPDATE_ALLOCS") != "" {
		b, err := json.MarshalIndent(map[string]float64{key: got}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(syncAllocFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %.0f allocations", syncAllocFile, got)
		return
	}
	b, err := os.ReadFile(syncAllocFile)
	if err != nil {
		t.Fatalf("read the committed figure: %v", err)
	}
	var want map[string]float64
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", syncAllocFile, err)
	}
	w, ok := want[key]
	switch {
	case !ok:
		t.Fatalf("%s: no figure for %q (measured %.0f); set IRONIC_UPDATE_ALLOCS=1 to record it", syncAllocFile, key, got)
	case got > w*(1+syncAllocGrowth):
		t.Errorf("a power-sync pass over %d nodes makes %.0f allocations, %.0f %% over the committed %.0f (allowed %.0f %%)",
			syncAllocNodes, got, 100*(got/w-1), w, 100*syncAllocGrowth)
	case got < w*(1-syncAllocGrowth):
		t.Logf("%.0f allocations, %.0f %% under the committed %.0f: lower the figure in %s (IRONIC_UPDATE_ALLOCS=1)",
			got, 100*(1-got/w), w, syncAllocFile)
	default:
		t.Logf("%.0f allocations per pass (committed %.0f)", got, w)
	}
}

// raceEnabled tells whether the test binary was built with -race, from
// its build settings.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
