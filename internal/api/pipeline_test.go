package api

import (
	"errors"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/api/middleware"
	"github.com/openkeel/ironic/internal/errs"
)

// rejectAll is an authentication stage that refuses every caller.
type rejectAll struct{}

func (rejectAll) Authenticate(*http.Request) (*middleware.AuthContext, error) {
	return nil, errs.HTTPStatus(http.StatusUnauthorized, "Authentication required")
}

func denyPolicy(*http.Request, *RequestContext) error {
	return errs.New(errs.ClassHTTPForbidden, map[string]any{"resource": "baremetal:node:get"})
}

func TestErrorPrecedence(t *testing.T) {
	var handlerCalled bool
	validating := map[string]HandlerFunc{
		"POST /v1/nodes": func(w http.ResponseWriter, r *http.Request, rc *RequestContext) error {
			handlerCalled = true
			return errs.InvalidParameterValue("bad body")
		},
	}
	big := `{"a": "` + strings.Repeat("x", 1024*1024) + `"}`
	deep := strings.Repeat("[", 26) + strings.Repeat("]", 26)
	for _, tc := range []struct {
		name    string
		deps    Deps
		method  string
		path    string
		version string
		body    string
		want    int
	}{
		{"401 over 413 and 406", Deps{Authenticate: rejectAll{}}, "POST", "/v1/nodes", "9.9", big, 401},
		{"401 over 400 depth", Deps{Authenticate: rejectAll{}}, "POST", "/v1/nodes", "", deep, 401},
		{"401 over 404", Deps{Authenticate: rejectAll{}}, "GET", "/v1/nosuch", "", "", 401},
		{"public route skips auth", Deps{Authenticate: rejectAll{}}, "GET", "/v1", "", "", 200},
		{"413 over 406", Deps{Authorize: AllowAll}, "POST", "/v1/nodes", "9.9", big, 413},
		{"400 depth over 406", Deps{Authorize: AllowAll}, "POST", "/v1/nodes", "1.999", deep, 400},
		{"406 over 404", Deps{Authorize: AllowAll}, "GET", "/v1/nosuch", "1.999", "", 406},
		{"406 over 405", Deps{Authorize: AllowAll}, "PUT", "/v1/nodes", "abc", "", 406},
		{"404 over policy", Deps{Authorize: denyPolicy}, "GET", "/v1/nosuch", "", "", 404},
		{"405 over policy", Deps{Authorize: denyPolicy}, "PUT", "/v1/nodes", "", "", 405},
		{"too old before policy", Deps{Authorize: denyPolicy}, "GET", "/v1/allocations", "1.51", "", 404},
		{"policy before too old after policy", Deps{Authorize: denyPolicy}, "PUT", "/v1/nodes/n1/states/raid", "1.11", "", 403},
		{"policy over validation", Deps{Authorize: denyPolicy, Handlers: validating}, "POST", "/v1/nodes", "", `{}`, 403},
		{"validation last", Deps{Authorize: AllowAll, Handlers: validating}, "POST", "/v1/nodes", "", `{}`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handlerCalled = false
			tc.deps.Logger = quiet
			rec := serve(New(tc.deps), tc.method, tc.path, tc.version, tc.body)
			if rec.Code != tc.want {
				t.Fatalf("%d %s, want %d", rec.Code, rec.Body, tc.want)
			}
			if tc.want == 403 && handlerCalled {
				t.Error("handler ran although the policy refused")
			}
		})
	}
}

