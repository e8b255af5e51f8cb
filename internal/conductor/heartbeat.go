package conductor

import (
	"context"
	"errors"
	"fmt"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
)

// processHeartbeat is the worker half of a heartbeat (seed 004 § 3.1,
// upstream HeartbeatMixin.heartbeat): a heartbeat in a state where it
// means nothing is dropped; otherwise it takes the exclusive lock without
// retrying (the agent heartbeats again soon), records where the agent
// listens, then moves the waiting flow along.
//
// The node is read twice: by the shared acquire that checked the token,
// and again by the upgrade, after the reservation. The second read stays.
// The first was made without the lock, and what happened between it and
// the reservation is typically what the heartbeat reacts to (the previous
// holder's last save, moving the node into a wait state); only a read
// under the lock sees the node this worker then writes over. Nothing
// lets the reservation prove the first read current instead: the nodes
// table, upstream's schema, has no row version, and updated_at is kept
// to the second. Upstream's upgrade_lock reloads the node the same way.
// What the early return saves is the reservation and its read for
// heartbeats that need no action.
func (c *Conductor) processHeartbeat(ctx context.Context, t *task.Task, args rpc.HeartbeatArgs) error {
	if !c.heartbeatAllowed(ctx, t) {
		t.Log().ErrorContext(ctx, "heartbeat from node in unsupported provision state, not taking any action", "state", t.Node.ProvisionState)
		return nil
	}
	if err := t.UpgradeLock(ctx, task.UpgradeOptions{NoRetry: true}); err != nil {
		t.Log().DebugContext(ctx, "heartbeat skipped, node is locked", "error", err)
		return nil
	}
	n := t.Node
	if args.CallbackURL != "" {
		n.InternalInfo().Set(model.DIIAgentURL, args.CallbackURL)
	}
	if args.AgentVerifyCA != "" {
		n.InternalInfo().Set(model.DIIAgentVerifyCA, args.AgentVerifyCA)
	}
	n.InternalInfo().Set(model.DIIAgentVersion, args.AgentVersion)
	n.InternalInfo().Set(model.DIIAgentLastHeartbeat, c.clock.Now().UTC().Format(driver.AgentHeartbeatLayout))
	if err := t.Save(ctx); err != nil {
		return err
	}
	if n.Maintenance {
		return c.heartbeatInMaintenance(ctx, t)
	}
	st, ok := t.Driver.Deploy.(driver.AgentStepper)
	if !ok {
		if hb, ok := t.Driver.Deploy.(driver.Heartbeater); ok {
			return hb.Heartbeat(ctx, t.DriverTask(), driver.Heartbeat{
				CallbackURL: args.CallbackURL, AgentVersion: args.AgentVersion, AgentVerifyCA: args.AgentVerifyCA,
				AgentStatus: args.AgentStatus, AgentStatusMessage: args.AgentStatusMessage,
			})
		}
		return nil
	}
	switch n.ProvisionState {
	case states.CleanWait:
		return c.heartbeatStep(ctx, t, st, c.cleanFlow())
	case states.DeployWait:
		return c.heartbeatStep(ctx, t, st, c.deployFlow())
	case states.ServiceWait:
		return c.heartbeatStep(ctx, t, st, c.serviceFlow())
	case states.RescueWait:
		return c.heartbeatRescue(ctx, t)
	}
	return nil
}

// heartbeatAllowed is upstream heartbeat_allowed or fast_track_able: the
// flows that wait for, or tolerate, an agent; with fast track also the
// stable states an agent idles in between operations.
func (c *Conductor) heartbeatAllowed(ctx context.Context, t *task.Task) bool {
	ft := c.fastTrack()
	switch t.Node.ProvisionState {
	case states.DeployWait, states.CleanWait, states.RescueWait, states.Deploying, states.Cleaning, states.Rescuing,
		states.DeployHold, states.CleanHold, states.Servicing, states.ServiceWait, states.ServiceHold:
		return true
	case states.Manageable, states.Available, states.Enroll:
		if on, err := ft.EnabledFor(t.Node); err == nil && on {
			return true
		}
	}
	return ft.Able(ctx, t.DriverTask())
}

