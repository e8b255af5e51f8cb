package conductor_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/conductor/workers"
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
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/fakeclock"
)

const testHost = "conductor-a"

// scripted is a test vendor interface whose steps do what the test says:
// it lets flows reach the asynchronous, failing and blocking paths the
// fake interfaces never take.
type scripted struct {
	mu sync.Mutex
	// results maps a step name to what it returns next.
	results map[string]stepResult
	// gate, when set, is waited on by the "block" steps.
	gate chan struct{}
	ran  []string
}

type stepResult struct {
	state string
	err   error
}

func (s *scripted) Properties() map[string]string { return map[string]string{} }

func (s *scripted) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.CleanStep("async_step", 0),
		driver.CleanStep("abortable_async", 0).WithAbortable(true),
		driver.CleanStep("fail_step", 0),
		driver.CleanStep("block", 50),
		driver.CleanStep("needs_args", 0).WithArgs(map[string]driver.ArgInfo{
			"size": driver.Required("Size in GiB"), "mode": driver.Optional("Mode"),
			"admin_password": driver.Optional("A secret the step flow records mask"),
		}),
		driver.ServiceStep("svc_async"),
		driver.ServiceStep("svc_abortable").WithAbortable(true),
		driver.ServiceStep("svc_fail").WithRequiresRamdisk(false),
		driver.DeployStep("deploy_async", 0).WithAbortable(false),
		driver.DeployStep("deploy_wait", 80),
		driver.DeployStep("deploy_fail", 0),
		driver.VerifyStep("verify_check", 0),
	}
}

func (s *scripted) StepHandlers() map[string]driver.StepFunc {
	h := map[string]driver.StepFunc{}
	for _, spec := range s.Steps() {
		name := spec.Name
		h[name] = func(ctx context.Context, _ *driver.Task, _ map[string]any) (string, error) {
			s.mu.Lock()
			s.ran = append(s.ran, name)
			r, ok := s.results[name]
			gate := s.gate
			s.mu.Unlock()
			if name == "block" && gate != nil {
				select {
				case <-gate:
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
			if ok {
				return r.state, r.err
			}
			return "", nil
		}
	}
	return h
}

func (s *scripted) set(step, state string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.results == nil {
		s.results = map[string]stepResult{}
	}
	s.results[step] = stepResult{state, err}
}

func (s *scripted) Ran() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ran...)
}

func (s *scripted) Validate(context.Context, *driver.Task, string, map[string]any) error { return nil }
func (s *scripted) VendorRoutes() map[string]driver.PassthruRoute                        { return nil }
func (s *scripted) DriverRoutes() map[string]driver.PassthruRoute                        { return nil }

// flakyPower is a power interface whose reading the test sets: the
// hardware's state (which may disagree with the database) or an error.
type flakyPower struct {
	mu     sync.Mutex
	state  string
	err    error
	sets   []string
	setErr error
	// onGet, when set, runs at each reading, before it answers.
	onGet func(*driver.Task)
}

func (p *flakyPower) Properties() map[string]string                             { return map[string]string{} }
func (p *flakyPower) Steps() []driver.StepSpec                                  { return nil }
func (p *flakyPower) Validate(context.Context, *driver.Task) error              { return nil }
func (p *flakyPower) Reboot(context.Context, *driver.Task, time.Duration) error { return nil }
func (p *flakyPower) GetSupportedPowerStates(context.Context, *driver.Task) ([]string, error) {
	return []string{states.PowerOn, states.PowerOff, states.Reboot}, nil
}

func (p *flakyPower) GetPowerState(_ context.Context, t *driver.Task) (string, error) {
	p.mu.Lock()
	hook := p.onGet
	p.mu.Unlock()
	if hook != nil {
		hook(t)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state, p.err
}

func (p *flakyPower) SetPowerState(_ context.Context, t *driver.Task, state string, _ time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sets = append(p.sets, state)
	if p.setErr != nil {
		return p.setErr
	}
	p.state = state
	return nil
}

func (p *flakyPower) reading(state string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state, p.err = state, err
}

func (p *flakyPower) Sets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.sets...)
}

type env struct {
	t       *testing.T
	st      store.Store
	db      *sqldb.DB
	clock   *fakeclock.Clock
	cfg     *config.Config
	drivers *driver.Drivers
	steps   *scripted
	power   *flakyPower
	c       *conductor.Conductor
	api     rpc.ConductorAPI
}

type envOption func(*envOpts)

type envOpts struct {
	overrides map[string]map[string]string
	host      string
	owns      func(*model.Node) bool
	noStart   bool
	pool      *workers.Pool
}

func withConf(section, name, value string) envOption {
	return func(o *envOpts) {
		if o.overrides[section] == nil {
			o.overrides[section] = map[string]string{}
		}
		o.overrides[section][name] = value
	}
}

func withOwns(f func(*model.Node) bool) envOption { return func(o *envOpts) { o.owns = f } }

