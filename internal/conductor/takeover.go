package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/states"
)

// doTakeover makes this conductor the one serving an active node
// (upstream _do_takeover): the deploy interface re-prepares and takes
// over (boot files live on the conductor's disk), the console is
// restarted when enabled, and conductor_affinity points here.
func (c *Conductor) doTakeover(ctx context.Context, t *task.Task) error {
	n := t.Node
	dt := t.DriverTask()
	if err := t.Driver.Deploy.Prepare(ctx, dt); err != nil {
		return err
	}
	if err := t.Driver.Deploy.TakeOver(ctx, dt); err != nil {
		return err
	}
	if n.ConsoleEnabled {
		if err := t.Driver.Console.StartConsole(ctx, dt); err != nil {
			msg := fmt.Sprintf("Failed to start console while taking over the node %s: %s.", n.UUID, err)
			t.Log().ErrorContext(ctx, msg)
			record(ctx, t, msg, states.HistoryTakeover, true)
			n.ConsoleEnabled = false
		}
	}
	if id := c.ID(); id != 0 {
		n.ConductorAffinity = &id
	}
	return t.Save(ctx)
}
