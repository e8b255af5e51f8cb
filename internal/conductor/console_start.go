package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// startConsoles starts the consoles of the nodes mapped to this conductor
// that have console_enabled, as upstream's init_host does with
// _start_consoles: a console's process or session lives with the
// conductor that started it, so a conductor that (re)starts brings its
// nodes' consoles back, not only one that takes nodes over. It runs once,
// beside the periodic tasks, until ctx ends.
func (c *Conductor) startConsoles(ctx context.Context) {
	enabled := true
	for _, s := range c.iterNodes(ctx, store.NodeFilter{ConsoleEnabled: &enabled}, "") {
		if ctx.Err() != nil {
			return
		}
		c.startConsole(ctx, s.UUID)
	}
}

// startConsole starts one node's console under its lock. A locked or
// deleted node is left alone, as upstream does; a console that fails to
// start is switched off, with why in last_error and the node's history.
func (c *Conductor) startConsole(ctx context.Context, uuid string) {
	t, err := c.acquire(ctx, uuid, "start console", false)
	switch {
	case errs.Is(err, errs.ClassNodeLocked):
		c.log.WarnContext(ctx, "node is locked while trying to start console on conductor startup", "node", uuid)
		return
	case errs.Is(err, errs.ClassNodeNotFound):
		c.log.WarnContext(ctx, "during starting console on conductor startup, node was not found", "node", uuid)
		return
	case err != nil:
		if ctx.Err() == nil {
			c.log.ErrorContext(ctx, "start console on conductor startup", "node", uuid, "error", err)
		}
		return
	}
	defer t.Release()
	n := t.Node
	// The flag may have been turned off between the list and the lock.
	if !n.ConsoleEnabled {
		return
	}
	if err := t.Driver.Console.StartConsole(ctx, t.DriverTask()); err != nil {
		msg := fmt.Sprintf("Failed to start console of node %s while starting the conductor, so changing the console_enabled status to False, error: %s", n.UUID, err)
		t.Log().ErrorContext(ctx, msg)
		record(ctx, t, msg, states.HistoryStartFail, true)
		n.ConsoleEnabled = false
		save(ctx, t)
		return
	}
	t.Log().InfoContext(ctx, "successfully started console of node")
}
