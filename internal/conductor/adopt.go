package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/states"
)

// doAdoption is upstream _do_adoption: the boot interface is validated
// (the fake and ramdisk-less ones accept), the node is taken over as an
// active node, and it becomes active; a failure leaves it in adopt
// failed with an unknown power state.
func (c *Conductor) doAdoption(ctx context.Context, t *task.Task) error {
	n := t.Node
	err := t.Driver.Boot.Validate(ctx, t.DriverTask())
	if err == nil {
		err = c.switchDeployInterface(ctx, t)
	}
	if err == nil {
		err = c.doTakeover(ctx, t)
	}
	if err != nil {
		c.restoreDeployInterface(ctx, t)
		msg := fmt.Sprintf("Error while attempting to adopt node %s: %s.", n.UUID, err)
		t.Log().ErrorContext(ctx, msg)
		n.PowerState = states.NoState
		record(ctx, t, msg, states.HistoryAdoption, true)
		return t.ProcessEvent(ctx, states.EventFail, task.EventOptions{})
	}
	return t.ProcessEvent(ctx, states.EventDone, task.EventOptions{})
}
