package node

import (
	"net/http"
	"slices"
	"testing"

	"github.com/openkeel/ironic/testing/allocbudget"
)

// The continuous allocation check (issue 29, item 5): allocations per
// list page, per one-node GET and per creation, unlike time, do not
// depend on the machine's load, so a change that makes a request
// allocate more than allocbudget.Growth over the figure committed in
// allocBudgetFile fails here. The race detector changes allocations, so
// make test runs this check again without it. After a deliberate change,
// or one that allocates much less, rewrite the figures with
//
//	IRONIC_UPDATE_ALLOCS=1 go test ./internal/api/node/ -run Alloc
//
// and commit the file.

const (
	allocBudgetFile = "testdata/allocs.json"
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
	if allocbudget.RaceEnabled() {
		t.Skip("the race detector changes allocations")
	}
	if testing.Short() {
		t.Skip("builds a store of 1,000 nodes")
	}
	e, _ := listEnv(t, allocNodes)
	// One node by UUID (issue 29's one-node GET), beside the pages.
	uuid := e.do("GET", "/v1/nodes/bench-000003", "1.78", "").json(t)["uuid"].(string)
	pages := append(slices.Clone(allocPages), struct{ key, path, version string }{"show", "/v1/nodes/" + uuid, "1.78"})
	got := map[string]float64{}
	for _, p := range pages {
		// One request first: caches filled on first use are not the
		// steady state.
		if r := e.do("GET", p.path, p.version, ""); r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", p.path, r.status, r.body)
		}
		got[p.key] = testing.AllocsPerRun(allocRuns, func() { e.do("GET", p.path, p.version, "") })
	}
	// A node's creation (issue 29's POST), a new node each run.
	next := allocNodes + 100
	got["create"] = testing.AllocsPerRun(allocRuns, func() {
		next++
		if r := e.do("POST", "/v1/nodes", "1.78", benchNodeBody(next)); r.status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
	})
	allocbudget.Check(t, allocBudgetFile, got)
}
