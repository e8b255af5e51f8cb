package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gopkg.in/yaml.v3"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/authz"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/rpc/ringmgr"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/migrations"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// The RBAC suites of upstream's test_acl.py replayed against the handlers
// this binary serves, with the harness fixtures.json describes: identity
// from the persona headers (keystonemiddleware's token check mocked away),
// the seed rows of the suite's run, and no conductor, so a write the
// policy allows ends in 503.

type rbacFixtures struct {
	Factories map[string]struct {
		Defaults map[string]any `json:"defaults"`
		Left     []string       `json:"left_to_database_when_not_given"`
	} `json:"factories"`
	Suites map[string]struct {
		Runs []struct {
			Class     string `json:"class"`
			Overrides []struct {
				Option string `json:"option"`
				Value  any    `json:"value"`
				Group  string `json:"group"`
			} `json:"config_overrides"`
			SeedRows []struct {
				Var     *string        `json:"var"`
				Factory string         `json:"factory"`
				Args    map[string]any `json:"args"`
			} `json:"seed_rows"`
			DBUpdates []struct {
				Call string `json:"call"`
				Args []any  `json:"args"`
			} `json:"db_updates"`
			FormatData map[string]any `json:"format_data"`
		} `json:"runs"`
	} `json:"suites"`
}

type rbacCase struct {
	Name               string
	Path               string            `yaml:"path"`
	Method             string            `yaml:"method"`
	Headers            map[string]string `yaml:"headers"`
	Body               any               `yaml:"body"`
	AssertStatus       *int              `yaml:"assert_status"`
	Deprecated         bool              `yaml:"deprecated"`
	SkipReason         string            `yaml:"skip_reason"`
	AssertDictContains map[string]any    `yaml:"assert_dict_contains"`
	AssertListLength   map[string]int    `yaml:"assert_list_length"`
	SelfManageNodes    *bool             `yaml:"self_manage_nodes"`
	EnableService      bool              `yaml:"enable_service_project"`
	ServiceProject     string            `yaml:"service_project"`
}

// rbacKnownFailures are the cases this build still answers differently
// from upstream, with why. The replay checks each still fails, so a fix
// has to remove its entry.
var rbacKnownFailures = map[string]map[string]string{}

func TestRBACBasic(t *testing.T) { replayRBAC(t, "test_acl_basic.yaml", "") }

func TestRBACProjectScoped(t *testing.T) { replayRBAC(t, "test_rbac_project_scoped.yaml", "") }

func TestRBACSystemScoped(t *testing.T) { replayRBAC(t, "test_rbac_system_scoped.yaml", "") }

// TestRBACSelfOwnedNodeCreate covers what the suites do not: a project
// admin's node is its project's, another owner is refused with
// upstream's 400, and a system scoped admin keeps the owner it asks for.
// The node reaching the (absent) conductor shows the owner.
func TestRBACSelfOwnedNodeCreate(t *testing.T) {
	template := filepath.Join(t.TempDir(), "seed.sqlite")
	seedRBAC(t, template, rbacFixtures{}, nil, nil)
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"DEFAULT":     {"auth_strategy": "keystone"},
		"oslo_policy": {"enforce_new_defaults": "true"},
	}})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	var created *model.Node
	h, closeDB := rbacHandler(t, template, cfg, func(n *model.Node) { created = n })
	defer closeDB()
	project := map[string]string{"X-Roles": "admin,member,reader", "X-Project-Id": "p1"}
	system := map[string]string{"X-Roles": "admin,member,reader", "OpenStack-System-Scope": "all"}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		body    string
		status  int
		want    string
		owner   string
	}{
		{"project admin owns its node", project, `{"driver": "fake-hardware"}`, 503, "", "p1"},
		{"project admin names its project", project, `{"driver": "fake-hardware", "owner": "p1"}`, 503, "", "p1"},
		{"project admin names another owner", project, `{"driver": "fake-hardware", "owner": "p2"}`, 400,
			"Cannot create a node as a project scoped admin with an owner other than your own project.", ""},
		{"system admin keeps the owner", system, `{"driver": "fake-hardware", "owner": "p2"}`, 503, "", "p2"},
		{"system admin without owner", system, `{"driver": "fake-hardware"}`, 503, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created = nil
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/v1/nodes", strings.NewReader(tc.body))
			req.Header.Set(microversion.HeaderLegacy, microversion.Default.Max.String())
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%d %s, want %d with %q", rec.Code, truncateBody(rec.Body.Bytes()), tc.status, tc.want)
			}
			if tc.status == http.StatusServiceUnavailable && (created == nil || model.Deref(created.Owner) != tc.owner) {
				t.Errorf("node sent to the conductor %+v, want owner %q", created, tc.owner)
			}
		})
	}
}

