package conductor

import (
	"context"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// deployFlow is deployment as a step flow (upstream deployments.py): its
// steps are composed before the ramdisk boots and validated again once
// the agent reports its own; a step may fail the deployment without
// raising, and a heartbeat's failure fails it in place.
func (c *Conductor) deployFlow() *stepFlow {
	return &stepFlow{
		kind: driver.StepDeploy, name: "deployment", activeState: states.Deploying, waitState: states.DeployWait, failedInPlace: states.DeployFail,
		stepsKey: model.DIIDeploySteps, indexKey: model.DIIDeployStepIndex, skipKey: model.DIISkipCurrentDeployStep,
		rebootKey: model.DIIDeploymentReboot, pollKey: model.DIIDeploymentPolling,
		current:            func(n *model.Node) *map[string]any { return &n.DeployStep },
		target:             func(*model.Node) string { return "" },
		milestone:          func(*model.Node) flowMilestone { return milestoneDeployment },
		progressFailure:    "Failed to process the next deploy step",
		maintenanceError:   "Deploy aborted as node is in maintenance mode",
		refreshAfterReboot: true,
		fail: func(ctx context.Context, t *task.Task, logmsg, errmsg string) {
			c.deployingErrorHandler(ctx, t, logmsg, errmsg, true)
		},
		failAsync: func(ctx context.Context, t *task.Task, logmsg, errmsg string) {
			t.Log().ErrorContext(ctx, logmsg)
			c.setFailedState(ctx, t, errmsg)
		},
		failStep: func(ctx context.Context, t *task.Task, step map[string]any, err error) {
			if t.Node.ProvisionState == states.DeployFail {
				return
			}
			logmsg := fmt.Sprintf("Node %s failed deploy step %s: %s", t.Node.UUID, pyRepr(t.Node.DeployStep), err)
			c.deployingErrorHandler(ctx, t, logmsg, fmt.Sprintf("Deploy step %s failed: %s.", stepID(step), err), true)
		},
		failInvalid: func(ctx context.Context, t *task.Task, step map[string]any, result string) {
			logmsg := fmt.Sprintf("While executing deploy step %s on node %s, step returned unexpected state: %s", pyRepr(step), t.Node.UUID, result)
			c.deployingErrorHandler(ctx, t, logmsg, fmt.Sprintf("Failed to deploy: %s", pyRepr(t.Node.DeployStep)), true)
		},
		afterStep:    c.fastTrackStepsFailed,
		continueNode: c.continueNodeDeploy,
		abort:        c.doNodeDeployAbort,
		finish:       c.finishDeploy,
	}
}

// DoNodeDeploy starts a deployment or a rebuild (upstream do_node_deploy,
// deployments.validate_node and start_deploy): refused in maintenance, for
// a protected node on rebuild and when the event does not apply; power and
// deploy are validated with the user's and the templates' deploy steps;
// the worker stores the config drive and the user's deploy steps and runs
// the deploy steps.
func (c *Conductor) DoNodeDeploy(ctx context.Context, _ string, nodeID string, rebuild bool, configdrive any, deploySteps []map[string]any) error {
	event := states.EventDeploy
	if rebuild {
		event = states.EventRebuild
	}
	if err := c.concurrentActionLimit(ctx, actionProvisioning); err != nil {
		return err
	}
	t, err := c.acquire(ctx, nodeID, "node deployment", false)
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	if n.Maintenance {
		return errs.NodeInMaintenance("provisioning", n.UUID)
	}
	if rebuild && n.Protected {
		return errs.New(errs.ClassNodeProtected, map[string]any{"node": n.UUID})
	}
	if !t.FSM.IsActionableEvent(event) {
		return errs.InvalidStateRequested(event, n.UUID, n.ProvisionState)
	}
	if err := c.checkDeploymentBootMode(n); err != nil {
		return err
	}
	if rebuild {
		for _, k := range []string{"kernel", "ramdisk", "boot_iso", "original_image_source"} {
			delete(n.InstanceInfo, k)
		}
	} else if c.applyAutomaticLessee(ctx, t) {
		// Saved at once, as upstream does, whatever the validation
		// below decides.
		if err := t.Save(ctx); err != nil {
			return err
		}
	}
	dt := t.DriverTask()
	verr := c.switchDeployInterface(ctx, t)
	if verr == nil {
		verr = t.Driver.Power.Validate(ctx, dt)
	}
	if verr == nil {
		verr = t.Driver.Deploy.Validate(ctx, dt)
	}
	if verr == nil {
		verr = validateInstanceInfoTraits(n)
	}
	if verr == nil {
		verr = c.validateUserDeploySteps(ctx, t, deploySteps, true)
	}
	if verr != nil {
		if errs.Is(verr, errs.ClassInvalidParameterValue) {
			e, _ := errs.As(verr)
			return errs.NewMessageKw(errs.ClassInstanceDeployFailure, fmt.Sprintf(
				"Failed to validate deploy or power info for node %s: %s", n.UUID, verr), map[string]any{"code": e.Code})
		}
		return verr
	}
	err = t.ProcessEvent(ctx, event, task.EventOptions{
		Spawner: c.spawner(), ErrHandler: task.ProvisioningErrorHandler,
		Work: task.Work{Name: "do_node_deploy", Fn: func(ctx context.Context, t *task.Task) error {
			return c.doNodeDeploy(ctx, t, configdrive, deploySteps)
		}},
	})
	if errs.Is(err, errs.ClassInvalidState) {
		return errs.InvalidStateRequested(event, n.UUID, n.ProvisionState)
	}
	if err != nil {
		return err
	}
	return t.End()
}

// validateInstanceInfoTraits is upstream validate_instance_info_traits:
// instance_info["traits"] must be a list of strings the node has.
func validateInstanceInfoTraits(n *model.Node) error {
	raw, ok := n.InstanceInfo["traits"]
	if !ok || raw == nil {
		return nil
	}
	invalid := errs.InvalidParameterValue(fmt.Sprintf("Error parsing traits from Node %s instance_info field. A list of strings is expected.", n.UUID))
	list, ok := raw.([]any)
	if !ok {
		return invalid
	}
	var missing []string
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return invalid
		}
		if !containsStr(n.Traits, s) && !containsStr(missing, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return errs.InvalidParameterValue(fmt.Sprintf("Cannot specify instance traits that are not also set on the node. Node %s is missing traits %s", n.UUID, strings.Join(missing, ", ")))
	}
	return nil
}

