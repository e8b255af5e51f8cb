package allocation

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
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// recorder is the in-process conductor behind rpc.Local, recording the
// allocation calls with their topics before the conductor serves them.
type recorder struct {
	rpc.ConductorAPI
	mu    sync.Mutex
	calls []string
}

func (c *recorder) record(call string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
}

func (c *recorder) CreateAllocation(ctx context.Context, topic string, a *model.Allocation) (*model.Allocation, error) {
	c.record("create_allocation " + topic)
	return c.ConductorAPI.CreateAllocation(ctx, topic, a)
}

func (c *recorder) DestroyAllocation(ctx context.Context, topic string, a *model.Allocation) error {
	c.record("destroy_allocation " + topic)
	return c.ConductorAPI.DestroyAllocation(ctx, topic, a)
}

func (c *recorder) Calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

const testTopic = apitest.Topic

// topics answers one conductor, or NoValidHost when down is set.
type topics struct{ down bool }

func (t *topics) GetRandomTopic(context.Context) (string, error) {
	if t.down {
		return "", errs.New(errs.ClassNoValidHost, map[string]any{"reason": "No conductor service registered which is online."})
	}
	return testTopic, nil
}

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

// newEnv runs the real router with the allocation handlers over a fresh
// store and the real in-process conductor (fake-hardware, periodic tasks
// off); conf overrides are section -> name -> value.
func newEnv(t testing.TB, conf map[string]map[string]string) *env {
	t.Helper()
	return newEnvOn(t, conf, nil)
}

// newEnvOn is newEnv on the given database.
func newEnvOn(t testing.TB, conf map[string]map[string]string, db *sqldb.DB) *env {
	t.Helper()
	ae := apitest.NewEnv(t, apitest.Options{DB: db, Config: conf})
	rec := &recorder{ConductorAPI: ae.Local}
	tp := &topics{}
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: ae.Store, Conductor: rec, Topics: tp, Logger: ae.Logger,
		Authorize: apitest.Allow[*string], AuthorizeNode: apitest.Allow[*model.Node], Check: apitest.AllowCheck, Scope: apitest.SystemScope, ListProject: apitest.ListAll})
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

type resp = apitest.Response

func (e *env) do(method, path, version, body string) resp {
	e.t.Helper()
	return apitest.Do(e.t, e.h, method, path, version, body)
}

// wantFault checks an error answer's status and faultstring.
func wantFault(t testing.TB, r resp, status int, msg string) {
	t.Helper()
	apitest.WantFault(t, r.Status, r.Body, status, msg)
}

func storeFilterAll() store.NodeFilter { return store.NodeFilter{} }
func storeAll() store.ListOptions      { return store.ListOptions{} }
