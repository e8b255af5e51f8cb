package allocation

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
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

const testTopic = rpc.ManagerTopic + ".test-host"

// topics answers one conductor, or NoValidHost when down is set.
type topics struct{ down bool }

func (t *topics) GetRandomTopic(context.Context) (string, error) {
	if t.down {
		return "", errs.New("NoValidHost", map[string]any{"reason": "No conductor service registered which is online."})
	}
	return testTopic, nil
}

func (t *topics) GetTopicFor(context.Context, *model.Node) (string, error) {
	if t.down {
		return "", errs.New("NoValidHost", map[string]any{"reason": "No conductor service registered which supports driver fake-hardware for conductor group \"\"."})
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
}

// newEnv runs the real router with the ramdisk handlers over a fresh
// store and the real in-process conductor (fake-hardware, periodic tasks
// off); conf overrides are section -> name -> value.
func newEnv(t testing.TB, conf map[string]map[string]string) *env {
	t.Helper()
	return newEnvOn(t, conf, storetest.Backends(t)[0].DB)
}

// newEnvOn is newEnv on the given database.
func newEnvOn(t testing.TB, conf map[string]map[string]string, db *sqldb.DB) *env {
	t.Helper()
	over := map[string]map[string]string{
		"conductor": {"sync_power_state_interval": "0", "power_failure_recovery_interval": "0",
			"check_provision_state_interval": "0", "sync_local_state_interval": "0",
			"check_allocations_interval": "0", "graceful_shutdown_timeout": "5"},
		"DEFAULT": {"host": "test-host"},
		"agent":   {"require_tls": "false"},
	}
	for sec, kv := range conf {
		if over[sec] == nil {
			over[sec] = map[string]string{}
		}
		for k, v := range kv {
			over[sec][k] = v
		}
	}
	cfg, err := config.Load(config.LoadOptions{Overrides: over})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	s := store.New(db)
	r := driver.NewRegistry()
	for _, hw := range driver.StockHardwareTypes() {
		if err := r.AddHardwareType(hw); err != nil {
			t.Fatal(err)
		}
	}
	if err := fake.Register(r, fake.Delays{}); err != nil {
		t.Fatal(err)
	}
	if err := noop.Register(r); err != nil {
		t.Fatal(err)
	}
	fakeOnly := []string{"fake"}
	drivers, err := r.Build(driver.Settings{
		EnabledHardwareTypes: []string{"fake-hardware"},
		EnabledInterfaces: map[driver.Kind][]string{
			driver.KindBIOS: fakeOnly, driver.KindBoot: fakeOnly, driver.KindConsole: fakeOnly,
			driver.KindDeploy: fakeOnly, driver.KindFirmware: fakeOnly, driver.KindInspect: fakeOnly,
			driver.KindManagement: fakeOnly, driver.KindNetwork: {"noop"}, driver.KindPower: fakeOnly,
			driver.KindRAID: fakeOnly, driver.KindRescue: fakeOnly, driver.KindStorage: {"noop"},
			driver.KindVendor: fakeOnly,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	discard := slog.New(slog.DiscardHandler)
	c, err := conductor.New(conductor.Options{Store: s, Drivers: drivers, Config: cfg, Logger: discard})
	if err != nil {
		t.Fatalf("conductor: %v", err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start conductor: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	rec := &recorder{ConductorAPI: rpc.NewLocal(c, discard)}
	tp := &topics{}
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: s, Conductor: rec, Topics: tp, Logger: discard})
	return &env{t: t, h: api.New(api.Deps{Config: cfg, Logger: discard, Handlers: handlers}),
		s: s, cfg: cfg, drivers: drivers, cond: rec, topics: tp}
}

// node stores a fake-hardware node in state with its ports' addresses.
func (e *env) node(state string, macs []string, mut ...func(*model.Node)) *model.Node {
	e.t.Helper()
	n := &model.Node{Driver: "fake-hardware", ProvisionState: state, PowerState: states.PowerOff}
	for _, m := range mut {
		m(n)
	}
	if _, err := e.drivers.CheckAndUpdateNodeInterfaces(n); err != nil {
		e.t.Fatalf("node interfaces: %v", err)
	}
	out, err := e.s.CreateNode(context.Background(), n)
	if err != nil {
		e.t.Fatalf("create node: %v", err)
	}
	for _, mac := range macs {
		if _, err := e.s.CreatePort(context.Background(), &model.Port{Address: &mac, NodeID: &out.ID}); err != nil {
			e.t.Fatalf("create port: %v", err)
		}
	}
	return out
}

func (e *env) get(uuid string) *model.Node {
	e.t.Helper()
	n, err := e.s.GetNodeByUUID(context.Background(), uuid)
	if err != nil {
		e.t.Fatalf("get node: %v", err)
	}
	return n
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
	return resp{status: w.Code, header: w.Header(), body: bytes.Clone(w.Body.Bytes())}
}

// wantFault checks an error answer's status and faultstring.
func wantFault(t testing.TB, r resp, status int, msg string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if got := r.faultstring(t); got != msg {
		t.Fatalf("faultstring %q, want %q", got, msg)
	}
}

func storeFilterAll() store.NodeFilter { return store.NodeFilter{} }
func storeAll() store.ListOptions      { return store.ListOptions{} }