// doNodeDeploy is upstream deployments.do_node_deploy, run in a worker.
func (c *Conductor) doNodeDeploy(ctx context.Context, t *task.Task, configdrive any, deploySteps []map[string]any) error {
	n := t.Node
	c.keepAgentIfFastTrack(ctx, t, func() { wipeDeployInternalInfo(n) })
	if configdrive != nil && configdrive != "" {
		fixed, err := c.checkAndFixConfigdrive(ctx, t, configdrive)
		if err != nil {
			c.deployingErrorHandler(ctx, t, fmt.Sprintf("Unexpected error while preparing the configdrive for node %s", n.UUID),
				fmt.Sprintf("Failed to prepare the configdrive. Exception: %s", err), false)
			return err
		}
		configdrive = fixed
		stored, err := c.storeConfigdrive(ctx, t, configdrive)
		if err != nil {
			c.deployingErrorHandler(ctx, t, fmt.Sprintf("Error while uploading the configdrive for %s to Swift", n.UUID),
				fmt.Sprintf("Failed to upload the configdrive to Swift: %s", err), false)
			return err
		}
		if n.InstanceInfo == nil {
			n.InstanceInfo = map[string]any{}
		}
		n.InstanceInfo["configdrive"] = stored
		if err := t.Save(ctx); err != nil {
			c.deployingErrorHandler(ctx, t, fmt.Sprintf("Error while storing the configdrive for %s into the database: %s", n.UUID, err),
				fmt.Sprintf("Failed to store the configdrive in the database. %s", err), false)
			return err
		}
	}
	if err := t.Driver.Deploy.Prepare(ctx, t.DriverTask()); err != nil {
		c.deployingErrorHandler(ctx, t, fmt.Sprintf("Error while preparing to deploy to node %s: %s", n.UUID, err),
			fmt.Sprintf("Failed to prepare to deploy: %s", err), false)
		return err
	}
	if len(deploySteps) > 0 {
		n.InternalInfo().Set(model.DIIUserDeploySteps, stepsValue(deploySteps))
		if err := t.Save(ctx); err != nil {
			return err
		}
	}
	list, err := c.deploymentSteps(ctx, t, true)
	if err != nil {
		c.deployingErrorHandler(ctx, t, fmt.Sprintf("Error while getting deploy steps; cannot deploy to node %s: %s", n.UUID, err),
			fmt.Sprintf("Cannot get deploy steps; failed to deploy: %s", err), true)
		return err
	}
	n.InternalInfo().Set(model.DIIDeploySteps, stepsValue(list))
	n.DeployStep = map[string]any{}
	n.InternalInfo().Set(model.DIIDeployStepIndex, nil)
	if len(list) == 0 {
		msg := "Error while getting deploy steps: no steps returned for node " + n.UUID
		c.deployingErrorHandler(ctx, t, msg, "No deploy steps returned by the driver", true)
		return errs.NewMessage(errs.ClassInstanceDeployFailure, msg)
	}
	if id := c.ID(); id != 0 {
		n.ConductorAffinity = &id
	}
	if err := t.Save(ctx); err != nil {
		return err
	}
	f := c.deployFlow()
	c.flowStarted(ctx, t, f)
	return c.runSteps(ctx, t, f, 0)
}

