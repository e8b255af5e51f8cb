package policy

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
)

type specPolicies struct {
	Count     int `json:"count"`
	Constants map[string]struct {
		Value string `json:"value"`
	} `json:"check_str_constants"`
	Rules []struct {
		Name       string   `json:"name"`
		CheckStr   string   `json:"check_str"`
		ScopeTypes []string `json:"scope_types"`
		Expr       string   `json:"check_str_expr"`
		Deprecated *struct {
			Name     string `json:"name"`
			CheckStr string `json:"check_str"`
		} `json:"deprecated_rule"`
	} `json:"rules"`
}

func loadSpec(t *testing.T) specPolicies {
	t.Helper()
	var s specPolicies
	spectest.LoadJSON(t, "ironic/api/policies.json", &s)
	return s
}

// TestDefaultsMatchSpec replays policies.json against the generated table:
// same rules in the same order with the same check strings, scopes and
// deprecated rules.
func TestDefaultsMatchSpec(t *testing.T) {
	spec := loadSpec(t)
	defs := Defaults()
	if len(spec.Rules) != spec.Count || len(defs) != len(spec.Rules) {
		t.Fatalf("spec has %d rules (count %d), table %d", len(spec.Rules), spec.Count, len(defs))
	}
	for i, r := range spec.Rules {
		d := defs[i]
		if d.Name != r.Name || d.CheckStr != r.CheckStr {
			t.Errorf("rule %d: table %q %q, spec %q %q", i, d.Name, d.CheckStr, r.Name, r.CheckStr)
		}
		if !reflect.DeepEqual(d.ScopeTypes, r.ScopeTypes) && (len(d.ScopeTypes) != 0 || len(r.ScopeTypes) != 0) {
			t.Errorf("%s: scope %v, spec %v", r.Name, d.ScopeTypes, r.ScopeTypes)
		}
		switch {
		case (d.Deprecated == nil) != (r.Deprecated == nil):
			t.Errorf("%s: deprecated %v, spec %v", r.Name, d.Deprecated, r.Deprecated)
		case d.Deprecated != nil && (d.Deprecated.Name != r.Deprecated.Name || d.Deprecated.CheckStr != r.Deprecated.CheckStr):
			t.Errorf("%s: deprecated %+v, spec %+v", r.Name, *d.Deprecated, *r.Deprecated)
		}
	}
}

// TestSpecCheckStringsParse parses every check string of policies.json
// (rules, deprecated rules, named constants): no error, and the rendering
// parses back to the same tree.
func TestSpecCheckStringsParse(t *testing.T) {
	spec := loadSpec(t)
	var all []string
	for _, r := range spec.Rules {
		all = append(all, r.CheckStr)
		if r.Deprecated != nil {
			all = append(all, r.Deprecated.CheckStr)
		}
	}
	for _, c := range spec.Constants {
		all = append(all, c.Value)
	}
	for _, s := range all {
		r, err := Parse(s)
		if err != nil {
			t.Errorf("Parse(%q): %v", s, err)
			continue
		}
		again, err := Parse(r.String())
		if err != nil || !again.Equal(r) {
			t.Errorf("round trip of %q: %s -> %s (%v)", s, r, again, err)
		}
	}
}

// Personas. Roles are as Keystone issues them with implied roles expanded
// (admin implies member implies reader; manager implies member).
const (
	ownerProject   = "0wner0000000000000000000000000000"
	lesseeProject  = "1essee00000000000000000000000000"
	otherProject   = "0ther000000000000000000000000000"
	serviceProject = "5ervice0000000000000000000000000"
)

var personas = map[string]*Credentials{
	"system_admin":   {Roles: []string{"admin", "member", "reader"}, SystemScope: "all", IsAdminProject: true},
	"system_member":  {Roles: []string{"member", "reader"}, SystemScope: "all", IsAdminProject: true},
	"system_reader":  {Roles: []string{"reader"}, SystemScope: "all", IsAdminProject: true},
	"system_service": {Roles: []string{"service"}, SystemScope: "all", IsAdminProject: true},
	"owner_admin":    {Roles: []string{"admin", "member", "reader"}, ProjectID: ownerProject, IsAdminProject: true},
	"owner_manager":  {Roles: []string{"manager", "member", "reader"}, ProjectID: ownerProject, IsAdminProject: true},
	"owner_member":   {Roles: []string{"member", "reader"}, ProjectID: ownerProject, IsAdminProject: true},
	"owner_reader":   {Roles: []string{"reader"}, ProjectID: ownerProject, IsAdminProject: true},
	"owner_service":  {Roles: []string{"service"}, ProjectID: ownerProject, IsAdminProject: true},
	"lessee_admin":   {Roles: []string{"admin", "member", "reader"}, ProjectID: lesseeProject, IsAdminProject: true},
	"lessee_manager": {Roles: []string{"manager", "member", "reader"}, ProjectID: lesseeProject, IsAdminProject: true},
	"lessee_member":  {Roles: []string{"member", "reader"}, ProjectID: lesseeProject, IsAdminProject: true},
	"lessee_reader":  {Roles: []string{"reader"}, ProjectID: lesseeProject, IsAdminProject: true},
	"third_admin":    {Roles: []string{"admin", "member", "reader"}, ProjectID: otherProject, IsAdminProject: true},
	// The service project with rbac_service_role_elevated_access on.
	"service_project": {Roles: []string{"service"}, ProjectID: serviceProject, ProjectName: "service", ServiceProjectName: "service", IsAdminProject: true},
	"no_roles":        {ProjectID: ownerProject, IsAdminProject: true},
}

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

