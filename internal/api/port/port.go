// Package port serves the /v1/ports routes and the port collections under
// nodes and portgroups as upstream's ironic/api/controllers/v1/port.py
// does: reads go to the store, creations, changes and deletions of a port
// go through the conductor of its node (rpc.ConductorAPI).
package port

import (
	"context"
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// Deps is what the port handlers need; a refusal of "baremetal:node:get"
// conceals a port as PortNotFound.
type Deps = apiutil.NodeBound

type handlers struct {
	Deps
}

// Register adds the handlers of every port route to m, including the
// port collections of a node and of a portgroup.
func Register(m map[string]api.HandlerFunc, d Deps) {
	h := &handlers{Deps: d.FailClosed()}
	for id, f := range map[string]api.HandlerFunc{
		"GET /v1/ports":                                     h.list(parentNone, false),
		"GET /v1/ports/detail":                              h.list(parentNone, true),
		"GET /v1/nodes/{node_ident}/ports":                  h.list(parentNode, false),
		"GET /v1/nodes/{node_ident}/ports/detail":           h.list(parentNode, true),
		"GET /v1/portgroups/{portgroup_ident}/ports":        h.list(parentPortgroup, false),
		"GET /v1/portgroups/{portgroup_ident}/ports/detail": h.list(parentPortgroup, true),
		"GET /v1/ports/{port_id}":                           h.getOne,
		"POST /v1/ports":                                    h.create,
		"PATCH /v1/ports/{port_id}":                         h.patch,
		"DELETE /v1/ports/{port_id}":                        h.delete,
	} {
		m[id] = f
	}
}

// getPort is objects.Port.get: by UUID, else by name (from 1.88 names
// exist; a name that cannot be one is InvalidUuidOrName).
func getPort(ctx context.Context, s store.Store, ident string) (*model.Port, error) {
	return apiutil.ByUUIDOrName(ctx, ident, s.GetPortByUUID, s.GetPortByName, portNotFound, "port")
}

func portNotFound(ident string) error {
	return errs.New(errs.ClassPortNotFound, map[string]any{"port": ident})
}

// GetPortgroup is get_rpc_portgroup: by UUID, else by logical name, else
// InvalidUuidOrName; PortgroupNotFound when absent.
func GetPortgroup(ctx context.Context, s store.Store, ident string) (*model.Portgroup, error) {
	return apiutil.ByUUIDOrName(ctx, ident, s.GetPortgroupByUUID, s.GetPortgroupByName,
		func(ident string) error { return PortgroupNotFound(ident) }, "portgroup")
}

// PortgroupNotFound is the PortgroupNotFound error of ident (a string,
// or nil where upstream names no portgroup).
func PortgroupNotFound(ident any) error {
	return errs.New(errs.ClassPortgroupNotFound, map[string]any{"portgroup": ident})
}

// portAndNode is check_port_policy_and_retrieve: the port, its node (nil
// when gone), the node's visibility (else PortNotFound) and rule.
func (h *handlers) portAndNode(r *http.Request, rule, ident string) (*model.Port, *model.Node, error) {
	p, err := getPort(r.Context(), h.Store, ident)
	if err != nil {
		return nil, nil, err
	}
	n, err := h.Retrieve(r, rule, p.NodeID, func() error { return portNotFound(ident) })
	if err != nil {
		return nil, nil, err
	}
	return p, n, nil
}