func replayRBAC(t *testing.T, suite, class string) {
	var fx rbacFixtures
	spectest.LoadJSON(t, "ironic/api/rbac/fixtures.json", &fx)
	cases := loadRBACCases(t, "ironic/api/rbac/"+suite)
	s, ok := fx.Suites[suite]
	if !ok || len(s.Runs) == 0 {
		t.Fatalf("fixtures.json has no run of %s", suite)
	}
	run := s.Runs[0]
	for _, r := range s.Runs {
		if r.Class == class {
			run = r
		}
	}
	overrides := map[string]map[string]string{
		"DEFAULT": {"auth_strategy": "keystone", "debug_tracebacks_in_api": "true"},
	}
	for _, o := range run.Overrides {
		if overrides[o.Group] == nil {
			overrides[o.Group] = map[string]string{}
		}
		overrides[o.Group][o.Option] = fmt.Sprint(o.Value)
	}
	if overrides["oslo_policy"] == nil {
		// oslo.policy >= 6 (which Ironic requires) enforces the new
		// defaults unless told otherwise.
		overrides["oslo_policy"] = map[string]string{"enforce_new_defaults": "true"}
	}

	// One seeded database, copied for each case, as each upstream test
	// starts from the same rows.
	template := filepath.Join(t.TempDir(), "seed.sqlite")
	vars := seedRBAC(t, template, fx, run.SeedRows, run.DBUpdates)
	format := map[string]string{}
	for k, v := range run.FormatData {
		format[k] = fmt.Sprint(evalRBAC(t, v, vars))
	}

	known := rbacKnownFailures[suite]
	for name := range known {
		if !slices.ContainsFunc(cases, func(c rbacCase) bool { return c.Name == name }) {
			t.Errorf("rbacKnownFailures lists %s, which %s does not have", name, suite)
		}
	}
	var passed, skipped, failedListed int
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.SkipReason != "" {
				skipped++
				t.Skip(c.SkipReason)
			}
			problem := runRBACCase(t, template, overrides, format, c)
			reason, listed := known[c.Name]
			switch {
			case listed && problem == "":
				t.Errorf("passes now: remove it from rbacKnownFailures (%s)", reason)
			case listed:
				failedListed++
				t.Logf("known failure (%s): %s", reason, problem)
			case problem != "":
				t.Error(problem)
			default:
				passed++
			}
		})
	}
	t.Logf("%s: %d cases, %d passed, %d known failures, %d skipped by upstream", suite, len(cases), passed, failedListed, skipped)
}

func loadRBACCases(t *testing.T, rel string) []rbacCase {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(spectest.ReadFile(t, rel), &doc); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	m := doc.Content[0]
	var out []rbacCase
	for i := 0; i+1 < len(m.Content); i += 2 {
		var c rbacCase
		if err := m.Content[i+1].Decode(&c); err != nil {
			t.Fatalf("%s: case %s: %v", rel, m.Content[i].Value, err)
		}
		if c.Path == "" {
			continue // the values: entry that only holds anchors
		}
		c.Name = m.Content[i].Value
		out = append(out, c)
	}
	return out
}

var pyFormatField = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// pyFormat is str.format with named fields only (all the suites use).
func pyFormat(t *testing.T, s string, data map[string]string) string {
	return pyFormatField.ReplaceAllStringFunc(s, func(f string) string {
		v, ok := data[f[1:len(f)-1]]
		if !ok {
			t.Fatalf("format %q: no value for %s", s, f)
		}
		return v
	})
}

