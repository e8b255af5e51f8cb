package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// consoleExpirer is one enabled console implementation whose sessions
// expire.
type consoleExpirer struct {
	name    string
	console driver.ConsoleInterface
	e       driver.ConsoleSessionExpirer
}

func (c *Conductor) consoleExpirers() []consoleExpirer {
	var out []consoleExpirer
	for _, impl := range c.enabledImplementations(driver.KindConsole) {
		ci, isConsole := impl.impl.(driver.ConsoleInterface)
		if e, ok := impl.impl.(driver.ConsoleSessionExpirer); ok && isConsole {
			out = append(out, consoleExpirer{name: impl.name, console: ci, e: e})
		}
	}
	return out
}

// consoleSessionPeriodics are upstream's _expire_<name>_console_sessions
// of the graphical consoles, each at [vnc]/expire_console_session_interval.
func (c *Conductor) consoleSessionPeriodics() []periodic {
	var out []periodic
	for _, x := range c.consoleExpirers() {
		out = append(out, periodic{
			name:     fmt.Sprintf("%s console: close expired sessions", x.name),
			interval: x.e.ConsoleSessionInterval(),
			run:      func(ctx context.Context) { c.expireConsoleSessions(ctx, x) },
		})
	}
	return out
}

// ExpireConsoleSessions runs one pass of every console session expiry.
func (c *Conductor) ExpireConsoleSessions(ctx context.Context) {
	for _, x := range c.consoleExpirers() {
		c.expireConsoleSessions(ctx, x)
	}
}

// expireConsoleSessions stops, under the node's lock, each console of
// this implementation whose token has expired, as upstream's
// _expire_console_sessions does, and records it in the node's history.
func (c *Conductor) expireConsoleSessions(ctx context.Context, x consoleExpirer) {
	enabled := true
	f := store.NodeFilter{ConsoleEnabled: &enabled}
	pred := func(n *model.Node) bool { return x.e.ConsoleSessionActive(n) && x.e.ConsoleSessionExpired(n) }
	c.nodePeriodic(ctx, "checking active console sessions", f, c.withNode(ctx, pred), 0, false, func(ctx context.Context, t *task.Task) (bool, error) {
		n := t.Node
		// Re-checked under the lock: the session may have been renewed
		// or stopped since the node was read.
		if !pred(n) {
			return false, nil
		}
		t.Log().InfoContext(ctx, "Graphical console session has expired, closing", "node", n.UUID)
		if err := x.console.StopConsole(ctx, t.DriverTask()); err != nil {
			record(ctx, t, fmt.Sprintf("Error stopping the expired console session of node %s. Reason: %s", n.UUID, err), states.HistoryConsole, true)
			return true, t.Save(ctx)
		}
		n.ConsoleEnabled = false
		return true, t.Save(ctx)
	})
}
