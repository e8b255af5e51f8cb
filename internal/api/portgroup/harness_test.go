package portgroup

import (
	"context"
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/api/port"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

type fixedTopics struct{}

func (fixedTopics) GetTopicFor(context.Context, *model.Node) (string, error) {
	return apitest.Topic, nil
}

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
	Register(handlers, Deps{Store: ae.Store, Conductor: ae.Local, Topics: fixedTopics{}, Authorize: apitest.Allow[*model.Node]})
	port.Register(handlers, port.Deps{Store: ae.Store, Conductor: ae.Local, Topics: fixedTopics{}, Authorize: apitest.Allow[*model.Node]})
	return &env{t: t, h: ae.Handler(handlers), s: ae.Store}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t testing.TB) map[string]any { return apitest.JSON(t, r.body) }

func (r resp) faultstring(t testing.TB) string { return apitest.Faultstring(t, r.body) }

func (e *env) do(method, path, version, body string) resp {
	e.t.Helper()
	r := apitest.Do(e.t, e.h, method, path, version, body)
	return resp{status: r.Status, header: r.Header, body: r.Body}
}

// node stores a node directly (node creation is the node package's).
func (e *env) node(name string, mutate func(*model.Node)) *model.Node {
	e.t.Helper()
	return apitest.StoredNode(e.t, e.s, name, mutate)
}
