package volume

import (
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

type env struct {
	t testing.TB
	h http.Handler
	s store.Store
}

// newEnv serves the volume routes over an in-memory store with
// the real conductor (fake-hardware, periodic tasks off) behind the
// in-process transport.
func newEnv(t testing.TB) *env {
	t.Helper()
	ae := apitest.NewEnv(t, apitest.Options{})
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: ae.Store, Conductor: ae.Local, Topics: apitest.Topics{}, Authorize: apitest.Allow[*model.Node], ListProject: apitest.ListAll})
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

// newHandlerDenyingProperties serves the same store with the
// view_target_properties check refused.
func newHandlerDenyingProperties(t testing.TB, e *env) http.Handler {
	t.Helper()
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: e.s, Topics: apitest.Topics{}, Authorize: apitest.Allow[*model.Node], ListProject: apitest.ListAll,
		ViewTargetProperties: func(*http.Request) bool { return false }})
	return apitest.Handler(t, nil, handlers)
}
