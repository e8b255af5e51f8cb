package node

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/testing/allocbudget"
)

// The list pages are written by listrender.go; the single-node answers by
// convert and api.WriteJSON, the reference. These tests hold a page to
// the bytes convert gives for each of its nodes, on fuzzed nodes, at every
// microversion, for the list, detail and field forms, under three
// policies.

const policyHeader = "X-Test-Policy"

// testPolicies are the callers: an admin who sees everything, a
// project-scoped caller below the filter threshold (rules pass for nodes
// its project owns; secrets masked; listings limited to its project), and
// one who is granted nothing.
var testPolicies = []string{"admin", "project", "none"}

const testProject = "proj-a"

func testShow(r *http.Request, rule string, n *model.Node) bool {
	switch r.Header.Get(policyHeader) {
	case "admin":
		return true
	case "project":
		switch rule {
		case "show_password", "show_instance_secrets", "baremetal:node:get:filter_threshold":
			return false
		}
		return n != nil && n.Owner != nil && *n.Owner == testProject
	}
	return false
}

func testProjectOf(r *http.Request) *string {
	if r.Header.Get(policyHeader) == "project" {
		return new(testProject)
	}
	return nil
}

// fuzzNode fills n's fields with random values of every shape the
// renderers distinguish.
func fuzzNode(r *rand.Rand, n *model.Node, i int, chassisID, allocationID int64) {
	pick := func(vals ...string) string { return vals[r.IntN(len(vals))] }
	opt := func(vals ...string) *string {
		if r.IntN(3) == 0 {
			return nil
		}
		return new(pick(vals...))
	}
	optBool := func() *bool {
		if r.IntN(3) == 0 {
			return nil
		}
		return new(r.IntN(2) == 0)
	}
	optTime := func() *time.Time {
		if r.IntN(3) == 0 {
			return nil
		}
		t := time.Date(2026, 1, 1+r.IntN(300), r.IntN(24), r.IntN(60), r.IntN(60), 0, time.UTC)
		if r.IntN(2) == 0 {
			t = t.Add(time.Duration(r.IntN(1000000)) * time.Microsecond)
		}
		return &t
	}
	texts := []string{"", "plain", "password=hunter2 and more", "é ü \U0001F600", "<b>&amp;</b>", "del\x7f ctl\x01",
		"line\nbreak\t\"quoted\" \\", "\u2028", "token: abc"}
	provision := states.Provision().States()
	n.Name = opt(fmt.Sprintf("node-%d", i), fmt.Sprintf("nöde-%d-\U0001F600", i))
	n.InstanceUUID = opt(fmt.Sprintf("1be26c0b-03f2-4d2e-ae87-%012d", i))
	n.InstanceName = opt(texts...)
	n.PowerState = pick("", states.PowerOn, states.PowerOff)
	n.TargetPowerState = pick("", states.PowerOn, states.PowerOff)
	n.ProvisionState = provision[r.IntN(len(provision))]
	if r.IntN(4) == 0 {
		n.ProvisionState = pick(states.Available, states.InspectWait)
	}
	n.TargetProvisionState = pick("", states.Active, states.Available)
	n.ProvisionUpdatedAt = optTime()
	n.LastError = opt(texts...)
	n.Reservation = opt("host-a", "hôst")
	n.ConductorGroup = pick("", "group-a")
	n.Maintenance = r.IntN(2) == 0
	n.MaintenanceReason = opt(texts...)
	n.Fault = opt("power failure", "clean failure")
	n.ConsoleEnabled = r.IntN(2) == 0
	n.InspectionFinishedAt = optTime()
	n.InspectionStartedAt = optTime()
	n.AutomatedClean = optBool()
	n.Protected = r.IntN(2) == 0
	n.ProtectedReason = opt(texts...)
	n.Owner = opt(testProject, "proj-b")
	n.Lessee = opt(testProject, "proj-c")
	n.Description = opt(texts...)
	n.ResourceClass = opt("baremetal", "gpü")
	n.BootInterface = pick("", "fake")
	n.RescueInterface = pick("", "fake")
	n.Retired = r.IntN(2) == 0
	n.RetiredReason = opt(texts...)
	n.BootMode = opt("uefi", "bios")
	n.SecureBoot = optBool()
	n.Shard = opt("shard-1", "")
	n.DisablePowerOff = r.IntN(2) == 0
	n.Health = opt("OK", "Critical")
	if r.IntN(3) == 0 {
		n.ChassisID = &chassisID
	}
	if r.IntN(3) == 0 {
		n.AllocationID = &allocationID
	}
	n.DriverInfo = fuzzMap(r, 0)
	n.DriverInternalInfo = fuzzMap(r, 0)
	n.InstanceInfo = fuzzMap(r, 0)
	n.Properties = fuzzMap(r, 0)
	n.Extra = fuzzMap(r, 0)
	n.CleanStep = fuzzMap(r, 1)
	n.DeployStep = fuzzMap(r, 1)
	n.ServiceStep = fuzzMap(r, 1)
	n.RAIDConfig = fuzzMap(r, 1)
	n.TargetRAIDConfig = fuzzMap(r, 1)
	n.NetworkData = fuzzMap(r, 1)
}

