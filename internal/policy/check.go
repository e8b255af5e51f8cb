package policy

import (
	"strings"

	"github.com/openkeel/ironic/internal/pyfmt"
)

// Credentials describe the caller, as oslo.context's to_policy_values()
// plus the keys Ironic's RequestContext adds. An empty string stands for
// Python's None (so it renders as "None" when compared, as upstream).
type Credentials struct {
	UserID          string
	UserDomainID    string
	ProjectID       string
	ProjectName     string
	ProjectDomainID string
	DomainID        string
	// SystemScope is "all" for a system-scoped token, "" otherwise.
	SystemScope string
	Roles       []string
	// IsAdminProject defaults to true in oslo.context; keystonemiddleware
	// clears it only when the token says so (X-Is-Admin-Project: False).
	IsAdminProject         bool
	ServiceUserID          string
	ServiceUserDomainID    string
	ServiceProjectID       string
	ServiceProjectDomainID string
	ServiceRoles           []string
	// IsPublicAPI is set for the routes that skip authentication.
	IsPublicAPI bool
	// ServiceProjectName is the policy value "config.service_project_name":
	// [DEFAULT]/rbac_service_project_name when
	// rbac_service_role_elevated_access is enabled, "" (absent) otherwise.
	ServiceProjectName string
}

// Target is the object side of a check: the values %(key)s substitutes.
// Lookup returns a value as Python's str() renders it ("None" for None) and
// whether the key exists; a missing key makes the check fail, as upstream.
//
// Ironic always builds its targets as a copy of the caller's policy values
// plus object fields ("node.owner", "node.lessee", "allocation.owner",
// "runbook.owner"), so keys the target does not have are looked up in the
// credentials' policy values (user_id, project_id, roles,
// config.service_project_name…).
type Target interface {
	Lookup(key string) (string, bool)
}

// Fields is a Target held in a map.
type Fields map[string]string

// Lookup implements Target.
func (f Fields) Lookup(key string) (string, bool) {
	v, ok := f[key]
	return v, ok
}

// OwnerTarget is the target Ironic's check_owner_policy builds:
// "<Object>.owner" is always present ("None" when Owner is empty, as
// upstream passes None), "<Object>.lessee" only when Lessee is set.
type OwnerTarget struct {
	Object string // "node", "allocation", "runbook"
	Owner  string
	Lessee string
}

// Lookup implements Target.
func (o *OwnerTarget) Lookup(key string) (string, bool) {
	if len(key) <= len(o.Object) || key[len(o.Object)] != '.' || key[:len(o.Object)] != o.Object {
		return "", false
	}
	switch key[len(o.Object)+1:] {
	case "owner":
		return pyNone(o.Owner), true
	case "lessee":
		if o.Lessee != "" {
			return o.Lessee, true
		}
	}
	return "", false
}

