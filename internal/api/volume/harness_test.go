package volume

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver/builtin"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

const testHost = "test-host"

type fixedTopics struct{}

func (fixedTopics) GetTopicFor(context.Context, *model.Node) (string, error) {
	return rpc.ManagerTopic + "." + testHost, nil
}

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
	s := store.New(storetest.Backends(t)[0].DB)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"DEFAULT": {"enabled_hardware_types": "fake-hardware", "enabled_power_interfaces": "fake",
			"enabled_management_interfaces": "fake", "enabled_boot_interfaces": "fake", "enabled_deploy_interfaces": "fake",
			"enabled_network_interfaces": "noop", "enabled_storage_interfaces": "noop", "enabled_inspect_interfaces": "fake",
			"enabled_bios_interfaces": "fake", "enabled_console_interfaces": "fake", "enabled_firmware_interfaces": "fake",
			"enabled_raid_interfaces": "fake", "enabled_rescue_interfaces": "fake", "enabled_vendor_interfaces": "fake"},
		"conductor": {"sync_power_state_interval": "0", "power_failure_recovery_interval": "0",
			"check_provision_state_interval": "0", "sync_local_state_interval": "0", "check_allocations_interval": "0"},
	}})
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	drivers, err := builtin.Drivers(cfg)
	if err != nil {
		t.Fatalf("drivers: %v", err)
	}
	cond, err := conductor.New(conductor.Options{Store: s, Drivers: drivers, Config: cfg, Host: testHost, Logger: log})
	if err != nil {
		t.Fatalf("new conductor: %v", err)
	}
	if err := cond.Start(context.Background()); err != nil {
		t.Fatalf("start conductor: %v", err)
	}
	t.Cleanup(func() { _ = cond.Stop(context.Background()) })
	handlers := map[string]api.HandlerFunc{}
	c := rpc.NewLocal(cond, log)
	Register(handlers, Deps{Store: s, Conductor: c, Topics: fixedTopics{}})
	return &env{t: t, h: api.New(api.Deps{Config: cfg, Logger: log, Handlers: handlers}), s: s}
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
	return resp{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

// node stores a node directly (node creation is the node package's).
func (e *env) node(name string, mutate func(*model.Node)) *model.Node {
	e.t.Helper()
	n := &model.Node{UUID: uuid.NewString(), Driver: "fake-hardware", ProvisionState: "enroll", Name: &name,
		PowerState: "power off"}
	n.BootInterface, n.DeployInterface, n.ManagementInterface, n.PowerInterface = "fake", "fake", "fake", "fake"
	n.NetworkInterface, n.StorageInterface = "noop", "noop"
	if mutate != nil {
		mutate(n)
	}
	out, err := e.s.CreateNode(context.Background(), n)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// newHandlerDenyingProperties serves the same store with the
// view_target_properties check refused.
func newHandlerDenyingProperties(t testing.TB, e *env) http.Handler {
	t.Helper()
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: e.s, Topics: fixedTopics{}, ViewTargetProperties: func(*http.Request) bool { return false }})
	return api.New(api.Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Handlers: handlers})
}
