package ramdisk

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
)

// recorder is the in-process conductor behind rpc.Local, recording the
// ramdisk calls with their arguments before the conductor serves them.
type recorder struct {
	rpc.ConductorAPI
	mu    sync.Mutex
	calls []string
	hb    []rpc.HeartbeatArgs
	insp  []map[string]any
	fail  map[string]error
	// accept answers continue_inspection without the conductor: no
	// inspect interface of ours continues inspection yet.
	accept bool
}

func (c *recorder) record(call string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
	return c.fail[call]
}

func (c *recorder) Heartbeat(ctx context.Context, topic string, a rpc.HeartbeatArgs) error {
	if err := c.record("heartbeat " + topic); err != nil {
		return err
	}
	c.mu.Lock()
	c.hb = append(c.hb, a)
	c.mu.Unlock()
	return c.ConductorAPI.Heartbeat(ctx, topic, a)
}

func (c *recorder) GetNodeWithToken(ctx context.Context, topic, id string) (*model.Node, error) {
	if err := c.record("get_node_with_token " + topic); err != nil {
		return nil, err
	}
	return c.ConductorAPI.GetNodeWithToken(ctx, topic, id)
}

func (c *recorder) ContinueInspection(ctx context.Context, topic, id string, inv, plugin map[string]any) error {
	if err := c.record("continue_inspection " + topic); err != nil {
		return err
	}
	c.mu.Lock()
	c.insp = append(c.insp, map[string]any{"inventory": inv, "plugin_data": plugin})
	accept := c.accept
	c.mu.Unlock()
	if accept {
		return nil
	}
	return c.ConductorAPI.ContinueInspection(ctx, topic, id, inv, plugin)
}

func (c *recorder) CreateNode(ctx context.Context, topic string, n *model.Node) (*model.Node, error) {
	if err := c.record("create_node " + topic); err != nil {
		return nil, err
	}
	return c.ConductorAPI.CreateNode(ctx, topic, n)
}

func (c *recorder) Calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

const testTopic = apitest.Topic

// topics answers one conductor, or NoValidHost when down is set.
type topics struct{ down bool }

func (t *topics) GetTopicFor(context.Context, *model.Node) (string, error) {
	if t.down {
		return "", errs.New(errs.ClassNoValidHost, map[string]any{"reason": "No conductor service registered which supports driver fake-hardware for conductor group \"\"."})
	}
	return testTopic, nil
}

type env struct {
	t       testing.TB
	h       http.Handler
	s       store.Store
	cfg     *config.Config
	drivers *driver.Drivers
	cond    *recorder
	topics  *topics
	ae      *apitest.Env
}

// newEnv runs the real router with the ramdisk handlers over a fresh
// store and the real in-process conductor (fake-hardware, periodic tasks
// off); conf overrides are section -> name -> value.
func newEnv(t testing.TB, conf map[string]map[string]string) *env {
	t.Helper()
	ae := apitest.NewEnv(t, apitest.Options{Config: conf})
	rec := &recorder{ConductorAPI: ae.Local, fail: map[string]error{}}
	tp := &topics{}
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: ae.Store, Conductor: rec, Topics: tp, Config: ae.Config, Logger: ae.Logger})
	return &env{t: t, h: ae.Handler(handlers), s: ae.Store, cfg: ae.Config, drivers: ae.Drivers, cond: rec, topics: tp, ae: ae}
}

// node stores a fake-hardware node in state with its ports' addresses.
func (e *env) node(state string, macs []string, mut ...func(*model.Node)) *model.Node {
	e.t.Helper()
	return e.ae.Node(e.t, state, macs, mut...)
}

func (e *env) get(uuid string) *model.Node {
	e.t.Helper()
	return e.ae.GetNode(e.t, uuid)
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

// wantFault checks an error answer's status and faultstring.
func wantFault(t testing.TB, r resp, status int, msg string) {
	t.Helper()
	apitest.WantFault(t, r.status, r.body, status, msg)
}

func storeFilterAll() store.NodeFilter { return store.NodeFilter{} }
func storeAll() store.ListOptions      { return store.ListOptions{} }
