package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/states"
)

// doNodeVerify is upstream verify.do_node_verify, the worker of "manage"
// from enroll: the power credentials are checked (validate, then a power
// state read), the enabled verify steps run, and the node goes to
// manageable with the power state read and its cached hardware data
// refreshed, or back to enroll with the last error (a failed step's
// after a failed power check).
func (c *Conductor) doNodeVerify(ctx context.Context, t *task.Task) error {
	n := t.Node
	dt := t.DriverTask()
	var verr string
	power := ""
	if err := t.Driver.Power.Validate(ctx, dt); err != nil {
		verr = fmt.Sprintf("Failed to validate power driver interface for node %s. Error: %s", n.UUID, err)
	} else if ps, err := t.Driver.Power.GetPowerState(ctx, dt); err != nil {
		verr = fmt.Sprintf("Failed to get power state for node %s. Error: %s", n.UUID, err)
	} else {
		power = ps
	}
	steps, err := c.driverSteps(ctx, t, driver.StepVerify, true, true)
	if err != nil {
		return err
	}
	for _, step := range steps {
		if _, err := c.executeStep(ctx, t, driver.StepVerify, step); err != nil {
			verr = fmt.Sprintf("Node %s failed verify step %s with unexpected error: %s", n.UUID, step["step"], err)
			c.verifyingErrorHandler(ctx, t, verr, fmt.Sprintf("Failed to verify: %s", err))
		}
	}
	if verr != "" {
		t.Log().ErrorContext(ctx, verr)
		record(ctx, t, verr, states.HistoryVerify, true)
		return t.ProcessEvent(ctx, states.EventFail, task.EventOptions{})
	}
	c.nodeUpdateCache(ctx, t)
	if power != n.PowerState {
		t.Log().InfoContext(ctx, "power state corrected by verification", "old", n.PowerState, "new", power)
		n.PowerState = power
	}
	if err := t.ProcessEvent(ctx, states.EventDone, task.EventOptions{}); err != nil {
		return err
	}
	t.Log().InfoContext(ctx, "successfully verified node")
	return nil
}

// verifyingErrorHandler is upstream verifying_error_handler: the error is
// recorded; verification carries on to its end.
func (c *Conductor) verifyingErrorHandler(ctx context.Context, t *task.Task, logmsg, errmsg string) {
	t.Log().ErrorContext(ctx, logmsg)
	record(ctx, t, errmsg, "verifying", true)
	save(ctx, t)
}
