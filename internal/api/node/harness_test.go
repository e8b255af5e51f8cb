package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// storeConductor stands in for internal/conductor until it lands: it
// writes what the conductor would write through the same store. Calls it
// does not serve panic through the nil embedded interface.
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

func (c *storeConductor) CreateNode(ctx context.Context, _ string, n *model.Node) (*model.Node, error) {
	c.record("create_node")
	if n.Driver != "fake-hardware" {
		return nil, errs.New("DriverNotFound", map[string]any{"driver_name": n.Driver})
	}
	out, err := c.s.CreateNode(ctx, n)
	var d *store.DuplicateError
	if errors.As(err, &d) {
		switch d.Field {
		case "name":
			return nil, errs.New("DuplicateName", map[string]any{"name": *n.Name})
		case "instance_uuid":
			return nil, errs.New("InstanceAssociated", map[string]any{"instance_uuid": *n.InstanceUUID, "node": d.Node})
		}
		return nil, errs.New("NodeAlreadyExists", map[string]any{"uuid": n.UUID})
	}
	return out, err
}

func (c *storeConductor) UpdateNode(ctx context.Context, _ string, n *model.Node, _ bool) (*model.Node, error) {
	c.record("update_node")
	out, err := c.s.UpdateNode(ctx, n)
	var d *store.DuplicateError
	if errors.As(err, &d) {
		switch d.Field {
		case "name":
			return nil, errs.New("DuplicateName", map[string]any{"name": *n.Name})
		case "instance_uuid":
			return nil, errs.New("InstanceAssociated", map[string]any{"instance_uuid": *n.InstanceUUID, "node": d.Node})
		}
	}
	return out, err
}

func (c *storeConductor) DestroyNode(ctx context.Context, _ string, id string) error {
	c.record("destroy_node")
	n, err := c.s.GetNodeByUUID(ctx, id)
	if err != nil {
		return err
	}
	return c.s.DeleteNode(ctx, n.ID)
}

func (c *storeConductor) ChangeNodePowerState(ctx context.Context, _ string, id, state string, _ int) error {
	c.record("change_node_power_state " + state)
	return nil
}

type fixedTopics struct{}

func (fixedTopics) GetTopicFor(context.Context, *model.Node) (string, error) {
	return rpc.ManagerTopic + ".test-host", nil
}
func (fixedTopics) GetConductorFor(context.Context, *model.Node) (string, error) {
	return "test-host", nil
}

type env struct {
	t    testing.TB
	h    http.Handler
	s    store.Store
	cond *storeConductor
	logs *bytes.Buffer
}

func newEnv(t testing.TB) *env {
	t.Helper()
	db := storetest.Backends(t)[0].DB
	s := store.New(db)
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cond := &storeConductor{s: s}
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: s, Conductor: cond, Topics: fixedTopics{}, Logger: log})
	e := &env{t: t, h: api.New(api.Deps{Logger: log, Handlers: handlers}), s: s, cond: cond, logs: logs}
	return e
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %s: %v", r.body, err)
	}
	return m
}

// faultstring is the upstream error's message.
func (r resp) faultstring(t testing.TB) string {
	t.Helper()
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	if err := json.Unmarshal(r.body, &outer); err != nil {
		t.Fatalf("fault body %s: %v", r.body, err)
	}
	var inner struct {
		Faultstring string `json:"faultstring"`
	}
	if err := json.Unmarshal([]byte(outer.ErrorMessage), &inner); err != nil {
		t.Fatalf("fault %s: %v", outer.ErrorMessage, err)
	}
	return inner.Faultstring
}

func (e *env) do(method, path, version, body string) resp {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://127.0.0.1:6385"+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if version != "" {
		req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	return resp{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

func (e *env) create(body string) map[string]any {
	e.t.Helper()
	r := e.do("POST", "/v1/nodes", "1.115", body)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create %s: %d %s", body, r.status, r.body)
	}
	return r.json(e.t)
}
