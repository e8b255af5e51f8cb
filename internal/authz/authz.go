// Package authz is where policy meets the API: it builds the oslo.policy
// enforcer from the configuration and answers the API's hooks (the
// route-level check and each resource package's per-object checks) with
// upstream's semantics from ironic/api/controllers/v1/utils.py: owner and
// lessee targets, nodes of another project concealed as 404, project
// scoped list filtering, and everything allowed unless auth_strategy is
// keystone.
package authz

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/policy"
)

// Authz answers the policy hooks of one configuration.
type Authz struct {
	enf *policy.Enforcer
	// enforcing is auth_strategy = keystone: upstream's policy.authorize
	// and check_policy allow everything under any other strategy.
	enforcing  bool
	selfManage bool
	// serviceProject is config.service_project_name, set only with
	// rbac_service_role_elevated_access.
	serviceProject string
}

// New builds the enforcer of cfg ([oslo_policy]) and the options the
// hooks read.
func New(cfg *config.Config) (*Authz, error) {
	enf, err := policy.New(policy.OptionsFromConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("policy enforcer: %w", err)
	}
	a := &Authz{
		enf:        enf,
		enforcing:  cfg.StringOf(config.DefaultAuthStrategy) == auth.StrategyKeystone,
		selfManage: cfg.BoolOf(config.APIProjectAdminCanManageOwnNodes),
	}
	if cfg.BoolOf(config.DefaultRbacServiceRoleElevatedAccess) {
		a.serviceProject = cfg.StringOf(config.DefaultRbacServiceProjectName)
	}
	return a, nil
}

// Enforcer is the policy enforcer the hooks use.
func (a *Authz) Enforcer() *policy.Enforcer { return a.enf }

// creds are the caller's policy values (oslo.context to_policy_values plus
// Ironic's additions).
func (a *Authz) creds(r *http.Request) *policy.Credentials {
	c := auth.FromContext(r.Context())
	if c == nil {
		return &policy.Credentials{IsAdminProject: true, ServiceProjectName: a.serviceProject}
	}
	return &policy.Credentials{
		UserID:                 c.UserID,
		UserDomainID:           c.UserDomainID,
		ProjectID:              c.ProjectID,
		ProjectName:            c.ProjectName,
		ProjectDomainID:        c.ProjectDomainID,
		DomainID:               c.DomainID,
		SystemScope:            c.SystemScope,
		Roles:                  c.Roles,
		IsAdminProject:         c.IsAdminProject,
		ServiceUserID:          c.ServiceUserID,
		ServiceUserDomainID:    c.ServiceUserDomainID,
		ServiceProjectID:       c.ServiceProjectID,
		ServiceProjectDomainID: c.ServiceProjectDomainID,
		ServiceRoles:           c.ServiceRoles,
		IsPublicAPI:            c.IsPublicAPI,
		ServiceProjectName:     a.serviceProject,
	}
}

// noTarget is check_policy's target: a copy of the caller's own values,
// which the credentials already answer.
var noTarget = policy.Fields{}

// authorize is policy.authorize.
func (a *Authz) authorize(r *http.Request, rule string, target policy.Target) error {
	if !a.enforcing {
		return nil
	}
	return a.enf.Authorize(rule, target, a.creds(r))
}

// checkPolicy is policy.check_policy: true under non-keystone strategies.
func (a *Authz) checkPolicy(r *http.Request, rule string, target policy.Target) bool {
	return !a.enforcing || a.enf.Enforce(rule, target, a.creds(r))
}