// finishDeploy ends a deployment after the last step: the step data is
// dropped, the console restarted when enabled, and the node goes active.
func (c *Conductor) finishDeploy(ctx context.Context, t *task.Task) error {
	n := t.Node
	c.flowEnded(ctx, t, c.deployFlow())
	n.DeployStep = nil
	wipeDeployInternalInfo(n)
	if err := t.Save(ctx); err != nil {
		return err
	}
	if n.ConsoleEnabled {
		if err := t.Driver.Console.StartConsole(ctx, t.DriverTask()); err != nil {
			msg := fmt.Sprintf("Failed to start console while deploying the node %s: %s.", n.UUID, err)
			n.LastError = &msg
			n.ConsoleEnabled = false
			save(ctx, t)
		}
	}
	if err := t.ProcessEvent(ctx, states.EventDone, task.EventOptions{}); err != nil {
		return err
	}
	t.Log().InfoContext(ctx, "successfully deployed node")
	return nil
}

// deployingErrorHandler is upstream deploying_error_handler: the error in
// node history and last_error, the deploy interface cleaned up, the step
// data dropped, then fail (deploy failed).
func (c *Conductor) deployingErrorHandler(ctx context.Context, t *task.Task, logmsg, errmsg string, cleanUp bool) {
	if errmsg == "" {
		errmsg = logmsg
	}
	n := t.Node
	t.Log().ErrorContext(ctx, logmsg)
	record(ctx, t, errmsg, states.HistoryDeploying, true)
	save(ctx, t)
	cleanupErr := ""
	if cleanUp {
		if err := t.Driver.Deploy.CleanUp(ctx, t.DriverTask()); err != nil {
			cleanupErr = fmt.Sprintf("%s. Also failed to clean up due to: %s", errmsg, err)
		}
	} else if d, ok := t.Driver.Deploy.(driver.InstanceImagesDestroyer); ok && c.cfg.BoolOf(config.ConductorClearImageCacheOnDeployFailure) {
		// Without a clean-up the cached instance image is kept for a
		// retry, unless the operator wants it gone (upstream's
		// deploying_error_handler).
		d.DestroyInstanceImages(ctx, t.DriverTask())
	}
	if err := t.Refresh(ctx); err != nil {
		t.Log().ErrorContext(ctx, "reload node", "error", err)
	}
	n = t.Node
	switch n.ProvisionState {
	case states.Deploying, states.DeployWait, states.DeployFail:
		n.DeployStep = map[string]any{}
		wipeDeployInternalInfo(n)
	}
	if cleanupErr != "" {
		record(ctx, t, cleanupErr, states.HistoryDeploying, true)
	}
	save(ctx, t)
	if err := t.ProcessEvent(ctx, states.EventFail, task.EventOptions{}); err != nil {
		t.Log().ErrorContext(ctx, "move node to deploy failed", "error", err)
	}
}

