package conductor

import (
	"context"
	"fmt"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/states"
)

// ChangeNodePowerState starts a power action in a worker (upstream
// change_node_power_state): the power interface is validated and must
// support newState; target_power_state is set and last_error cleared at
// once; the worker runs the action and clears the target. Without a free
// worker the power state is put back and NoFreeConductorWorker returned.
// timeout 0 is the driver default, soft_power_off_timeout for soft actions.
func (c *Conductor) ChangeNodePowerState(ctx context.Context, _ string, nodeID, newState string, timeout int) error {
	t, err := c.acquire(ctx, nodeID, "changing node power state", false)
	if err != nil {
		return err
	}
	defer t.Release()
	dt := t.DriverTask()
	if err := t.Driver.Power.Validate(ctx, dt); err != nil {
		return err
	}
	supported, err := t.Driver.Power.GetSupportedPowerStates(ctx, dt)
	if err != nil {
		return err
	}
	if !containsStr(supported, newState) {
		return errs.InvalidParameterValue(fmt.Sprintf("The driver %s does not support the power state, %s", t.Node.Driver, newState))
	}
	powerTimeout := time.Duration(timeout) * time.Second
	if (newState == states.SoftReboot || newState == states.SoftPowerOff) && timeout == 0 {
		powerTimeout = c.cfg.DurationOf(config.ConductorSoftPowerOffTimeout)
	}
	switch newState {
	case states.PowerOn, states.Reboot, states.SoftReboot:
		t.Node.TargetPowerState = states.PowerOn
	default:
		t.Node.TargetPowerState = states.PowerOff
	}
	t.Node.LastError = nil
	prev := t.Node.PowerState
	if err := t.Save(ctx); err != nil {
		return err
	}
	t.SetSpawnErrorHook(task.PowerStateErrorHandler(prev))
	t.SpawnAfter(c.spawner(), task.Work{Name: "node_power_action", Fn: func(ctx context.Context, t *task.Task) error {
		return c.nodePowerAction(ctx, t, newState, powerTimeout)
	}})
	return t.End()
}

// powerTarget is the power state an action ends in (upstream
// _calculate_target_state).
func powerTarget(newState string) string {
	switch newState {
	case states.PowerOn, states.Reboot, states.SoftReboot:
		return states.PowerOn
	case states.PowerOff, states.SoftPowerOff:
		return states.PowerOff
	}
	return states.NoState
}

