package webconsole

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/testing/keystone"
)

// nodeTable is a node table of fixed rows; it records the filter it was
// asked with and can fail as a database that is down.
type nodeTable struct {
	nodes  []*model.Node
	err    error
	filter store.NodeFilter
}

// CountFleet gives one count per node, as a GROUP BY over distinct rows
// would; the store's test checks the grouping itself.
func (n *nodeTable) CountFleet(_ context.Context, f store.NodeFilter) ([]store.FleetCount, error) {
	n.filter = f
	if n.err != nil {
		return nil, n.err
	}
	var out []store.FleetCount
	for _, node := range n.nodes {
		if f.Project != nil && (node.Owner == nil || *node.Owner != *f.Project) {
			continue
		}
		out = append(out, store.FleetCount{
			NodeStateCount: store.NodeStateCount{ProvisionState: node.ProvisionState, PowerState: node.PowerState, Maintenance: node.Maintenance, Count: 1},
			Fault:          model.Deref(node.Fault), ConductorGroup: node.ConductorGroup,
		})
	}
	return out, nil
}

func newHandler(t *testing.T, o Options) http.Handler {
	t.Helper()
	h, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return h.Mount(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "api", http.StatusTeapot)
	}))
}

func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w
}

// The pages are served with a policy that allows no inline script, no
// other origin and no framing; other paths go to the API.
func TestPagesAndHeaders(t *testing.T) {
	h := newHandler(t, Options{AuthStrategy: auth.StrategyHTTPBasic, Authenticate: auth.NoAuth{}})
	for _, tc := range []struct {
		name, method, path string
		status             int
		contentType        string
	}{
		{"index", "GET", "/openkeel/console/", 200, "text/html"},
		{"script", "GET", "/openkeel/console/console.js", 200, "text/javascript"},
		{"style", "GET", "/openkeel/console/console.css", 200, "text/css"},
		{"config", "GET", "/openkeel/console/config.json", 200, "application/json"},
		{"no prefix slash", "GET", "/openkeel/console", 301, ""},
		{"missing asset", "GET", "/openkeel/console/nope.js", 404, ""},
		{"write", "POST", "/openkeel/console/console.js", 405, ""},
		{"login without keystone", "POST", "/openkeel/console/login", 404, ""},
		{"api", "GET", "/v1/nodes", http.StatusTeapot, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := get(t, h, tc.method, tc.path)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			if tc.contentType != "" && !strings.HasPrefix(w.Header().Get("Content-Type"), tc.contentType) {
				t.Errorf("Content-Type %q, want %s", w.Header().Get("Content-Type"), tc.contentType)
			}
			csp := w.Header().Get("Content-Security-Policy")
			if tc.status == http.StatusTeapot {
				if csp != "" {
					t.Errorf("the API's answer got the console's CSP")
				}
				return
			}
			for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-") {
				t.Errorf("CSP %q allows unsafe sources", csp)
			}
		})
	}
	var cfg consoleConfig
	if err := json.Unmarshal(get(t, h, "GET", "/openkeel/console/config.json").Body.Bytes(), &cfg); err != nil ||
		cfg.AuthStrategy != "http_basic" || cfg.KeystoneLogin {
		t.Errorf("config %+v (%v)", cfg, err)
	}
}

