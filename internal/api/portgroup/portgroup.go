// Package portgroup serves the /v1/portgroups routes and the portgroup
// collections of a node as upstream's
// ironic/api/controllers/v1/portgroup.py does: reads and creations go to
// the store, changes and deletions go through the conductor of the
// portgroup's node (rpc.ConductorAPI). The ports of a portgroup are the
// port package's.
package portgroup

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/api/port"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
)

// Topics chooses the conductor of a node (rpc.Router implements it).
type Topics interface {
	GetTopicFor(ctx context.Context, node *model.Node) (string, error)
}

// Deps is what the portgroup handlers need.
type Deps struct {
	Store     store.Store
	Conductor rpc.ConductorAPI
	Topics    Topics
	// Authorize checks a policy rule against the node a portgroup belongs
	// to (nil node for rules without a target). A refusal of
	// "baremetal:node:get" conceals the portgroup as PortgroupNotFound.
	// nil refuses every rule.
	Authorize func(r *http.Request, rule string, node *model.Node) error
	// ListProject is check_port_list_policy(portgroup=True)'s answer: nil
	// when the caller may list every portgroup
	// ("baremetal:portgroup:list_all"), else the project whose nodes'
	// portgroups it may list. nil means every portgroup.
	ListProject func(r *http.Request, resource string) (*string, error)
}

type handlers struct {
	Deps
}

// Register adds the handlers of every portgroup route to m, including the
// portgroup collections of a node. The ports of a portgroup are
// registered by port.Register.
func Register(m map[string]api.HandlerFunc, d Deps) {
	if d.Authorize == nil {
		d.Authorize = apiutil.RefuseAll[*model.Node]
	}
	h := &handlers{Deps: d}
	for id, f := range map[string]api.HandlerFunc{
		"GET /v1/portgroups":                           h.list(false, false),
		"GET /v1/portgroups/detail":                    h.list(false, true),
		"GET /v1/nodes/{node_ident}/portgroups":        h.list(true, false),
		"GET /v1/nodes/{node_ident}/portgroups/detail": h.list(true, true),
		"GET /v1/portgroups/{portgroup_ident}":         h.getOne,
		"POST /v1/portgroups":                          h.create,
		"PATCH /v1/portgroups/{portgroup_ident}":       h.patch,
		"DELETE /v1/portgroups/{portgroup_ident}":      h.delete,
	} {
		m[id] = f
	}
}

func (h *handlers) authorize(r *http.Request, rule string, n *model.Node) error {
	return h.Authorize(r, rule, n)
}

// portgroupAndNode is check_port_policy_and_retrieve(portgroup=True): the
// portgroup, its node (nil when gone), the node's visibility (else
// PortgroupNotFound) and rule.
func (h *handlers) portgroupAndNode(r *http.Request, rule, ident string) (*model.Portgroup, *model.Node, error) {
	ctx := r.Context()
	pg, err := port.GetPortgroup(ctx, h.Store, ident)
	if err != nil {
		return nil, nil, err
	}
	var n *model.Node
	if pg.NodeID != nil {
		n, err = h.Store.GetNodeByID(ctx, *pg.NodeID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, nil, fmt.Errorf("node of portgroup %s: %w", pg.UUID, err)
		}
	}
	if err := h.authorize(r, "baremetal:node:get", n); err != nil {
		if errs.Status(err) == http.StatusForbidden {
			return nil, nil, errs.New(errs.ClassPortgroupNotFound, map[string]any{"portgroup": ident})
		}
		return nil, nil, err
	}
	if err := h.authorize(r, rule, n); err != nil {
		return nil, nil, err
	}
	return pg, n, nil
}

// identOK is PortgroupsController._lookup, which pecan runs before the
// handler of one portgroup: an identifier that is neither a UUID nor a
// name is pecan.abort(400), answered as a routing error (webob body, no
// version headers). It reports whether the handler may go on.
func identOK(w http.ResponseWriter, r *http.Request, ident string) bool {
	err := apiutil.UUIDOrName("portgroup", ident)
	if err == nil {
		return true
	}
	for _, h := range []string{microversion.HeaderMinimum, microversion.HeaderMaximum, microversion.HeaderLegacy} {
		w.Header().Del(h)
	}
	errs.WriteFault(w, r, errs.HTTPStatus(http.StatusBadRequest, err.Error()), errs.FaultOptions{Routing: true})
	return false
}

func (h *handlers) topic(ctx context.Context, n *model.Node) (string, error) {
	t, err := h.Topics.GetTopicFor(ctx, n)
	if err != nil {
		return "", fmt.Errorf("conductor for node %s: %w", n.UUID, err)
	}
	return t, nil
}
