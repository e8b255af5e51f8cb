package portgroup

import (
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/api/port"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

type env struct {
	t testing.TB
	h http.Handler
	s store.Store
}

// newEnv serves the portgroup and port routes over an in-memory store with
// the real conductor (fake-hardware, periodic tasks off) behind the
// in-process transport.
func newEnv(t testing.TB) *env {
	t.Helper()
	ae := apitest.NewEnv(t, apitest.Options{})
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, ae.NodeBound())
	port.Register(handlers, ae.NodeBound())
	return &env{t: t, h: ae.Handler(handlers), s: ae.Store}
}

type resp = apitest.Response

func (e *env) do(method, path, version, body string) resp {
	e.t.Helper()
	return apitest.Do(e.t, e.h, method, path, version, body)
}

// node stores a node directly (node creation is the node package's).
func (e *env) node(name string, mutate func(*model.Node)) *model.Node {
	e.t.Helper()
	return apitest.StoredNode(e.t, e.s, name, mutate)
}