func runRBACCase(t *testing.T, template string, overrides map[string]map[string]string, format map[string]string, c rbacCase) string {
	ov := map[string]map[string]string{}
	for g, m := range overrides {
		ov[g] = map[string]string{}
		for k, v := range m {
			ov[g][k] = v
		}
	}
	if c.SelfManageNodes != nil && !*c.SelfManageNodes {
		ov["api"] = map[string]string{"project_admin_can_manage_own_nodes": "false"}
	}
	if c.EnableService {
		ov["DEFAULT"]["rbac_service_role_elevated_access"] = "true"
	}
	if c.ServiceProject != "" && c.ServiceProject != "service" {
		ov["DEFAULT"]["rbac_service_project_name"] = c.ServiceProject
	}
	cfg, err := config.Load(config.LoadOptions{Overrides: ov})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	h, closeDB := rbacHandler(t, template, cfg, nil)
	defer closeDB()

	method := strings.ToUpper(c.Method)
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if c.Body != nil && method != http.MethodGet && method != http.MethodDelete {
		b, err := json.Marshal(c.Body)
		if err != nil {
			t.Fatalf("body: %v", err)
		}
		body = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, "http://127.0.0.1"+pyFormat(t, c.Path, format), body)
	req.Header.Set(microversion.HeaderLegacy, microversion.Default.Max.String())
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.Headers {
		req.Header.Set(k, pyFormat(t, v, format))
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	got := rec.Code
	if c.AssertStatus == nil {
		return "case has no assert_status"
	}
	if got != *c.AssertStatus {
		return fmt.Sprintf("%s %s: status %d, want %d: %s", method, req.URL.Path, got, *c.AssertStatus, truncateBody(rec.Body.Bytes()))
	}
	var doc map[string]any
	if len(c.AssertDictContains) > 0 || len(c.AssertListLength) > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			return fmt.Sprintf("response is not a JSON object: %v", err)
		}
	}
	for k, want := range c.AssertDictContains {
		v, ok := doc[k]
		if !ok {
			return fmt.Sprintf("response lacks %q", k)
		}
		switch w := want.(type) {
		case nil:
			if v != nil {
				return fmt.Sprintf("%s = %v, want null", k, v)
			}
		case string:
			if w == "None" {
				if v != nil {
					return fmt.Sprintf("%s = %v, want null", k, v)
				}
			} else if s, _ := v.(string); s != pyFormat(t, w, format) {
				return fmt.Sprintf("%s = %#v, want %q", k, v, pyFormat(t, w, format))
			}
		default:
			if !sameJSON(w, v) {
				return fmt.Sprintf("%s = %#v, want %#v", k, v, w)
			}
		}
	}
	for root, n := range c.AssertListLength {
		items, ok := doc[root].([]any)
		if !ok {
			return fmt.Sprintf("%s is not a list", root)
		}
		if len(items) != n {
			return fmt.Sprintf("%s has %d items, want %d", root, len(items), n)
		}
	}
	return ""
}

func truncateBody(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	var x, y any
	_ = json.Unmarshal(ja, &x)
	_ = json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y)
}

// noConductor is the harness's ConductorAPI.get_topic_for and
// get_random_topic mocked to raise TemporaryFailure; the driver lookup is
// the real one, which finds no conductor.
type noConductor struct {
	*rpc.Router
	// observe, when set, sees each node a topic is asked for.
	observe func(*model.Node)
}

func (c noConductor) GetTopicFor(_ context.Context, n *model.Node) (string, error) {
	if c.observe != nil {
		c.observe(n)
	}
	return "", errs.TemporaryFailure()
}

func (noConductor) GetConductorFor(context.Context, *model.Node) (string, error) {
	return "", errs.TemporaryFailure()
}

func (noConductor) GetRandomTopic(context.Context) (string, error) {
	return "", errs.TemporaryFailure()
}

// headerAuth is the harness's keystonemiddleware with process_request
// mocked out: the context comes from the identity headers.
type headerAuth struct{}

func (headerAuth) Authenticate(r *http.Request) (*auth.Context, error) {
	c := auth.FromHeaders(r.Header)
	c.Strategy = auth.StrategyKeystone
	return c, nil
}

func rbacHandler(t *testing.T, template string, cfg *config.Config, observe func(*model.Node)) (http.Handler, func()) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ironic.sqlite")
	b, err := os.ReadFile(template)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sqldb.Open(ctx, "sqlite:///"+file)
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	st := store.New(db)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	router := rpc.NewRouter(rpc.RouterOptions{
		Rings:            ringmgr.New(st, ringmgr.Options{PartitionExponent: 5, HeartbeatTimeout: time.Minute}),
		Conductors:       st,
		HeartbeatTimeout: time.Minute,
		Host:             "rbac-test",
	})
	az, err := authz.New(cfg)
	if err != nil {
		t.Fatalf("authz: %v", err)
	}
	// Every topic lookup fails first, so the conductor is never called.
	var cond rpc.ConductorAPI
	h := apitest.New(t, api.Deps{Config: cfg, Logger: log, Handlers: Handlers(st, cond, noConductor{router, observe}, cfg, log, az),
		Authenticate: headerAuth{}, Authorize: az.Route})
	return h, func() { _ = db.Close() }
}

