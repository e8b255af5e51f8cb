package policy

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/testing/fakeclock"
)

// legacyAdmin is a pre-RBAC baremetal admin: rule:is_admin through
// is_member and role baremetal_admin.
var legacyAdmin = &Credentials{Roles: []string{"baremetal_admin"}, ProjectID: otherProject, ProjectName: "baremetal", ProjectDomainID: "default", IsAdminProject: true}

func TestDeprecatedRulesCombined(t *testing.T) {
	target := &OwnerTarget{Object: "node", Owner: ownerProject}
	cases := []struct {
		rule  string
		creds *Credentials
		old   bool // outcome with enforce_new_defaults = false
		new   bool
	}{
		{"baremetal:node:get", legacyAdmin, true, false},
		{"baremetal:node:get", personas["owner_reader"], true, true},
		{"baremetal:node:create", personas["owner_admin"], true, false}, // admin_api: role:admin
		{"baremetal:node:create", personas["system_admin"], true, true},
		{"baremetal:node:list_all", legacyAdmin, true, false}, // via rule:baremetal:node:get, itself combined
		{"baremetal:allocation:list_all", legacyAdmin, true, false},
		{"baremetal:allocation:list_all", &Credentials{Roles: []string{"baremetal_admin"}, ProjectName: "baremetal", ProjectDomainID: "default"}, false, false}, // not admin project
		{"baremetal:node:ipa_heartbeat", personas["no_roles"], true, true},
		{"baremetal:runbook:get", legacyAdmin, false, false}, // no deprecated rule
		{"baremetal:node:create:self_owned_node", personas["owner_admin"], true, true},
	}
	for _, enforceNew := range []bool{false, true} {
		e := newTestEnforcer(t, Options{EnforceNewDefaults: enforceNew, EnforceScope: true})
		for _, c := range cases {
			want := c.old
			if enforceNew {
				want = c.new
			}
			if got := e.Enforce(c.rule, target, c.creds); got != want {
				t.Errorf("enforce_new_defaults=%v %s: got %v, want %v", enforceNew, c.rule, got, want)
			}
		}
	}
	e := newTestEnforcer(t, Options{})
	if s, _ := e.RuleString("baremetal:node:create"); s != "(((role:admin and system_scope:all) or (role:service and system_scope:all)) or rule:is_admin)" {
		t.Errorf("combined rule renders %s", s)
	}
}

func writeFile(t *testing.T, path, data string, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestPolicyFileOverrides(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	formats := map[string]string{
		"policy.yaml": "# operator overrides\n\"baremetal:node:get\": \"role:auditor\"\nbaremetal:chassis:get: '@'\ncustom: role:custom\nbaremetal:node:list: rule:custom\n\"baremetal:step:execute:deploy.deploy\": \"!\"\n",
		"policy.json": `{"baremetal:node:get": "role:auditor", "baremetal:chassis:get": "@", "custom": "role:custom", "baremetal:node:list": "rule:custom", "baremetal:step:execute:deploy.deploy": "!"}`,
	}
	for name, data := range formats {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, name), data, base)
			e := newTestEnforcer(t, Options{PolicyFile: name, SearchDirs: []string{filepath.Join(dir, "missing"), dir}, EnforceNewDefaults: true})
			auditor := &Credentials{Roles: []string{"auditor"}, ProjectID: otherProject}
			target := &OwnerTarget{Object: "node", Owner: ownerProject}
			if !e.Enforce("baremetal:node:get", target, auditor) {
				t.Error("override of baremetal:node:get not applied")
			}
			if e.Enforce("baremetal:node:get", target, personas["system_admin"]) {
				t.Error("overridden rule still admits the default's personas")
			}
			if !e.Enforce("baremetal:chassis:get", nil, personas["system_reader"]) || !e.Enforce("baremetal:chassis:get", nil, &Credentials{SystemScope: "all"}) {
				t.Error("'@' override not applied")
			}
			if !e.Enforce("baremetal:node:list", nil, &Credentials{Roles: []string{"custom"}}) {
				t.Error("rule: reference to a file-only rule not resolved")
			}
			if !e.HasRule("baremetal:step:execute:deploy.deploy") || e.HasRule("baremetal:step:execute:deploy.other") {
				t.Error("HasRule does not reflect the file")
			}
			if e.Registered("custom") || !e.Registered("baremetal:node:get") {
				t.Error("Registered must only report defaults")
			}
			// Rules the file does not name keep their defaults.
			if !e.Enforce("baremetal:port:get", target, personas["owner_reader"]) {
				t.Error("default rule lost")
			}
		})
	}
}

