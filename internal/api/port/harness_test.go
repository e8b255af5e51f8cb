package port

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// storeConductor stands in for internal/conductor's port calls until they
// land: it writes what the conductor would through the same store and
// maps the store's duplicates to upstream's classes.
type storeConductor struct {
	rpc.ConductorAPI
	s     store.Store
	mu    sync.Mutex
	calls []string
}

func (c *storeConductor) record(call string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
}

func portDup(err error, p *model.Port) error {
	var d *store.DuplicateError
	if errors.As(err, &d) {
		switch d.Field {
		case "address":
			return errs.New(errs.ClassMACAlreadyExists, map[string]any{"mac": d.Value})
		case "name":
			return errs.New(errs.ClassPortDuplicateName, map[string]any{"name": d.Value})
		}
		return errs.New(errs.ClassPortAlreadyExists, map[string]any{"uuid": p.UUID})
	}
	return err
}

func (c *storeConductor) CreatePort(ctx context.Context, _ string, p *model.Port) (*model.Port, error) {
	c.record("create_port")
	out, err := c.s.CreatePort(ctx, p)
	return out, portDup(err, p)
}

func (c *storeConductor) UpdatePort(ctx context.Context, _ string, p *model.Port) (*model.Port, error) {
	c.record("update_port")
	out, err := c.s.UpdatePort(ctx, p)
	return out, portDup(err, p)
}

func (c *storeConductor) DestroyPort(ctx context.Context, _ string, p *model.Port) error {
	c.record("destroy_port")
	return c.s.DeletePort(ctx, p.ID)
}

type env struct {
	t    testing.TB
	h    http.Handler
	s    store.Store
	cond *storeConductor
}

func newEnv(t testing.TB) *env {
	t.Helper()
	s := store.New(storetest.Backends(t)[0].DB)
	cond := &storeConductor{s: s}
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: s, Conductor: cond, Topics: apitest.Topics{}, Authorize: apitest.Allow[*model.Node], ListProject: apitest.ListAll})
	return &env{t: t, h: apitest.New(t, api.Deps{Logger: slog.New(slog.DiscardHandler), Handlers: handlers}), s: s, cond: cond}
}

type resp = apitest.Response

func (e *env) do(method, path, version, body string) resp {
	e.t.Helper()
	return apitest.Do(e.t, e.h, method, path, version, body)
}

// node stores a node directly (node creation is the node package's).
func (e *env) node(name string, mutate func(*model.Node)) *model.Node {
	e.t.Helper()
	n := &model.Node{UUID: newUUID(), Driver: "fake-hardware", ProvisionState: "enroll", Name: &name}
	if mutate != nil {
		mutate(n)
	}
	out, err := e.s.CreateNode(context.Background(), n)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *env) portgroup(n *model.Node, name string, standalone bool) *model.Portgroup {
	e.t.Helper()
	pg, err := e.s.CreatePortgroup(context.Background(), &model.Portgroup{UUID: newUUID(), Name: &name, NodeID: &n.ID,
		StandalonePortsSupported: &standalone})
	if err != nil {
		e.t.Fatal(err)
	}
	return pg
}
