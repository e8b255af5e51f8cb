package policy

import (
	"strings"
	"testing"
)

func TestParseTreeShape(t *testing.T) {
	// Expected renderings follow oslo.policy's reductions: 'and' binds
	// tighter than 'or' even when written after it, chains extend one
	// node, parentheses nest.
	cases := []struct{ in, want string }{
		{"", "@"},
		{"@", "@"},
		{"!", "!"},
		{"role:admin", "role:admin"},
		{"(role:admin)", "role:admin"},
		{"((role:admin))", "role:admin"},
		{"a:1 and b:2", "(a:1 and b:2)"},
		{"a:1 and b:2 and c:3", "(a:1 and b:2 and c:3)"},
		{"a:1 or b:2 or c:3", "(a:1 or b:2 or c:3)"},
		{"a:1 or b:2 and c:3", "(a:1 or (b:2 and c:3))"},
		{"a:1 and b:2 or c:3", "((a:1 and b:2) or c:3)"},
		{"a:1 or b:2 and c:3 and d:4", "(a:1 or (b:2 and c:3 and d:4))"},
		{"a:1 or b:2 and c:3 or d:4", "(a:1 or (b:2 and c:3) or d:4)"},
		{"(a:1 or b:2) and c:3", "((a:1 or b:2) and c:3)"},
		{"(a:1 or b:2) or c:3", "((a:1 or b:2) or c:3)"},
		{"(a:1 and b:2) and c:3", "((a:1 and b:2) and c:3)"},
		{"a:1 or (b:2 and c:3) and d:4", "(a:1 or (b:2 and c:3 and d:4))"},
		{"not a:1", "not a:1"},
		{"not not a:1", "not not a:1"},
		{"not a:1 and b:2", "(not a:1 and b:2)"},
		{"a:1 and not b:2", "(a:1 and not b:2)"},
		{"not (a:1 or b:2)", "not (a:1 or b:2)"},
		{"A:1 AND b:2 Or NOT c:3", "((A:1 and b:2) or not c:3)"},
		{"project_id:%(node.owner)s", "project_id:%(node.owner)s"},
		{"(project_id:%(node.owner)s)", "project_id:%(node.owner)s"},
		{"role:admin\tor\n role:reader", "(role:admin or role:reader)"},
		{"rule:baremetal:node:get", "rule:baremetal:node:get"},
	}
	for _, c := range cases {
		r, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got := r.String(); got != c.want {
			t.Errorf("Parse(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestParseErrorsFailClosed(t *testing.T) {
	admin := &Credentials{Roles: []string{"admin"}, SystemScope: "all"}
	cases := []struct{ in, want string }{
		{"role:admin and", "!"},
		{"(role:admin", "!"},
		{"role:admin)", "!"},
		{"and", "!"},
		{"not", "!"},
		{"   ", "!"},
		{"'role:admin'", "!"},
		{"role:admin or 'x'", "!"},
		{"foo", "!"},
		{"foo or role:admin", "(! or role:admin)"},
		{"role:admin role:member", "!"},
		{"role:%(x)d", "role:%(x)d"},
		{"role:100%", "role:100%"},
		{"role:%(x", "role:%(x"},
	}
	for _, c := range cases {
		r, err := Parse(c.in)
		if err == nil {
			t.Errorf("Parse(%q): no error", c.in)
		}
		if r == nil {
			t.Fatalf("Parse(%q) returned a nil rule", c.in)
		}
		if got := r.String(); got != c.want {
			t.Errorf("Parse(%q) = %s, want %s", c.in, got, c.want)
		}
		want := c.in == "foo or role:admin"
		if got := r.Check(nil, admin); got != want {
			t.Errorf("Parse(%q).Check = %v, want %v", c.in, got, want)
		}
	}
}

// TestCheckTable evaluates rule strings against credentials and targets;
// expectations are worked out from oslo.policy's check semantics.
func TestCheckTable(t *testing.T) {
	sysAdmin := &Credentials{Roles: []string{"admin", "member", "reader"}, SystemScope: "all", UserID: "u1", IsAdminProject: true}
	projMember := &Credentials{Roles: []string{"Member", "reader"}, ProjectID: "p1", ProjectName: "demo", ProjectDomainID: "default", UserID: "u2", IsAdminProject: true}
	noAdminProj := &Credentials{Roles: []string{"admin"}, ProjectID: "p1"}
	svc := &Credentials{Roles: []string{"service"}, ProjectID: "p9", ProjectName: "service", ServiceProjectName: "service", ServiceRoles: []string{"svc-a"}}
	node := Fields{"node.owner": "p1", "node.lessee": "p2", "user.enabled": "True", "role.name": "Member", "count": "42", "d": "a.b"}
	unowned := &OwnerTarget{Object: "node"}
	owned := &OwnerTarget{Object: "node", Owner: "p1"}

	cases := []struct {
		rule   string
		target Target
		creds  *Credentials
		want   bool
	}{
		{"", nil, projMember, true},
		{"@", nil, projMember, true},
		{"!", nil, sysAdmin, false},
		{"role:admin", nil, sysAdmin, true},
		{"role:ADMIN", nil, sysAdmin, true},
		{"role:member", nil, projMember, true}, // roles compare case-insensitively
		{"role:admin", nil, projMember, false},
		{"role:%(role.name)s", node, projMember, true},
		{"role:%(missing)s", node, projMember, false},
		{"roles:Member", nil, projMember, true}, // generic check on a list: case-sensitive
		{"roles:member", nil, projMember, false},
		{"service_roles:svc-a", nil, svc, true},
		{"system_scope:all", nil, sysAdmin, true},
		{"system_scope:all", nil, projMember, false},
		{"system:all", nil, sysAdmin, true},
		{"system:all", nil, projMember, false},
		{"system_scope:None", nil, projMember, true},
		{"project_id:%(node.owner)s", node, projMember, true},
		{"project_id:%(node.lessee)s", node, projMember, false},
		{"project_id:%(node.owner)s", nil, projMember, false},
		{"project_id:%(node.owner)s", owned, projMember, true},
		{"project_id:%(node.lessee)s", owned, projMember, false},
		// Upstream passes owner=None; a token without project renders None
		// too, and the two compare equal.
		{"project_id:%(node.owner)s", unowned, sysAdmin, true},
		{"project_id:%(node.owner)s", unowned, projMember, false},
		{"project_id:p1", nil, projMember, true},
		{"project_id:P1", nil, projMember, false},
		{"project_domain_id:default", nil, projMember, true},
		{"project_domain_id:None", nil, sysAdmin, true},
		{"user_id:%(user_id)s", node, projMember, true}, // the target falls back to the credentials
		{"project_id:%(project_id)s", nil, projMember, true},
		{"is_admin_project:True", nil, projMember, true},
		{"is_admin_project:True", nil, noAdminProj, false},
		{"is_admin_project:False", nil, noAdminProj, true},
		{"is_public_api:True", nil, projMember, false},
		{"is_public_api:True", nil, &Credentials{IsPublicAPI: true}, true},
		{"project_name:%(config.service_project_name)s", nil, svc, true},
		{"project_name:%(config.service_project_name)s", nil, projMember, false},
		{"config.service_project_name:service", nil, svc, false},
		{"True:%(user.enabled)s", node, projMember, true},
		{"False:%(user.enabled)s", node, projMember, false},
		{"'Member':%(role.name)s", node, projMember, true},
		{"\"Member\":%(role.name)s", node, projMember, true},
		{"'member':%(role.name)s", node, projMember, false},
		{"42:%(count)s", node, projMember, true},
		{"4_2:%(count)s", node, projMember, true},
		{"True:%(missing)s", node, projMember, false},
		{"None:None", nil, projMember, true},
		{"project_id.x:p1", nil, projMember, false},
		{"unknown_field:x", nil, projMember, false},
		{"a.b:%(d)s", node, projMember, false},
		{"project_id:p%%1", nil, projMember, false},
		{"project_id:%(node.owner)s%%", node, &Credentials{ProjectID: "p1%"}, true},
		{"project_id:x-%(node.owner)s-%(node.lessee)s", node, &Credentials{ProjectID: "x-p1-p2"}, true},
		{"project_id:x-%(node.owner)s-%(node.lessee)s", node, &Credentials{ProjectID: "x-p1-p3"}, false},
		{"roles:%(roles)s", nil, projMember, false},
		{"project_name:%(roles)s", nil, &Credentials{Roles: []string{"a", "b'c"}, ProjectName: `['a', "b'c"]`}, true},
		{"role:admin and system_scope:all", nil, sysAdmin, true},
		{"role:admin and system_scope:all", nil, projMember, false},
		{"role:admin or project_id:p1", nil, projMember, true},
		{"not role:admin", nil, projMember, true},
		{"not role:admin", nil, sysAdmin, false},
		{"not (role:admin or role:member)", nil, projMember, false},
		{"rule:anything", nil, sysAdmin, false}, // no rule set: fails closed
		{"role:reader and (project_id:%(node.owner)s or project_id:%(node.lessee)s)", node, projMember, true},
		{"role:reader and (project_id:%(node.owner)s or project_id:%(node.lessee)s)", node, sysAdmin, false},
		{"role:admin", nil, nil, false},
	}
	for _, c := range cases {
		r := MustParse(c.rule)
		creds := c.creds
		if creds == nil {
			creds = &Credentials{}
		}
		if got := r.Check(c.target, creds); got != c.want {
			t.Errorf("%q with %+v on %v = %v, want %v", c.rule, creds, c.target, got, c.want)
		}
	}
}

func TestPyLiteral(t *testing.T) {
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		{"True", "True", true}, {"False", "False", true}, {"None", "None", true},
		{"'x y'", "x y", true}, {`"x"`, "x", true}, {"'a\\'b'", "", false},
		{"42", "42", true}, {"-7", "-7", true}, {"+7", "7", true}, {"1_000", "1000", true},
		{"007", "", false}, {"000", "0", true}, {"1__0", "", false}, {"_1", "", false},
		{"1.50", "1.5", true}, {"1.", "1.0", true}, {".5", "0.5", true}, {"1e3", "1000.0", true},
		{"1e16", "1e+16", true}, {"1.5e-7", "1.5e-07", true}, {"1e999", "inf", true},
		{"--1", "", false}, {"project_id", "", false}, {"true", "", false}, {"", "", false},
		{"12345678901234567890123", "12345678901234567890123", true},
	}
	for _, c := range cases {
		got, ok := pyLiteral(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("pyLiteral(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestRoundTripQuotedCheck(t *testing.T) {
	r := MustParse("('a:b')")
	if got := r.String(); !strings.HasPrefix(got, "(") {
		t.Fatalf("quoted check rendered %s", got)
	}
	if again := MustParse(r.String()); !again.Equal(r) {
		t.Fatalf("round trip changed %s into %s", r, again)
	}
}
