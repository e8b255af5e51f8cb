package conductor_test

import (
	"context"
	"fmt"
	"log/slog"
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
}

func (p *flakyPower) Properties() map[string]string                             { return map[string]string{} }
func (p *flakyPower) Steps() []driver.StepSpec                                  { return nil }
func (p *flakyPower) Validate(context.Context, *driver.Task) error              { return nil }
func (p *flakyPower) Reboot(context.Context, *driver.Task, time.Duration) error { return nil }
func (p *flakyPower) GetSupportedPowerStates(context.Context, *driver.Task) ([]string, error) {
	return []string{states.PowerOn, states.PowerOff, states.Reboot}, nil
}

func (p *flakyPower) GetPowerState(context.Context, *driver.Task) (string, error) {
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

// newEnv builds a conductor on db with fake-hardware, the scripted vendor
// interface and the flaky power interface registered, periodic loops off
// (tests run passes by hand), and starts it.
func newEnv(t *testing.T, db *sqldb.DB, opts ...envOption) *env {
	t.Helper()
	o := envOpts{overrides: map[string]map[string]string{
		"conductor": {
			"sync_power_state_interval": "0", "power_failure_recovery_interval": "0",
			"check_provision_state_interval": "0", "sync_local_state_interval": "0",
			"check_allocations_interval": "0", "rescue_callback_timeout": "0",
			"conductor_cleanup_interval": "0", "node_history_cleanup_interval": "0",
			"graceful_shutdown_timeout": "10",
		},
		"agent": {"require_tls": "false"},
	}, host: testHost}
	for _, f := range opts {
		f(&o)
	}
	cfg, err := config.Load(config.LoadOptions{Overrides: o.overrides})
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	clock := fakeclock.NewWall()
	st := store.New(db, store.WithClock(clock.Now))
	e := &env{t: t, st: st, db: db, clock: clock, cfg: cfg, steps: &scripted{}, power: &flakyPower{state: states.PowerOff}}
	e.drivers = e.buildDrivers()
	e.c = e.newConductor(o.host, o.owns, o.pool)
	e.api = rpc.NewLocal(e.c, slog.New(slog.DiscardHandler))
	if !o.noStart {
		e.start(e.c)
	}
	return e
}

func (e *env) newConductor(host string, owns func(*model.Node) bool, pool *workers.Pool) *conductor.Conductor {
	e.t.Helper()
	c, err := conductor.New(conductor.Options{
		Store: e.st, Drivers: e.drivers, Config: e.cfg, Host: host, Clock: e.clock, Owns: owns, Pool: pool,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		e.t.Fatalf("new conductor: %v", err)
	}
	return c
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
	if err := r.Register(driver.KindVendor, "scripted", e.steps); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(driver.KindPower, "flaky", e.power); err != nil {
		t.Fatal(err)
	}
	fakeOnly := []string{"fake"}
	d, err := r.Build(driver.Settings{
		EnabledHardwareTypes: []string{"fake-hardware"},
		EnabledInterfaces: map[driver.Kind][]string{
			driver.KindBIOS: fakeOnly, driver.KindBoot: fakeOnly, driver.KindConsole: {"fake", "no-console"},
			driver.KindDeploy: fakeOnly, driver.KindFirmware: fakeOnly, driver.KindInspect: {"fake", "no-inspect"},
			driver.KindManagement: fakeOnly, driver.KindNetwork: {"noop"}, driver.KindPower: {"fake", "flaky"},
			driver.KindRAID: fakeOnly, driver.KindRescue: {"fake", "no-rescue"}, driver.KindStorage: {"noop"},
			driver.KindVendor: {"fake", "scripted"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
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
	deadline := time.Now().Add(15 * time.Second)
	var cur *model.Node
	for time.Now().Before(deadline) {
		cur = e.get(n)
		if cur.ProvisionState == state && cur.Reservation == nil {
			return cur
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.t.Fatalf("node %s: wanted unlocked in %q, have %q (target %q, reservation %v, last_error %q)",
		n.UUID, state, cur.ProvisionState, cur.TargetProvisionState, deref(cur.Reservation), deref(cur.LastError))
	return nil
}

// waitUnlocked polls until the node has no reservation.
func (e *env) waitUnlocked(n *model.Node) *model.Node {
	e.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		cur := e.get(n)
		if cur.Reservation == nil {
			return cur
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.t.Fatalf("node %s still locked", n.UUID)
	return nil
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
