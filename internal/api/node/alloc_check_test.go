package node

import (
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"
)

// The continuous allocation check (issue 29, item 5): allocations per
// list page, unlike time, do not depend on the machine's load, so a
// change that makes a page allocate more than allocGrowth over the
// figure committed in allocBudgetFile fails here. After a deliberate
// change, or one that allocates much less, rewrite the figures with
//
//	IRONIC_UPDATE_ALLOCS=1 go test ./internal/api/node/ -run Alloc
//
// and commit the file.

const (
	allocBudgetFile = "testdata/allocs.json"
	allocGrowth     = 0.20
	allocNodes      = 1000
	allocRuns       = 3
)

// allocPages are the pages measured, by their key in allocBudgetFile.
var allocPages = []struct{ key, path, version string }{
	{"list", "/v1/nodes?limit=1000", "1.78"},
	{"detail", "/v1/nodes/detail?limit=1000", "1.78"},
	{"nova_fields", "/v1/nodes?limit=1000&fields=" + novaFields, "1.46"},
}

func TestAllocsPerListPage(t *testing.T) {
	if raceEnabled() {
		t.Skip("the race detector changes allocations")
	}
	if testing.Short() {
		t.Skip("builds a store of 1,000 nodes")
	}
	e, _ := listEnv(t, allocNodes)
	got := map[string]float64{}
	for _, p := range allocPages {
		// One request first: caches filled on first use are not the
		// steady state.
		if r := e.do("GET", p.path, p.version, ""); r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", p.path, r.status, r.body)
		}
		got[p.key] = testing.AllocsPerRun(allocRuns, func() { e.do("GET", p.path, p.version, "") })
	}
	checkAllocBudgets(t, allocBudgetFile, got)
}

// checkAllocBudgets compares the allocations measured with the figures in
// file: more than allocGrowth above fails, more than allocGrowth below
// asks for the figure to be lowered. IRONIC_UPDATE_ALLOCS=1 rewrites the
// file instead.
func checkAllocBudgets(t *testing.T, file string, got map[string]float64) {
	t.Helper()
	if os.Getenv("IRONIC_UPDATE_ALLOCS") != "" {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %v", file, got)
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read the committed figures: %v", err)
	}
	var want map[string]float64
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, key := range slices.Sorted(maps.Keys(got)) {
		n := got[key]
		w, ok := want[key]
		switch {
		case !ok:
			t.Errorf("%s: no committed figure for %q (measured %.0f allocations); set IRONIC_UPDATE_ALLOCS=1 to record it", file, key, n)
		case n > w*(1+allocGrowth):
			t.Errorf("%s: %.0f allocations, %.0f %% over the committed %.0f (allowed %.0f %%)", key, n, 100*(n/w-1), w, 100*allocGrowth)
		case n < w*(1-allocGrowth):
			t.Logf("%s: %.0f allocations, %.0f %% under the committed %.0f: lower the figure in %s (IRONIC_UPDATE_ALLOCS=1)",
				key, n, 100*(1-n/w), w, file)
		default:
			t.Logf("%s: %.0f allocations (committed %.0f)", key, n, w)
		}
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
