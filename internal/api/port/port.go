// Package port serves the /v1/ports routes and the port collections under
// nodes and portgroups as upstream's ironic/api/controllers/v1/port.py
// does: reads go to the store, creations, changes and deletions of a port
// go through the conductor of its node (rpc.ConductorAPI).
package port

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
)

// Topics chooses the conductor of a node (rpc.Router implements it).
type Topics interface {
	GetTopicFor(ctx context.Context, node *model.Node) (string, error)
}

// Deps is what the port handlers need.
type Deps struct {
	Store     store.Store
	Conductor rpc.ConductorAPI
	Topics    Topics
	// Authorize checks a policy rule against the node a port belongs to
	// (nil node for rules without a target). A refusal of
	// "baremetal:node:get" conceals the port as PortNotFound. nil refuses
	// every rule.
	Authorize func(r *http.Request, rule string, node *model.Node) error
	// ListProject is check_port_list_policy's answer: nil when the caller
	// may list every port ("baremetal:port:list_all"), else the project
	// whose nodes' ports it may list. nil means every port.
	ListProject func(r *http.Request, resource string) (*string, error)
}

type handlers struct {
	Deps
}

// Register adds the handlers of every port route to m, including the
// port collections of a node and of a portgroup.
func Register(m map[string]api.HandlerFunc, d Deps) {
	if d.Authorize == nil {
		d.Authorize = apiutil.RefuseAll[*model.Node]
	}
	h := &handlers{Deps: d}
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

func (h *handlers) authorize(r *http.Request, rule string, n *model.Node) error {
	return h.Authorize(r, rule, n)
}

// getPort is objects.Port.get: by UUID, else by name (from 1.88 names
// exist; a name that cannot be one is InvalidUuidOrName).
func getPort(ctx context.Context, s store.Store, ident string) (*model.Port, error) {
	var p *model.Port
	var err error
	switch {
	case collection.IsUUIDLike(ident):
		p, err = s.GetPortByUUID(ctx, ident)
	case apiutil.IsValidLogicalName(ident):
		p, err = s.GetPortByName(ctx, ident)
	default:
		return nil, errs.New(errs.ClassInvalidUuidOrName, map[string]any{"name": ident})
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.New(errs.ClassPortNotFound, map[string]any{"port": ident})
	}
	if err != nil {
		return nil, fmt.Errorf("get port %s: %w", ident, err)
	}
	return p, nil
}

// GetPortgroup is get_rpc_portgroup: by UUID, else by logical name, else
// InvalidUuidOrName; PortgroupNotFound when absent.
func GetPortgroup(ctx context.Context, s store.Store, ident string) (*model.Portgroup, error) {
	var pg *model.Portgroup
	var err error
	switch {
	case collection.IsUUIDLike(ident):
		pg, err = s.GetPortgroupByUUID(ctx, ident)
	case apiutil.IsValidLogicalName(ident):
		pg, err = s.GetPortgroupByName(ctx, ident)
	default:
		return nil, errs.New(errs.ClassInvalidUuidOrName, map[string]any{"name": ident})
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.New(errs.ClassPortgroupNotFound, map[string]any{"portgroup": ident})
	}
	if err != nil {
		return nil, fmt.Errorf("get portgroup %s: %w", ident, err)
	}
	return pg, nil
}

// portAndNode is check_port_policy_and_retrieve: the port, its node (nil
// when gone), the node's visibility (else PortNotFound) and rule.
func (h *handlers) portAndNode(r *http.Request, rule, ident string) (*model.Port, *model.Node, error) {
	ctx := r.Context()
	p, err := getPort(ctx, h.Store, ident)
	if err != nil {
		return nil, nil, err
	}
	var n *model.Node
	if p.NodeID != nil {
		n, err = h.Store.GetNodeByID(ctx, *p.NodeID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, nil, fmt.Errorf("node of port %s: %w", p.UUID, err)
		}
	}
	if err := h.authorize(r, "baremetal:node:get", n); err != nil {
		if errs.Status(err) == http.StatusForbidden {
			return nil, nil, errs.New(errs.ClassPortNotFound, map[string]any{"port": ident})
		}
		return nil, nil, err
	}
	if err := h.authorize(r, rule, n); err != nil {
		return nil, nil, err
	}
	return p, n, nil
}

// topic is get_topic_for; NoValidHost keeps its status as upstream does
// for port calls.
func (h *handlers) topic(ctx context.Context, n *model.Node) (string, error) {
	t, err := h.Topics.GetTopicFor(ctx, n)
	if err != nil {
		return "", fmt.Errorf("conductor for node %s: %w", n.UUID, err)
	}
	return t, nil
}
