package conductor_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
)

// recordingConsole remembers the nodes whose console it started and fails
// for those in failFor, as a console whose BMC refuses the session would.
type recordingConsole struct {
	driver.NoSteps
	mu      sync.Mutex
	started []string
	failFor map[string]bool
}

var _ driver.ConsoleInterface = (*recordingConsole)(nil)

func (c *recordingConsole) Properties() map[string]string                { return map[string]string{} }
func (c *recordingConsole) Validate(context.Context, *driver.Task) error { return nil }
func (c *recordingConsole) StopConsole(context.Context, *driver.Task) error {
	return nil
}
func (c *recordingConsole) GetConsole(context.Context, *driver.Task) (map[string]any, error) {
	return map[string]any{}, nil
}

func (c *recordingConsole) StartConsole(_ context.Context, t *driver.Task) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started = append(c.started, t.Node.UUID)
	if c.failFor[t.Node.UUID] {
		return errors.New("BMC refused the serial-over-LAN session")
	}
	return nil
}

func (c *recordingConsole) Started() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.started)
}

// Issue 23 item 6: a conductor that starts brings back the consoles of its
// console_enabled nodes (upstream _start_consoles); one that fails to
// start is switched off with the reason in last_error and the history.
func TestConsolesStartedWhenConductorStarts(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withoutStart())
		console := &recordingConsole{failFor: map[string]bool{}}
		r := stockRegistry(t)
		mustRegister(t, r, driver.KindConsole, "recording", console)
		e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{driver.KindConsole: {"recording", "no-console"}})
		withConsole := func(on bool) func(*model.Node) {
			return func(n *model.Node) {
				n.ConsoleInterface = "recording"
				n.ConsoleEnabled = on
			}
		}
		on := e.node(states.Active, withConsole(true))
		broken := e.node(states.Manageable, withConsole(true))
		off := e.node(states.Active, withConsole(false))
		console.failFor[broken.UUID] = true

		e.run(conductor.Options{})
		await.Until(t, 15*time.Second, "both enabled consoles started", func() bool { return len(console.Started()) == 2 })
		got := console.Started()
		if !slices.Contains(got, on.UUID) || !slices.Contains(got, broken.UUID) || slices.Contains(got, off.UUID) {
			t.Fatalf("consoles started for %v; want %s and %s only", got, on.UUID, broken.UUID)
		}
		var b *model.Node
		await.Until(t, 15*time.Second, "the failed console switched off", func() bool { b = e.get(broken); return !b.ConsoleEnabled && b.Reservation == nil })
		if b.LastError == nil || !strings.Contains(*b.LastError, "Failed to start console of node "+broken.UUID+" while starting the conductor") {
			t.Errorf("last_error = %q", deref(b.LastError))
		}
		if h := e.history(broken); len(h) == 0 || !strings.Contains(h[len(h)-1], "ERROR|startup failure|Failed to start console") {
			t.Errorf("history %v lacks the failure", h)
		}
		if n := e.waitUnlocked(on); !n.ConsoleEnabled || n.LastError != nil {
			t.Errorf("started console: enabled %v, last_error %q", n.ConsoleEnabled, deref(n.LastError))
		}
	})
}
