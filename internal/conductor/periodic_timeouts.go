package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// The callback timeouts: a node waiting for its ramdisk longer than the
// flow's timeout fails (upstream _check_*_timeouts). Heartbeats touch
// provision_updated_at, so only a silent agent times out.

func (c *Conductor) waitFilter(state, option string) (store.NodeFilter, bool) {
	timeout := c.cfg.Duration("conductor", option)
	if timeout <= 0 {
		return store.NodeFilter{}, false
	}
	return store.NodeFilter{
		Reserved: boolPtr(false), Maintenance: boolPtr(false), ProvisionState: &state, ProvisionedBefore: &timeout,
	}, true
}

// CheckDeployTimeouts fails deployments stuck in wait call-back longer
// than [conductor]/deploy_callback_timeout.
func (c *Conductor) CheckDeployTimeouts(ctx context.Context) {
	f, ok := c.waitFilter(states.DeployWait, "deploy_callback_timeout")
	if !ok {
		return
	}
	c.failIfInState(ctx, f, []string{states.DeployWait}, "provision_updated_at", failOptions{
		callbackName: "cleanup_after_timeout", errHandler: task.ProvisioningErrorHandler,
		callback: func(ctx context.Context, t *task.Task) error {
			msg := "Timeout reached while waiting for callback for node " + t.Node.UUID
			c.deployingErrorHandler(ctx, t, msg, msg, true)
			return nil
		},
	})
}

// CheckCleanWaitTimeouts fails cleaning stuck in clean wait longer than
// [conductor]/clean_callback_timeout (keeping the target).
func (c *Conductor) CheckCleanWaitTimeouts(ctx context.Context) {
	f, ok := c.waitFilter(states.CleanWait, "clean_callback_timeout")
	if !ok {
		return
	}
	c.failIfInState(ctx, f, []string{states.CleanWait}, "provision_updated_at", failOptions{
		keepTarget: true, callbackName: "cleanup_cleanwait_timeout",
		callback: func(ctx context.Context, t *task.Task) error {
			lastError := fmt.Sprintf("Timeout reached while cleaning the node. Please check if the ramdisk responsible for the cleaning is running on the node. Failed on step %s.", pyRepr(t.Node.CleanStep))
			c.cleaningErrorHandler(ctx, t, fmt.Sprintf("Cleaning for node %s failed. %s", t.Node.UUID, lastError),
				cleanErrOpts{errmsg: lastError, tearDown: true})
			return nil
		},
	})
}

// CheckServiceWaitTimeouts fails servicing stuck in service wait longer
// than [conductor]/service_callback_timeout.
func (c *Conductor) CheckServiceWaitTimeouts(ctx context.Context) {
	f, ok := c.waitFilter(states.ServiceWait, "service_callback_timeout")
	if !ok {
		return
	}
	c.failIfInState(ctx, f, []string{states.ServiceWait}, "provision_updated_at", failOptions{
		keepTarget: true, callbackName: "cleanup_servicewait_timeout",
		callback: func(ctx context.Context, t *task.Task) error {
			lastError := fmt.Sprintf("Timeout reached while servicing the node. Please check if the ramdisk responsible for the servicing is running on the node. Failed on step %s.", pyRepr(t.Node.ServiceStep))
			c.servicingErrorHandler(ctx, t, fmt.Sprintf("Servicing for node %s failed. %s", t.Node.UUID, lastError),
				serviceErrOpts{errmsg: lastError, tearDown: true})
			return nil
		},
	})
}

// CheckRescueWaitTimeouts fails rescues stuck in rescue wait longer than
// [conductor]/rescue_callback_timeout.
func (c *Conductor) CheckRescueWaitTimeouts(ctx context.Context) {
	f, ok := c.waitFilter(states.RescueWait, "rescue_callback_timeout")
	if !ok {
		return
	}
	c.failIfInState(ctx, f, []string{states.RescueWait}, "provision_updated_at", failOptions{
		keepTarget: true, callbackName: "cleanup_rescuewait_timeout",
		callback: func(ctx context.Context, t *task.Task) error {
			c.rescuingErrorHandler(ctx, t, "Timeout reached while waiting for rescue ramdisk callback for node", false)
			return nil
		},
	})
}

// rescuingErrorHandler is upstream rescuing_error_handler: power off,
// rescue clean-up, agent URL dropped, the error recorded, and (when
// setFail) the fail event.
func (c *Conductor) rescuingErrorHandler(ctx context.Context, t *task.Task, msg string, setFail bool) {
	n := t.Node
	err := c.nodePowerAction(ctx, t, states.PowerOff, 0)
	if err == nil {
		if rc, ok := t.Driver.Rescue.(interface {
			CleanUp(context.Context, *driver.Task) error
		}); ok {
			err = rc.CleanUp(ctx, t.DriverTask())
		}
	}
	if err != nil {
		record(ctx, t, fmt.Sprintf("Rescue operation was unsuccessful, clean up failed for node: %s", err), states.HistoryRescue, true)
	} else {
		record(ctx, t, msg, states.HistoryRescue, true)
	}
	n.InternalInfo().Delete(model.DIIAgentURL)
	save(ctx, t)
	if setFail {
		if err := t.ProcessEvent(ctx, states.EventFail, task.EventOptions{}); err != nil {
			t.Log().ErrorContext(ctx, "could not move node to a failed state", "error", err)
		}
	}
}

// CheckInspectWaitTimeouts fails inspections that started longer than
// [conductor]/inspect_wait_timeout ago and still wait for the ramdisk.
func (c *Conductor) CheckInspectWaitTimeouts(ctx context.Context) {
	timeout := c.cfg.DurationOf(config.ConductorInspectWaitTimeout)
	if timeout <= 0 {
		return
	}
	state := states.InspectWait
	f := store.NodeFilter{Reserved: boolPtr(false), Maintenance: boolPtr(false), ProvisionState: &state, InspectionStartedBefore: &timeout}
	c.failIfInState(ctx, f, []string{states.InspectWait}, "inspection_started_at", failOptions{
		callbackName: "cleanup_inspectwait_timeout", errHandler: task.ProvisioningErrorHandler,
		lastError: "timeout reached while inspecting the node",
		callback: func(ctx context.Context, t *task.Task) error {
			lastError := "Timeout reached while inspecting the node. Please check if the ramdisk responsible for the inspection is running on the node."
			c.inspectingErrorHandler(ctx, t, fmt.Sprintf("Inspection for node %s failed. %s", t.Node.UUID, lastError), lastError)
			return nil
		},
	})
}
