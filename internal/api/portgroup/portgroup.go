// Package portgroup serves the /v1/portgroups routes and the portgroup
// collections of a node as upstream's
// ironic/api/controllers/v1/portgroup.py does: reads and creations go to
// the store, changes and deletions go through the conductor of the
// portgroup's node (rpc.ConductorAPI). The ports of a portgroup are the
// port package's.
package portgroup

import (
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/api/port"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// Deps is what the portgroup handlers need; a refusal of
// "baremetal:node:get" conceals a portgroup as PortgroupNotFound, and
// ListProject is check_port_list_policy(portgroup=True)'s answer.
type Deps = apiutil.NodeBound

type handlers struct {
	Deps
}

// Register adds the handlers of every portgroup route to m, including the
// portgroup collections of a node. The ports of a portgroup are
// registered by port.Register.
func Register(m map[string]api.HandlerFunc, d Deps) {
	h := &handlers{Deps: d.FailClosed()}
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

// portgroupAndNode is check_port_policy_and_retrieve(portgroup=True): the
// portgroup, its node (nil when gone), the node's visibility (else
// PortgroupNotFound) and rule.
func (h *handlers) portgroupAndNode(r *http.Request, rule, ident string) (*model.Portgroup, *model.Node, error) {
	pg, err := port.GetPortgroup(r.Context(), h.Store, ident)
	if err != nil {
		return nil, nil, err
	}
	n, err := h.Retrieve(r, rule, pg.NodeID, func() error { return port.PortgroupNotFound(ident) })
	if err != nil {
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
