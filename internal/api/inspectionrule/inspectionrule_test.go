package inspectionrule

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

const rule = `{"description": "Set properties", "priority": 50, "conditions": [{"op": "is-true", "args": {"value": "{inventory[cpu][count]}"}}], "actions": [{"op": "set-attribute", "args": {"path": "/properties/cpus", "value": "{inventory[cpu][count]}"}}]}`

func TestCRUD(t *testing.T) {
	e := newEnv(t)
	r := e.Do("POST", "/v1/inspection_rules", "1.96", rule)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	doc := r.JSON(t)
	u := doc["uuid"].(string)
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/inspection-rule-show-response.json", &sample)
	if !slices.Equal(keys(doc), keys(sample)) {
		t.Fatalf("keys %v sample %v", keys(doc), keys(sample))
	}
	want := `{"uuid": "` + u + `", "created_at": "` + doc["created_at"].(string) + `", "updated_at": null, "description": "Set properties", "priority": 50, "sensitive": false, "phase": "main", "conditions": [{"op": "is-true", "args": {"value": "{inventory[cpu][count]}"}}], "actions": [{"op": "set-attribute", "args": {"path": "/properties/cpus", "value": "{inventory[cpu][count]}"}}], "links": [{"href": "http://127.0.0.1:6385/v1/inspection/` + u + `", "rel": "self"}, {"href": "http://127.0.0.1:6385/inspection/` + u + `", "rel": "bookmark"}]}`
	if string(r.Body) != want {
		t.Fatalf("create\n%s\nwant\n%s", r.Body, want)
	}
	if r.Header.Get("Location") != "http://127.0.0.1:6385/v1/inspection_rules/"+u {
		t.Fatalf("Location %q", r.Header.Get("Location"))
	}
	for _, v := range []string{"1.96", "1.115"} {
		if r := e.Do("GET", "/v1/inspection_rules/"+u, v, ""); r.Status != 200 || string(r.Body) != want {
			t.Fatalf("show at %s: %d %s", v, r.Status, r.Body)
		}
	}
	list := e.Do("GET", "/v1/inspection_rules?limit=1&phase=main", "1.115", "").JSON(t)
	if items := list["inspection_rules"].([]any); len(items) != 1 || !slices.Equal(keys(items[0].(map[string]any)), []string{"description", "links", "phase", "priority", "uuid"}) {
		t.Fatalf("list %v", list)
	}
	if list["next"] != "http://127.0.0.1:6385/v1/inspection?filters={'phase': 'main'}&sort_key=id&sort_dir=asc&fields=uuid,priority,phase,description&limit=1&marker="+u {
		t.Fatalf("next %v", list["next"])
	}
	r = e.Do("PATCH", "/v1/inspection_rules/"+u, "1.96", `[{"op": "replace", "path": "/sensitive", "value": true}, {"op": "replace", "path": "/priority", "value": 10}]`)
	if r.Status != 200 {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	if d := r.JSON(t); d["conditions"] != nil || d["actions"] != nil || d["priority"] != float64(10) || d["sensitive"] != true {
		t.Fatalf("sensitive rule shows its content: %v", d)
	}
	r = e.Do("PATCH", "/v1/inspection_rules/"+u, "1.96", `[{"op": "replace", "path": "/sensitive", "value": false}]`)
	if r.Status != 400 || r.Fault(t) != `Couldn't apply patch '[{'op': 'replace', 'path': '/sensitive', 'value': False}]'. Reason: Inspection rules cannot have the sensitive flag unset.` {
		t.Fatalf("unset sensitive: %d %s", r.Status, r.Body)
	}
	if r := e.Do("DELETE", "/v1/inspection_rules/"+u, "1.96", ""); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
}

// Actions that take the inspection data get an empty plugin_data
// argument stored with the rule, as upstream's validation adds it.
func TestPluginDataArgumentStored(t *testing.T) {
	e := newEnv(t)
	r := e.Do("POST", "/v1/inspection_rules", "1.115", `{"actions": [{"op": "set-plugin-data", "args": {"path": "a", "value": 1}}, {"op": "unset-plugin-data", "args": ["b"]}]}`)
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if !strings.Contains(string(r.Body), `"args": {"path": "a", "plugin_data": {}, "value": 1}`) || !strings.Contains(string(r.Body), `"args": ["b", {}]`) {
		t.Fatalf("args %s", r.Body)
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t)
	r := e.Do("POST", "/v1/inspection_rules", "1.115", rule)
	u := r.JSON(t)["uuid"].(string)
	cases := []struct {
		name, method, path, version, body string
		status                            int
		msg                               string
	}{
		{"no actions", "POST", "/v1/inspection_rules", "1.115", `{}`, 400, "Schema error: 'actions' is a required property"},
		{"unknown action", "POST", "/v1/inspection_rules", "1.115", `{"actions": [{"op": "reboot", "args": {}}]}`, 400, "Schema error: 'reboot' is not one of ['fail', 'log', 'set-attribute', 'extend-attribute', 'del-attribute', 'set-capability', 'unset-capability', 'add-trait', 'remove-trait', 'set-plugin-data', 'extend-plugin-data', 'unset-plugin-data', 'set-port-attribute', 'extend-port-attribute', 'del-port-attribute', 'api-call']"},
		{"negative priority", "POST", "/v1/inspection_rules", "1.115", `{"priority": -1, "actions": [{"op": "fail", "args": {"msg": "x"}}]}`, 400, "Schema error: -1 is less than the minimum of 0"},
		{"big priority", "POST", "/v1/inspection_rules", "1.115", `{"priority": 10000, "actions": [{"op": "fail", "args": {"msg": "x"}}]}`, 400, "Priority must be between 0 and 9999 for user-defined rules."},
		{"bad phase", "POST", "/v1/inspection_rules", "1.115", `{"phase": "late", "actions": [{"op": "fail", "args": {"msg": "x"}}]}`, 400, "Invalid phase: late. Valid phases are: main"},
		{"two problems", "POST", "/v1/inspection_rules", "1.115", `{"phase": "late", "priority": 10000, "actions": [{"op": "fail", "args": {"msg": "x"}}]}`, 400, "Multiple validation errors occurred: Invalid phase: late. Valid phases are: main; Priority must be between 0 and 9999 for user-defined rules."},
		{"missing arg", "POST", "/v1/inspection_rules", "1.115", `{"actions": [{"op": "set-attribute", "args": {"path": "x"}}]}`, 400, "missing required argument(s): value"},
		{"unexpected arg", "POST", "/v1/inspection_rules", "1.115", `{"conditions": [{"op": "!eq", "args": {"values": [1], "x": 1}}], "actions": [{"op": "fail", "args": {"msg": "x"}}]}`, 400, "unexpected argument(s): x"},
		{"short list", "POST", "/v1/inspection_rules", "1.115", `{"actions": [{"op": "set-capability", "args": ["n"]}]}`, 400, "('Not enough arguments provided. Missing: %s', 'value')"},
		{"bad multiple", "POST", "/v1/inspection_rules", "1.115", `{"conditions": [{"op": "eq", "args": [], "multiple": "some"}], "actions": [{"op": "fail", "args": {"msg": "x"}}]}`, 400, "Schema error: 'some' is not one of ['any', 'all', 'first', 'last']"},
		{"too old", "POST", "/v1/inspection_rules", "1.95", `{}`, 405, "The API version does not allow inspection rules"},
		{"list too old", "GET", "/v1/inspection_rules", "1.95", "", 404, "The API version does not allow inspection rules"},
		{"sort actions", "GET", "/v1/inspection_rules?sort_key=actions", "1.115", "", 400, "Schema error: 'actions' should not be valid under {'type': 'string', 'enum': ['actions', 'conditions']}"},
		{"bad field", "GET", "/v1/inspection_rules?fields=foo", "1.115", "", 400, `Field(s) "foo" are not valid`},
		{"unknown", "GET", "/v1/inspection_rules/1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "1.115", "", 404, "Rule 1be26c0b-03f2-4d2e-ae87-c02d7f33c123 could not be found."},
		{"bad uuid", "GET", "/v1/inspection_rules/abc", "1.115", "", 400, "Schema error: 'abc' is not a 'uuid'"},
		{"patch bad uuid", "PATCH", "/v1/inspection_rules/abc", "1.115", `[]`, 400, "Expected UUID for inspection_rule_uuid: abc"},
		{"patch bad action", "PATCH", "/v1/inspection_rules/" + u, "1.115", `[{"op": "add", "path": "/actions/-", "value": {"op": "fail", "args": {}}}]`, 400, "missing required argument(s): msg"},
		{"patch actions empty", "PATCH", "/v1/inspection_rules/" + u, "1.115", `[{"op": "replace", "path": "/actions", "value": []}]`, 400, "Schema error for patch: [] should be non-empty"},
		// Read from master's inspection_rule.py: the collection DELETE
		// reaches delete() without its identifier; the first release
		// answered args.validate's 400, later ones fail with a 500.
		{"delete all", "DELETE", "/v1/inspection_rules", "1.96", "", 400, "Missing mandatory parameter: inspection_rule_uuid"},
		{"delete unknown", "DELETE", "/v1/inspection_rules/1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "1.115", "", 404, "Rule 1be26c0b-03f2-4d2e-ae87-c02d7f33c123 could not be found."},
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

// The engine tables name exactly the operators and actions of upstream's
// creation schema.
func TestPluginTablesMatchSchema(t *testing.T) {
	var schema struct {
		Properties struct {
			Actions struct {
				Items struct {
					Properties struct{ Op struct{ Enum []string } }
				}
			}
			Conditions struct {
				Items struct {
					Properties struct{ Op struct{ Enum []string } }
				}
			}
		}
	}
	spectest.LoadJSON(t, "ironic/api/schemas/v1/inspection_rule/create_request_body.json", &schema)
	var acts []string
	for a := range actions {
		acts = append(acts, a)
	}
	want := slices.Clone(schema.Properties.Actions.Items.Properties.Op.Enum)
	slices.Sort(acts)
	slices.Sort(want)
	if !slices.Equal(acts, want) {
		t.Fatalf("actions %v, schema %v", acts, want)
	}
	var ops []string
	for o := range operators {
		ops = append(ops, o, "!"+o)
	}
	want = slices.Clone(schema.Properties.Conditions.Items.Properties.Op.Enum)
	slices.Sort(ops)
	slices.Sort(want)
	if !slices.Equal(ops, want) {
		t.Fatalf("operators %v, schema %v", ops, want)
	}
}

func FuzzCreate(f *testing.F) {
	for _, s := range []string{rule, `{"actions": [{"op": "set-plugin-data", "args": [1]}]}`, `{"actions": [{"op": "api-call", "args": {"url": "x", "timeout": 1}}], "conditions": [{"op": "!in-net", "args": ["a"]}]}`, `[]`, `{`, `{"actions": 1}`, `{"actions": [{"op": "fail", "args": "x"}]}`} {
		f.Add(s)
	}
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: store.New(storetest.Backends(f)[0].DB)})
	h := api.New(api.Deps{Authorize: api.AllowAll, Handlers: m, Logger: discard()})
	f.Fuzz(func(t *testing.T, body string) {
		e := &env{T: t, H: h}
		if r := e.Do("POST", "/v1/inspection_rules", "1.115", body); r.Status >= 500 {
			t.Fatalf("POST %q: %d %s", body, r.Status, r.Body)
		}
	})
}

func TestCreateRefusesNonUUID(t *testing.T) {
	e := newEnv(t)
	r := e.Do("POST", "/v1/inspection_rules", "1.115", `{"uuid": "abc", "actions": [{"op": "fail", "args": {"msg": "x"}}]}`)
	if r.Status != 400 || r.Fault(t) != "Expected UUID for uuid: abc" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}