func union(sets ...map[string]bool) map[string]bool {
	m := map[string]bool{}
	for _, s := range sets {
		for k := range s {
			m[k] = true
		}
	}
	return m
}

// constantExpectations are the personas each named check string of
// ironic/common/policy.py admits, reasoned from what the constant is meant
// to express; composites are the unions of the constants upstream builds
// them from.
func constantExpectations() map[string]map[string]bool {
	e := map[string]map[string]bool{}
	e["SYSTEM_ADMIN"] = set("system_admin")
	e["SYSTEM_MEMBER"] = set("system_admin", "system_member", "service_project")
	e["SYSTEM_READER"] = set("system_admin", "system_member", "system_reader", "system_service", "service_project")
	e["SYSTEM_SERVICE"] = set("system_service")
	e["PROJECT_SERVICE"] = set("owner_service")
	e["PROJECT_OWNER_ADMIN"] = set("owner_admin")
	e["PROJECT_ADMIN"] = e["PROJECT_OWNER_ADMIN"]
	e["PROJECT_OWNER_MANAGER"] = set("owner_manager")
	e["PROJECT_OWNER_MEMBER"] = set("owner_admin", "owner_manager", "owner_member")
	e["PROJECT_OWNER_READER"] = set("owner_admin", "owner_manager", "owner_member", "owner_reader")
	e["PROJECT_LESSEE_ADMIN"] = set("lessee_admin")
	e["PROJECT_LESSEE_MANAGER"] = set("lessee_manager")
	e["PROJECT_MANAGER"] = set("owner_manager", "lessee_manager")
	e["PROJECT_MEMBER"] = set("owner_admin", "owner_manager", "owner_member", "lessee_admin", "lessee_manager", "lessee_member")
	e["PROJECT_READER"] = union(e["PROJECT_MEMBER"], set("owner_reader", "lessee_reader"))
	// Allocation and runbook owners are the owner project in the target.
	for _, obj := range []string{"ALLOCATION", "RUNBOOK"} {
		e[obj+"_OWNER_ADMIN"] = e["PROJECT_OWNER_ADMIN"]
		e[obj+"_OWNER_MANAGER"] = e["PROJECT_OWNER_MANAGER"]
		e[obj+"_OWNER_MEMBER"] = e["PROJECT_OWNER_MEMBER"]
		e[obj+"_OWNER_READER"] = e["PROJECT_OWNER_READER"]
	}
	anyService := set("system_service", "owner_service", "service_project")
	anyMember := set("system_admin", "system_member", "owner_admin", "owner_manager", "owner_member", "lessee_admin", "lessee_manager", "lessee_member", "third_admin")
	anyReader := union(anyMember, set("system_reader", "owner_reader", "lessee_reader"))
	anyAdmin := set("system_admin", "owner_admin", "lessee_admin", "third_admin")
	anyManager := set("owner_manager", "lessee_manager")

	e["SYSTEM_OR_PROJECT_MEMBER"] = union(e["SYSTEM_MEMBER"], e["PROJECT_MEMBER"], e["SYSTEM_SERVICE"])
	e["SYSTEM_OR_PROJECT_READER"] = union(e["SYSTEM_READER"], e["PROJECT_READER"], e["PROJECT_SERVICE"])
	e["SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN"] = union(e["SYSTEM_MEMBER"], e["SYSTEM_SERVICE"], e["PROJECT_OWNER_MEMBER"], e["PROJECT_LESSEE_ADMIN"], e["PROJECT_LESSEE_MANAGER"], e["PROJECT_SERVICE"])
	e["SYSTEM_ADMIN_OR_OWNER_ADMIN"] = union(e["SYSTEM_ADMIN"], e["SYSTEM_SERVICE"], e["PROJECT_OWNER_ADMIN"], e["PROJECT_OWNER_MANAGER"], e["PROJECT_SERVICE"])
	e["SYSTEM_MEMBER_OR_OWNER_ADMIN"] = union(e["SYSTEM_MEMBER"], e["SYSTEM_SERVICE"], e["PROJECT_OWNER_ADMIN"], e["PROJECT_OWNER_MANAGER"], e["PROJECT_SERVICE"])
	e["SYSTEM_MEMBER_OR_OWNER_MEMBER"] = union(e["SYSTEM_MEMBER"], e["SYSTEM_SERVICE"], e["PROJECT_OWNER_MEMBER"], e["PROJECT_SERVICE"])
	e["SYSTEM_OR_OWNER_READER"] = union(e["SYSTEM_READER"], e["SYSTEM_SERVICE"], e["PROJECT_OWNER_READER"], e["PROJECT_SERVICE"])
	e["SYSTEM_MEMBER_OR_OWNER_LESSEE_ADMIN"] = union(e["SYSTEM_MEMBER"], e["SYSTEM_SERVICE"], e["PROJECT_OWNER_ADMIN"], e["PROJECT_OWNER_MANAGER"], e["PROJECT_LESSEE_ADMIN"], e["PROJECT_LESSEE_MANAGER"], e["PROJECT_SERVICE"])
	e["ALLOCATION_MEMBER"] = union(e["SYSTEM_MEMBER"], e["ALLOCATION_OWNER_MEMBER"])
	e["ALLOCATION_READER"] = union(e["SYSTEM_READER"], e["ALLOCATION_OWNER_READER"])
	e["ALLOCATION_CREATOR"] = union(e["SYSTEM_MEMBER"], anyMember)
	e["RUNBOOK_ADMIN"] = union(e["SYSTEM_MEMBER"], e["RUNBOOK_OWNER_MANAGER"], anyService)
	e["RUNBOOK_READER"] = union(e["SYSTEM_READER"], e["RUNBOOK_OWNER_READER"], anyService)
	e["RUNBOOK_CREATOR"] = union(e["SYSTEM_MEMBER"], anyManager, anyService)
	e["API_READER"] = union(anyReader, anyService)
	e["TARGET_PROPERTIES_READER"] = union(e["SYSTEM_READER"], anyAdmin)
	return e
}