// seedRBAC creates the suite's rows in a new database at path and returns
// them by variable name, as JSON objects with the stored values.
func seedRBAC(t *testing.T, path string, fx rbacFixtures, rows []struct {
	Var     *string        `json:"var"`
	Factory string         `json:"factory"`
	Args    map[string]any `json:"args"`
}, updates []struct {
	Call string `json:"call"`
	Args []any  `json:"args"`
}) map[string]map[string]any {
	t.Helper()
	ctx := context.Background()
	db, err := sqldb.Open(ctx, "sqlite:///"+path)
	if err != nil {
		t.Fatalf("open seed database: %v", err)
	}
	defer db.Close()
	if err := migrations.Upgrade(ctx, db); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	st := store.New(db)
	vars := map[string]map[string]any{}
	usedUUID := map[string]bool{}
	// The store assigns ids; a row created with an explicit id is found
	// again by the id the fixture gave it.
	givenIDs := map[string]map[int64]int64{}
	for _, row := range rows {
		name := strings.TrimPrefix(row.Factory, "create_test_")
		f, ok := fx.Factories[name]
		if !ok {
			t.Fatalf("no factory %s", name)
		}
		fields := map[string]any{}
		for k, v := range f.Defaults {
			if m, isMap := v.(map[string]any); isMap && m["expr"] != nil {
				if sub := exprSubRows.FindStringSubmatch(m["expr"].(string)); sub != nil {
					fields[k] = []any{factoryDefaults(t, fx, sub[1])}
				}
				continue
			}
			fields[k] = v
		}
		for _, k := range f.Left {
			delete(fields, k)
		}
		for k, v := range row.Args {
			fields[k] = evalRBAC(t, v, vars)
		}
		if _, given := row.Args["uuid"]; !given {
			if u, ok := fields["uuid"].(string); !ok || usedUUID[u] {
				fields["uuid"] = uuid.NewString()
			}
		}
		if u, ok := fields["uuid"].(string); ok {
			usedUUID[u] = true
		}
		created := createRBACRow(t, ctx, st, name, fields)
		if given, ok := row.Args["id"]; ok {
			if givenIDs[name] == nil {
				givenIDs[name] = map[int64]int64{}
			}
			givenIDs[name][toInt64(given)] = toInt64(created["id"])
		}
		if row.Var != nil {
			vars[*row.Var] = created
		}
	}
	for _, u := range updates {
		if u.Call != "dbapi.update_allocation" || len(u.Args) != 2 {
			t.Fatalf("unsupported seed update %s", u.Call)
		}
		id := toInt64(evalRBAC(t, u.Args[0], vars))
		if actual, ok := givenIDs["allocation"][id]; ok {
			id = actual
		}
		a, err := st.GetAllocationByID(ctx, id)
		if err != nil {
			t.Fatalf("seed update: %v", err)
		}
		set, _ := evalRBAC(t, u.Args[1], vars).(map[string]any)
		nid := toInt64(set["node_id"])
		if actual, ok := givenIDs["node"][nid]; ok {
			nid = actual
		}
		a.NodeID = &nid
		if _, err := st.UpdateAllocation(ctx, a, "node_id"); err != nil {
			t.Fatalf("seed update: %v", err)
		}
	}
	return vars
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}

var (
	exprItem = regexp.MustCompile(`^([a-z_]+)(?:\['([a-z_]+)'\]|\.([a-z_]+))$`)
	// exprSubRows is a default made of one row of another factory, as a
	// runbook's steps are.
	exprSubRows = regexp.MustCompile(`^\[get_test_([a-z_]+)\(.*\)\]$`)
	exprDict    = regexp.MustCompile(`^dict\(([a-z_]+)=(.+)\)$`)
	exprLiteral = regexp.MustCompile(`^\{'([a-z_]+)': ([a-z_]+)\}$`)
)

// rbacHarnessLocals are the local variables of the system-scoped and
// legacy harness's _create_test_data that fixtures.json names in its
// expressions instead of resolving.
var rbacHarnessLocals = map[string]any{
	"fake_vif_port_id":  "ee21d58f-5de2-4956-85ff-33935ea1ca00",
	"allocated_node_id": 31,
}

// factoryDefaults is the row get_test_<name>() builds with no arguments;
// its link to the parent is the store's to set.
func factoryDefaults(t *testing.T, fx rbacFixtures, name string) map[string]any {
	t.Helper()
	f, ok := fx.Factories[name]
	if !ok {
		t.Fatalf("no factory %s", name)
	}
	row := map[string]any{}
	for k, v := range f.Defaults {
		if m, isMap := v.(map[string]any); !isMap || m["expr"] == nil {
			row[k] = v
		}
	}
	return row
}

