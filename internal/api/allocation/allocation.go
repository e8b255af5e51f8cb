// Package allocation serves /v1/allocations and a node's allocation
// (/v1/nodes/{node_ident}/allocation) as upstream's
// ironic/api/controllers/v1/allocation.py does: reads through the store,
// creation and deletion through the conductor (creation is asynchronous:
// the conductor's do_allocate picks the node), name and extra updates
// saved by the API itself, as upstream's rpc_allocation.save().
package allocation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
)

// Topics chooses conductors (rpc.Router implements it).
type Topics interface {
	GetTopicFor(ctx context.Context, node *model.Node) (string, error)
	GetRandomTopic(ctx context.Context) (string, error)
}

// Deps is what the allocation handlers need.
type Deps struct {
	Store store.Store
	// Notifier sends the allocation notifications; nil sends none.
	Notifier  *notify.Notifier
	Conductor rpc.ConductorAPI
	Topics    Topics
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Authorize checks a per-allocation rule ("baremetal:allocation:get",
	// ":update", ":delete") against the allocation's owner once it is
	// known; nil refuses every rule. Listing scope and the owner rules of
	// creation for project-scoped callers are Scope's and ListProject's.
	Authorize func(r *http.Request, rule string, owner *string) error
	// AuthorizeNode is check_owner_policy on a node the request names
	// (its owner and lessee); nil refuses every rule.
	AuthorizeNode func(r *http.Request, rule string, n *model.Node) error
	// Check is api_utils.check_policy: the rule with the caller's own
	// values as target; nil refuses every rule.
	Check func(r *http.Request, rule string) error
	// Scope is the caller's project and whether it is system scoped; nil
	// refuses the listings and creations that depend on it.
	Scope func(r *http.Request) (project string, system bool)
	// ListProject is check_list_policy('allocation', owner): the project
	// the caller's listing is limited to, nil for no limit; nil refuses
	// every listing.
	ListProject func(r *http.Request, owner string) (*string, error)
}

type handlers struct {
	Deps
}

// Register adds the allocation handlers to m, the node's allocation
// routes included.
func Register(m map[string]api.HandlerFunc, d Deps) {
	if d.Authorize == nil {
		d.Authorize = apiutil.RefuseAll[*string]
	}
	if d.AuthorizeNode == nil {
		d.AuthorizeNode = apiutil.RefuseAll[*model.Node]
	}
	if d.Check == nil {
		d.Check = func(_ *http.Request, rule string) error { return apiutil.PolicyRefused(rule) }
	}
	if d.ListProject == nil {
		d.ListProject = func(r *http.Request, _ string) (*string, error) { return apiutil.RefuseList(r, "allocation") }
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	h := &handlers{Deps: d}
	m["GET /v1/allocations"] = h.list
	m["GET /v1/allocations/{allocation_id}"] = h.show
	m["POST /v1/allocations"] = h.create
	m["PATCH /v1/allocations/{allocation_id}"] = h.patch
	m["DELETE /v1/allocations/{allocation_id}"] = h.delete
	m["GET /v1/nodes/{node_ident}/allocation"] = h.nodeShow
	m["DELETE /v1/nodes/{node_ident}/allocation"] = h.nodeDelete
}

func (h *handlers) authorize(r *http.Request, rule string, a *model.Allocation) error {
	return h.Authorize(r, rule, a.Owner)
}

func (h *handlers) authorizeNode(r *http.Request, rule string, n *model.Node) error {
	return h.AuthorizeNode(r, rule, n)
}

func (h *handlers) check(r *http.Request, rule string) error {
	return h.Check(r, rule)
}

// checkTrue is check_policy_true.
func (h *handlers) checkTrue(r *http.Request, rule string) bool { return h.check(r, rule) == nil }

// scope is the caller's project and whether it is system scoped for an
// action under rule; without a Scope hook the action is refused.
func (h *handlers) scope(r *http.Request, rule string) (project string, system bool, err error) {
	if h.Scope == nil {
		return "", false, apiutil.PolicyRefused(rule)
	}
	project, system = h.Scope(r)
	return project, system, nil
}

func forbidden(err error) bool { return errs.Is(err, errs.ClassNotAuthorized) }

// get is check_allocation_policy_and_retrieve: a UUID-like ident by UUID,
// a logical name by name, anything else InvalidUuidOrName. An allocation
// the caller may not see is concealed as not found before rule is
// checked.
func (h *handlers) get(r *http.Request, rule, ident string) (*model.Allocation, error) {
	ctx := r.Context()
	var a *model.Allocation
	var err error
	switch {
	case collection.IsUUIDLike(ident):
		a, err = h.Store.GetAllocationByUUID(ctx, ident)
	case apiutil.IsValidLogicalName(ident):
		a, err = h.Store.GetAllocationByName(ctx, ident)
	default:
		return nil, errs.New(errs.ClassInvalidUuidOrName, map[string]any{"name": ident})
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.New(errs.ClassAllocationNotFound, map[string]any{"allocation": ident})
	}
	if err != nil {
		return nil, fmt.Errorf("get allocation %s: %w", ident, err)
	}
	if err := h.authorize(r, "baremetal:allocation:get", a); err != nil {
		if forbidden(err) {
			return nil, errs.New(errs.ClassAllocationNotFound, map[string]any{"allocation": ident})
		}
		return nil, err
	}
	if err := h.authorize(r, rule, a); err != nil {
		return nil, err
	}
	return a, nil
}

// nodeFor is api_utils.get_rpc_node with NodeNotFound answered as 400, as
// upstream does where a node is named in a request about something else.
func (h *handlers) nodeFor(r *http.Request, rc *api.RequestContext, ident string) (*model.Node, error) {
	n, err := apiutil.GetNode(r.Context(), h.Store, ident, rc.Version)
	if err != nil {
		if e, ok := errs.As(err); ok && e.Class == errs.ClassNodeNotFound {
			c := *e
			c.Code = http.StatusBadRequest
			return nil, &c
		}
		return nil, err
	}
	return n, nil
}

// objectFields are the allocation fields rendered, in upstream's order.
var objectFields = []string{"candidate_nodes", "extra", "last_error", "name", "owner", "resource_class", "state", "traits"}

// convert is convert_with_links: the allocation, its links and node_uuid;
// requested fields must exist; sanitize hides what the version lacks.
func (h *handlers) convert(ctx context.Context, rc *api.RequestContext, a *model.Allocation, fields []string, sanitize bool) (*apiutil.Dict, error) {
	d := apiutil.RecordDict(a.UUID, a.CreatedAt, a.UpdatedAt)
	d.Set("candidate_nodes", apiutil.EmptyList(a.CandidateNodes))
	d.Set("extra", apiutil.EmptyMap(a.Extra))
	d.Set("last_error", apiutil.OptString(a.LastError))
	d.Set("name", apiutil.OptString(a.Name))
	d.Set("owner", apiutil.OptString(a.Owner))
	d.Set("resource_class", apiutil.OptString(a.ResourceClass))
	d.Set("state", a.State)
	d.Set("traits", apiutil.EmptyList(a.Traits))
	d.Set("links", collection.SelfAndBookmark(rc.PublicURL, "allocations", a.UUID))
	d.Set("node_uuid", nil)
	if a.NodeID != nil {
		n, err := h.Store.GetNodeByID(ctx, *a.NodeID)
		switch {
		case err == nil:
			d.Set("node_uuid", n.UUID)
		case !errors.Is(err, store.ErrNotFound):
			return nil, fmt.Errorf("node of allocation %s: %w", a.UUID, err)
		}
	}
	if err := apiutil.CheckFields(d, fields); err != nil {
		return nil, err
	}
	if sanitize {
		sanitizeDict(d, fields, rc.Version)
	}
	return d, nil
}

// sanitizeDict is allocation_sanitize.
func sanitizeDict(d *apiutil.Dict, fields []string, v microversion.Version) {
	if !microversion.AllowAllocationOwner.Allows(v) {
		d.Delete("owner")
	}
	d.KeepOnly(fields)
}

// checkAllowedFields is _check_allowed_allocation_fields: owner needs
// 1.60.
func checkAllowedFields(fields []string, v microversion.Version) error {
	for _, f := range fields {
		if f == "owner" && !microversion.AllowAllocationOwner.Allows(v) {
			return errs.NotAcceptable()
		}
	}
	return nil
}

// pick returns the schema of the version range v falls in: before is
// used below minor, after from it.
func pick(v microversion.Version, minor int, before, after *apiutil.RequestSchema) *apiutil.RequestSchema {
	if v.AtLeast(minor) {
		return after
	}
	return before
}
