package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// DoNodeRescue boots the rescue environment (upstream do_node_rescue):
// refused in maintenance; the password is stored in
// instance_info["rescue_password"], with its crypt(3) hash in
// "hashed_rescue_password" (the API masks both); power, rescue and
// network are validated, a failure dropping the password again.
func (c *Conductor) DoNodeRescue(ctx context.Context, _ string, nodeID, rescuePassword string) error {
	t, err := c.acquire(ctx, nodeID, "node rescue", false)
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	if n.Maintenance {
		return errs.NodeInMaintenance("rescuing", n.UUID)
	}
	n.InternalInfo().WipeAgentTokenAndURL()
	if n.InstanceInfo == nil {
		n.InstanceInfo = map[string]any{}
	}
	n.InstanceInfo["rescue_password"] = rescuePassword
	hashed, err := driver.HashRescuePassword(rescuePassword, c.cfg.StringOf(config.ConductorRescuePasswordHashAlgorithm))
	if err != nil {
		return err
	}
	n.InstanceInfo["hashed_rescue_password"] = hashed
	if err := t.Save(ctx); err != nil {
		return err
	}
	dt := t.DriverTask()
	verr := t.Driver.Power.Validate(ctx, dt)
	if verr == nil {
		verr = t.Driver.Rescue.Validate(ctx, dt)
	}
	if verr == nil {
		verr = t.Driver.Network.Validate(ctx, dt)
	}
	if verr != nil {
		removeRescuePassword(n)
		save(ctx, t)
		if errs.Is(verr, errs.ClassInvalidParameterValue) || errs.Is(verr, errs.ClassUnsupportedDriverExtension) {
			return errs.New(errs.ClassInstanceRescueFailure, map[string]any{
				"instance": pyNone(derefStr(n.InstanceUUID)), "node": n.UUID, "reason": "Validation failed: " + verr.Error()})
		}
		return verr
	}
	err = t.ProcessEvent(ctx, states.EventRescue, task.EventOptions{
		Spawner: c.spawner(),
		// Upstream's spawn_rescue_error_handler only drops the password;
		// the node is also put back where it was, as for any provisioning
		// action, so that it does not stay in rescuing unlocked.
		ErrHandler: func(ctx context.Context, err error, t *task.Task, prevState, prevTarget string) {
			if errs.Is(err, errs.ClassNoFreeConductorWorker) {
				removeRescuePassword(t.Node)
			}
			task.ProvisioningErrorHandler(ctx, err, t, prevState, prevTarget)
		},
		Work: task.Work{Name: "_do_node_rescue", Fn: c.doNodeRescue},
	})
	if errs.Is(err, errs.ClassInvalidState) {
		removeRescuePassword(n)
		save(ctx, t)
		return errs.InvalidStateRequested(states.EventRescue, n.UUID, n.ProvisionState)
	}
	if err != nil {
		return err
	}
	return t.End()
}

func derefStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// doNodeRescue runs the rescue interface: rescue wait or rescue follows.
func (c *Conductor) doNodeRescue(ctx context.Context, t *task.Task) error {
	n := t.Node
	fail := func(msg string) {
		removeRescuePassword(n)
		record(ctx, t, msg, states.HistoryRescue, true)
		if err := t.ProcessEvent(ctx, states.EventFail, task.EventOptions{}); err != nil {
			t.Log().ErrorContext(ctx, "move node to rescue failed", "error", err)
		}
	}
	next, err := t.Driver.Rescue.Rescue(ctx, t.DriverTask())
	if err != nil {
		fail(fmt.Sprintf("Failed to rescue: %s", err))
		return err
	}
	switch next {
	case states.RescueWait:
		return t.ProcessEvent(ctx, states.EventWait, task.EventOptions{})
	case states.Rescue:
		return t.ProcessEvent(ctx, states.EventDone, task.EventOptions{})
	}
	fail(fmt.Sprintf("Failed to rescue: Driver returned unexpected state %s", next))
	return nil
}

// DoNodeUnrescue leaves the rescue environment (upstream do_node_unrescue).
func (c *Conductor) DoNodeUnrescue(ctx context.Context, _ string, nodeID string) error {
	t, err := c.acquire(ctx, nodeID, "node unrescue", false)
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	n.InternalInfo().Delete(model.DIIAgentURL)
	if n.Maintenance {
		return errs.NodeInMaintenance("unrescuing", n.UUID)
	}
	if err := t.Driver.Power.Validate(ctx, t.DriverTask()); err != nil {
		if errs.Is(err, errs.ClassInvalidParameterValue) {
			return errs.New(errs.ClassInstanceUnrescueFailure, map[string]any{
				"instance": pyNone(derefStr(n.InstanceUUID)), "node": n.UUID, "reason": "Validation failed: " + err.Error()})
		}
		return err
	}
	err = t.ProcessEvent(ctx, states.EventUnrescue, task.EventOptions{
		Spawner: c.spawner(), ErrHandler: task.ProvisioningErrorHandler,
		Work: task.Work{Name: "_do_node_unrescue", Fn: c.doNodeUnrescue},
	})
	if errs.Is(err, errs.ClassInvalidState) {
		return errs.InvalidStateRequested(states.EventUnrescue, n.UUID, n.ProvisionState)
	}
	if err != nil {
		return err
	}
	return t.End()
}

func (c *Conductor) doNodeUnrescue(ctx context.Context, t *task.Task) error {
	fail := func(msg string) {
		record(ctx, t, msg, states.HistoryRescue, true)
		if err := t.ProcessEvent(ctx, states.EventFail, task.EventOptions{}); err != nil {
			t.Log().ErrorContext(ctx, "move node to unrescue failed", "error", err)
		}
	}
	next, err := t.Driver.Rescue.Unrescue(ctx, t.DriverTask())
	if err != nil {
		fail(fmt.Sprintf("Failed to unrescue: %s", err))
		return err
	}
	t.Node.InternalInfo().WipeAgentTokenAndURL()
	if next == states.Active {
		return t.ProcessEvent(ctx, states.EventDone, task.EventOptions{})
	}
	fail(fmt.Sprintf("Failed to unrescue: Driver returned unexpected state %s", next))
	return nil
}

// doNodeRescueAbort cleans the rescue environment up after an abort
// (upstream _do_node_rescue_abort); a failure puts the node into
// maintenance with fault "rescue abort failure".
func (c *Conductor) doNodeRescueAbort(ctx context.Context, t *task.Task) error {
	n := t.Node
	if rc, ok := t.Driver.Rescue.(driver.RescueCleaner); ok {
		if err := rc.CleanUp(ctx, t.DriverTask()); err != nil {
			msg := "Failed to clean up rescue after aborting the operation"
			if rerr := t.Refresh(ctx); rerr != nil {
				return rerr
			}
			n = t.Node
			record(ctx, t, msg, states.HistoryRescue, true)
			f := faultRescueAbortFailure
			n.Maintenance, n.MaintenanceReason, n.Fault = true, &msg, &f
			return t.Save(ctx)
		}
	}
	record(ctx, t, "By request, the rescue operation was aborted.", states.HistoryRescue, false)
	if err := t.Refresh(ctx); err != nil {
		return err
	}
	t.Node.InternalInfo().Delete(model.DIIAgentURL)
	return t.Save(ctx)
}