func withoutStart() envOption { return func(o *envOpts) { o.noStart = true } }

func withPool(p *workers.Pool) envOption { return func(o *envOpts) { o.pool = p } }

// loopsOff turns the conductor's own periodic loops off: the tests run
// the passes they need by hand.
var loopsOff = map[string]string{
	"sync_power_state_interval": "0", "power_failure_recovery_interval": "0",
	"check_provision_state_interval": "0", "sync_local_state_interval": "0",
	"check_allocations_interval": "0", "conductor_cleanup_interval": "0",
	"node_history_cleanup_interval": "0", "graceful_shutdown_timeout": "10",
}

// testConfig loads ironic.conf from loopsOff and the sections given,
// a later section's options winning key by key.
func testConfig(t *testing.T, sections ...map[string]map[string]string) *config.Config {
	t.Helper()
	merged := map[string]map[string]string{"conductor": maps.Clone(loopsOff)}
	for _, more := range sections {
		for section, opts := range more {
			if merged[section] == nil {
				merged[section] = map[string]string{}
			}
			maps.Copy(merged[section], opts)
		}
	}
	cfg, err := config.Load(config.LoadOptions{Overrides: merged})
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	return cfg
}

// newStoreEnv is an env on db with cfg and a store stamped by the env's
// fake wall clock; the caller adds drivers and a conductor.
func newStoreEnv(t *testing.T, db *sqldb.DB, cfg *config.Config) *env {
	clock := fakeclock.NewWall()
	return &env{t: t, st: store.New(db, store.WithClock(clock.Now)), db: db, clock: clock, cfg: cfg}
}

// stockRegistry is a registry with the stock hardware types and the fake
// and no-op interfaces; tests register their own on top.
func stockRegistry(t *testing.T) *driver.Registry {
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
	return r
}

// mustRegister registers impl as the name implementation of kind.
func mustRegister(t *testing.T, r *driver.Registry, kind driver.Kind, name string, impl driver.Interface) {
	t.Helper()
	if err := r.Register(kind, name, impl); err != nil {
		t.Fatal(err)
	}
}

