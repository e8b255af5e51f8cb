// Package apitest holds the harness shared by the REST resource packages'
// tests: a store, the real conductor serving fake-hardware behind the
// in-process transport, and helpers to call the router and read its faults.
// Only tests import it, as internal/store/storetest.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// Host is the name the test conductor runs under.
const Host = "test-host"

// Topic is the RPC topic of the test conductor.
const Topic = rpc.ManagerTopic + "." + Host

// VersionHeader carries the requested API microversion.
const VersionHeader = "X-OpenStack-Ironic-API-Version"

// Topics is the conductor lookup of the resource packages' Deps, which
// sends every call to the test conductor.
type Topics struct{}

// GetTopicFor is the test conductor's topic, whatever the node.
func (Topics) GetTopicFor(context.Context, *model.Node) (string, error) { return Topic, nil }

// GetRandomTopic is the test conductor's topic.
func (Topics) GetRandomTopic(context.Context) (string, error) { return Topic, nil }

// Env is a fresh store with the real conductor started over it.
type Env struct {
	Store     store.Store
	Config    *config.Config
	Drivers   *driver.Drivers
	Conductor *conductor.Conductor
	// Local is the conductor behind the in-process RPC transport.
	Local  rpc.ConductorAPI
	Logger *slog.Logger
	// t is the test the environment serves; its handlers fail it on a
	// panic.
	t testing.TB
}

// Options adjust NewEnv; the zero value is a fresh first storetest backend.
type Options struct {
	// DB is the database to serve; the first storetest backend when nil.
	DB *sqldb.DB
	// Config overrides are section -> name -> value, over the harness's own.
	Config map[string]map[string]string
}

