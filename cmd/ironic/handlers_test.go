package main

import (
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/authz"
)

// Handlers are keyed by route ID strings: a misspelt key would leave its
// route answering 501 and the handler unreachable, and nothing else would
// notice. Every key names a route of the table, and every route upstream
// implements has a handler (bar the root documents, which the router serves).
func TestHandlersNameRoutes(t *testing.T) {
	e := apitest.NewEnv(t, apitest.Options{})
	az, err := authz.New(e.Config)
	if err != nil {
		t.Fatalf("authz: %v", err)
	}
	handlers := Handlers(e.Store, e.Local, oneConductor{}, e.Config, e.Logger, az)
	routes := map[string]bool{}
	for _, r := range slices.Concat(api.Routes, api.HiddenRoutes) {
		routes[r.ID] = true
		root := r.Path == "/" || r.Path == "/v1"
		if _, ok := handlers[r.ID]; !ok && !root && !r.Unimplemented {
			t.Errorf("route %s has no handler: it would answer 501", r.ID)
		}
	}
	for id := range handlers {
		if !routes[id] {
			t.Errorf("handler %q names no route", id)
		}
	}
}