// buildFakeHardware builds r's drivers with fake-hardware enabled, each
// kind with its fake implementation (no-console, no-inspect, no-rescue
// where the fake one would act; noop network and storage) unless ifaces
// lists the kind's implementations.
func buildFakeHardware(t *testing.T, r *driver.Registry, ifaces map[driver.Kind][]string) *driver.Drivers {
	t.Helper()
	fakeOnly := []string{"fake"}
	enabled := map[driver.Kind][]string{
		driver.KindBIOS: fakeOnly, driver.KindBoot: fakeOnly, driver.KindConsole: {"no-console"},
		driver.KindDeploy: fakeOnly, driver.KindFirmware: fakeOnly, driver.KindInspect: {"no-inspect"},
		driver.KindManagement: fakeOnly, driver.KindNetwork: {"noop"}, driver.KindPower: fakeOnly,
		driver.KindRAID: fakeOnly, driver.KindRescue: {"no-rescue"}, driver.KindStorage: {"noop"},
		driver.KindVendor: fakeOnly,
	}
	maps.Copy(enabled, ifaces)
	d, err := r.Build(driver.Settings{EnabledHardwareTypes: []string{"fake-hardware"}, EnabledInterfaces: enabled})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newEnv builds a conductor on db with fake-hardware, the scripted vendor
// interface and the flaky power interface registered, periodic loops off
// (tests run passes by hand), and starts it.
func newEnv(t *testing.T, db *sqldb.DB, opts ...envOption) *env {
	t.Helper()
	o := envOpts{overrides: map[string]map[string]string{
		"conductor": {"rescue_callback_timeout": "0"},
		"agent":     {"require_tls": "false"},
	}, host: testHost}
	for _, f := range opts {
		f(&o)
	}
	e := newStoreEnv(t, db, testConfig(t, o.overrides))
	e.steps, e.power = &scripted{}, &flakyPower{state: states.PowerOff}
	e.drivers = e.buildDrivers()
	e.c = e.newConductor(o.host, o.owns, o.pool)
	e.api = rpc.NewLocal(e.c, slog.New(slog.DiscardHandler))
	if !o.noStart {
		e.start(e.c)
	}
	return e
}

// newConductor is a conductor on the env's store, drivers, config and
// clock, as host, logging nowhere.
func (e *env) newConductor(host string, owns func(*model.Node) bool, pool *workers.Pool) *conductor.Conductor {
	e.t.Helper()
	return e.conductorFor(conductor.Options{Host: host, Owns: owns, Pool: pool})
}

// conductorFor is a conductor on the env's store, drivers, config and
// clock; o gives the rest (testHost and a discarding logger when unset).
func (e *env) conductorFor(o conductor.Options) *conductor.Conductor {
	e.t.Helper()
	o.Store, o.Drivers, o.Config, o.Clock = e.st, e.drivers, e.cfg, e.clock
	if o.Host == "" {
		o.Host = testHost
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c, err := conductor.New(o)
	if err != nil {
		e.t.Fatalf("new conductor: %v", err)
	}
	return c
}

// run makes the conductor o describes (conductorFor) the env's, with its
// in-process RPC API logging to the same logger, and starts it.
func (e *env) run(o conductor.Options) {
	e.t.Helper()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	e.c = e.conductorFor(o)
	e.api = rpc.NewLocal(e.c, o.Logger)
	e.start(e.c)
}

func (e *env) start(c *conductor.Conductor) {
	e.t.Helper()
	if err := c.Start(context.Background()); err != nil {
		e.t.Fatalf("start conductor: %v", err)
	}
	e.t.Cleanup(func() { _ = c.Stop(context.Background()) })
}

func (e *env) buildDrivers() *driver.Drivers {
	t := e.t
	t.Helper()
	r := stockRegistry(t)
	mustRegister(t, r, driver.KindVendor, "scripted", e.steps)
	mustRegister(t, r, driver.KindPower, "flaky", e.power)
	return buildFakeHardware(t, r, map[driver.Kind][]string{
		driver.KindConsole: {"fake", "no-console"}, driver.KindInspect: {"fake", "no-inspect"},
		driver.KindPower: {"fake", "flaky"}, driver.KindRescue: {"fake", "no-rescue"}, driver.KindVendor: {"fake", "scripted"},
	})
}

// forEachDB runs fn on every storetest backend.
func forEachDB(t *testing.T, fn func(t *testing.T, db *sqldb.DB)) {
	storetest.ForEachBackend(t, fn)
}

// node enrolls a fake-hardware node directly in the store in the given
// state.
func (e *env) node(state string, mut ...func(*model.Node)) *model.Node {
	e.t.Helper()
	n := &model.Node{Driver: "fake-hardware", ProvisionState: state, PowerState: states.PowerOff}
	for _, m := range mut {
		m(n)
	}
	if _, err := e.drivers.CheckAndUpdateNodeInterfaces(n); err != nil {
		e.t.Fatalf("node interfaces: %v", err)
	}
	out, err := e.st.CreateNode(context.Background(), n)
	if err != nil {
		e.t.Fatalf("create node: %v", err)
	}
	return out
}

func (e *env) get(n *model.Node) *model.Node {
	e.t.Helper()
	out, err := e.st.GetNodeByID(context.Background(), n.ID)
	if err != nil {
		e.t.Fatalf("reload node: %v", err)
	}
	return out
}

// waitState polls the store until the node is unlocked in state, or fails
// after a deadline.
func (e *env) waitState(n *model.Node, state string) *model.Node {
	e.t.Helper()
	var cur *model.Node
	await.UntilReason(e.t, 15*time.Second, fmt.Sprintf("node %s unlocked in %q", n.UUID, state), func() (bool, string) {
		cur = e.get(n)
		return cur.ProvisionState == state && cur.Reservation == nil,
			fmt.Sprintf("node %s: wanted unlocked in %q, have %q (target %q, reservation %v, last_error %q)",
				n.UUID, state, cur.ProvisionState, cur.TargetProvisionState, deref(cur.Reservation), deref(cur.LastError))
	})
	return cur
}

// waitUnlocked polls until the node has no reservation.
func (e *env) waitUnlocked(n *model.Node) *model.Node {
	e.t.Helper()
	var cur *model.Node
	await.UntilReason(e.t, 15*time.Second, fmt.Sprintf("node %s unlocked", n.UUID), func() (bool, string) {
		cur = e.get(n)
		return cur.Reservation == nil, fmt.Sprintf("node %s still locked", n.UUID)
	})
	return cur
}

// expect checks the node's state, target and last_error.
func (e *env) expect(n *model.Node, state, target, lastError string) {
	e.t.Helper()
	if n.ProvisionState != state || n.TargetProvisionState != target || deref(n.LastError) != lastError {
		e.t.Fatalf("node %s: have (%q, %q, last_error %q), want (%q, %q, %q)", n.UUID,
			n.ProvisionState, n.TargetProvisionState, deref(n.LastError), state, target, lastError)
	}
}

// history returns the node's history as "severity|event_type|event|state"
// lines.
func (e *env) history(n *model.Node) []string {
	e.t.Helper()
	rows, err := e.st.ListNodeHistory(context.Background(), n.ID, store.ListOptions{})
	if err != nil {
		e.t.Fatalf("list history: %v", err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%s|%s|%s|%s", deref(r.Severity), deref(r.EventType), deref(r.Event), deref(r.State))
	}
	return out
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// class is the Ironic error class of err, "" for nil.
func class(err error) errs.Class {
	if err == nil {
		return ""
	}
	if e, ok := errs.As(err); ok {
		return e.Class
	}
	return errs.Class(fmt.Sprintf("%T: %v", err, err))
}
