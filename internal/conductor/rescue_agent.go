package conductor

import (
	"context"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/states"
)

// heartbeatRescue is upstream _heartbeat_rescue_wait: the agent sets up
// the rescue user, then the rescue network and ramdisk are torn down,
// the tenant networks come back and the node is in rescue; any failure
// runs the rescuing error handler into rescue failed.
func (c *Conductor) heartbeatRescue(ctx context.Context, t *task.Task) error {
	f, ok := t.Driver.Rescue.(agent.Finalizer)
	if !ok {
		return nil
	}
	const msg = "Node failed to perform rescue operation."
	dt := t.DriverTask()
	if err := f.FinalizeRescue(ctx, dt); err != nil {
		t.Log().ErrorContext(ctx, "finalize rescue failed", "error", err)
		c.rescuingErrorHandler(ctx, t, msg, true)
		return nil
	}
	if err := t.ProcessEvent(ctx, states.EventResume, task.EventOptions{}); err != nil {
		return err
	}
	if rc, ok := t.Driver.Rescue.(driver.RescueCleaner); ok {
		if err := rc.CleanUp(ctx, dt); err != nil {
			t.Log().ErrorContext(ctx, "rescue clean up failed", "error", err)
			c.rescuingErrorHandler(ctx, t, msg, true)
			return nil
		}
	}
	if err := t.Driver.Network.ConfigureTenantNetworks(ctx, dt); err != nil {
		t.Log().ErrorContext(ctx, "configure tenant networks failed", "error", err)
		c.rescuingErrorHandler(ctx, t, msg, true)
		return nil
	}
	return t.ProcessEvent(ctx, states.EventDone, task.EventOptions{})
}