func TestRoutingErrors(t *testing.T) {
	h := New(Deps{Logger: quiet, Authorize: AllowAll})
	for _, tc := range []struct {
		name, method, path, version string
		status                      int
		routing                     bool
		text                        string
		allow                       *string
		versioned                   bool
	}{
		{"unknown resource", "GET", "/v1/nosuch", "", 404, true, "", nil, false},
		{"unknown version prefix goes into v1", "GET", "/v2/nodes", "", 404, true, "", nil, false},
		{"unknown sub-resource", "GET", "/v1/nodes/n1/nosuch/x", "", 404, true, "", nil, false},
		{"405 nodes", "PUT", "/v1/nodes", "", 405, true, "", strp("DELETE, GET, PATCH, POST"), false},
		{"405 node", "PUT", "/v1/nodes/n1", "", 405, true, "", strp("DELETE, GET, PATCH, POST"), false},
		{"405 chassis nodes", "PUT", "/v1/chassis/c1/nodes", "", 405, true, "", strp("DELETE, GET, PATCH, POST"), false},
		{"405 drivers", "PATCH", "/v1/drivers", "", 405, true, "", strp("GET"), false},
		{"405 lookup", "DELETE", "/v1/lookup", "latest", 405, true, "", strp("GET"), false},
		{"405 states", "PUT", "/v1/nodes/n1/states", "", 405, true, "", strp("GET"), false},
		{"405 raid", "PATCH", "/v1/nodes/n1/states/raid", "", 405, true, "", strp("GET"), false},
		{"405 maintenance", "GET", "/v1/nodes/n1/maintenance", "", 405, true, "", strp("DELETE, PUT"), false},
		{"405 vifs", "PUT", "/v1/nodes/n1/vifs", "latest", 405, true, "", strp("DELETE, GET, POST"), false},
		{"405 heartbeat", "GET", "/v1/heartbeat/n1", "latest", 405, true, "", strp("POST"), false},
		{"405 boot device via management", "POST", "/v1/nodes/n1/management/boot_device", "", 405, true, "", strp(""), false},
		{"405 traits below 1.37", "PUT", "/v1/nodes/n1/traits", "1.36", 405, true, "", strp("DELETE, GET, PATCH, POST"), false},
		{"POST /v1 inside the handler", "POST", "/v1", "", 405, false, "The server could not comply with the request since it is either malformed or otherwise incorrect.", nil, true},
		{"bad version", "GET", "/v1/nodes", "abc", 406, true, "Invalid value for X-OpenStack-Ironic-API-Version header", nil, false},
		{"bad major", "GET", "/v1/nodes", "2.1", 406, true, "Mutually exclusive versions requested. Version 2.1 requested but not supported by this service. The supported version range is: [1.1, 1.115].", nil, false},
		{"routing webob with message", "POST", "/v1/deploy_templates", "1.54", 405, true, "The API version does not allow deploy templates", nil, false},
		{"handler webob with message", "POST", "/v1/allocations", "1.51", 405, false, "The API version does not allow allocations", nil, true},
		{"ironic exception", "PUT", "/v1/nodes/n1/states/boot_mode", "1.75", 404, false, "This endpoint is supported starting with the API version 1.76", nil, true},
		{"vmedia GET between attach and get", "GET", "/v1/nodes/n1/vmedia", "1.90", 404, false, "The resource could not be found.", nil, true},
		{"vmedia GET before attach", "GET", "/v1/nodes/n1/vmedia", "1.88", 404, true, "", nil, false},
		{"runbook traits before runbooks", "PUT", "/v1/runbooks/r1/traits", "1.91", 405, true, "The API version does not allow runbooks", nil, false},
		{"runbook traits before traits", "PUT", "/v1/runbooks/r1/traits", "1.111", 404, true, "The API version does not allow runbook traits", nil, false},
		{"indicator GET with a surplus element", "GET", "/v1/nodes/n1/management/indicators/led@system/on", "", 404, true, "", nil, false},
		{"indicator PUT with two surplus elements", "PUT", "/v1/nodes/n1/management/indicators/led@system/on/x", "", 404, true, "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(h, tc.method, tc.path, tc.version, "")
			eb := decodeError(t, rec)
			if eb.status != tc.status || eb.routing != tc.routing || eb.text() != tc.text {
				t.Errorf("%d routing=%v %q, want %d routing=%v %q", eb.status, eb.routing, eb.text(), tc.status, tc.routing, tc.text)
			}
			if tc.allow != nil {
				if got, ok := rec.Header()["Allow"]; !ok || got[0] != *tc.allow {
					t.Errorf("Allow %v, want %q", got, *tc.allow)
				}
			} else if rec.Header().Get("Allow") != "" {
				t.Errorf("Allow %q", rec.Header().Get("Allow"))
			}
			if has := rec.Header().Get(microversion.HeaderLegacy) != ""; has != tc.versioned {
				t.Errorf("version header present %v, want %v", has, tc.versioned)
			}
		})
	}
}

func strp(s string) *string { return &s }