func nodeTarget(n *model.Node) policy.Target {
	if n == nil {
		return &policy.OwnerTarget{Object: "node"}
	}
	return &policy.OwnerTarget{Object: "node", Owner: deref(n.Owner), Lessee: deref(n.Lessee)}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func forbidden(err error) bool { return errs.Status(err) == http.StatusForbidden }

// Route is api.Deps.Authorize: the policy of routes that do not look at
// an object. Routes whose rules need the object (a node, port, allocation,
// runbook…) or whose listing is filtered by project are left to the
// resource hooks, which run once the handler has loaded what they need.
func (a *Authz) Route(r *http.Request, rc *api.RequestContext) error {
	if !a.enforcing || rc.Route == nil || len(rc.Route.Policies) == 0 {
		return nil
	}
	switch rc.Route.ID {
	case "GET /v1/nodes", "GET /v1/nodes/detail",
		"GET /v1/chassis/{chassis_id}/nodes", "GET /v1/chassis/{chassis_id}/nodes/detail":
		_, err := a.listPolicy(r, "node", r.URL.Query().Get("project"))
		return err
	case "POST /v1/nodes":
		return a.nodeCreate(r)
	}
	if objectRoute(rc.Route) {
		return nil
	}
	for _, rule := range rc.Route.Policies {
		if err := a.authorize(r, rule, noTarget); err != nil {
			return err
		}
	}
	return nil
}

// objectRoute tells the routes whose checks the resource handlers make
// through the object hooks.
func objectRoute(rt *api.Route) bool {
	for _, p := range []string{"{node_ident}", "{port_id}", "{portgroup_ident}", "{volume_connector_id}",
		"{volume_target_id}", "{allocation_id}", "{runbook_id}"} {
		if strings.Contains(rt.Path, p) {
			return true
		}
	}
	switch rt.ID {
	case "GET /v1/ports", "GET /v1/ports/detail", "POST /v1/ports",
		"GET /v1/portgroups", "GET /v1/portgroups/detail", "POST /v1/portgroups",
		"GET /v1/volume/connectors", "GET /v1/volume/targets",
		"POST /v1/volume/connectors", "POST /v1/volume/targets",
		"GET /v1/allocations", "POST /v1/allocations",
		"GET /v1/runbooks":
		return true
	}
	return false
}

// nodeCreate is the policy part of NodesController.post: a project
// admin may enrol nodes it owns ("baremetal:node:create:self_owned_node")
// when project_admin_can_manage_own_nodes allows it, everyone else needs
// "baremetal:node:create". The handler then holds the self-owning admin to
// its own project (a 400 for another owner, not a refusal here).
func (a *Authz) nodeCreate(r *http.Request) error {
	if a.selfManage && a.checkPolicy(r, "baremetal:node:create:self_owned_node", noTarget) {
		return nil
	}
	return a.authorize(r, "baremetal:node:create", noTarget)
}

// listPolicy is check_list_policy: nil when the caller may list every
// object ("baremetal:<type>:list_all"), else the project its listing is
// limited to ("baremetal:<type>:list"); a caller without a project, or
// asking for another owner, gets the refusal of list_all.
func (a *Authz) listPolicy(r *http.Request, object, owner string) (*string, error) {
	if !a.enforcing {
		return nil, nil
	}
	c := a.creds(r)
	err := a.enf.Authorize("baremetal:"+object+":list_all", noTarget, c)
	if err == nil {
		return nil, nil
	}
	if !forbidden(err) && !errs.Is(err, errs.ClassInvalidScope) {
		return nil, err
	}
	if c.ProjectID == "" || (owner != "" && owner != c.ProjectID) {
		return nil, err
	}
	if err := a.enf.Authorize("baremetal:"+object+":list", noTarget, c); err != nil {
		return nil, err
	}
	p := c.ProjectID
	return &p, nil
}

// Node is node.Deps.Authorize (check_owner_policy on the node's owner and
// lessee). A refused node deletion falls back to
// "baremetal:node:delete:self_owned_node" when project admins may manage
// their own nodes.
func (a *Authz) Node(r *http.Request, rule string, n *model.Node) error {
	err := a.authorize(r, rule, nodeTarget(n))
	if err != nil && rule == "baremetal:node:delete" && a.selfManage && forbidden(err) {
		return a.authorize(r, "baremetal:node:delete:self_owned_node", nodeTarget(n))
	}
	return err
}

// NodeShow is node.Deps.Show: the output rules. The filter threshold is a
// check_policy (true without keystone); the secret and redaction rules
// are plain policy.check, evaluated under every strategy.
func (a *Authz) NodeShow(r *http.Request, rule string, n *model.Node) bool {
	if rule == "baremetal:node:get:filter_threshold" {
		return a.checkPolicy(r, rule, nodeTarget(n))
	}
	return a.enf.Enforce(rule, nodeTarget(n), a.creds(r))
}

// HasRule is node.Deps.HasRule.
func (a *Authz) HasRule(rule string) bool { return a.enf.HasRule(rule) }

// NodeProject is node.Deps.Project: the project a node listing is limited
// to. The route hook has already refused callers that may not list.
func (a *Authz) NodeProject(r *http.Request) *string {
	p, err := a.listPolicy(r, "node", r.URL.Query().Get("project"))
	if err != nil {
		return nil
	}
	return p
}

// ListProject is the ListProject hook of ports, portgroups and volume
// connectors/targets (check_port_list_policy, check_volume_list_policy).
func (a *Authz) ListProject(r *http.Request, resource string) (*string, error) {
	return a.listPolicy(r, resource, "")
}

// ViewTargetProperties is volume.Deps.ViewTargetProperties.
func (a *Authz) ViewTargetProperties(r *http.Request) bool {
	return a.checkPolicy(r, "baremetal:volume:view_target_properties", noTarget)
}

// Allocation is allocation.Deps.Authorize (check_owner_policy on the
// allocation's owner).
func (a *Authz) Allocation(r *http.Request, rule string, owner *string) error {
	return a.authorize(r, rule, &policy.OwnerTarget{Object: "allocation", Owner: deref(owner)})
}

// AllocationListProject is allocation.Deps.ListProject
// (check_list_policy('allocation', owner)).
func (a *Authz) AllocationListProject(r *http.Request, owner string) (*string, error) {
	return a.listPolicy(r, "allocation", owner)
}

// Check is api_utils.check_policy: rule with the caller's own values as
// target, allowed unless auth_strategy is keystone.
func (a *Authz) Check(r *http.Request, rule string) error {
	return a.authorize(r, rule, noTarget)
}

// Scope is the caller's project and whether its token is system scoped.
// Under any strategy but keystone every caller is system scoped, as the
// documented noauth behaviour of the resource packages is.
func (a *Authz) Scope(r *http.Request) (string, bool) {
	if !a.enforcing {
		return "", true
	}
	c := a.creds(r)
	return c.ProjectID, c.SystemScope == "all"
}

// Runbook is runbook.Deps.Authorize and node.Deps.AuthorizeRunbook
// (check_owner_policy on the runbook's owner).
func (a *Authz) Runbook(r *http.Request, rule string, rb *model.Runbook) error {
	t := &policy.OwnerTarget{Object: "runbook"}
	if rb != nil {
		t.Owner = deref(rb.Owner)
	}
	return a.authorize(r, rule, t)
}