// NewEnv starts the conductor (fake-hardware, periodic tasks off) over a
// store; the conductor stops when the test ends.
func NewEnv(t testing.TB, o Options) *Env {
	t.Helper()
	over := map[string]map[string]string{
		"conductor": {"sync_power_state_interval": "0", "power_failure_recovery_interval": "0",
			"check_provision_state_interval": "0", "sync_local_state_interval": "0",
			"check_allocations_interval": "0", "graceful_shutdown_timeout": "5"},
		"DEFAULT": {"host": Host},
		"agent":   {"require_tls": "false"},
	}
	for sec, kv := range o.Config {
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
	db := o.DB
	if db == nil {
		db = storetest.Backends(t)[0].DB
	}
	s := store.New(db)
	drivers := FakeDrivers(t)
	discard := slog.New(slog.DiscardHandler)
	c, err := conductor.New(conductor.Options{Store: s, Drivers: drivers, Config: cfg, Logger: discard})
	if err != nil {
		t.Fatalf("conductor: %v", err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("start conductor: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	return &Env{Store: s, Config: cfg, Drivers: drivers, Conductor: c, Local: rpc.NewLocal(c, discard), Logger: discard, t: t}
}

// NodeBound are the Deps of the port and portgroup handlers (and the
// base of the volume ones) over e, without policy.
func (e *Env) NodeBound() apiutil.NodeBound {
	return apiutil.NodeBound{Store: e.Store, Conductor: e.Local, Topics: Topics{}, Authorize: Allow[*model.Node],
		ListProject: ListAll}
}

// Handler is the real router over the given resource handlers; a panic
// fails the test.
func (e *Env) Handler(handlers map[string]api.HandlerFunc) http.Handler {
	return Handler(e.t, e.Config, handlers)
}

// Handler is the real router over the given resource handlers with cfg
// (nil for none) and logs discarded; a panic fails t.
func Handler(t testing.TB, cfg *config.Config, handlers map[string]api.HandlerFunc) http.Handler {
	return New(t, api.Deps{Config: cfg, Handlers: handlers})
}

// New is api.New for a test: logs are discarded unless d names a logger,
// the route policy allows everything unless d.Authorize is set (api.New
// itself refuses without one), and a handler panic, which the API recovers and answers 500, fails t
// with the panic and its stack, so that no test passes over one.
func New(t testing.TB, d api.Deps) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Authorize == nil {
		// api.New refuses every route without a policy check; these
		// tests exercise the handlers, whose own hooks carry the policy.
		d.Authorize = api.AllowAll
	}
	d.Panicked = func(r *http.Request, p any, stack []byte) {
		t.Errorf("%s %s panicked: %v\n%s", r.Method, r.URL.Path, p, stack)
	}
	return api.New(d)
}

// Keys are the keys of m, sorted.
func Keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// FakeDrivers enables fake-hardware with its fake interfaces (noop network
// and storage), as an all-in-one test deployment would.
func FakeDrivers(t testing.TB) *driver.Drivers {
	t.Helper()
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
	return drivers
}

// Response is one recorded answer of the router.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends method path to h with a JSON body when body is set and the
// microversion header when version is set.
func Do(t testing.TB, h http.Handler, method, path, version, body string) Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://127.0.0.1:6385"+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if version != "" {
		req.Header.Set(VersionHeader, version)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return Response{Status: w.Code, Header: w.Header(), Body: bytes.Clone(w.Body.Bytes())}
}

// JSON decodes the answer's object body.
func (r Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	return JSON(t, r.Body)
}

// Faultstring is the message of the answer, a fault raised by a handler.
func (r Response) Faultstring(t testing.TB) string {
	t.Helper()
	return Faultstring(t, r.Body)
}

// Fault is the message of the answer, a handler fault or a routing error.
func (r Response) Fault(t testing.TB) string {
	t.Helper()
	return Fault(t, r.Body)
}

// Created is the object a creation answered, which must be 201.
func (r Response) Created(t testing.TB, what string) map[string]any {
	t.Helper()
	if r.Status != http.StatusCreated {
		t.Fatalf("create %s: %d %s", what, r.Status, r.Body)
	}
	return r.JSON(t)
}

// Client sends requests to the router of one test.
type Client struct {
	T testing.TB
	H http.Handler
}

// Do sends method path as the package function Do does.
func (c Client) Do(method, path, version, body string) Response {
	c.T.Helper()
	return Do(c.T, c.H, method, path, version, body)
}

// JSON decodes an object body.
func JSON(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return m
}

// fault decodes the inner document of an error answer, which upstream
// nests as a JSON string under error_message.
func fault(t testing.TB, body []byte) (faultstring, description string) {
	t.Helper()
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	if err := json.Unmarshal(body, &outer); err != nil {
		t.Fatalf("fault body %s: %v", body, err)
	}
	var inner struct{ Faultstring, Description string }
	if err := json.Unmarshal([]byte(outer.ErrorMessage), &inner); err != nil {
		t.Fatalf("fault %s: %v", outer.ErrorMessage, err)
	}
	return inner.Faultstring, inner.Description
}

// Faultstring is the message of an error answer raised by a handler.
func Faultstring(t testing.TB, body []byte) string {
	t.Helper()
	fs, _ := fault(t, body)
	return fs
}

// Fault is the message of any error answer: handler faults carry a
// faultstring, routing errors a description.
func Fault(t testing.TB, body []byte) string {
	t.Helper()
	fs, desc := fault(t, body)
	return fs + desc
}

// WantFault checks an error answer's status and faultstring.
func WantFault(t testing.TB, gotStatus int, body []byte, status int, msg string) {
	t.Helper()
	if gotStatus != status {
		t.Fatalf("status %d, want %d: %s", gotStatus, status, body)
	}
	if got := Faultstring(t, body); got != msg {
		t.Fatalf("faultstring %q, want %q", got, msg)
	}
}

// Node stores a fake-hardware node in state, adjusted by mut, with ports
// of the given addresses.
func (e *Env) Node(t testing.TB, state string, macs []string, mut ...func(*model.Node)) *model.Node {
	t.Helper()
	n := &model.Node{Driver: "fake-hardware", ProvisionState: state, PowerState: states.PowerOff}
	for _, m := range mut {
		m(n)
	}
	if _, err := e.Drivers.CheckAndUpdateNodeInterfaces(n); err != nil {
		t.Fatalf("node interfaces: %v", err)
	}
	out, err := e.Store.CreateNode(context.Background(), n)
	if err != nil {
		t.Fatalf("create node: %v", err)
	}
	for _, mac := range macs {
		if _, err := e.Store.CreatePort(context.Background(), &model.Port{Address: &mac, NodeID: &out.ID}); err != nil {
			t.Fatalf("create port: %v", err)
		}
	}
	return out
}

// GetNode reads a node back from the store.
func (e *Env) GetNode(t testing.TB, uuid string) *model.Node {
	t.Helper()
	n, err := e.Store.GetNodeByUUID(context.Background(), uuid)
	if err != nil {
		t.Fatalf("get node: %v", err)
	}
	return n
}

// StoredNode stores a fake-hardware node named name, with its interfaces
// set directly rather than resolved, adjusted by mutate when set.
func StoredNode(t testing.TB, s store.Store, name string, mutate func(*model.Node)) *model.Node {
	t.Helper()
	n := &model.Node{UUID: uuid.NewString(), Driver: "fake-hardware", ProvisionState: "enroll", Name: &name,
		PowerState: "power off"}
	n.BootInterface, n.DeployInterface, n.ManagementInterface, n.PowerInterface = "fake", "fake", "fake", "fake"
	n.NetworkInterface, n.StorageInterface = "noop", "noop"
	if mutate != nil {
		mutate(n)
	}
	out, err := s.CreateNode(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Allow is an authorization hook of the resource packages (node.Deps,
// port.Deps, allocation.Deps…) that allows every rule, for tests that
// exercise the handlers without policy: a hook left nil refuses
// everything.
func Allow[T any](*http.Request, string, T) error { return nil }

// AllowCheck is allocation.Deps.Check allowing every rule.
func AllowCheck(*http.Request, string) error { return nil }

// ListAll is a list-scope hook (NodeBound.ListProject,
// allocation.Deps.ListProject) letting the caller list every record: a
// hook left nil refuses every listing.
func ListAll(*http.Request, string) (*string, error) { return nil, nil }

// SystemScope is a scope hook (allocation.Deps.Scope, runbook.Deps.Scope)
// making every caller system scoped, as upstream's noauth mode does: a
// hook left nil refuses what needs the caller's scope.
func SystemScope(*http.Request) (string, bool) { return "", true }