func TestPathForms(t *testing.T) {
	var seen []string
	handlers := map[string]HandlerFunc{}
	for _, id := range []string{"GET /v1/nodes", "GET /v1/nodes/detail", "GET /v1/nodes/{node_ident}", "POST /v1/nodes/{node_ident}/vendor_passthru",
		"GET /v1/nodes/{node_ident}/vendor_passthru/methods", "GET /v1/nodes/{node_ident}/management/indicators/{ind_ident}@{component}"} {
		handlers[id] = func(w http.ResponseWriter, r *http.Request, rc *RequestContext) error {
			seen = append(seen, rc.Route.ID+" "+rc.Param("node_ident")+"|"+rc.Param("method_name")+"|"+rc.Param("ind_ident")+"@"+rc.Param("component"))
			if FromContext(r.Context()) != rc || rc.RequestID == "" || rc.PublicURL != "http://127.0.0.1:6385" {
				return errors.New("request context not propagated")
			}
			rc.SetLocation(w, "nodes", rc.Param("node_ident")+"/states")
			return WriteJSON(w, http.StatusOK, Object{{"ok", true}})
		}
	}
	h := New(Deps{Logger: quiet, Handlers: handlers, Authorize: AllowAll})
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/v1/nodes", "GET /v1/nodes ||@"},
		{"GET", "/v1/nodes/", "GET /v1/nodes ||@"},
		{"GET", "/nodes", "GET /v1/nodes ||@"},
		{"GET", "/v1/nodes.json", "GET /v1/nodes ||@"},
		{"GET", "/v1/nodes/detail", "GET /v1/nodes/detail ||@"},
		{"GET", "/v1/nodes/n1", "GET /v1/nodes/{node_ident} n1||@"},
		{"GET", "/v1/nodes/n1/", "GET /v1/nodes/{node_ident} n1||@"},
		{"POST", "/v1/nodes/n1/vendor_passthru?method=m", "POST /v1/nodes/{node_ident}/vendor_passthru n1||@"},
		{"POST", "/v1/nodes/n1/vendor_passthru/m2", "POST /v1/nodes/{node_ident}/vendor_passthru n1|m2|@"},
		{"GET", "/v1/nodes/n1/vendor_passthru/methods", "GET /v1/nodes/{node_ident}/vendor_passthru/methods n1||@"},
		{"GET", "/v1/nodes/n1/management/indicators/led@system", "GET /v1/nodes/{node_ident}/management/indicators/{ind_ident}@{component} n1||led@system"},
	} {
		seen = nil
		rec := serve(h, tc.method, tc.path, "1.1", "")
		if rec.Code != http.StatusOK || len(seen) != 1 || seen[0] != tc.want {
			t.Errorf("%s %s: %d %s seen %v, want %q", tc.method, tc.path, rec.Code, rec.Body, seen, tc.want)
			continue
		}
		if rec.Body.String() != `{"ok": true}` || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: body %q %v", tc.path, rec.Body, rec.Header())
		}
		if loc := rec.Header().Get("Location"); !strings.HasPrefix(loc, "http://127.0.0.1:6385/v1/nodes/") || !strings.HasSuffix(loc, "/states") {
			t.Errorf("Location %q", loc)
		}
	}
}

// TestIndicatorPaths checks the indicator element reaches the handler
// whole enough to split as upstream does (first "@", none is the
// handler's 400), and that PUT takes a surplus element as the state.
func TestIndicatorPaths(t *testing.T) {
	var seen map[string]string
	record := func(w http.ResponseWriter, r *http.Request, rc *RequestContext) error {
		seen = rc.Params
		return WriteJSON(w, http.StatusOK, Object{{"ok", true}})
	}
	h := New(Deps{Logger: quiet, Authorize: AllowAll, Handlers: map[string]HandlerFunc{
		"GET /v1/nodes/{node_ident}/management/indicators/{ind_ident}@{component}": record,
		"PUT /v1/nodes/{node_ident}/management/indicators/{ind_ident}@{component}": record,
	}})
	for _, tc := range []struct {
		method, path string
		want         map[string]string
	}{
		{"GET", "/v1/nodes/n1/management/indicators/led@system", map[string]string{"node_ident": "n1", "ind_ident": "led", "component": "system"}},
		{"GET", "/v1/nodes/n1/management/indicators/led@system@2", map[string]string{"node_ident": "n1", "ind_ident": "led", "component": "system@2"}},
		{"GET", "/v1/nodes/n1/management/indicators/led@", map[string]string{"node_ident": "n1", "ind_ident": "led", "component": ""}},
		{"GET", "/v1/nodes/n1/management/indicators/led", map[string]string{"node_ident": "n1", "ind_ident": "led"}},
		{"PUT", "/v1/nodes/n1/management/indicators/led@system", map[string]string{"node_ident": "n1", "ind_ident": "led", "component": "system"}},
		{"PUT", "/v1/nodes/n1/management/indicators/led/on", map[string]string{"node_ident": "n1", "ind_ident": "led", "state": "on"}},
	} {
		seen = nil
		rec := serve(h, tc.method, tc.path, "1.1", "")
		if rec.Code != http.StatusOK || !maps.Equal(seen, tc.want) {
			t.Errorf("%s %s: %d %s params %v, want %v", tc.method, tc.path, rec.Code, rec.Body, seen, tc.want)
		}
	}
}

func TestHead(t *testing.T) {
	h := New(Deps{Logger: quiet, Authorize: AllowAll})
	rec := serve(h, http.MethodHead, "/v1/nodes", "", "")
	if rec.Code != 405 || rec.Body.String() != `{"error_message": ""}` || rec.Header().Get("Allow") != "DELETE, GET, PATCH, POST" {
		t.Errorf("HEAD /v1/nodes: %d %q %v", rec.Code, rec.Body, rec.Header())
	}
	for _, p := range []string{"/", "/v1"} {
		if rec := serve(h, http.MethodHead, p, "", ""); rec.Code != 200 {
			t.Errorf("HEAD %s: %d", p, rec.Code)
		}
	}
}

func TestMarshalLikePython(t *testing.T) {
	got, err := Marshal(Object{{"a", []any{1, "é<>&"}}, {"b", map[string]any{"k": "😀\u2028"}}, {"c", "x,y:z\\\"q"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a": [1, "\u00e9<>&"], "b": {"k": "\ud83d\ude00\u2028"}, "c": "x,y:z\\\"q"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
