package inspection_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/inspection"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
)

const rulesInventory = `{
 "cpu": {"count": 8, "architecture": "x86_64"},
 "memory": {"physical_mb": 16384},
 "interfaces": [{"name": "eth0", "mac_address": "52:54:00:aa:bb:01", "ipv4_address": "192.0.2.10"}],
 "bmc_address": "192.0.2.200",
 "bmc_password": "secret",
 "system_vendor": {"manufacturer": "Dell Inc."},
 "empty": "",
 "yes": "Yes",
 "zero": 0
}`

// marker is the action of the condition tests: it records that the rule
// matched.
var marker = map[string]any{"op": "set-plugin-data", "args": map[string]any{"path": "matched", "value": true}}

func matches(t *testing.T, cond map[string]any) (bool, error) {
	t.Helper()
	tg := newTarget()
	pd := map[string]any{"plugin": "data"}
	err := inspection.NewEngine(inspection.RuleOptions{}).Apply(context.Background(), tg,
		[]inspection.Rule{{UUID: "r1", Conditions: []map[string]any{cond}, Actions: []map[string]any{marker}}},
		decode(t, rulesInventory), pd)
	return pd["matched"] == true, err
}

func TestOperators(t *testing.T) {
	cases := []struct {
		name string
		cond string
		want bool
	}{
		{"eq numbers", `{"op": "eq", "args": {"values": [8, 8.0, 8]}}`, true},
		{"eq interpolated is a string", `{"op": "eq", "args": {"values": ["{inventory[cpu][count]}", "8"]}}`, true},
		{"eq string vs number", `{"op": "eq", "args": {"values": ["{inventory[cpu][count]}", 8]}}`, false},
		{"eq node attribute", `{"op": "eq", "args": {"values": ["{node.driver}", "fake-hardware"]}}`, true},
		{"eq single value", `{"op": "eq", "args": {"values": [1]}}`, true},
		{"not eq", `{"op": "!eq", "args": {"values": [1, 2]}}`, true},
		{"lt chain", `{"op": "lt", "args": {"values": [1, 2, 3]}}`, true},
		{"lt false", `{"op": "lt", "args": {"values": [1, 3, 2]}}`, false},
		{"gt", `{"op": "gt", "args": {"values": [16, 8]}}`, true},
		{"gt strings", `{"op": "gt", "args": {"values": ["{inventory[cpu][count]}", "10"]}}`, true},
		{"is-empty", `{"op": "is-empty", "args": {"value": "{inventory[empty]}"}}`, true},
		{"is-empty missing", `{"op": "is-empty", "args": {"value": "{inventory[nope]}"}}`, true},
		{"is-empty no", `{"op": "is-empty", "args": {"value": "{inventory[cpu]}"}}`, false},
		{"in-net", `{"op": "in-net", "args": {"address": "{inventory[bmc_address]}", "subnet": "192.0.2.0/24"}}`, true},
		{"in-net no", `{"op": "in-net", "args": {"address": "198.51.100.1", "subnet": "192.0.2.0/24"}}`, false},
		{"matches anchors", `{"op": "matches", "args": {"value": "{inventory[system_vendor][manufacturer]}", "regex": "Dell"}}`, false},
		{"matches whole", `{"op": "matches", "args": {"value": "{inventory[system_vendor][manufacturer]}", "regex": "Dell.*"}}`, true},
		{"contains", `{"op": "contains", "args": {"value": "{inventory[system_vendor][manufacturer]}", "regex": "ell"}}`, true},
		{"not contains", `{"op": "! contains", "args": {"value": "abc", "regex": "z"}}`, true},
		{"one-of", `{"op": "one-of", "args": {"value": "{inventory[cpu][architecture]}", "values": ["aarch64", "x86_64"]}}`, true},
		{"one-of no", `{"op": "one-of", "args": {"value": "ppc64le", "values": ["x86_64"]}}`, false},
		{"is-none", `{"op": "is-none", "args": {"value": null}}`, true},
		{"is-none formatted", `{"op": "is-none", "args": {"value": "{inventory[nope]}"}}`, false},
		{"is-true string", `{"op": "is-true", "args": {"value": "{inventory[yes]}"}}`, true},
		{"is-true number", `{"op": "is-true", "args": {"value": 3}}`, true},
		{"is-true other string", `{"op": "is-true", "args": {"value": "{inventory[cpu][count]}"}}`, false},
		{"is-false zero", `{"op": "is-false", "args": {"value": 0}}`, true},
		{"is-false null", `{"op": "is-false", "args": {"value": null}}`, true},
		{"is-false no", `{"op": "is-false", "args": {"value": "No"}}`, true},
		{"is-false list", `{"op": "is-false", "args": {"value": []}}`, false},
		{"list args deprecated", `{"op": "contains", "args": ["testvalue", "test"]}`, true},
		{"loop any", `{"op": "eq", "loop": ["a", "b"], "args": {"values": ["{item}", "b"]}}`, true},
		{"loop all", `{"op": "eq", "loop": ["a", "b"], "multiple": "all", "args": {"values": ["{item}", "b"]}}`, false},
		{"loop first", `{"op": "eq", "loop": ["b", "a"], "multiple": "first", "args": {"values": ["{item}", "b"]}}`, true},
		{"loop last", `{"op": "eq", "loop": ["b", "a"], "multiple": "last", "args": {"values": ["{item}", "b"]}}`, false},
		{"loop forces strings", `{"op": "eq", "loop": [8], "args": {"values": ["{item}", 8]}}`, true},
		{"loop dict", `{"op": "eq", "loop": {"k": "v"}, "args": {"values": ["{item[k]}", "v"]}}`, true},
		{"secret masked", `{"op": "eq", "args": {"values": ["{inventory[bmc_password]}", "***"]}}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := matches(t, decode(t, c.cond))
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("matched = %v, want %v", got, c.want)
			}
		})
	}
	if !reflect.DeepEqual(inspection.OperatorNames(), []string{"contains", "eq", "gt", "in-net", "is-empty", "is-false", "is-none", "is-true", "lt", "matches", "one-of"}) {
		t.Errorf("operators = %v", inspection.OperatorNames())
	}
}

func TestConditionErrors(t *testing.T) {
	cases := []struct {
		cond  string
		class errs.Class
		msg   string
	}{
		{`{"op": "!!eq", "args": {"values": []}}`, "IronicException", "Failed to apply rule r1 to node 1be26c0b-03f2-4d2e-ae87-c02d7f33c123: Multiple exclamation marks are not allowed."},
		{`{"op": "le", "args": {"values": []}}`, "IronicException", "Unsupported operator: 'le'. Supported operators are: contains, eq, gt"},
		{`{"op": "eq", "args": {"values": "x"}}`, "RuleConditionCheckFailure", "Expected list for 'values', got: str"},
		{`{"op": "gt", "args": {"values": ["{inventory[cpu][count]}", 4]}}`, "IronicException", "'>' not supported between instances of 'str' and 'int'"},
		{`{"op": "matches", "args": {"value": "x", "regex": "("}}`, "InspectionRuleExecutionFailure", "invalid regular expression"},
		{`{"op": "in-net", "args": {"address": "1.2.3.4", "subnet": "bad"}}`, "InspectionRuleExecutionFailure", "invalid value"},
		{`{"op": "eq", "args": {"value": 1}}`, "InspectionRuleValidationFailure", "missing required argument(s): values; unexpected argument(s): value"},
	}
	for _, c := range cases {
		_, err := matches(t, decode(t, c.cond))
		if !errs.Is(err, c.class) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %s containing %q", c.cond, err, c.class, c.msg)
		}
	}
}

func apply(t *testing.T, tg *memTarget, pd map[string]any, o inspection.RuleOptions, rules ...inspection.Rule) error {
	t.Helper()
	return inspection.NewEngine(o).Apply(context.Background(), tg, rules, decode(t, rulesInventory), pd)
}

func acts(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNodeActions(t *testing.T) {
	tg := newTarget()
	tg.node.Properties["capabilities"] = "boot_mode:uefi,x:1"
	tg.traits["CUSTOM_OLD"] = true
	var logs bytes.Buffer
	o := inspection.RuleOptions{Log: slog.New(slog.NewTextHandler(&logs, nil))}
	err := apply(t, tg, map[string]any{}, o, inspection.Rule{UUID: "r1", Actions: acts(t, `[
	 {"op": "set-attribute", "args": {"path": "/properties/cpus", "value": "{inventory[cpu][count]}"}},
	 {"op": "set-attribute", "args": {"path": "resource_class", "value": "large"}},
	 {"op": "set-attribute", "args": {"path": "extra.a.b", "value": 1}},
	 {"op": "extend-attribute", "args": {"path": "extra.tags", "value": "x"}},
	 {"op": "extend-attribute", "args": {"path": "extra.tags", "value": "x", "unique": true}},
	 {"op": "extend-attribute", "args": {"path": "extra.tags", "value": "y"}},
	 {"op": "set-attribute", "args": {"path": "extra.gone", "value": 1}},
	 {"op": "del-attribute", "args": {"path": "extra.gone"}},
	 {"op": "set-capability", "args": {"name": "cpu_vt", "value": "true"}},
	 {"op": "unset-capability", "args": {"name": "x"}},
	 {"op": "add-trait", "args": {"name": "CUSTOM_{inventory[cpu][architecture]}"}},
	 {"op": "add-trait", "loop": ["CUSTOM_A", "CUSTOM_B"], "args": {"name": "{item}"}},
	 {"op": "remove-trait", "args": {"name": "CUSTOM_OLD"}},
	 {"op": "remove-trait", "args": {"name": "CUSTOM_NEVER"}},
	 {"op": "log", "args": {"msg": "arch {inventory[cpu][architecture]}", "level": "WARNING"}}
	]`)})
	if err != nil {
		t.Fatal(err)
	}
	n := tg.node
	if n.Properties["cpus"] != "8" || *n.ResourceClass != "large" || n.Properties["capabilities"] != "boot_mode:uefi,cpu_vt:true" {
		t.Errorf("node = %v %v", n.Properties, *n.ResourceClass)
	}
	if got, _ := json.Marshal(n.Extra); string(got) != `{"a":{"b":1},"tags":["x","y"]}` {
		t.Errorf("extra = %s", got)
	}
	// Trait names are not interpolated (only formatted arguments are).
	want := map[string]bool{"CUSTOM_{inventory[cpu][architecture]}": true, "CUSTOM_A": true, "CUSTOM_B": true}
	if !reflect.DeepEqual(tg.traits, want) {
		t.Errorf("traits = %v", tg.traits)
	}
	if !strings.Contains(logs.String(), "level=WARN msg=\"arch x86_64\" rule=r1") {
		t.Errorf("logs = %s", logs.String())
	}
	for _, c := range []struct {
		action string
		class  errs.Class
		msg    string
	}{
		{`{"op": "fail", "args": {"msg": "bad {inventory[cpu][count]}"}}`, "HardwareInspectionFailure", "Failed to inspect hardware. Reason: bad {inventory[cpu][count]}"},
		{`{"op": "log", "args": {"msg": "m", "level": "loud"}}`, "InspectionRuleExecutionFailure", "Invalid log level: loud"},
		{`{"op": "set-attribute", "args": {"path": "nope", "value": 1}}`, "RuleActionExecutionFailure", "Failed to set attribute nope with value 1"},
		{`{"op": "extend-attribute", "args": {"path": "driver", "value": 1}}`, "RuleActionExecutionFailure", "Cannot extend non-list attribute driver with value 1"},
		{`{"op": "del-attribute", "args": {"path": "extra.missing"}}`, "RuleActionExecutionFailure", "Failed to delete attribute at extra.missing"},
		{`{"op": "explode", "args": {}}`, "IronicException", "Unsupported action: 'explode'. Supported actions are: add-trait, api-call, del-attribute"},
	} {
		err := apply(t, newTarget(), map[string]any{}, inspection.RuleOptions{}, inspection.Rule{UUID: "r2", Actions: acts(t, "["+c.action+"]")})
		if !errs.Is(err, c.class) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %s containing %q", c.action, err, c.class, c.msg)
		}
	}
	if len(inspection.ActionNames()) != 16 {
		t.Errorf("actions = %v", inspection.ActionNames())
	}
}

func TestPluginDataAndPortActions(t *testing.T) {
	tg := newTarget()
	mac := "52:54:00:aa:bb:01"
	if err := tg.CreatePort(context.Background(), &model.Port{Address: &mac, Extra: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	id := tg.ports[0].UUID
	pd := map[string]any{"keep": 1, "one": map[string]any{"only": 1}}
	err := apply(t, tg, pd, inspection.RuleOptions{}, inspection.Rule{UUID: "r1", Actions: acts(t, `[
	 {"op": "set-plugin-data", "args": {"path": "a.b", "value": "{inventory[memory][physical_mb]}"}},
	 {"op": "extend-plugin-data", "args": {"path": "list", "value": 1}},
	 {"op": "extend-plugin-data", "args": {"path": "list", "value": 1, "unique": true}},
	 {"op": "extend-plugin-data", "args": {"path": "list", "value": 2}},
	 {"op": "unset-plugin-data", "args": {"path": "one.only"}},
	 {"op": "unset-plugin-data", "args": {"path": "absent.x"}},
	 {"op": "set-port-attribute", "args": {"port_id": "`+id+`", "path": "physical_network", "value": "physnet1"}},
	 {"op": "set-port-attribute", "args": {"port_id": "`+id+`", "path": "extra.rack", "value": "r1"}},
	 {"op": "extend-port-attribute", "args": {"port_id": "`+id+`", "path": "extra.vlans", "value": 10}},
	 {"op": "set-port-attribute", "args": {"port_id": "`+id+`", "path": "extra.gone", "value": 1}},
	 {"op": "del-port-attribute", "args": {"port_id": "`+id+`", "path": "extra.gone"}}
	]`)})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(pd); string(got) != `{"a":{"b":"16384"},"keep":1,"list":[1,2]}` {
		t.Errorf("plugin data = %s", got)
	}
	p := tg.ports[0]
	if got, _ := json.Marshal(p.Extra); *p.PhysicalNetwork != "physnet1" || string(got) != `{"rack":"r1","vlans":[10]}` {
		t.Errorf("port = %v %s", *p.PhysicalNetwork, got)
	}
	err = apply(t, tg, pd, inspection.RuleOptions{}, inspection.Rule{UUID: "r1", Actions: acts(t, `[{"op": "set-port-attribute", "args": {"port_id": "nope", "path": "extra.x", "value": 1}}]`)})
	if !errs.Is(err, errs.ClassPortNotFound) {
		t.Errorf("err = %v", err)
	}
}

func TestAPICallAction(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+" "+r.Header.Get("X-Token"))
		if r.URL.Path == "/bad" {
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
	tg := newTarget()
	err := apply(t, tg, map[string]any{}, inspection.RuleOptions{}, inspection.Rule{UUID: "r1", Actions: acts(t, `[
	 {"op": "api-call", "args": {"url": "`+srv.URL+`/hook/{inventory[cpu][architecture]}", "headers": {"X-Token": "t"}}}]`)})
	if err != nil || !reflect.DeepEqual(got, []string{"/hook/x86_64 t"}) {
		t.Fatalf("err %v, requests %v", err, got)
	}
	err = apply(t, tg, map[string]any{}, inspection.RuleOptions{}, inspection.Rule{UUID: "r1", Actions: acts(t, `[{"op": "api-call", "args": {"url": "`+srv.URL+`/bad", "retries": 0}}]`)})
	if !errs.Is(err, errs.ClassRuleActionExecutionFailure) || !strings.Contains(err.Error(), "Request to "+srv.URL+"/bad failed: 404") {
		t.Errorf("err = %v", err)
	}
}

func TestPriorityMaskingAndSampleRule(t *testing.T) {
	tg := newTarget()
	pd := map[string]any{}
	set := func(v string) []map[string]any {
		return []map[string]any{{"op": "set-plugin-data", "args": map[string]any{"path": "order", "value": v}}}
	}
	// The later rule (lower priority) wins the write.
	err := apply(t, tg, pd, inspection.RuleOptions{}, inspection.Rule{UUID: "low", Priority: 1, Actions: set("low")}, inspection.Rule{UUID: "high", Priority: 90, Actions: set("high")})
	if err != nil || pd["order"] != "low" {
		t.Errorf("order = %v, %v", pd["order"], err)
	}
	secret := []map[string]any{{"op": "set-plugin-data", "args": map[string]any{"path": "pw", "value": "{inventory[bmc_password]}"}}}
	for _, c := range []struct {
		mask      string
		sensitive bool
		want      string
	}{{"always", true, "***"}, {"never", false, "secret"}, {"sensitive", true, "secret"}, {"sensitive", false, "***"}} {
		pd := map[string]any{}
		if err := apply(t, tg, pd, inspection.RuleOptions{MaskSecrets: c.mask}, inspection.Rule{UUID: "s", Sensitive: c.sensitive, Actions: secret}); err != nil || pd["pw"] != c.want {
			t.Errorf("mask %s sensitive %v: pw = %v, %v", c.mask, c.sensitive, pd["pw"], err)
		}
	}
	var sample model.InspectionRule
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/inspection-rule-show-response.json", &sample)
	tg = newTarget()
	if err := apply(t, tg, map[string]any{}, inspection.RuleOptions{}, inspection.RuleFromModel(&sample)); err != nil {
		t.Fatal(err)
	}
	// As upstream, the interpolated count is the string "8", which is-true
	// does not take for true: the sample rule only fires for "yes"/"true".
	if len(tg.node.Properties) != 0 {
		t.Errorf("properties = %v", tg.node.Properties)
	}
	sample.Conditions[0]["args"] = map[string]any{"value": "{inventory[yes]}"}
	if err := apply(t, tg, map[string]any{}, inspection.RuleOptions{}, inspection.RuleFromModel(&sample)); err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(tg.node.Properties); string(got) != `{"cpu_arch":"x86_64","cpus":"8","memory_mb":"16384"}` {
		t.Errorf("properties = %s", got)
	}
}

func TestLoadBuiltInRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	yaml := `
- priority: 10
  actions:
    - op: set-attribute
      args: {path: resource_class, value: built-in}
- uuid: 11111111-2222-3333-4444-555555555555
  phase: other
  actions: [{op: log, args: {msg: x}}]
- conditions: [{op: gt, args: {values: [2, 1]}}]
  actions: [{op: log, args: {msg: y}}]
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	rules, err := inspection.LoadBuiltInRules(path, "main")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || rules[0].UUID != "00000000-0000-0000-0000-000000000000" || rules[0].Priority != 10 || rules[1].UUID != "00000000-0000-0000-0000-000000000001" {
		t.Fatalf("rules = %+v", rules)
	}
	tg := newTarget()
	if err := apply(t, tg, map[string]any{}, inspection.RuleOptions{}, rules...); err != nil || *tg.node.ResourceClass != "built-in" {
		t.Errorf("resource_class = %v, %v", *tg.node.ResourceClass, err)
	}
	if err := os.WriteFile(path, []byte("a: 1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := inspection.LoadBuiltInRules(path, "main"); err == nil || !strings.Contains(err.Error(), "should contain a list of rules") {
		t.Errorf("err = %v", err)
	}
}
