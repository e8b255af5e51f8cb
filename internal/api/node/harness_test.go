package node

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
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// fixedTopics routes every node to the one conductor of the test.
type fixedTopics struct{}

func (fixedTopics) GetTopicFor(context.Context, *model.Node) (string, error) {
	return rpc.ManagerTopic + "." + testHost, nil
}
func (fixedTopics) GetConductorFor(context.Context, *model.Node) (string, error) {
	return testHost, nil
}

const testHost = "test-host"

// syncBuffer is a log sink written by the API and the conductor's workers
// at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type env struct {
	t    testing.TB
	h    http.Handler
	s    store.Store
	cond *conductor.Conductor
	logs *syncBuffer
}

// fakeDrivers enables fake-hardware with its fake interfaces (noop
// network and storage), as an all-in-one test deployment would.
func fakeDrivers(t testing.TB) *driver.Drivers {
	t.Helper()
	r := driver.NewRegistry()
	for _, h := range driver.StockHardwareTypes() {
		if err := r.AddHardwareType(h); err != nil {
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
	d, err := r.Build(driver.Settings{
		EnabledHardwareTypes: []string{"fake-hardware"},
		EnabledInterfaces: map[driver.Kind][]string{
			driver.KindBIOS: fakeOnly, driver.KindBoot: fakeOnly, driver.KindConsole: fakeOnly,
			driver.KindDeploy: fakeOnly, driver.KindFirmware: fakeOnly, driver.KindInspect: fakeOnly,
			driver.KindManagement: fakeOnly, driver.KindNetwork: {"noop"}, driver.KindPower: fakeOnly,
			driver.KindRAID: fakeOnly, driver.KindRescue: fakeOnly, driver.KindStorage: {"noop"},
			driver.KindVendor: fakeOnly,
		},
		DefaultInterfaces: map[driver.Kind]string{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newEnv serves the node routes over an in-memory store with the real
// conductor behind the in-process transport, periodic tasks off.
func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvWith(t, nil)
}

// newEnvWith is newEnv with the handlers' dependencies adjusted by with
// (policy hooks).
func newEnvWith(t testing.TB, with func(*Deps)) *env {
	t.Helper()
	db := storetest.Backends(t)[0].DB
	s := store.New(db)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"conductor": {
			"sync_power_state_interval": "0", "power_failure_recovery_interval": "0",
			"check_provision_state_interval": "0", "sync_local_state_interval": "0",
			"check_allocations_interval": "0", "graceful_shutdown_timeout": "10",
		},
	}})
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	cond, err := conductor.New(conductor.Options{Store: s, Drivers: fakeDrivers(t), Config: cfg, Host: testHost, Logger: log})
	if err != nil {
		t.Fatalf("new conductor: %v", err)
	}
	if err := cond.Start(context.Background()); err != nil {
		t.Fatalf("start conductor: %v", err)
	}
	t.Cleanup(func() { _ = cond.Stop(context.Background()) })
	handlers := map[string]api.HandlerFunc{}
	deps := Deps{Store: s, Conductor: rpc.NewLocal(cond, log), Topics: fixedTopics{}, Config: cfg, Logger: log,
		Authorize: apitest.Allow[*model.Node], AuthorizeRunbook: apitest.Allow[*model.Runbook]}
	if with != nil {
		with(&deps)
	}
	Register(handlers, deps)
	return &env{t: t, h: apitest.New(t, api.Deps{Logger: log, Handlers: handlers}), s: s, cond: cond, logs: logs}
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