// nodePowerAction performs a power action under an exclusive lock
// (upstream node_power_action): an on/off request for the state the
// machine is already in only records it; otherwise target_power_state is
// set, last_error cleared (kept in failure states), the action run, and
// power_state set to the target; a failure clears the target and records
// "Failed to change power state to '<target>' by '<action>': <error>".
func (c *Conductor) nodePowerAction(ctx context.Context, t *task.Task, newState string, timeout time.Duration) error {
	if err := t.RequireExclusive(); err != nil {
		return err
	}
	c.emitPowerSet(ctx, t, notify.StatusStart, newState)
	n := t.Node
	target := powerTarget(newState)
	if target == states.PowerOff && n.DisablePowerOff {
		t.Log().ErrorContext(ctx, "refusing to power off node with disable_power_off flag set")
		return errs.New(errs.ClassPowerStateFailure, map[string]any{"pstate": newState})
	}
	skip, err := c.canSkipPowerChange(ctx, t, newState)
	if err != nil {
		return err
	}
	if skip {
		if newState == states.PowerOff || newState == states.SoftPowerOff || newState == states.Reboot || newState == states.SoftReboot {
			wipeInternalInfoOnPowerOff(n)
			if err := t.Save(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	n.TargetPowerState = target
	if !states.FailureStates.Contains(n.ProvisionState) {
		n.LastError = nil
	}
	n.InternalInfo().Set(model.DIILastPowerStateChange, c.clock.Now().UTC().Format("2006-01-02T15:04:05.000000"))
	if newState == states.PowerOff || newState == states.SoftPowerOff || newState == states.Reboot || newState == states.SoftReboot {
		wipeInternalInfoOnPowerOff(n)
	}
	if err := t.Save(ctx); err != nil {
		return err
	}
	dt := t.DriverTask()
	if target == states.PowerOn && n.ProvisionState == states.Active {
		err = t.Driver.Storage.AttachVolumes(ctx, dt)
	}
	if err == nil {
		if newState != states.Reboot {
			// A child that draws power from its parent needs the parent
			// on; a parent going off takes such children off first.
			if newState == states.PowerOn && parentPowerNeeded(n) {
				err = c.powerOnParent(ctx, t, target, timeout)
			}
			if err == nil && newState == states.PowerOff {
				err = c.powerOffChildren(ctx, t, target, timeout)
			}
			if err == nil {
				err = t.Driver.Power.SetPowerState(ctx, dt, newState, timeout)
			}
		} else {
			err = t.Driver.Power.Reboot(ctx, dt, timeout)
		}
	}
	if err != nil {
		n.TargetPowerState = states.NoState
		msg := fmt.Sprintf("Failed to change power state to '%s' by '%s': %s", pyNone(target), newState, err)
		record(ctx, t, msg, "", true)
		save(ctx, t)
		c.emitPowerSet(ctx, t, notify.StatusError, newState)
		return err
	}
	n.PowerState = target
	n.TargetPowerState = states.NoState
	if err := t.Save(ctx); err != nil {
		return err
	}
	if n.InstanceUUID != nil && *n.InstanceUUID != "" {
		c.nova.PowerUpdate(ctx, *n.InstanceUUID, target)
	}
	c.emitPowerSet(ctx, t, notify.StatusEnd, newState)
	t.Log().InfoContext(ctx, "successfully set node power state", "target_state", target, "action", newState)
	if target == states.PowerOff && n.ProvisionState == states.Active {
		if err := t.Driver.Storage.DetachVolumes(ctx, t.DriverTask()); err != nil {
			t.Log().WarnContext(ctx, "volume detachment failed", "error", err)
		}
	}
	return nil
}

// canSkipPowerChange reads the power state and, when an on/off request
// asks for the state the node is in, records it without acting (upstream
// _can_skip_state_change).
func (c *Conductor) canSkipPowerChange(ctx context.Context, t *task.Task, newState string) (bool, error) {
	if newState != states.PowerOn && newState != states.PowerOff && newState != states.SoftPowerOff {
		return false, nil
	}
	n := t.Node
	cur, err := t.Driver.Power.GetPowerState(ctx, t.DriverTask())
	if err != nil {
		record(ctx, t, fmt.Sprintf("Failed to change power state to '%s': %s", newState, err), "", true)
		n.TargetPowerState = states.NoState
		save(ctx, t)
		c.emitPowerSet(ctx, t, notify.StatusError, newState)
		return false, err
	}
	same := (cur == states.PowerOn && newState == states.PowerOn) ||
		(cur == states.PowerOff && (newState == states.PowerOff || newState == states.SoftPowerOff))
	if !same {
		return false, nil
	}
	n.LastError = nil
	n.PowerState = cur
	n.TargetPowerState = states.NoState
	if err := t.Save(ctx); err != nil {
		return false, err
	}
	c.emitPowerSet(ctx, t, notify.StatusEnd, newState)
	return true, nil
}

// wipeInternalInfoOnPowerOff drops what does not survive a power off
// (upstream wipe_internal_info_on_power_off).
func wipeInternalInfoOnPowerOff(n *model.Node) {
	n.InternalInfo().Delete(model.DIIAgentURL)
	if b, _ := n.InternalInfo().Bool(model.DIIAgentSecretTokenPregenerated); !b {
		n.InternalInfo().Delete(model.DIIAgentSecretToken)
	}
	n.InternalInfo().Delete(model.DIIAgentCachedDeploySteps, model.DIIAgentCachedCleanSteps, model.DIIAgentVerifyCA, model.DIIAgentStartAttempted)
}

// pyNone renders an empty state as Python's None.
func pyNone(s string) string {
	if s == "" {
		return "None"
	}
	return s
}