var fuzzKeys = []string{"a", "B", "ipmi_password", "Password", "auth_token", "snmp_auth_key", "snmp_priv_key",
	"configdrive", "image_url", "deploy_kernel", "ключ", "\U0001F600", "x<y&z", "del\x7f", "", "SecretThing"}

// fuzzMap is a random JSON object: secrets under secret keys and inside
// strings, unicode, floats Go and Python print differently, nulls,
// nesting; nil at times (a NULL column).
func fuzzMap(r *rand.Rand, depth int) map[string]any {
	if r.IntN(5) == 0 {
		return nil
	}
	m := map[string]any{}
	for range r.IntN(6) {
		m[fuzzKeys[r.IntN(len(fuzzKeys))]] = fuzzValue(r, depth)
	}
	return m
}

func fuzzValue(r *rand.Rand, depth int) any {
	switch r.IntN(9) {
	case 0:
		if depth < 3 {
			return apiutil.EmptyMap(fuzzMap(r, depth+1))
		}
		return nil
	case 1:
		return []any{"password=x", 1.5, nil, map[string]any{"password": "y"}}
	case 2:
		return []float64{0, -1, 623, 1788.5, 1e21, 1e-7, 0.1, 123456789012345678, 3.141592653589793}[r.IntN(9)]
	case 3:
		return r.IntN(2) == 0
	case 4:
		return nil
	}
	return []string{"", "plain", "password=hunter2", "--password s3cr3t", `{"password": "x"}`, "<tag>&amp;",
		"é ü ß", "\U0001F600", "ctl\x01\x1f", "del\x7f", "quote\" back\\ /", "line\nfeed\r\t\b\f", "\u2028",
		"ADMIN_PASS = 'q'", "<password>p</password>", "http://x/image.qcow2"}[r.IntN(16)]
}

// listFixture is an env of fuzzed nodes and the handlers behind it, for
// the reference rendering.
type listFixture struct {
	e *env
	h *handlers
}

func newListFixture(t *testing.T, nodes int) *listFixture {
	t.Helper()
	var deps Deps
	e := newEnvWith(t, func(d *Deps) {
		d.Show = testShow
		d.Project = testProjectOf
		deps = *d
	})
	ctx := context.Background()
	ch, err := e.s.CreateChassis(ctx, &model.Chassis{})
	if err != nil {
		t.Fatal(err)
	}
	al, err := e.s.CreateAllocation(ctx, &model.Allocation{Name: new("alloc"), State: "active", ResourceClass: new("baremetal")})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(29, 1))
	cols := append(slices.DeleteFunc(slices.Clone(objectFields), func(f string) bool { return f == "traits" }),
		"chassis_id", "allocation_id")
	for i := range nodes {
		n, err := e.s.CreateNode(ctx, &model.Node{Driver: "fake-hardware"})
		if err != nil {
			t.Fatal(err)
		}
		fuzzNode(r, n, i, ch.ID, al.ID)
		if _, err := e.s.UpdateNode(ctx, n, cols...); err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		var traits []string
		for _, tr := range []string{"CUSTOM_GOLD", "CUSTOM_Ü", "HW_CPU_X86_AVX2"} {
			if r.IntN(2) == 0 {
				traits = append(traits, tr)
			}
		}
		if _, err := e.s.SetNodeTraits(ctx, n.ID, traits, "1.0"); err != nil {
			t.Fatal(err)
		}
	}
	h := &handlers{Deps: deps}
	if h.Config == nil {
		t.Fatal("no configuration in the handlers' dependencies")
	}
	return &listFixture{e: e, h: h}
}