// ruleExpectations covers the rules whose check string is not one of the
// named constants, read from their check strings by hand.
func ruleExpectations() map[string]map[string]bool {
	anyAdmin := set("system_admin", "owner_admin", "lessee_admin", "third_admin")
	anyService := set("system_service", "owner_service", "service_project")
	everyone := map[string]bool{}
	for p := range personas {
		everyone[p] = true
	}
	return map[string]map[string]bool{
		"admin_api":             anyAdmin,
		"public_api":            set(),
		"show_password":         set(),
		"show_instance_secrets": set(),
		"service_role":          set("service_project"),
		// No persona is in the legacy demo/baremetal projects.
		"is_member":                                set(),
		"is_observer":                              set(),
		"is_admin":                                 anyAdmin,
		"is_node_owner":                            set("owner_admin", "owner_manager", "owner_member", "owner_reader", "owner_service", "no_roles"),
		"is_node_lessee":                           set("lessee_admin", "lessee_manager", "lessee_member", "lessee_reader"),
		"is_allocation_owner":                      set("owner_admin", "owner_manager", "owner_member", "owner_reader", "owner_service", "no_roles"),
		"baremetal:node:create":                    set("system_admin", "system_service"),
		"baremetal:node:create:self_owned_node":    union(anyAdmin, anyService),
		"baremetal:node:ipa_heartbeat":             everyone,
		"baremetal:driver:ipa_lookup":              everyone,
		"baremetal:driver:ipa_continue_inspection": everyone,
		// is_admin_project defaults to true, so every admin passes.
		"baremetal:allocation:create_pre_rbac": anyAdmin,
	}
}

// TestDefaultRulesPersonaMatrix evaluates every registered rule for every
// persona through the enforcer (new defaults, scope not enforced) against a
// target whose node/allocation/runbook belong to the owner project and
// whose node is leased to the lessee project.
func TestDefaultRulesPersonaMatrix(t *testing.T) {
	spec := loadSpec(t)
	consts := constantExpectations()
	byRule := ruleExpectations()
	e := newTestEnforcer(t, Options{EnforceNewDefaults: true})
	target := Fields{
		"node.owner": ownerProject, "node.lessee": lesseeProject,
		"allocation.owner": ownerProject, "runbook.owner": ownerProject,
	}
	// Each constant's own check string admits exactly its personas.
	for name, c := range spec.Constants {
		want, ok := consts[name]
		if !ok {
			t.Errorf("constant %s has no expectation", name)
			continue
		}
		r := MustParse(c.Value)
		for p, creds := range personas {
			if got := r.root.eval(target, creds, e.set.Load(), 0); got != want[p] {
				t.Errorf("constant %s for %s = %v, want %v", name, p, got, want[p])
			}
		}
	}
	for _, r := range spec.Rules {
		want, ok := byRule[r.Name]
		if r.Expr != "" {
			if want, ok = consts[r.Expr]; !ok {
				t.Errorf("%s: no expectation for constant %s", r.Name, r.Expr)
				continue
			}
			if spec.Constants[r.Expr].Value != r.CheckStr {
				t.Errorf("%s: check string differs from %s", r.Name, r.Expr)
			}
		} else if !ok {
			t.Errorf("%s: no expectation for %q", r.Name, r.CheckStr)
			continue
		}
		var wrong []string
		for p, creds := range personas {
			if got := e.Enforce(r.Name, target, creds); got != want[p] {
				wrong = append(wrong, p)
			}
		}
		sort.Strings(wrong)
		if len(wrong) > 0 {
			t.Errorf("%s (%s): wrong outcome for %s", r.Name, r.CheckStr, strings.Join(wrong, ", "))
		}
	}
}