// heartbeatInMaintenance: the heartbeat is only recorded, except that,
// unless provisioning in maintenance is allowed, the flow in progress is
// failed: cleaning, deployment, rescue or servicing.
func (c *Conductor) heartbeatInMaintenance(ctx context.Context, t *task.Task) error {
	n := t.Node
	if c.cfg.BoolOf(config.ConductorAllowProvisioningInMaintenance) {
		return nil
	}
	switch n.ProvisionState {
	case states.Cleaning, states.CleanWait:
		c.cleaningErrorHandler(ctx, t, fmt.Sprintf("Aborting cleaning for node %s, as it is in maintenance mode", n.UUID),
			cleanErrOpts{errmsg: "Cleaning aborted as node is in maintenance mode", tearDown: true, setFail: true})
	case states.Deploying, states.DeployWait:
		t.Log().ErrorContext(ctx, "aborting deployment, node is in maintenance mode")
		c.setFailedState(ctx, t, "Deploy aborted as node is in maintenance mode")
	case states.Rescuing, states.RescueWait:
		t.Log().ErrorContext(ctx, "aborting rescue, node is in maintenance mode")
		c.rescuingErrorHandler(ctx, t, "Rescue aborted as node is in maintenance mode", true)
	case states.Servicing, states.ServiceWait:
		t.Log().ErrorContext(ctx, "aborting service, node is in maintenance mode")
		c.servicingErrorHandler(ctx, t, "Service aborted as node is in maintenance mode", serviceErrOpts{tearDown: true, setFail: true})
	default:
		t.Log().WarnContext(ctx, "heartbeat from node in maintenance mode, not taking any action")
	}
	return nil
}

// progressFailure is what upstream's heartbeat handlers prefix an error
// met while checking a step's progress with.
func progressFailure(kind driver.StepKind) string {
	switch kind {
	case driver.StepClean:
		return "Node failed to check cleaning progress"
	case driver.StepDeploy:
		return "Failed to process the next deploy step"
	}
	return "Node failed to check service progress"
}

// heartbeatFailed is the except clause of upstream's heartbeat handlers:
// the flow fails with lastError.
func (c *Conductor) heartbeatFailed(ctx context.Context, t *task.Task, f *stepFlow, lastError string) {
	logmsg := fmt.Sprintf("Asynchronous exception for node %s: %s", t.Node.UUID, lastError)
	switch f.kind {
	case driver.StepClean:
		c.cleaningErrorHandler(ctx, t, logmsg, cleanErrOpts{errmsg: lastError, tearDown: true, setFail: true})
	case driver.StepDeploy:
		t.Log().ErrorContext(ctx, logmsg)
		c.setFailedState(ctx, t, lastError)
	default:
		c.servicingErrorHandler(ctx, t, logmsg, serviceErrOpts{errmsg: lastError, tearDown: true, setFail: true})
	}
}

// agentStepFailed is upstream _step_failure_handler: the agent's message
// is the node's last_error as it is. Upstream sends service steps to the
// deployment's handler, which would clean the instance's boot up and
// leave servicing half torn down; they go to the servicing handler here.
func (c *Conductor) agentStepFailed(ctx context.Context, t *task.Task, f *stepFlow, msg string) {
	label := ""
	if f.kind == driver.StepClean {
		label = "cleaning"
	}
	c.collectRamdiskLogs(ctx, t, label)
	c.flowFailed(ctx, t, f, msg)
}

// flowFailed fails the flow with msg as last_error, through the flow's
// error handler.
func (c *Conductor) flowFailed(ctx context.Context, t *task.Task, f *stepFlow, msg string) {
	switch f.kind {
	case driver.StepClean:
		c.cleaningErrorHandler(ctx, t, msg, cleanErrOpts{tearDown: true, setFail: true})
	case driver.StepDeploy:
		c.deployingErrorHandler(ctx, t, msg, msg, true)
	default:
		c.servicingErrorHandler(ctx, t, msg, serviceErrOpts{tearDown: true, setFail: true})
	}
}

// setFailedState is upstream deploy_utils.set_failed_state: the
// deployment fails without cleaning up, and the node is powered off when
// [deploy]/power_off_after_deploy_failure says so.
func (c *Conductor) setFailedState(ctx context.Context, t *task.Task, msg string) {
	if lc, ok := t.Driver.Deploy.(driver.RamdiskLogCollector); ok && lc.CollectsDeployLogs() && lc.DeployLogsCollect() != agentclient.LogsNever {
		lc.CollectRamdiskLogs(ctx, t.DriverTask(), "")
	}
	c.deployingErrorHandler(ctx, t, msg, msg, false)
	n := t.Node
	if c.cfg.BoolOf(config.DeployPowerOffAfterDeployFailure) && !n.DisablePowerOff {
		if err := c.nodePowerAction(ctx, t, states.PowerOff, 0); err != nil {
			t.Log().ErrorContext(ctx, "power off after a failed deployment", "error", err)
		}
	}
	n.LastError = &msg
	save(ctx, t)
}

