package deploytemplate

import (
	"log/slog"
	"net/http"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// env is the router of one test.
type env = apitest.Client

func newEnv(t *testing.T) *env {
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: store.New(storetest.Backends(t)[0].DB)})
	return &env{T: t, H: apitest.New(t, api.Deps{Handlers: m, Logger: slog.New(slog.DiscardHandler)})}
}

type resp = apitest.Response

func keys(m map[string]any) []string { return apitest.Keys(m) }

const stepsJSON = `"steps": [{"interface": "bios", "step": "apply_configuration", "args": {"password": "x", "settings": []}, "priority": "150"}]`

func TestCRUD(t *testing.T) {
	e := newEnv(t)
	r := e.Do("POST", "/v1/deploy_templates", "1.55", `{"name": "CUSTOM_A", "description": "dropped", `+stepsJSON+`}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	doc := r.JSON(t)
	u := doc["uuid"].(string)
	// Key order and the echoed string priority are upstream's.
	want := `{"uuid": "` + u + `", "created_at": "` + doc["created_at"].(string) + `", "updated_at": null, "name": "CUSTOM_A", "extra": {}, "links": [{"href": "http://127.0.0.1:6385/v1/deploy_templates/` + u + `", "rel": "self"}, {"href": "http://127.0.0.1:6385/deploy_templates/` + u + `", "rel": "bookmark"}], "steps": [{"interface": "bios", "step": "apply_configuration", "args": {"password": "******", "settings": []}, "priority": "150"}]}`
	if string(r.Body) != want {
		t.Fatalf("create body\n%s\nwant\n%s", r.Body, want)
	}
	if r.Header.Get("Location") != "http://127.0.0.1:6385/v1/deploy_templates/"+u {
		t.Fatalf("Location %q", r.Header.Get("Location"))
	}
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/deploy-template-show-response.json", &sample)
	got := e.Do("GET", "/v1/deploy_templates/CUSTOM_A", "1.115", "").JSON(t)
	if !slices.Equal(keys(got), keys(sample)) {
		t.Fatalf("keys %v sample %v", keys(got), keys(sample))
	}
	if p := got["steps"].([]any)[0].(map[string]any)["priority"]; p != float64(150) {
		t.Fatalf("stored priority %v", p)
	}
	list := e.Do("GET", "/v1/deploy_templates", "1.55", "").JSON(t)["deploy_templates"].([]any)
	if len(list) != 1 || !slices.Equal(keys(list[0].(map[string]any)), []string{"links", "name", "uuid"}) {
		t.Fatalf("list %v", list)
	}
	det := e.Do("GET", "/v1/deploy_templates?detail=true", "1.55", "").JSON(t)["deploy_templates"].([]any)
	if !slices.Equal(keys(det[0].(map[string]any)), keys(sample)) {
		t.Fatalf("detail %v", det)
	}
	r = e.Do("PATCH", "/v1/deploy_templates/"+u, "1.55", `[{"op": "replace", "path": "/name", "value": "CUSTOM_B"}, {"op": "add", "path": "/steps/0/foo", "value": 1}, {"op": "add", "path": "/extra/k", "value": "v"}]`)
	if r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	if d := r.JSON(t); d["name"] != "CUSTOM_B" || d["extra"].(map[string]any)["k"] != "v" || d["updated_at"] == nil {
		t.Fatalf("patched %v", d)
	}
	r = e.Do("DELETE", "/v1/deploy_templates/CUSTOM_B", "1.55", "")
	if r.Status != http.StatusNoContent || len(r.Body) != 0 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := e.Do("GET", "/v1/deploy_templates/"+u, "1.115", ""); r.Status != 404 || r.Fault(t) != "Deploy template "+u+" could not be found." {
		t.Fatalf("after delete: %d %s", r.Status, r.Body)
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t)
	if r := e.Do("POST", "/v1/deploy_templates", "1.115", `{"name": "CUSTOM_A", `+stepsJSON+`}`); r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
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
		{"empty steps", "POST", "/v1/deploy_templates", "1.115", `{"name": "CUSTOM_B", "steps": []}`, 400, "Schema error for template: [] should be non-empty"},
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
			r := e.Do(c.method, c.path, c.version, c.body)
			if r.Status != c.status || r.Fault(t) != c.msg {
				t.Fatalf("%d %s", r.Status, r.Body)
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
		e := &env{T: t, H: h}
		if r := e.Do("POST", "/v1/deploy_templates", "1.115", body); r.Status >= 500 {
			t.Fatalf("POST %q: %d %s", body, r.Status, r.Body)
		}
	})
}