// ContinueNodeDeploy resumes a deployment after an asynchronous step
// (upstream continue_node_deploy).
func (c *Conductor) ContinueNodeDeploy(ctx context.Context, _ string, nodeID string) error {
	t, err := c.tasks.Acquire(ctx, nodeID, task.AcquireOptions{Purpose: "continue node deploying", Patient: true})
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	switch n.ProvisionState {
	case states.DeployWait:
		if err := t.ProcessEvent(ctx, states.EventResume, task.EventOptions{}); err != nil {
			return err
		}
	case states.Deploying:
		t.Log().WarnContext(ctx, "node in deploying state in the continue_node_deploy RPC call; drivers should leave it in wait call-back")
	default:
		return errs.NewMessage(errs.ClassInvalidStateRequested, fmt.Sprintf(
			"Cannot continue deploying on %s. Node is in %s state; should be in one of %s, %s", n.UUID, n.ProvisionState, states.DeployWait, states.Deploying))
	}
	t.SetSpawnErrorHook(task.SpawnErrorHandler(states.Deploying))
	t.SpawnAfter(c.spawner(), task.Work{Name: "continue_node_deploy", Fn: c.continueNodeDeploy})
	return t.End()
}

// continueNodeDeploy runs the next deploy step once the steps the agent
// reported are validated, or aborts when the step that finished was
// flagged abort_after.
func (c *Conductor) continueNodeDeploy(ctx context.Context, t *task.Task) error {
	if !t.Node.InternalInfo().BoolOr(model.DIIStepsValidated, false) {
		if !c.agentDeployStepsValid(ctx, t) {
			return nil
		}
		if err := t.Save(ctx); err != nil {
			return err
		}
	}
	return c.continueSteps(ctx, t, c.deployFlow())
}

// agentDeployStepsValid validates, once, the deploy steps against those
// the agent reported (upstream continue_node_deploy); false when they are
// not valid and the deployment was failed.
func (c *Conductor) agentDeployStepsValid(ctx context.Context, t *task.Task) bool {
	n := t.Node
	if n.InternalInfo().BoolOr(model.DIIStepsValidated, false) {
		return true
	}
	if err := c.validateAgentDeploySteps(ctx, t); err != nil {
		c.deployingErrorHandler(ctx, t, fmt.Sprintf("Failed to validate the final deploy steps list for node %s: %s", n.UUID, err), "", true)
		return false
	}
	n.InternalInfo().Set(model.DIIStepsValidated, true)
	return true
}

// validateAgentDeploySteps is upstream deployments.validate_deploy_steps,
// run once the agent has reported its deploy steps: the user's and the
// templates' steps are validated against them, and the deploy step list
// is computed again with them, keeping the current step and index.
func (c *Conductor) validateAgentDeploySteps(ctx context.Context, t *task.Task) error {
	if err := c.validateUserDeploySteps(ctx, t, nil, false); err != nil {
		return err
	}
	list, err := c.deploymentSteps(ctx, t, false)
	if err != nil {
		return err
	}
	t.Node.InternalInfo().Set(model.DIIDeploySteps, stepsValue(list))
	return nil
}

// fastTrackStepsFailed: a deploy step that fetched the running agent's
// steps without a reboot (a fast-track deploy) leaves them unvalidated;
// they are validated and merged into the step list before the next step,
// as continue_node_deploy does after a first heartbeat. True when that
// failed and the deployment was failed.
func (c *Conductor) fastTrackStepsFailed(ctx context.Context, t *task.Task) bool {
	if t.Node.InternalInfo().Get(model.DIIAgentCachedDeploySteps) == nil {
		return false
	}
	return !c.agentDeployStepsValid(ctx, t)
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

// doNodeDeployAbort cleans up after an aborted deployment (upstream
// do_node_deploy_abort).
func (c *Conductor) doNodeDeployAbort(ctx context.Context, t *task.Task) error {
	n := t.Node
	if err := t.Driver.Deploy.CleanUp(ctx, t.DriverTask()); err != nil {
		c.deployingErrorHandler(ctx, t, fmt.Sprintf("Failed to clean up deploying for node %s after aborting the operation. Error: %s", n.UUID, err),
			"Failed to clean up deploying after aborting the operation", false)
		return nil
	}
	msg := "By request, the deploy operation was aborted"
	if len(n.DeployStep) > 0 {
		msg += fmt.Sprintf(" during or after the completion of step \"%s\"", stepID(n.DeployStep))
	}
	n.LastError = &msg
	n.DeployStep = map[string]any{}
	wipeDeployInternalInfo(n)
	return t.Save(ctx)
}
