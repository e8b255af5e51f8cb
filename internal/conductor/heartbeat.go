package conductor

import (
	"context"
	"errors"
	"fmt"

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
// to the second. Upstream's upgrade_lock reloads the node the same way;
// here the reservation and that read are one transaction. What the early
// return saves is that transaction for heartbeats that need no action.
//
// Upstream saves the agent's URL, version and heartbeat time at once; here
// they wait for the flow's next save, or are written with the release
// when the flow saves nothing (a step still running on the agent): one
// write transaction less per heartbeat, and the same node in the
// database once the lock is dropped, since no one else writes it while
// this worker holds the lock. A heartbeat that would only record them
// (heartbeatOnlyRecords) never reaches a worker: Heartbeat writes them in
// the transaction that finds the node free.
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
	c.recordAgent(n, args)
	if err := t.SaveLater(); err != nil {
		return err
	}
	if n.Maintenance {
		return c.heartbeatInMaintenance(ctx, t)
	}
	if inst, ok := t.Driver.Deploy.(driver.InstallerDeployer); ok && n.ProvisionState == states.DeployWait {
		return c.heartbeatInstaller(ctx, t, inst)
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
	if f := c.flowWaitingIn(n.ProvisionState); f != nil {
		return c.heartbeatStep(ctx, t, st, f)
	}
	if n.ProvisionState == states.RescueWait {
		return c.heartbeatRescue(ctx, t)
	}
	return nil
}

// recordAgent sets on n what a heartbeat records of its agent: where it
// listens, its version, status and the time.
func (c *Conductor) recordAgent(n *model.Node, args rpc.HeartbeatArgs) {
	if args.CallbackURL != "" {
		n.InternalInfo().Set(model.DIIAgentURL, args.CallbackURL)
	}
	if args.AgentVerifyCA != "" {
		n.InternalInfo().Set(model.DIIAgentVerifyCA, args.AgentVerifyCA)
	}
	n.InternalInfo().Set(model.DIIAgentVersion, args.AgentVersion)
	n.InternalInfo().Set(model.DIIAgentLastHeartbeat, c.clock.Now().UTC().Format(driver.AgentHeartbeatLayout))
	if args.AgentStatus != "" {
		n.InternalInfo().Set(model.DIIAgentStatus, args.AgentStatus)
	}
	if args.AgentStatusMessage != "" {
		n.InternalInfo().Set(model.DIIAgentStatusMessage, args.AgentStatusMessage)
	}
}

// heartbeatOnlyRecords tells, from the node alone, that processHeartbeat
// would record the agent's fields and do nothing else: no flow waits on
// this heartbeat (the flow's steps are polled by the conductor, or fast
// track keeps an idle agent in a stable state), the node is not in
// maintenance, and the deploy interface leaves the heartbeat to the step
// framework (deploy is the node's deploy interface, nil when unknown).
// false is not a verdict: the worker decides, as always.
func (c *Conductor) heartbeatOnlyRecords(n *model.Node, deploy driver.Interface) bool {
	if n.Maintenance || deploy == nil {
		return false
	}
	switch n.ProvisionState {
	case states.DeployWait, states.CleanWait, states.ServiceWait:
	case states.Manageable, states.Available, states.Enroll:
		if on, err := c.fastTrack().EnabledFor(n); err != nil || !on {
			return false
		}
	default:
		return false
	}
	if _, ok := deploy.(driver.InstallerDeployer); ok && n.ProvisionState == states.DeployWait {
		return false
	}
	if _, ok := deploy.(driver.AgentStepper); !ok {
		return false
	}
	if f := c.flowWaitingIn(n.ProvisionState); f != nil {
		return n.InternalInfo().BoolOr(f.pollKey, false)
	}
	return true
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
	if f := c.flowFor(n.ProvisionState); f != nil {
		f.failAsync(ctx, t, fmt.Sprintf("Aborting %s for node %s, as it is in maintenance mode", f.name, n.UUID), f.maintenanceError)
		return nil
	}
	switch n.ProvisionState {
	case states.Rescuing, states.RescueWait:
		t.Log().ErrorContext(ctx, "aborting rescue, node is in maintenance mode")
		c.rescuingErrorHandler(ctx, t, "Rescue aborted as node is in maintenance mode", true)
	default:
		t.Log().WarnContext(ctx, "heartbeat from node in maintenance mode, not taking any action")
	}
	return nil
}

// heartbeatFailed is the except clause of upstream's heartbeat handlers:
// the flow fails with lastError.
func (c *Conductor) heartbeatFailed(ctx context.Context, t *task.Task, f *stepFlow, lastError string) {
	f.failAsync(ctx, t, fmt.Sprintf("Asynchronous exception for node %s: %s", t.Node.UUID, lastError), lastError)
}

// agentStepFailed is upstream _step_failure_handler: the agent's message
// is the node's last_error as it is. Upstream sends service steps to the
// deployment's handler, which would clean the instance's boot up and
// leave servicing half torn down; they go to the servicing handler here.
func (c *Conductor) agentStepFailed(ctx context.Context, t *task.Task, f *stepFlow, msg string) {
	c.collectRamdiskLogs(ctx, t, f.agentLogsLabel)
	f.fail(ctx, t, msg, msg)
}

// heartbeatStep is upstream process_next_step for one flow: nothing while
// a step is polled by the driver or still running on the agent; the first
// heartbeat of a flow that learns its steps from the agent sets the step
// list; a finished step continues the flow; a failed one fails it.
func (c *Conductor) heartbeatStep(ctx context.Context, t *task.Task, st driver.AgentStepper, f *stepFlow) error {
	n := t.Node
	if n.InternalInfo().BoolOr(f.pollKey, false) {
		return nil
	}
	dt := t.DriverTask()
	cur := *f.current(n)
	if len(cur) == 0 && f.startSteps != nil {
		if !f.startSteps(ctx, t, st) {
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
			c.heartbeatFailed(ctx, t, f, f.progressFailure+": "+err.Error())
		}
		return nil
	}
	switch state {
	case driver.AgentStepFreshBoot:
		n.InternalInfo().Delete(f.rebootKey)
		if f.refreshAfterReboot {
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
		msg := fmt.Sprintf("Reboot requested by %s step %s failed for node %s: %s", f.kind, pyRepr(cur), n.UUID, err)
		f.fail(ctx, t, msg, msg)
		return nil
	}
	n.InternalInfo().Set(f.rebootKey, true)
	return t.Save(ctx)
}
