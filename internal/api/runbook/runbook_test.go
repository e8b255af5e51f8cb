package runbook

import (
	"net/http"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

const stepsJSON = `"steps": [{"interface": "bios", "step": "apply_configuration", "args": {"password": "x", "settings": []}, "order": "1"}]`

func TestCRUDAt192(t *testing.T) {
	e := newEnv(t)
	r := e.Do("POST", "/v1/runbooks", "1.92", `{"name": "CUSTOM_AWESOME", `+stepsJSON+`}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	doc := r.JSON(t)
	u := doc["uuid"].(string)
	want := `{"uuid": "` + u + `", "created_at": "` + doc["created_at"].(string) + `", "updated_at": null, "name": "CUSTOM_AWESOME", "extra": {}, "public": false, "owner": null, "disable_ramdisk": false, "links": [{"href": "http://127.0.0.1:6385/v1/runbooks/` + u + `", "rel": "self"}, {"href": "http://127.0.0.1:6385/runbooks/` + u + `", "rel": "bookmark"}], "steps": [{"interface": "bios", "step": "apply_configuration", "args": {"password": "******", "settings": []}, "order": "1"}]}`
	if string(r.Body) != want {
		t.Fatalf("create\n%s\nwant\n%s", r.Body, want)
	}
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/runbook-show-response.json", &sample)
	got := e.Do("GET", "/v1/runbooks/CUSTOM_AWESOME", "1.92", "").JSON(t)
	if !slices.Equal(keys(got), keys(sample)) {
		t.Fatalf("keys %v sample %v", keys(got), keys(sample))
	}
	at112 := e.Do("GET", "/v1/runbooks/"+u, "1.115", "").JSON(t)
	want112 := append(keys(sample), "description", "traits")
	slices.Sort(want112)
	if !slices.Equal(keys(at112), want112) {
		t.Fatalf("1.115 keys %v", keys(at112))
	}
	if list := e.Do("GET", "/v1/runbooks", "1.92", "").JSON(t)["runbooks"].([]any); len(list) != 1 || !slices.Equal(keys(list[0].(map[string]any)), []string{"links", "name", "uuid"}) {
		t.Fatalf("list %v", list)
	}
	r = e.Do("PATCH", "/v1/runbooks/"+u, "1.92", `[{"op": "replace", "path": "/owner", "value": "proj"}, {"op": "replace", "path": "/steps/0/order", "value": 5}]`)
	if r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	if d := r.JSON(t); d["owner"] != "proj" || d["steps"].([]any)[0].(map[string]any)["order"] != float64(5) {
		t.Fatalf("patched %v", d)
	}
	r = e.Do("PATCH", "/v1/runbooks/"+u, "1.92", `[{"op": "replace", "path": "/public", "value": true}]`)
	if d := r.JSON(t); r.Status != 200 || d["public"] != true || d["owner"] != nil {
		t.Fatalf("public clears owner: %d %s", r.Status, r.Body)
	}
	r = e.Do("PATCH", "/v1/runbooks/"+u, "1.92", `[{"op": "replace", "path": "/owner", "value": "p"}]`)
	if r.Status != 400 || r.Fault(t) != `Couldn't apply patch '[{'op': 'replace', 'path': '/owner', 'value': 'p'}]'. Reason: There cannot be an owner for a public runbook` {
		t.Fatalf("owner of public: %d %s", r.Status, r.Body)
	}
	if r := e.Do("DELETE", "/v1/runbooks/"+u, "1.92", ""); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
}

func TestTraitsAt1112(t *testing.T) {
	e := newEnv(t)
	r := e.Do("POST", "/v1/runbooks", "1.112", `{"name": "my-runbook", "description": "d", `+stepsJSON+`}`)
	if r.Status != 201 || r.JSON(t)["traits"] == nil || r.JSON(t)["description"] != "d" {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	if r := e.Do("PUT", "/v1/runbooks/my-runbook/traits/CUSTOM_A", "1.112", ""); r.Status != 204 || r.Header.Get("Location") != "http://127.0.0.1:6385/v1/runbooks/my-runbook/traits/CUSTOM_A" {
		t.Fatalf("add: %d %s %v", r.Status, r.Body, r.Header)
	}
	if got := e.Do("GET", "/v1/runbooks/my-runbook/traits", "1.115", "").Body; string(got) != `{"traits": ["CUSTOM_A"]}` {
		t.Fatalf("traits %s", got)
	}
	if r := e.Do("PUT", "/v1/runbooks/my-runbook/traits", "1.115", `{"traits": ["CUSTOM_B", "CUSTOM_C"]}`); r.Status != 204 {
		t.Fatalf("replace: %d %s", r.Status, r.Body)
	}
	if got := e.Do("GET", "/v1/runbooks/my-runbook", "1.115", "").JSON(t)["traits"].([]any); len(got) != 2 {
		t.Fatalf("traits %v", got)
	}
	if r := e.Do("DELETE", "/v1/runbooks/my-runbook/traits/CUSTOM_Z", "1.115", ""); r.Status != 204 {
		t.Fatalf("delete missing: %d %s", r.Status, r.Body)
	}
	if r := e.Do("DELETE", "/v1/runbooks/my-runbook/traits/CUSTOM_B", "1.115", ""); r.Status != 204 {
		t.Fatalf("delete one: %d %s", r.Status, r.Body)
	}
	if r := e.Do("DELETE", "/v1/runbooks/my-runbook/traits", "1.115", ""); r.Status != 204 {
		t.Fatalf("delete all: %d %s", r.Status, r.Body)
	}
	if got := e.Do("GET", "/v1/runbooks/my-runbook/traits", "1.115", "").Body; string(got) != `{"traits": []}` {
		t.Fatalf("traits %s", got)
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t)
	if r := e.Do("POST", "/v1/runbooks", "1.115", `{"name": "rb", `+stepsJSON+`}`); r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	excl := "A single runbook trait may be added via PUT /v1/runbooks/<runbook identifier>/traits/<trait> with no body, or all runbook traits may be replaced via PUT /v1/runbooks/<runbook identifier>/traits with the list of traits specified in the request body."
	cases := []struct {
		name, method, path, version, body string
		status                            int
		msg                               string
	}{
		{"free name before 1.112", "POST", "/v1/runbooks", "1.111", `{"name": "rb2", ` + stepsJSON + `}`, 400, "Schema error for runbook: 'rb2' is not valid under any of the given schemas. Possible root cause: 'rb2' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{"traits on create", "POST", "/v1/runbooks", "1.115", `{"name": "rb2", "traits": [], ` + stepsJSON + `}`, 400, "Schema error for runbook: Additional properties are not allowed ('traits' was unexpected)"},
		{"duplicate name", "POST", "/v1/runbooks", "1.115", `{"name": "rb", ` + stepsJSON + `}`, 409, "A runbook with name rb already exists."},
		{"priority not order", "POST", "/v1/runbooks", "1.115", `{"name": "rb3", "steps": [{"interface": "bios", "step": "a", "args": {}, "priority": 1}]}`, 400, "Schema error for runbook: 'order' is a required property"},
		{"too old", "GET", "/v1/runbooks", "1.91", "", 404, "The API version does not allow runbooks"},
		{"create too old", "POST", "/v1/runbooks", "1.91", `{}`, 405, "The API version does not allow runbooks"},
		{"traits too old", "GET", "/v1/runbooks/rb/traits", "1.111", "", 404, "The API version does not allow runbook traits"},
		{"unknown", "GET", "/v1/runbooks/nope", "1.115", "", 404, "Runbook nope could not be found."},
		{"bad ident", "GET", "/v1/runbooks/a%20b", "1.115", "", 400, "Expected UUID or name for runbook_ident: a b"},
		{"bad trait", "PUT", "/v1/runbooks/rb/traits/foo", "1.115", "", 400, "Schema error for trait: 'foo' is not valid under any of the given schemas. Possible root cause: 'foo' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{"bad traits body", "PUT", "/v1/runbooks/rb/traits", "1.115", `{"traits": ["x"]}`, 400, "Schema error for body: 'x' is not valid under any of the given schemas. Possible root cause: 'x' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{"neither", "PUT", "/v1/runbooks/rb/traits", "1.115", `{}`, 400, excl},
		{"both", "PUT", "/v1/runbooks/rb/traits/CUSTOM_A", "1.115", `{"traits": []}`, 400, excl},
		{"patch uuid", "PATCH", "/v1/runbooks/rb", "1.115", `[{"op": "replace", "path": "/uuid", "value": "x"}]`, 400, "Cannot patch /uuid. Only the following can be updated: disable_ramdisk, extra, name, owner, public, steps, description"},
		{"patch description before 1.112", "PATCH", "/v1/runbooks/rb", "1.111", `[{"op": "add", "path": "/description", "value": "x"}]`, 400, "Cannot patch /description. Only the following can be updated: disable_ramdisk, extra, name, owner, public, steps"},
		{"unknown marker", "GET", "/v1/runbooks?marker=rb", "1.115", "", 404, "Runbook rb could not be found."},
		{"sort traits", "GET", "/v1/runbooks?sort_key=traits", "1.115", "", 400, "The sort_key value traits is an invalid field for sorting"},
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
	for _, s := range []string{`{"name": "CUSTOM_A", ` + stepsJSON + `}`, `{"name": "x", "public": true, "owner": "p", ` + stepsJSON + `}`, `[]`, `{`, `{"name": 1}`, `{"name": "CUSTOM_X", "steps": [1]}`} {
		f.Add(s, "1.115")
		f.Add(s, "1.92")
	}
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: store.New(storetest.Backends(f)[0].DB), Authorize: apitest.Allow[*model.Runbook], Scope: apitest.SystemScope})
	h := api.New(api.Deps{Authorize: api.AllowAll, Handlers: m, Logger: discard()})
	f.Fuzz(func(t *testing.T, body, version string) {
		e := &env{T: t, H: h}
		if r := e.Do("POST", "/v1/runbooks", version, body); r.Status >= 500 {
			t.Fatalf("POST %q: %d %s", body, r.Status, r.Body)
		}
	})
}
