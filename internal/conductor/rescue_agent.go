package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/states"
)

// heartbeatRescue is upstream _heartbeat_rescue_wait: the agent sets up
// the rescue user, then the rescue network and ramdisk are torn down,
// the tenant networks come back and the node is in rescue; any failure
// runs the rescuing error handler into rescue failed, with the failure
// itself in last_error (upstream's "<msg>: <exception>"), so that the
// operator reads the agent's reason rather than only that it failed.
func (c *Conductor) heartbeatRescue(ctx context.Context, t *task.Task) error {
	f, ok := t.Driver.Rescue.(driver.RescueFinalizer)
	if !ok {
		return nil
	}
	fail := func(err error) error {
		lastError := fmt.Sprintf("Node failed to perform rescue operation: %s", err)
		t.Log().ErrorContext(ctx, fmt.Sprintf("Asynchronous exception for node %s: %s", t.Node.UUID, lastError), "node", t.Node.UUID)
		c.rescuingErrorHandler(ctx, t, lastError, true)
		return nil
	}
	dt := t.DriverTask()
	if err := f.FinalizeRescue(ctx, dt); err != nil {
		return fail(err)
	}
	if err := t.ProcessEvent(ctx, states.EventResume, task.EventOptions{}); err != nil {
		return err
	}
	if rc, ok := t.Driver.Rescue.(driver.RescueCleaner); ok {
		if err := rc.CleanUp(ctx, dt); err != nil {
			return fail(err)
		}
	}
	if err := t.Driver.Network.ConfigureTenantNetworks(ctx, dt); err != nil {
		return fail(err)
	}
	return t.ProcessEvent(ctx, states.EventDone, task.EventOptions{})
}