// heartbeatStep is upstream process_next_step for one flow: nothing while
// a step is polled by the driver or still running on the agent; the first
// heartbeat of a cleaning fetches the agent's steps and sets the step
// list; a finished step continues the flow; a failed one fails it.
func (c *Conductor) heartbeatStep(ctx context.Context, t *task.Task, st driver.AgentStepper, f *stepFlow) error {
	n := t.Node
	if n.InternalInfo().BoolOr(f.pollKey, false) {
		return nil
	}
	dt := t.DriverTask()
	cur := *f.current(n)
	if f.kind == driver.StepClean && len(cur) == 0 {
		if err := st.RefreshSteps(ctx, dt, driver.StepClean); err != nil {
			c.cleaningErrorHandler(ctx, t, fmt.Sprintf("Node failed to start the first cleaning step: %s", err), cleanErrOpts{tearDown: true, setFail: true})
			return nil
		}
		manual := n.TargetProvisionState == states.Manageable
		if err := c.setNodeCleaningSteps(ctx, t, manual, false); err != nil {
			c.cleaningErrorHandler(ctx, t, fmt.Sprintf("Cannot clean node %s: %s", n.UUID, err), cleanErrOpts{tearDown: true, setFail: true})
			return nil
		}
		return c.resumeFlow(ctx, t, f)
	}
	// The ramdisk booted for servicing: the user's steps are validated
	// now that the agent's are known (upstream _heartbeat_service_wait).
	if f.kind == driver.StepService && len(cur) == 0 {
		err := st.RefreshSteps(ctx, dt, driver.StepService)
		if err == nil {
			err = c.setNodeServiceSteps(ctx, t, false)
		}
		if err != nil {
			msg := "Node failed to start the first service step: " + err.Error()
			c.servicingErrorHandler(ctx, t, fmt.Sprintf("Asynchronous exception for node %s: %s", n.UUID, msg), serviceErrOpts{errmsg: msg, tearDown: true, setFail: true})
			return nil
		}
		return c.resumeFlow(ctx, t, f)
	}
	state, err := st.PollStep(ctx, dt, f.kind)
	if err != nil {
		var failed *driver.StepFailedError
		if errors.As(err, &failed) {
			c.agentStepFailed(ctx, t, f, failed.Msg)
		} else {
			c.heartbeatFailed(ctx, t, f, progressFailure(f.kind)+": "+err.Error())
		}
		return nil
	}
	switch state {
	case driver.AgentStepFreshBoot:
		n.InternalInfo().Delete(f.rebootKey)
		if f.kind != driver.StepClean {
			if err := st.RefreshSteps(ctx, dt, f.kind); err != nil {
				f.failStep(ctx, t, cur, err)
				return nil
			}
		}
		return c.resumeFlow(ctx, t, f)
	case driver.AgentStepRefreshed:
		n.InternalInfo().Set(f.skipKey, false)
		return c.resumeFlow(ctx, t, f)
	case driver.AgentStepDone:
		t.Log().InfoContext(ctx, "agent finished step", "kind", f.kind, "step", stepID(cur))
		return c.resumeFlow(ctx, t, f)
	case driver.AgentStepRebootRequested:
		return c.postStepReboot(ctx, t, st, f, cur)
	}
	return nil
}

// postStepReboot is upstream _post_step_reboot: the step the agent just
// finished asked for a reboot; the node reboots into the ramdisk and the
// flow waits, flagged, for the new agent, whose first heartbeat moves on
// to the next step.
func (c *Conductor) postStepReboot(ctx context.Context, t *task.Task, st driver.AgentStepper, f *stepFlow, cur map[string]any) error {
	n := t.Node
	t.Log().InfoContext(ctx, "agent finished step, rebooting as the step requested", "kind", f.kind, "step", stepID(cur))
	if err := st.RebootToFinishStep(ctx, t.DriverTask(), f.kind); err != nil {
		c.flowFailed(ctx, t, f, fmt.Sprintf("Reboot requested by %s step %s failed for node %s: %s", f.kind, pyRepr(cur), n.UUID, err))
		return nil
	}
	n.InternalInfo().Set(f.rebootKey, true)
	return t.Save(ctx)
}

// resumeFlow is continue_node_<kind> run in this worker, which already
// holds the exclusive lock.
func (c *Conductor) resumeFlow(ctx context.Context, t *task.Task, f *stepFlow) error {
	if err := t.Save(ctx); err != nil {
		return err
	}
	switch f.kind {
	case driver.StepClean:
		if err := t.ResumeCleaning(ctx); err != nil {
			return err
		}
		return c.continueNodeClean(ctx, t)
	case driver.StepDeploy:
		if err := t.ProcessEvent(ctx, states.EventResume, task.EventOptions{}); err != nil {
			return err
		}
		return c.continueNodeDeploy(ctx, t)
	default:
		if err := t.ProcessEvent(ctx, states.EventResume, task.EventOptions{}); err != nil {
			return err
		}
		return c.continueNodeService(ctx, t)
	}
}