func pyNone(s string) string {
	if s == "" {
		return "None"
	}
	return s
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// credValue returns a credential by policy-value name: a scalar rendered as
// str(), or a list. forTarget excludes "system", which oslo.policy adds to
// the credentials only (after Ironic has copied them into the target).
func (c *Credentials) credValue(key string, forTarget bool) (s string, list []string, isList, ok bool) {
	switch key {
	case "user_id":
		return pyNone(c.UserID), nil, false, true
	case "user_domain_id":
		return pyNone(c.UserDomainID), nil, false, true
	case "system_scope":
		return pyNone(c.SystemScope), nil, false, true
	case "system":
		if forTarget || c.SystemScope == "" {
			return "", nil, false, false
		}
		return c.SystemScope, nil, false, true
	case "domain_id":
		return pyNone(c.DomainID), nil, false, true
	case "project_id":
		return pyNone(c.ProjectID), nil, false, true
	case "project_domain_id":
		return pyNone(c.ProjectDomainID), nil, false, true
	case "project_name":
		return pyNone(c.ProjectName), nil, false, true
	case "roles":
		return "", c.Roles, true, true
	case "is_admin_project":
		return pyBool(c.IsAdminProject), nil, false, true
	case "service_user_id":
		return pyNone(c.ServiceUserID), nil, false, true
	case "service_user_domain_id":
		return pyNone(c.ServiceUserDomainID), nil, false, true
	case "service_project_id":
		return pyNone(c.ServiceProjectID), nil, false, true
	case "service_project_domain_id":
		return pyNone(c.ServiceProjectDomainID), nil, false, true
	case "service_roles":
		return "", c.ServiceRoles, true, true
	case "is_public_api":
		return pyBool(c.IsPublicAPI), nil, false, true
	case "config.service_project_name":
		if !forTarget || c.ServiceProjectName == "" {
			return "", nil, false, false
		}
		return c.ServiceProjectName, nil, false, true
	}
	return "", nil, false, false
}

// lookup resolves a %(key)s substitution: target first, then the
// credentials' policy values.
func lookup(key string, t Target, c *Credentials) (string, bool) {
	if t != nil {
		if v, ok := t.Lookup(key); ok {
			return v, true
		}
	}
	s, list, isList, ok := c.credValue(key, true)
	if !ok {
		return "", false
	}
	if isList {
		return pyfmt.Repr(list), true
	}
	return s, true
}

// matches reports whether val equals the pattern after substitution; a
// missing key never matches. fold compares case-insensitively (role checks
// lower-case both sides upstream).
func (p *pattern) matches(val string, t Target, c *Credentials, fold bool) bool {
	if p.plain {
		return eq(val, p.text, fold)
	}
	rest := val
	for _, sg := range p.segs {
		s := sg.text
		if sg.key {
			v, ok := lookup(sg.text, t, c)
			if !ok {
				return false
			}
			s = v
		}
		if len(rest) < len(s) || !eq(rest[:len(s)], s, fold) {
			return false
		}
		rest = rest[len(s):]
	}
	return rest == ""
}

func eq(a, b string, fold bool) bool {
	if fold {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// resolver finds the rule a rule:<name> check refers to.
type resolver interface {
	rule(name string) *Rule
}

// maxDepth bounds rule:<name> indirection; a cyclic policy (which upstream
// only warns about, then overflows the stack on) fails closed instead.
const maxDepth = 64

func (n *node) eval(t Target, c *Credentials, rs resolver, depth int) bool {
	switch n.kind {
	case kindTrue:
		return true
	case kindFalse:
		return false
	case kindAnd:
		for _, ch := range n.children {
			if !ch.eval(t, c, rs, depth) {
				return false
			}
		}
		return true
	case kindOr:
		for _, ch := range n.children {
			if ch.eval(t, c, rs, depth) {
				return true
			}
		}
		return false
	case kindNot:
		return !n.children[0].eval(t, c, rs, depth)
	case kindRule:
		if rs == nil || depth >= maxDepth {
			return false
		}
		r := rs.rule(n.match)
		if r == nil {
			return false
		}
		return r.root.eval(t, c, rs, depth+1)
	case kindRole:
		if n.broken {
			return false
		}
		for _, role := range c.Roles {
			if n.pattern.matches(role, t, c, true) {
				return true
			}
		}
		return false
	case kindGeneric:
		if n.broken {
			return false
		}
		if n.hasLiteral {
			return n.pattern.matches(n.literal, t, c, false)
		}
		// Only top-level credential keys exist; deeper paths index into a
		// string, which upstream cannot do either.
		if len(n.path) != 1 {
			return false
		}
		s, list, isList, ok := c.credValue(n.path[0], false)
		if !ok {
			return false
		}
		if isList {
			for _, v := range list {
				if n.pattern.matches(v, t, c, false) {
					return true
				}
			}
			return false
		}
		return n.pattern.matches(s, t, c, false)
	}
	return false
}

// Check evaluates the rule on its own: rule:<name> references fail closed
// since there is no rule set to resolve them.
func (r *Rule) Check(t Target, c *Credentials) bool {
	return r.root.eval(t, c, nil, 0)
}