// evalRBAC resolves the {"expr": ...} values of fixtures.json: a seeded
// row, one of its fields, or dict(key=field).
func evalRBAC(t *testing.T, v any, vars map[string]map[string]any) any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	e, ok := m["expr"].(string)
	if !ok {
		return v
	}
	if row, ok := vars[e]; ok {
		return row
	}
	if v, ok := rbacHarnessLocals[e]; ok {
		return v
	}
	if g := exprLiteral.FindStringSubmatch(e); g != nil {
		return map[string]any{g[1]: evalRBAC(t, map[string]any{"expr": g[2]}, vars)}
	}
	if g := exprDict.FindStringSubmatch(e); g != nil {
		return map[string]any{g[1]: evalRBAC(t, map[string]any{"expr": g[2]}, vars)}
	}
	g := exprItem.FindStringSubmatch(e)
	if g == nil {
		t.Fatalf("unsupported fixture expression %q", e)
	}
	row, ok := vars[g[1]]
	if !ok {
		t.Fatalf("fixture expression %q: no row %s", e, g[1])
	}
	field := g[2] + g[3]
	return row[field]
}

func decodeRBAC(t *testing.T, fields map[string]any, into any) {
	t.Helper()
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("seed row %v: %v", fields, err)
	}
}

func createRBACRow(t *testing.T, ctx context.Context, st store.Store, factory string, fields map[string]any) map[string]any {
	t.Helper()
	var out any
	var err error
	switch factory {
	case "node":
		var n model.Node
		decodeRBAC(t, fields, &n)
		out, err = st.CreateNode(ctx, &n)
	case "port":
		var p model.Port
		decodeRBAC(t, fields, &p)
		out, err = st.CreatePort(ctx, &p)
	case "portgroup":
		var p model.Portgroup
		decodeRBAC(t, fields, &p)
		out, err = st.CreatePortgroup(ctx, &p)
	case "volume_target":
		var v model.VolumeTarget
		decodeRBAC(t, fields, &v)
		out, err = st.CreateVolumeTarget(ctx, &v)
	case "volume_connector":
		var v model.VolumeConnector
		decodeRBAC(t, fields, &v)
		out, err = st.CreateVolumeConnector(ctx, &v)
	case "allocation":
		var a model.Allocation
		decodeRBAC(t, fields, &a)
		out, err = st.CreateAllocation(ctx, &a)
	case "runbook":
		var r model.Runbook
		decodeRBAC(t, fields, &r)
		out, err = st.CreateRunbook(ctx, &r)
	case "history":
		var h model.NodeHistory
		decodeRBAC(t, fields, &h)
		out, err = st.CreateNodeHistory(ctx, &h)
	case "inventory":
		var i model.NodeInventory
		decodeRBAC(t, fields, &i)
		out, err = st.CreateNodeInventory(ctx, &i)
	case "chassis":
		var c model.Chassis
		decodeRBAC(t, fields, &c)
		out, err = st.CreateChassis(ctx, &c)
	case "deploy_template":
		var d model.DeployTemplate
		decodeRBAC(t, fields, &d)
		out, err = st.CreateDeployTemplate(ctx, &d)
	case "conductor":
		// Upstream's row lists drivers but has no hardware interfaces, so
		// a driver lookup still finds no conductor; the store derives the
		// shown drivers from the interfaces, hence none here.
		host, _ := fields["hostname"].(string)
		group, _ := fields["conductor_group"].(string)
		out, err = st.RegisterConductor(ctx, host, group, nil, false)
	case "bios_setting":
		var b model.BIOSSetting
		decodeRBAC(t, fields, &b)
		var got []model.BIOSSetting
		got, err = st.CreateBIOSSettings(ctx, b.NodeID, []model.BIOSSetting{b}, b.Version)
		if err == nil {
			out = got[0]
		}
	case "node_trait":
		trait, _ := fields["trait"].(string)
		out, err = st.AddNodeTrait(ctx, toInt64(fields["node_id"]), trait, "")
	case "firmware_component":
		var f model.FirmwareComponent
		decodeRBAC(t, fields, &f)
		out, err = st.CreateFirmwareComponent(ctx, &f)
	default:
		t.Fatalf("seed factory %s is not supported by the replay", factory)
	}
	if err != nil {
		t.Fatalf("seed %s: %v", factory, err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