// The script puts data into the page only as text: no markup sinks, no
// inline handlers, nothing evaluated. The CSP would refuse most of these
// anyway; this keeps them out of the source.
func TestAssetsUseNoMarkupSinks(t *testing.T) {
	sinks := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*'on|javascript:`)
	err := fs.WalkDir(assets, "assets", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(path)
		if err != nil {
			return err
		}
		if m := sinks.Find(b); m != nil {
			t.Errorf("%s uses %q", path, m)
		}
		if strings.HasSuffix(path, ".html") && regexp.MustCompile(`<script>|\son[a-z]+=|style=`).Match(b) {
			t.Errorf("%s has inline script, handler or style", path)
		}
		if regexp.MustCompile(`https?://`).Match(b) {
			t.Errorf("%s refers to another origin", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestFleetCounts(t *testing.T) {
	p := func(s string) *string { return &s }
	table := &nodeTable{nodes: []*model.Node{
		{ProvisionState: "active", PowerState: "power on", Owner: p("p1")},
		{ProvisionState: "active", PowerState: "power on", ConductorGroup: "rack2", Owner: p("p2")},
		{ProvisionState: "available", PowerState: "power off", Maintenance: true, Fault: p("power failure"), ConductorGroup: "rack2"},
		{ProvisionState: "enroll"},
	}}
	var project *string
	var refuse error
	fleet := &Fleet{Nodes: table, ListProject: func(*http.Request) (*string, error) { return project, refuse }}
	h := newHandler(t, Options{AuthStrategy: auth.StrategyNoAuth, Authenticate: auth.NoAuth{}, Fleet: fleet})

	w := get(t, h, "GET", FleetPath)
	var v FleetView
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &v) != nil {
		t.Fatalf("fleet: %d %s", w.Code, w.Body)
	}
	if !table.filter.IncludeChildren || table.filter.Project != nil {
		t.Errorf("filter %+v: every node, children included", table.filter)
	}
	if v.Total != 4 || v.ProvisionState["active"] != 2 || v.ProvisionState["enroll"] != 1 || v.PowerState["power on"] != 2 ||
		v.PowerState[""] != 1 || v.Maintenance != 1 || v.Fault["power failure"] != 1 || len(v.Fault) != 1 {
		t.Errorf("counts %+v", v.Counts)
	}
	if len(v.ConductorGroups) != 2 || v.ConductorGroups[0].Name != "" || v.ConductorGroups[0].Total != 2 ||
		v.ConductorGroups[1].Name != "rack2" || v.ConductorGroups[1].Maintenance != 1 || v.ConductorGroups[1].ProvisionState["available"] != 1 {
		t.Errorf("groups %+v", v.ConductorGroups)
	}

	t.Run("project scoped", func(t *testing.T) {
		project = p("p2")
		defer func() { project = nil }()
		var v FleetView
		if w := get(t, h, "GET", FleetPath); w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &v) != nil || v.Total != 1 {
			t.Fatalf("fleet of p2: %d %s", w.Code, w.Body)
		}
	})
	t.Run("refused as the node list", func(t *testing.T) {
		refuse = errs.New(errs.ClassHTTPForbidden, map[string]any{"resource": "baremetal:node:list"})
		defer func() { refuse = nil }()
		w := get(t, h, "GET", FleetPath)
		if w.Code != 403 || !strings.Contains(w.Body.String(), "faultstring") {
			t.Fatalf("refused: %d %s", w.Code, w.Body)
		}
	})
	t.Run("database down", func(t *testing.T) {
		table.err = errors.New("connection refused")
		defer func() { table.err = nil }()
		w := get(t, h, "GET", FleetPath)
		if w.Code != 503 || w.Header().Get("Retry-After") == "" || strings.Contains(w.Body.String(), "connection refused") {
			t.Fatalf("database down: %d %v %s", w.Code, w.Header(), w.Body)
		}
	})
	t.Run("write", func(t *testing.T) {
		if w := get(t, h, "POST", FleetPath); w.Code != 405 {
			t.Fatalf("POST: %d", w.Code)
		}
	})
	t.Run("unauthenticated", func(t *testing.T) {
		users := filepath.Join(t.TempDir(), "htpasswd")
		if err := os.WriteFile(users, []byte("admin:$2y$05$invalidinvalidinvalidinvalidinvalidinvalidinvalidinva\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		basic, err := auth.NewBasicAuth(users)
		if err != nil {
			t.Fatal(err)
		}
		h := newHandler(t, Options{AuthStrategy: auth.StrategyHTTPBasic, Authenticate: basic, Fleet: fleet})
		if w := get(t, h, "GET", FleetPath); w.Code != 401 {
			t.Fatalf("no credentials: %d %s", w.Code, w.Body)
		}
	})
}

func TestKeystoneLogin(t *testing.T) {
	ks := keystone.New(t).Project("demo").User("alice", "s3cret").Grant("alice", "demo", "member")
	login := &Login{IdentityURL: ks.URL() + "/v3"}
	h := newHandler(t, Options{AuthStrategy: auth.StrategyKeystone, Authenticate: auth.NoAuth{}, Login: login})
	post := func(contentType, body string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest("POST", "/openkeel/console/login", strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := post("application/json", `{"username":"alice","password":"s3cret","project":"demo"}`)
	var got loginResponse
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &got) != nil || got.Token == "" || got.ExpiresAt == "" {
		t.Fatalf("login: %d %s", w.Code, w.Body)
	}
	if !ks.TokenValid(got.Token) {
		t.Errorf("token %q not valid at Keystone", got.Token)
	}
	if strings.Contains(w.Body.String(), "s3cret") {
		t.Errorf("password echoed")
	}
	var cfg consoleConfig
	if err := json.Unmarshal(get(t, h, "GET", "/openkeel/console/config.json").Body.Bytes(), &cfg); err != nil || !cfg.KeystoneLogin {
		t.Errorf("config %+v (%v)", cfg, err)
	}
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
	}{
		{"wrong password", "application/json", `{"username":"alice","password":"nope","project":"demo"}`, 401},
		{"another project", "application/json", `{"username":"alice","password":"s3cret","project":"other"}`, 401},
		{"no password", "application/json", `{"username":"alice"}`, 400},
		{"form post from another site", "application/x-www-form-urlencoded", `username=alice&password=s3cret`, 415},
		{"oversized", "application/json", `{"username":"alice","password":"` + strings.Repeat("x", maxLoginBody) + `"}`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := post(tc.contentType, tc.body)
			if w.Code != tc.status {
				t.Fatalf("%d %s, want %d", w.Code, w.Body, tc.status)
			}
			// A refusal is the form's to show, not a browser prompt's.
			if v := w.Header().Get("WWW-Authenticate"); v != "" {
				t.Errorf("WWW-Authenticate %q", v)
			}
		})
	}
	t.Run("identity down", func(t *testing.T) {
		ks.Down()
		defer ks.Up()
		w := post("application/json", `{"username":"alice","password":"s3cret","project":"demo"}`)
		if w.Code != 503 || w.Header().Get("Retry-After") == "" {
			t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
		}
		b, _ := io.ReadAll(w.Body)
		if strings.Contains(string(b), "127.0.0.1") {
			t.Errorf("fault names the identity endpoint: %s", b)
		}
	})
}