func TestRenamedDeprecatedRuleOverride(t *testing.T) {
	// baremetal:node:get:filter_threshold replaced baremetal:node:get;
	// an operator override of the old name keeps governing the new rule.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "policy.yaml"), "baremetal:node:get: role:auditor\n", time.Now())
	e := newTestEnforcer(t, Options{PolicyFile: filepath.Join(dir, "policy.yaml"), EnforceNewDefaults: true})
	auditor := &Credentials{Roles: []string{"auditor"}}
	if !e.Enforce("baremetal:node:get:filter_threshold", nil, auditor) {
		t.Error("override of the deprecated name not carried to the new rule")
	}
	// Pointing the old name at the new one does not loop back.
	writeFile(t, filepath.Join(dir, "policy.yaml"), "baremetal:node:get: rule:baremetal:node:get:filter_threshold\n", time.Now().Add(time.Hour))
	if err := e.Reload(); err != nil {
		t.Fatal(err)
	}
	if !e.Enforce("baremetal:node:get:filter_threshold", nil, personas["system_reader"]) || e.Enforce("baremetal:node:get:filter_threshold", nil, auditor) {
		t.Error("rule:<new name> override must leave the new default in force")
	}
}

func TestReloadOnChange(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	writeFile(t, path, "baremetal:chassis:get: role:one\n", base)
	clk := fakeclock.New(base)
	e := newTestEnforcer(t, Options{PolicyFile: path, CheckInterval: 5 * time.Second, Now: clk.Now, EnforceNewDefaults: true})
	one := &Credentials{Roles: []string{"one"}, SystemScope: "all"}
	two := &Credentials{Roles: []string{"two"}, SystemScope: "all"}
	if !e.Enforce("baremetal:chassis:get", nil, one) {
		t.Fatal("initial file not applied")
	}
	writeFile(t, path, "baremetal:chassis:get: role:two\n", base.Add(time.Minute))
	clk.Advance(time.Second)
	if !e.Enforce("baremetal:chassis:get", nil, one) {
		t.Error("reloaded before the check interval elapsed")
	}
	clk.Advance(5 * time.Second)
	if !e.Enforce("baremetal:chassis:get", nil, two) || e.Enforce("baremetal:chassis:get", nil, one) {
		t.Error("changed file not reloaded")
	}
	// A broken file keeps the previous rules.
	writeFile(t, path, "baremetal:chassis:get: [unclosed\n", base.Add(2*time.Minute))
	clk.Advance(5 * time.Second)
	if !e.Enforce("baremetal:chassis:get", nil, two) {
		t.Error("broken file replaced the rules")
	}
	// Removing the file removes the overrides, as upstream.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Second)
	if e.Enforce("baremetal:chassis:get", nil, two) || !e.Enforce("baremetal:chassis:get", nil, personas["system_reader"]) {
		t.Error("defaults not restored after the file was removed")
	}
	// A file that appears later is picked up.
	writeFile(t, path, "baremetal:chassis:get: role:three\n", base.Add(3*time.Minute))
	clk.Advance(5 * time.Second)
	if !e.Enforce("baremetal:chassis:get", nil, &Credentials{Roles: []string{"three"}, SystemScope: "all"}) {
		t.Error("new file not picked up")
	}
}

func TestPolicyDirs(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	writeFile(t, filepath.Join(dir, "policy.yaml"), "a: role:main\nb: role:main\n", now)
	writeFile(t, filepath.Join(dir, "policy.d", "10-x.yaml"), "b: role:x\nc: role:x\n", now)
	writeFile(t, filepath.Join(dir, "policy.d", "20-y.json"), `{"c": "role:y"}`, now)
	writeFile(t, filepath.Join(dir, "policy.d", ".hidden.yaml"), "a: '!'\n", now)
	e := newTestEnforcer(t, Options{PolicyFile: "policy.yaml", PolicyDirs: []string{"policy.d", "absent.d"}, SearchDirs: []string{dir}})
	for rule, role := range map[string]string{"a": "main", "b": "x", "c": "y"} {
		if s, _ := e.RuleString(rule); s != "role:"+role {
			t.Errorf("rule %s = %s, want role:%s", rule, s, role)
		}
	}
}

