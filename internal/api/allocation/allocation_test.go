package allocation

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/await"
)

func rc(s string) func(*model.Node) {
	return func(n *model.Node) { n.ResourceClass = &s }
}

// wait polls an allocation until it leaves "allocating".
func (e *env) wait(uuid string) map[string]any {
	e.t.Helper()
	var doc map[string]any
	await.UntilReason(e.t, 15*time.Second, "allocation "+uuid+" to leave allocating", func() (bool, string) {
		r := e.do("GET", "/v1/allocations/"+uuid, "1.115", "")
		if r.Status != 200 {
			e.t.Fatalf("get allocation: %d %s", r.Status, r.Body)
		}
		doc = r.JSON(e.t)
		return doc["state"] != "allocating", fmt.Sprintf("allocation %s still allocating", uuid)
	})
	return doc
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestCreateAllocatesThroughConductor(t *testing.T) {
	e := newEnv(t, nil)
	n := e.node(states.Available, nil, rc("bm-large"))
	r := e.do("POST", "/v1/allocations", "1.52", `{"resource_class": "bm-large", "name": "allocation-1", "extra": {"a": 1}}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	doc := r.JSON(t)
	if doc["state"] != "allocating" || doc["node_uuid"] != nil {
		t.Fatalf("created %v", doc)
	}
	if _, ok := doc["owner"]; ok {
		t.Fatal("owner shown before 1.60")
	}
	if loc := r.Header.Get("Location"); loc != "http://127.0.0.1:6385/v1/allocations/"+doc["uuid"].(string) {
		t.Fatalf("Location %q", loc)
	}
	if calls := e.cond.Calls(); !slices.Equal(calls, []string{"create_allocation " + testTopic}) {
		t.Fatalf("calls %v", calls)
	}
	done := e.wait(doc["uuid"].(string))
	if done["state"] != "active" || done["node_uuid"] != n.UUID || done["last_error"] != nil {
		t.Fatalf("allocated %v", done)
	}
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/allocation-show-response.json", &sample)
	if !slices.Equal(keys(done), keys(sample)) {
		t.Fatalf("keys %v, sample %v", keys(done), keys(sample))
	}
	// By name, and the node's allocation.
	if got := e.do("GET", "/v1/allocations/allocation-1", "1.52", "").JSON(t); got["uuid"] != doc["uuid"] {
		t.Fatalf("by name %v", got)
	}
	sub := e.do("GET", "/v1/nodes/"+n.UUID+"/allocation?fields=uuid,node_uuid", "1.52", "")
	if sub.Status != 200 || string(sub.Body) != fmt.Sprintf(`{"uuid": %q, "links": [{"href": "http://127.0.0.1:6385/v1/allocations/%s", "rel": "self"}, {"href": "http://127.0.0.1:6385/allocations/%s", "rel": "bookmark"}], "node_uuid": %q}`,
		doc["uuid"], doc["uuid"], doc["uuid"], n.UUID) {
		t.Fatalf("node allocation: %d %s", sub.Status, sub.Body)
	}
	// The node's allocation goes away through the conductor, which frees
	// the available node.
	if r := e.do("DELETE", "/v1/nodes/"+n.UUID+"/allocation", "1.52", ""); r.Status != http.StatusNoContent {
		t.Fatalf("delete node allocation: %d %s", r.Status, r.Body)
	}
	if calls := e.cond.Calls(); calls[len(calls)-1] != "destroy_allocation "+testTopic {
		t.Fatalf("calls %v", calls)
	}
	if cur := e.get(n.UUID); cur.AllocationID != nil || cur.InstanceUUID != nil {
		t.Fatalf("node still bound: %+v", cur)
	}
}

// Twenty allocations race for ten matching nodes: ten succeed, ten fail
// with upstream's message, and no node is given twice (on every store
// backend: the node lock is the database's).
func TestConcurrentAllocations(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) { concurrentAllocations(t, newEnvOn(t, nil, db)) })
}

func concurrentAllocations(t *testing.T, e *env) {
	for i := 0; i < 10; i++ {
		e.node(states.Available, nil, rc("race"))
	}
	e.node(states.Available, nil, rc("other"))
	var wg sync.WaitGroup
	uuids := make([]string, 20)
	errsCh := make(chan string, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.do("POST", "/v1/allocations", "1.115", `{"resource_class": "race"}`)
			if r.Status != http.StatusCreated {
				errsCh <- fmt.Sprintf("%d %s", r.Status, r.Body)
				return
			}
			uuids[i] = r.JSON(t)["uuid"].(string)
		}()
	}
	wg.Wait()
	close(errsCh)
	for msg := range errsCh {
		t.Fatalf("create: %s", msg)
	}
	active, failed := 0, 0
	nodes := map[string]bool{}
	for _, u := range uuids {
		doc := e.wait(u)
		switch doc["state"] {
		case "active":
			active++
			nu := doc["node_uuid"].(string)
			if nodes[nu] {
				t.Fatalf("node %s allocated twice", nu)
			}
			nodes[nu] = true
		case "error":
			failed++
			want := regexp.MustCompile(`^Failed to process allocation ` + u +
				`: (no available nodes match the resource class race|could not reserve any of \d+ suitable nodes|all nodes were filtered out during reservation)\.$`)
			if le, _ := doc["last_error"].(string); !want.MatchString(le) {
				t.Fatalf("last_error %q", le)
			}
			if doc["node_uuid"] != nil {
				t.Fatalf("failed allocation holds a node: %v", doc)
			}
		default:
			t.Fatalf("state %v", doc["state"])
		}
	}
	if active != 10 || failed != 10 {
		t.Fatalf("active %d, error %d", active, failed)
	}
	for u := range nodes {
		n := e.get(u)
		if n.InstanceUUID == nil || n.AllocationID == nil {
			t.Fatalf("node %s not bound: %+v", u, n)
		}
	}
}

func TestCreateErrors(t *testing.T) {
	e := newEnv(t, nil)
	n := e.node(states.Active, nil, rc("x"))
	cases := []struct {
		name, version, body string
		status              int
		msg                 string
	}{
		{"no resource class", "1.115", `{}`, 400, "The resource_class field is mandatory when not backfilling"},
		{"bad name", "1.115", `{"resource_class": "x", "name": "a b"}`, 400, "Cannot create allocation with invalid name 'a b'"},
		{"unknown field", "1.115", `{"resource_class": "x", "foo": 1}`, 400, "Schema error: Additional properties are not allowed ('foo' was unexpected)"},
		{"node before 1.58", "1.57", `{"node": "x"}`, 400, "Schema error: Additional properties are not allowed ('node' was unexpected)"},
		{"owner before 1.60", "1.59", `{"resource_class": "x", "owner": "p"}`, 406, "Request not acceptable."},
		{"long resource class", "1.115", `{"resource_class": "` + strings.Repeat("a", 81) + `"}`, 400, "Schema error: '" + strings.Repeat("a", 81) + "' is too long"},
		{"bad trait", "1.115", `{"resource_class": "x", "traits": ["foo"]}`, 400, "Schema error: 'foo' is not valid under any of the given schemas. Possible root cause: 'foo' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{"not an object", "1.115", `[]`, 400, "Schema error: [] is not of type 'object'"},
		{"unknown candidate", "1.115", `{"resource_class": "x", "candidate_nodes": ["nope", "` + n.UUID + `"]}`, 400, "Nodes cannot be found: nope"},
		{"unknown backfill node", "1.115", `{"node": "nope"}`, 400, "Node nope could not be found."},
		{"bad uuid", "1.115", `{"resource_class": "x", "uuid": "abc"}`, 400, "Expected UUID for uuid: abc"},
		{"too old", "1.51", `{"resource_class": "x"}`, 405, "The API version does not allow allocations"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantFault(t, e.do("POST", "/v1/allocations", c.version, c.body), c.status, c.msg)
		})
	}
	if calls := e.cond.Calls(); len(calls) != 0 {
		t.Fatalf("refused creations reached the conductor: %v", calls)
	}
}

func TestBackfill(t *testing.T) {
	e := newEnv(t, nil)
	inst := "2a2e7aa2-6a2e-4d9f-a3c0-5f3d2a8c8b11"
	n := e.node(states.Active, nil, rc("bf"), func(n *model.Node) { n.InstanceUUID = &inst })
	r := e.do("POST", "/v1/allocations", "1.58", fmt.Sprintf(`{"node": %q}`, n.UUID))
	if r.Status != http.StatusCreated {
		t.Fatalf("backfill: %d %s", r.Status, r.Body)
	}
	doc := r.JSON(t)
	if doc["uuid"] != inst || doc["state"] != "active" || doc["resource_class"] != "bf" || doc["node_uuid"] != n.UUID {
		t.Fatalf("backfilled %v", doc)
	}
}

func TestListShowPatchDelete(t *testing.T) {
	e := newEnv(t, nil)
	var uuids []string
	for i := range 3 {
		r := e.do("POST", "/v1/allocations", "1.115", fmt.Sprintf(`{"resource_class": "none", "name": "al-%d", "owner": "proj%d"}`, i, i%2))
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		uuids = append(uuids, r.JSON(t)["uuid"].(string))
	}
	for _, u := range uuids {
		if doc := e.wait(u); doc["state"] != "error" {
			t.Fatalf("no nodes: %v", doc)
		}
	}
	list := e.do("GET", "/v1/allocations?limit=2", "1.115", "").JSON(t)
	items := list["allocations"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["uuid"] != uuids[0] {
		t.Fatalf("page %v", list)
	}
	wantNext := fmt.Sprintf("http://127.0.0.1:6385/v1/allocations?sort_key=id&sort_dir=asc&limit=2&marker=%s", uuids[1])
	if list["next"] != wantNext {
		t.Fatalf("next %v want %v", list["next"], wantNext)
	}
	if got := e.do("GET", "/v1/allocations?owner=proj1", "1.115", "").JSON(t)["allocations"].([]any); len(got) != 1 {
		t.Fatalf("owner filter %v", got)
	}
	if got := e.do("GET", "/v1/allocations?state=error&fields=uuid", "1.115", "").JSON(t)["allocations"].([]any); len(got) != 3 || len(got[0].(map[string]any)) != 2 {
		t.Fatalf("fields %v", got)
	}
	if doc := e.do("GET", "/v1/allocations/"+uuids[0], "1.59", "").JSON(t); doc["name"] != "al-0" {
		t.Fatalf("show at 1.59: %v", doc)
	} else if _, ok := doc["owner"]; ok {
		t.Fatalf("owner at 1.59: %v", doc)
	}
	if doc := e.do("GET", "/v1/allocations/"+uuids[0], "1.60", "").JSON(t); doc["owner"] != "proj0" {
		t.Fatalf("owner at 1.60: %v", doc)
	}
	r := e.do("PATCH", "/v1/allocations/al-0", "1.57", `[{"op": "replace", "path": "/name", "value": "renamed"}, {"op": "add", "path": "/extra/k", "value": "v"}]`)
	if r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	if doc := r.JSON(t); doc["name"] != "renamed" || doc["extra"].(map[string]any)["k"] != "v" {
		t.Fatalf("patched %v", doc)
	}
	r = e.do("PATCH", "/v1/allocations/renamed", "1.115", `[{"op": "replace", "path": "/name", "value": "al-1"}]`)
	wantFault(t, r, 409, "An allocation with name al-1 already exists.")
	r = e.do("DELETE", "/v1/allocations/renamed", "1.52", "")
	if r.Status != 204 || len(r.Body) != 0 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	wantFault(t, e.do("GET", "/v1/allocations/"+uuids[0], "1.115", ""), 404, "Allocation "+uuids[0]+" could not be found.")
}

func TestReadAndPatchErrors(t *testing.T) {
	e := newEnv(t, nil)
	n := e.node(states.Available, nil)
	r := e.do("POST", "/v1/allocations", "1.115", `{"resource_class": "none", "name": "al"}`)
	u := r.JSON(t)["uuid"].(string)
	e.wait(u)
	cases := []struct {
		name, method, path, version, body string
		status                            int
		msg                               string
	}{
		{"list too old", "GET", "/v1/allocations", "1.51", "", 404, "The API version does not allow allocations"},
		{"list unknown arg", "GET", "/v1/allocations?foo=1", "1.115", "", 400, "Unexpected arguments: foo"},
		{"list bad limit", "GET", "/v1/allocations?limit=x", "1.115", "", 400, "Expected an integer for limit: x"},
		{"list bad field", "GET", "/v1/allocations?fields=foo", "1.115", "", 400, "Schema error: 'foo' is not one of ['candidate_nodes', 'created_at', 'extra', 'last_error', 'links', 'name', 'node_uuid', 'resource_class', 'state', 'traits', 'updated_at', 'uuid', 'owner']"},
		{"list owner before 1.60", "GET", "/v1/allocations?owner=x", "1.59", "", 406, "Request not acceptable."},
		{"list bad marker", "GET", "/v1/allocations?marker=abc", "1.115", "", 400, "Schema error: 'abc' is not a 'uuid'"},
		{"list unknown marker", "GET", "/v1/allocations?marker=" + n.UUID, "1.115", "", 404, "Allocation " + n.UUID + " could not be found."},
		{"list bad sort key", "GET", "/v1/allocations?sort_key=traits", "1.115", "", 400, "The sort_key value traits is an invalid field for sorting"},
		{"list bad sort dir", "GET", "/v1/allocations?sort_dir=up", "1.115", "", 400, "Schema error: 'up' is not one of ['asc', 'desc']"},
		{"list unknown node", "GET", "/v1/allocations?node=nope", "1.115", "", 400, "Node nope could not be found."},
		{"show bad ident", "GET", "/v1/allocations/a%20b", "1.115", "", 400, "Expected a logical name or UUID but received a b."},
		{"show unknown", "GET", "/v1/allocations/nope", "1.115", "", 404, "Allocation nope could not be found."},
		{"node allocation none", "GET", "/v1/nodes/" + n.UUID + "/allocation", "1.115", "", 404, "Allocation for node " + n.UUID + " was not found"},
		{"node allocation unknown node", "GET", "/v1/nodes/nope/allocation", "1.115", "", 400, "Node nope could not be found."},
		{"node allocation bad field", "GET", "/v1/nodes/" + n.UUID + "/allocation?fields=foo", "1.115", "", 404, "Allocation for node " + n.UUID + " was not found"},
		{"node delete none", "DELETE", "/v1/nodes/" + n.UUID + "/allocation", "1.115", "", 404, "Allocation for node " + n.UUID + " was not found"},
		{"node delete unknown node", "DELETE", "/v1/nodes/nope/allocation", "1.115", "", 404, "Node nope could not be found."},
		{"patch too old", "PATCH", "/v1/allocations/al", "1.56", `[]`, 405, "The API version does not allow updating allocations"},
		{"patch state", "PATCH", "/v1/allocations/al", "1.115", `[{"op": "replace", "path": "/state", "value": "active"}]`, 400, "Cannot patch /state. Only the following can be updated: name, extra"},
		{"patch bad op", "PATCH", "/v1/allocations/al", "1.115", `[{"op": "move", "path": "/name"}]`, 400, "Schema error: 'move' is not one of ['add', 'replace', 'remove']"},
		{"patch bad name", "PATCH", "/v1/allocations/al", "1.115", `[{"op": "replace", "path": "/name", "value": "a b"}]`, 400, "Cannot update allocation with invalid name 'a b'"},
		{"patch extra not object", "PATCH", "/v1/allocations/al", "1.115", `[{"op": "replace", "path": "/extra", "value": "s"}]`, 400, "Schema error for patch: 's' is not of type 'object', 'null'"},
		{"delete unknown", "DELETE", "/v1/allocations/nope", "1.115", "", 404, "Allocation nope could not be found."},
		{"delete too old", "DELETE", "/v1/allocations/al", "1.51", "", 405, "The API version does not allow allocations"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantFault(t, e.do(c.method, c.path, c.version, c.body), c.status, c.msg)
		})
	}
}

func TestDeleteRefusedForActiveNode(t *testing.T) {
	e := newEnv(t, nil)
	n := e.node(states.Available, nil, rc("del"))
	u := e.do("POST", "/v1/allocations", "1.115", `{"resource_class": "del"}`).JSON(t)["uuid"].(string)
	e.wait(u)
	cur := e.get(n.UUID)
	cur.ProvisionState = states.Active
	if _, err := e.s.UpdateNode(t.Context(), cur, "provision_state"); err != nil {
		t.Fatal(err)
	}
	r := e.do("DELETE", "/v1/nodes/"+n.UUID+"/allocation", "1.115", "")
	wantFault(t, r, 409, fmt.Sprintf("Cannot remove allocation %s for node %s, because the node is active (and maintenance mode is off)", u, n.UUID))
}
