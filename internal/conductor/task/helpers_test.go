package task_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/fakeclock"
)

const host = "conductor-0"

// record is one captured log record with its attributes, groups nested as
// maps.
type record struct {
	Msg   string
	Level slog.Level
	Attrs map[string]any
}

// capture is a slog handler keeping every record.
type capture struct {
	mu      *sync.Mutex
	records *[]record
	pre     []slog.Attr
}

func newCapture() *capture { return &capture{mu: &sync.Mutex{}, records: &[]record{}} }

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }

func (c *capture) Handle(_ context.Context, r slog.Record) error {
	attrs := map[string]any{}
	for _, a := range c.pre {
		putAttr(attrs, a)
	}
	r.Attrs(func(a slog.Attr) bool { putAttr(attrs, a); return true })
	c.mu.Lock()
	*c.records = append(*c.records, record{Msg: r.Message, Level: r.Level, Attrs: attrs})
	c.mu.Unlock()
	return nil
}

func putAttr(m map[string]any, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		g := map[string]any{}
		for _, ga := range v.Group() {
			putAttr(g, ga)
		}
		m[a.Key] = g
		return
	}
	m[a.Key] = v.Any()
}

func (c *capture) WithAttrs(as []slog.Attr) slog.Handler {
	return &capture{mu: c.mu, records: c.records, pre: append(append([]slog.Attr(nil), c.pre...), as...)}
}

func (c *capture) WithGroup(string) slog.Handler { return c }

// notifications returns the provision notifications captured so far.
func (c *capture) notifications() []record {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []record
	for _, r := range *c.records {
		if _, ok := r.Attrs["event_type"]; ok {
			out = append(out, r)
		}
	}
	return out
}

type env struct {
	st    store.Store
	db    *sqldb.DB
	clock *fakeclock.Clock
	hist  historyReader
	logs  *capture
	m     *task.Manager

	drivers *driver.Drivers
}

func newEnv(t *testing.T, db *sqldb.DB) *env {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	st := store.New(db, store.WithClock(clock.Now))
	e := &env{st: st, db: db, clock: clock, hist: historyReader{st}, logs: newCapture()}
	e.drivers = fakeDrivers(t)
	e.m = e.manager(host)
	return e
}

// manager returns a manager on the same database under hostname.
func (e *env) manager(hostname string) *task.Manager {
	s := task.Settings{Host: hostname, RetryAttempts: 3, RetryInterval: time.Second, NodeHistory: true}
	return task.NewManager(e.st, e.drivers, s,
		task.WithClock(e.clock), task.WithLogger(slog.New(e.logs)), task.WithHistory(e.st))
}

// fakeDrivers enables fake-hardware with its fake interfaces.
func fakeDrivers(t *testing.T) *driver.Drivers {
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

// node creates a fake-hardware node in state with target.
func (e *env) node(t *testing.T, state, target string) *model.Node {
	t.Helper()
	n, err := e.st.CreateNode(context.Background(), &model.Node{
		Driver: "fake-hardware", ProvisionState: state, TargetProvisionState: target,
	})
	if err != nil {
		t.Fatalf("create node: %v", err)
	}
	return n
}

func (e *env) reload(t *testing.T, id int64) *model.Node {
	t.Helper()
	n, err := e.st.GetNodeByID(context.Background(), id)
	if err != nil {
		t.Fatalf("reload node %d: %v", id, err)
	}
	return n
}

func (e *env) acquire(t *testing.T, n *model.Node, opts task.AcquireOptions) *task.Task {
	t.Helper()
	tk, err := e.m.Acquire(context.Background(), n.UUID, opts)
	if err != nil {
		t.Fatalf("acquire %s: %v", n.UUID, err)
	}
	t.Cleanup(func() { _ = tk.Release() })
	return tk
}

func str(s string) *string { return &s }

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// historyRow is a node_history row with NULLs read as "".
type historyRow struct {
	UUID                                                 string
	CreatedAt                                            time.Time
	Conductor, User, Project, Severity, Event, EventType string
	State, TargetProvisionState                          string
	DurationSeconds                                      *int
}

// historyReader lists a node's history rows oldest first, flattened for
// comparisons.
type historyReader struct{ st store.Store }

func (h historyReader) ListNodeHistory(ctx context.Context, nodeID int64) ([]historyRow, error) {
	rows, err := h.st.ListNodeHistory(ctx, nodeID, store.ListOptions{SortKey: "id", SortDir: "asc"})
	if err != nil {
		return nil, err
	}
	s := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	out := make([]historyRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, historyRow{
			UUID: r.UUID, CreatedAt: r.CreatedAt, Conductor: s(r.Conductor), User: s(r.User), Project: s(r.Project),
			Severity: s(r.Severity), Event: s(r.Event), EventType: s(r.EventType), State: s(r.State),
			TargetProvisionState: s(r.TargetProvisionState), DurationSeconds: r.DurationSeconds,
		})
	}
	return out, nil
}
