package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
)

// InspectHardware starts inspection (upstream inspect_hardware): power and
// inspect are validated, then the inspect event and the worker.
func (c *Conductor) InspectHardware(ctx context.Context, _ string, nodeID string) error {
	t, err := c.acquire(ctx, nodeID, "hardware inspection", false)
	if err != nil {
		return err
	}
	defer t.Release()
	dt := t.DriverTask()
	if err := t.Driver.Power.Validate(ctx, dt); err != nil {
		return err
	}
	if err := t.Driver.Inspect.Validate(ctx, dt); err != nil {
		return err
	}
	err = t.ProcessEvent(ctx, states.EventInspect, task.EventOptions{
		Spawner: c.spawner(), ErrHandler: task.ProvisioningErrorHandler,
		Work: task.Work{Name: "inspect_hardware", Fn: c.doInspectHardware},
	})
	if errs.Is(err, errs.ClassInvalidState) {
		return errs.InvalidStateRequested(states.EventInspect, t.Node.UUID, t.Node.ProvisionState)
	}
	if err != nil {
		return err
	}
	return t.End()
}

// doInspectHardware is upstream inspection.inspect_hardware: manageable
// when the interface is done, inspect wait when it continues in the
// ramdisk, inspect failed otherwise.
func (c *Conductor) doInspectHardware(ctx context.Context, t *task.Task) error {
	n := t.Node
	n.InternalInfo().WipeAgentTokenAndURL()
	fail := func(msg string) {
		c.inspectingErrorHandler(ctx, t, fmt.Sprintf("Failed to inspect node %s: %s", n.UUID, msg), msg)
		if err := t.ProcessEvent(ctx, states.EventFail, task.EventOptions{}); err != nil {
			t.Log().ErrorContext(ctx, "move node to inspect failed", "error", err)
		}
	}
	next, err := c.inspectHardware(ctx, t)
	if err != nil {
		if _, ok := errs.As(err); ok {
			fail(err.Error())
			return err
		}
		msg := fmt.Sprintf("Unexpected exception of type %T: %s", err, err)
		fail(msg)
		return errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": msg})
	}
	switch next {
	case states.Manageable:
		return t.ProcessEvent(ctx, states.EventDone, task.EventOptions{})
	case states.InspectWait:
		return t.ProcessEvent(ctx, states.EventWait, task.EventOptions{})
	}
	msg := fmt.Sprintf("During inspection, driver returned unexpected state %s", next)
	fail(msg)
	return errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": msg})
}

// inspectingErrorHandler records an inspection failure and aborts the
// interface's inspection (upstream inspecting_error_handler).
func (c *Conductor) inspectingErrorHandler(ctx context.Context, t *task.Task, logmsg, errmsg string) {
	t.Log().ErrorContext(ctx, logmsg)
	record(ctx, t, errmsg, states.HistoryIntrospection, true)
	if a, ok := t.Driver.Inspect.(driver.InspectAborter); ok {
		if err := a.Abort(ctx, t.DriverTask()); err != nil {
			t.Log().ErrorContext(ctx, "failed to abort inspection", "error", err)
		}
	} else if err := t.Driver.Boot.CleanUpRamdisk(ctx, t.DriverTask()); err != nil {
		t.Log().ErrorContext(ctx, "failed to clean up ramdisk boot", "error", err)
	}
	t.Node.InternalInfo().WipeAgentTokenAndURL()
	save(ctx, t)
}

// abortInspection aborts an inspection waiting for the ramdisk (upstream
// inspection.abort_inspection).
func (c *Conductor) abortInspection(ctx context.Context, t *task.Task) error {
	n := t.Node
	a, ok := t.Driver.Inspect.(driver.InspectAborter)
	if !ok {
		return driver.Unsupported(t.DriverTask(), driver.KindInspect)
	}
	if err := a.Abort(ctx, t.DriverTask()); err != nil {
		record(ctx, t, fmt.Sprintf("Failed to abort inspection: %s", err), states.HistoryIntrospection, true)
		save(ctx, t)
		return err
	}
	record(ctx, t, "Inspection was aborted by request.", states.HistoryIntrospection, true)
	n.InternalInfo().WipeAgentTokenAndURL()
	if n.ProvisionState != states.InspectFail {
		return t.ProcessEvent(ctx, states.EventAbort, task.EventOptions{})
	}
	return t.Save(ctx)
}