func TestStartupRejectsBrokenFile(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"bad.yaml":  "a: [unclosed\n",
		"list.yaml": "- a\n- b\n",
		"type.yaml": "a: 3\n",
	} {
		writeFile(t, filepath.Join(dir, name), data, time.Now())
		if _, err := New(Options{PolicyFile: filepath.Join(dir, name)}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A rule string that does not parse fails closed but loads.
	writeFile(t, filepath.Join(dir, "ok.yaml"), "baremetal:chassis:get: role:admin and\nlegacy: [[\"role:a\", \"role:b\"], [\"role:c\"]]\nnone:\n", time.Now())
	e := newTestEnforcer(t, Options{PolicyFile: filepath.Join(dir, "ok.yaml")})
	if e.Enforce("baremetal:chassis:get", nil, personas["system_admin"]) {
		t.Error("unparsable override must fail closed")
	}
	if s, _ := e.RuleString("legacy"); s != "((role:a and role:b) or role:c)" {
		t.Errorf("list rule = %s", s)
	}
	if s, _ := e.RuleString("none"); s != "@" {
		t.Errorf("empty value = %s", s)
	}
}

func TestUnknownRulesAndDefaultRule(t *testing.T) {
	e := newTestEnforcer(t, Options{DefaultRule: "default"})
	if e.Enforce("baremetal:nope", nil, personas["system_admin"]) {
		t.Error("unknown rule must fail closed")
	}
	err := e.Authorize("baremetal:nope", nil, personas["system_admin"])
	if !errs.Is(err, errs.ClassPolicyNotRegistered) || errs.Status(err) != 500 || err.Error() != "Policy baremetal:nope has not been registered" {
		t.Errorf("Authorize unknown: %v (%d)", err, errs.Status(err))
	}

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "policy.yaml"), "default: role:fallback\nx: rule:missing\n", time.Now())
	e = newTestEnforcer(t, Options{PolicyFile: filepath.Join(dir, "policy.yaml"), DefaultRule: "default"})
	fb := &Credentials{Roles: []string{"fallback"}}
	if !e.Enforce("baremetal:nope", nil, fb) || !e.Enforce("x", nil, fb) {
		t.Error("default rule not used for unknown names")
	}
	if err := e.Authorize("baremetal:nope", nil, fb); !errs.Is(err, errs.ClassPolicyNotRegistered) {
		t.Errorf("Authorize must still require registration: %v", err)
	}
}

func TestAuthorizeErrors(t *testing.T) {
	e := newTestEnforcer(t, Options{EnforceScope: true, EnforceNewDefaults: true})
	target := &OwnerTarget{Object: "node", Owner: ownerProject}
	if err := e.Authorize("baremetal:node:get", target, personas["owner_reader"]); err != nil {
		t.Errorf("allowed: %v", err)
	}
	err := e.Authorize("baremetal:node:get", target, personas["third_admin"])
	if !errs.Is(err, errs.ClassHTTPForbidden) || !errs.Is(err, errs.ClassNotAuthorized) || errs.Status(err) != 403 ||
		err.Error() != "Access was denied to the following resource: baremetal:node:get" {
		t.Errorf("denied: %v", err)
	}
	// Chassis rules are system-only: a project token is the wrong scope,
	// whatever its roles.
	err = e.Authorize("baremetal:chassis:get", nil, personas["owner_admin"])
	want := `"baremetal:chassis:get": "(role:reader and system_scope:all) or (role:service and system_scope:all) or rule:service_role" requires a scope of ['system'], request was made with project scope.`
	if !errs.Is(err, errs.ClassInvalidScope) || errs.Status(err) != 500 || err.Error() != want {
		t.Errorf("scope: %v", err)
	}
	domain := &Credentials{Roles: []string{"admin"}, DomainID: "d1"}
	if err := e.Authorize("baremetal:node:get", target, domain); !errs.Is(err, errs.ClassInvalidScope) {
		t.Errorf("domain token: %v", err)
	}
	if e.Enforce("baremetal:chassis:get", nil, &Credentials{Roles: []string{"reader"}, ProjectID: "p", ServiceProjectName: "x"}) {
		t.Error("Enforce must refuse the wrong scope")
	}
	// Rules without scope types accept any token.
	if !e.Enforce("baremetal:driver:ipa_lookup", nil, domain) {
		t.Error("unscoped rule refused a domain token")
	}
	// Without enforce_scope the check string alone decides.
	loose := newTestEnforcer(t, Options{EnforceNewDefaults: true})
	svc := personas["service_project"]
	if err := loose.Authorize("baremetal:chassis:get", nil, svc); err != nil {
		t.Errorf("enforce_scope=false: %v", err)
	}
	if err := e.Authorize("baremetal:chassis:get", nil, svc); !errs.Is(err, errs.ClassInvalidScope) {
		t.Errorf("enforce_scope=true service project: %v", err)
	}
}

func TestCyclicRulesFailClosed(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "p.yaml"), "a: rule:b\nb: rule:a or role:x\n", time.Now())
	e := newTestEnforcer(t, Options{PolicyFile: filepath.Join(dir, "p.yaml")})
	if e.Enforce("a", nil, &Credentials{Roles: []string{"y"}}) {
		t.Error("cycle admitted")
	}
	if !e.Enforce("a", nil, &Credentials{Roles: []string{"x"}}) {
		t.Error("cycle with a satisfiable branch refused")
	}
}
