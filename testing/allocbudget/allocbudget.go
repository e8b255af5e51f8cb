// Package allocbudget holds the continuous allocation checks (issue 29,
// item 5) to figures committed beside the tests: allocations, unlike time,
// do not depend on the machine's load.
package allocbudget

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"testing"
)

// Growth is how far a measured figure may stray from the committed one.
const Growth = 0.20

// Check compares the allocations measured with the figures in file: more
// than Growth above fails, more than Growth below asks for the figure to
// be lowered. IRONIC_UPDATE_ALLOCS=1 rewrites the
// file instead.
func Check(t *testing.T, file string, got map[string]float64) {
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
		case n > w*(1+Growth):
			t.Errorf("%s: %.0f allocations, %.0f %% over the committed %.0f (allowed %.0f %%)", key, n, 100*(n/w-1), w, 100*Growth)
		case n < w*(1-Growth):
			t.Logf("%s: %.0f allocations, %.0f %% under the committed %.0f: lower the figure in %s (IRONIC_UPDATE_ALLOCS=1)",
				key, n, 100*(1-n/w), w, file)
		default:
			t.Logf("%s: %.0f allocations (committed %.0f)", key, n, w)
		}
	}
}

// RaceEnabled tells whether the test binary was built with -race, from
// its build settings.
func RaceEnabled() bool {
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
