package deploytemplate

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

type env struct {
	t *testing.T
	h http.Handler
}

func newEnv(t *testing.T) *env {
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: store.New(storetest.Backends(t)[0].DB)})
	return &env{t: t, h: apitest.New(t, api.Deps{Handlers: m, Logger: slog.New(slog.DiscardHandler)})}
}

type resp struct {
	status int
	header http.Header
	body   string
}

func (e *env) do(method, path, version, body string) resp {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://127.0.0.1:6385"+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	return resp{w.Code, w.Header(), w.Body.String()}
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("%s: %v", r.body, err)
	}
	return m
}

func (r resp) fault(t *testing.T) string {
	t.Helper()
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	// Handler faults carry a faultstring; routing errors a description.
	var inner struct{ Faultstring, Description string }
	if json.Unmarshal([]byte(r.body), &outer) != nil || json.Unmarshal([]byte(outer.ErrorMessage), &inner) != nil {
		t.Fatalf("not a fault: %s", r.body)
	}
	return inner.Faultstring + inner.Description
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

const stepsJSON = `"steps": [{"interface": "bios", "step": "apply_configuration", "args": {"password": "x", "settings": []}, "priority": "150"}]`

func TestCRUD(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/v1/deploy_templates", "1.55", `{"name": "CUSTOM_A", "description": "dropped", `+stepsJSON+`}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	doc := r.json(t)
	u := doc["uuid"].(string)
	// Key order and the echoed string priority are upstream's.
	want := `{"uuid": "` + u + `", "created_at": "` + doc["created_at"].(string) + `", "updated_at": null, "name": "CUSTOM_A", "extra": {}, "links": [{"href": "http://127.0.0.1:6385/v1/deploy_templates/` + u + `", "rel": "self"}, {"href": "http://127.0.0.1:6385/deploy_templates/` + u + `", "rel": "bookmark"}], "steps": [{"interface": "bios", "step": "apply_configuration", "args": {"password": "******", "settings": []}, "priority": "150"}]}`
	if r.body != want {
		t.Fatalf("create body\n%s\nwant\n%s", r.body, want)
	}
	if r.header.Get("Location") != "http://127.0.0.1:6385/v1/deploy_templates/"+u {
		t.Fatalf("Location %q", r.header.Get("Location"))
	}
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/deploy-template-show-response.json", &sample)
	got := e.do("GET", "/v1/deploy_templates/CUSTOM_A", "1.115", "").json(t)
	if !slices.Equal(keys(got), keys(sample)) {
		t.Fatalf("keys %v sample %v", keys(got), keys(sample))
	}
	if p := got["steps"].([]any)[0].(map[string]any)["priority"]; p != float64(150) {
		t.Fatalf("stored priority %v", p)
	}
	list := e.do("GET", "/v1/deploy_templates", "1.55", "").json(t)["deploy_templates"].([]any)
	if len(list) != 1 || !slices.Equal(keys(list[0].(map[string]any)), []string{"links", "name", "uuid"}) {
		t.Fatalf("list %v", list)
	}
	det := e.do("GET", "/v1/deploy_templates?detail=true", "1.55", "").json(t)["deploy_templates"].([]any)
	if !slices.Equal(keys(det[0].(map[string]any)), keys(sample)) {
		t.Fatalf("detail %v", det)
	}
	r = e.do("PATCH", "/v1/deploy_templates/"+u, "1.55", `[{"op": "replace", "path": "/name", "value": "CUSTOM_B"}, {"op": "add", "path": "/steps/0/foo", "value": 1}, {"op": "add", "path": "/extra/k", "value": "v"}]`)
	if r.status != 200 {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	if d := r.json(t); d["name"] != "CUSTOM_B" || d["extra"].(map[string]any)["k"] != "v" || d["updated_at"] == nil {
		t.Fatalf("patched %v", d)
	}
	r = e.do("DELETE", "/v1/deploy_templates/CUSTOM_B", "1.55", "")
	if r.status != http.StatusNoContent || r.body != "" {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/deploy_templates/"+u, "1.115", ""); r.status != 404 || r.fault(t) != "Deploy template "+u+" could not be found." {
		t.Fatalf("after delete: %d %s", r.status, r.body)
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t)
	if r := e.do("POST", "/v1/deploy_templates", "1.115", `{"name": "CUSTOM_A", `+stepsJSON+`}`); r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	dup := `{"name": "CUSTOM_C", "steps": [{"interface": "bios", "step": "a", "args": {}, "priority": 1}, {"interface": "bios", "step": "a", "args": {}, "priority": 2}]}`
	cases := []struct {
		name, method, path, version, body string
		status                            int
		msg                               string
	}{
		{"duplicate name", "POST", "/v1/deploy_templates", "1.115", `{"name": "CUSTOM_A", ` + stepsJSON + `}`, 409, "A deploy template with name CUSTOM_A already exists."},
		{"bad name", "POST", "/v1/deploy_templates", "1.115", `{"name": "bad", ` + stepsJSON + `}`, 400, "Schema error for template: 'bad' is not valid under any of the given schemas. Possible root cause: 'bad' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{"no steps", "POST", "/v1/deploy_templates", "1.115", `{"name": "CUSTOM_B"}`, 400, "Schema error for template: 'steps' is a required property"},
		{"empty steps", "POST", "/v1/deploy_templates", "1.115", `{"name": "CUSTOM_B", "steps": []}`, 400, "Schema error for template: [] is too short"},
		{"bad uuid", "POST", "/v1/deploy_templates", "1.115", `{"name": "CUSTOM_B", "uuid": "abc", ` + stepsJSON + `}`, 400, "Expected UUID for uuid: abc"},
		{"duplicate steps", "POST", "/v1/deploy_templates", "1.115", dup, 400, "Deploy template invalid: Duplicate deploy steps. A template cannot have multiple deploy steps with the same interface and step. Duplicates: interface: bios, step: a."},
		{"not an object", "POST", "/v1/deploy_templates", "1.115", `[]`, 400, "Schema error for template: [] is not of type 'object'"},
		{"too old", "POST", "/v1/deploy_templates", "1.54", `{}`, 405, "The API version does not allow deploy templates"},
		{"unknown marker", "GET", "/v1/deploy_templates?marker=CUSTOM_A", "1.115", "", 404, "Deploy template CUSTOM_A could not be found."},
		{"bad marker", "GET", "/v1/deploy_templates?marker=a%20b", "1.115", "", 400, "Expected name for marker: a b"},
		{"bad field", "GET", "/v1/deploy_templates?fields=foo", "1.115", "", 400, "Schema error: 'foo' is not one of ['created_at', 'description', 'extra', 'links', 'name', 'steps', 'updated_at', 'uuid']"},
		{"sort steps", "GET", "/v1/deploy_templates?sort_key=steps", "1.115", "", 400, "The sort_key value steps is an invalid field for sorting"},
		{"list too old", "GET", "/v1/deploy_templates", "1.54", "", 404, "The API version does not allow deploy templates"},
		{"bad ident", "GET", "/v1/deploy_templates/a%20b", "1.115", "", 400, "Expected UUID or name for template_ident: a b"},
		{"unknown", "GET", "/v1/deploy_templates/CUSTOM_Z", "1.115", "", 404, "Deploy template CUSTOM_Z could not be found."},
		{"patch bad priority", "PATCH", "/v1/deploy_templates/CUSTOM_A", "1.115", `[{"op": "replace", "path": "/steps/0/priority", "value": "x"}]`, 400, "Schema error for patch: 'x' does not match '^[0-9]+$'"},
		{"patch uuid", "PATCH", "/v1/deploy_templates/CUSTOM_A", "1.115", `[{"op": "replace", "path": "/uuid", "value": "x"}]`, 400, "Cannot patch /uuid. Only the following can be updated: extra, name, steps, description"},
		{"patch remove steps", "PATCH", "/v1/deploy_templates/CUSTOM_A", "1.115", `[{"op": "remove", "path": "/steps"}]`, 400, "Schema error for patch: 'steps' is a required property"},
		{"delete unknown", "DELETE", "/v1/deploy_templates/CUSTOM_Z", "1.115", "", 404, "Deploy template CUSTOM_Z could not be found."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, c.version, c.body)
			if r.status != c.status || r.fault(t) != c.msg {
				t.Fatalf("%d %s", r.status, r.body)
			}
		})
	}
}

func FuzzCreate(f *testing.F) {
	for _, s := range []string{`{"name": "CUSTOM_A", ` + stepsJSON + `}`, `{"name": "CUSTOM_A", "steps": [{"interface": "bios", "step": "a", "args": {}, "priority": -1}]}`, `[]`, `{`, `{"name": 1}`, `{"name": "CUSTOM_X", "steps": [1]}`} {
		f.Add(s)
	}
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: store.New(storetest.Backends(f)[0].DB)})
	h := api.New(api.Deps{Authorize: api.AllowAll, Handlers: m, Logger: slog.New(slog.DiscardHandler)})
	f.Fuzz(func(t *testing.T, body string) {
		e := &env{t: t, h: h}
		if r := e.do("POST", "/v1/deploy_templates", "1.115", body); r.status >= 500 {
			t.Fatalf("POST %q: %d %s", body, r.status, r.body)
		}
	})
}