// get answers path at minor version v for the caller policy.
func (fx *listFixture) get(path string, v int, policy string) resp {
	req := httptest.NewRequest("GET", "http://127.0.0.1:6385"+path, nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", fmt.Sprintf("1.%d", v))
	req.Header.Set(policyHeader, policy)
	w := httptest.NewRecorder()
	fx.e.h.ServeHTTP(w, req)
	return resp{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

// reference is the page as convert renders it node by node.
func (fx *listFixture) reference(t *testing.T, v int, policy string, fields []string, resource string, limit int, params ...collection.Param) ([]byte, error) {
	t.Helper()
	ctx := context.Background()
	req := httptest.NewRequest("GET", "http://127.0.0.1:6385/", nil)
	req.Header.Set(policyHeader, policy)
	rc := &api.RequestContext{Version: microversion.Version{Major: 1, Minor: v}, PublicURL: "http://127.0.0.1:6385", Config: fx.h.Config}
	nodes, err := fx.h.Store.ListNodes(ctx, store.NodeFilter{Project: fx.h.Project(req)},
		store.ListOptions{Limit: limit, SortKey: "id", SortDir: "asc"})
	if err != nil {
		t.Fatal(err)
	}
	vw := fx.h.view(req)
	items := []*apiutil.Dict{}
	for _, n := range nodes {
		d, err := fx.h.convert(ctx, rc, vw, n, fields)
		if err != nil {
			return nil, err
		}
		items = append(items, d)
	}
	out := apiutil.NewDict()
	out.Set("nodes", items)
	last := ""
	if len(nodes) > 0 {
		last = nodes[len(nodes)-1].UUID
	}
	params = append([]collection.Param{{Key: "sort_key", Value: "id"}, {Key: "sort_dir", Value: "asc"}}, params...)
	if next := collection.Next(rc.PublicURL, resource, len(nodes), limit, last, fields, params...); next != "" {
		out.Set("next", next)
	}
	b, err := api.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return b, nil
}

// pageCase is one request of a page and how convert is asked for it.
type pageCase struct {
	path     string
	fields   []string
	resource string
	limit    int
	params   []collection.Param
}

func pageCases(r *rand.Rand, v microversion.Version) []pageCase {
	cases := []pageCase{
		{path: "/v1/nodes", fields: defaultListFields, resource: "nodes", limit: 1000},
		{path: "/v1/nodes/detail", resource: "nodes/detail", limit: 1000},
		{path: "/v1/nodes/detail?limit=5", resource: "nodes/detail", limit: 5},
	}
	if v.Minor < microversion.Minor8FetchingSubsetOfFields {
		return cases
	}
	allowed := func(fs []string) []string {
		return slices.DeleteFunc(slices.Clone(fs), func(f string) bool { return !microversion.FieldAllowed(f, v) })
	}
	nova := allowed(strings.Split(novaFields, ","))
	candidates := allowed(append(append([]string{"uuid", "created_at", "updated_at"}, objectFields...), apiFields...))
	var random []string
	for _, f := range candidates {
		if r.IntN(4) == 0 {
			random = append(random, f)
		}
	}
	if len(random) == 0 {
		random = []string{"uuid"}
	}
	r.Shuffle(len(random), func(i, j int) { random[i], random[j] = random[j], random[i] })
	cases = append(cases,
		pageCase{path: "/v1/nodes?fields=" + strings.Join(nova, ","), fields: nova, resource: "nodes", limit: 1000},
		pageCase{path: "/v1/nodes?limit=4&fields=" + strings.Join(random, ","), fields: random, resource: "nodes", limit: 4},
		pageCase{path: "/v1/nodes?fields=uuid,bogus", fields: []string{"uuid", "bogus"}, resource: "nodes", limit: 1000},
	)
	if collection.DetailAllowed(v) {
		cases = append(cases, pageCase{path: "/v1/nodes?detail=True&limit=6", resource: "nodes", limit: 6,
			params: []collection.Param{{Key: "detail", Value: true}}})
	}
	return cases
}

func TestListPagesMatchConvertAtEveryVersion(t *testing.T) {
	// Under the race detector, which makes this test ten times slower,
	// the page is shorter and each case of a version is asked by one
	// caller in turn: every version still meets every caller.
	rotate := allocbudget.RaceEnabled()
	nodes := 12
	if rotate {
		nodes = 6
	}
	fx := newListFixture(t, nodes)
	r := rand.New(rand.NewPCG(29, 2))
	compared := 0
	for minor := 1; minor <= microversion.MAX.Minor; minor++ {
		v := microversion.Version{Major: 1, Minor: minor}
		for i, c := range pageCases(r, v) {
			for j, policy := range testPolicies {
				if rotate && (minor+i)%len(testPolicies) != j {
					continue
				}
				got := fx.get(c.path, minor, policy)
				want, refErr := fx.reference(t, minor, policy, c.fields, c.resource, c.limit, c.params...)
				if refErr != nil {
					if got.status == http.StatusOK {
						t.Errorf("%s at 1.%d as %s: 200, convert refuses: %v", c.path, minor, policy, refErr)
					}
					continue
				}
				if got.status != http.StatusOK {
					t.Errorf("%s at 1.%d as %s: %d %s", c.path, minor, policy, got.status, got.body)
					continue
				}
				if !bytes.Equal(got.body, want) {
					t.Errorf("%s at 1.%d as %s:\n%s", c.path, minor, policy, firstDifference(got.body, want))
					continue
				}
				compared++
			}
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d pages identical", compared)
}

// firstDifference shows where got leaves want.
func firstDifference(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-150, 0)
	return fmt.Sprintf(" got …%s\nwant …%s", got[from:min(i+150, len(got))], want[from:min(i+150, len(want))])
}
