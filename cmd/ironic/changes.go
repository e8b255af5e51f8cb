package main

import (
	"errors"
	"net/http"

	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/authz"
	"github.com/openkeel/ironic/internal/changes"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// changeStream is GET /openkeel/v1/changes behind the API's
// authentication: each change's object is v1's GET of it with the
// caller's credentials, and a deletion is shown to those whom the
// resource's get policy allows on the owner and lessee it had.
func (s *stack) changeStream(authn auth.Authenticator, az *authz.Authz, v1 http.Handler) (http.Handler, error) {
	log, ok := s.store.(store.ChangeLog)
	if !ok {
		// Every store of this build records changes: a store that does
		// not is a wiring mistake, caught at start.
		return nil, errors.New("change stream: the store records no changes")
	}
	deleted := func(r *http.Request, c store.Change) bool {
		switch c.Resource {
		case store.ChangeAllocation:
			return az.Allocation(r, "baremetal:allocation:get", optional(c.Owner)) == nil
		case store.ChangeConductor:
			return az.Check(r, "baremetal:conductor:get") == nil
		}
		// A node, or a port or portgroup, whose policy is its node's.
		return az.Node(r, "baremetal:node:get", &model.Node{UUID: c.NodeUUID, Owner: optional(c.Owner), Lessee: optional(c.Lessee)}) == nil
	}
	h := &changes.Handler{
		Hub:      changes.NewHub(log, changes.SettingsFromConfig(s.cfg), s.log),
		Renderer: &changes.APIRenderer{API: v1, Deleted: deleted},
	}
	return auth.Handler(authn, h), nil
}

func optional(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}
