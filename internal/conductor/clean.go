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

// Faults Ironic sets when it puts a node into maintenance itself.
const (
	faultPowerFailure       = "power failure"
	faultCleanFailure       = "clean failure"
	faultServiceFailure     = "service failure"
	faultRescueAbortFailure = "rescue abort failure"
)

// cleanFlow is cleaning as a step flow (upstream cleaning.py): manual
// cleaning keeps manageable as its target; the steps are known once the
// agent's first heartbeat reports its own.
func (c *Conductor) cleanFlow() *stepFlow {
	f := &stepFlow{
		kind: driver.StepClean, name: "cleaning", activeState: states.Cleaning, waitState: states.CleanWait,
		stepsKey: model.DIICleanSteps, indexKey: model.DIICleanStepIndex, skipKey: model.DIISkipCurrentCleanStep,
		rebootKey: model.DIICleaningReboot, pollKey: model.DIICleaningPolling,
		current: func(n *model.Node) *map[string]any { return &n.CleanStep },
		target: func(n *model.Node) string {
			if n.TargetProvisionState == states.Manageable {
				return states.Manageable
			}
			return ""
		},
		milestone: func(n *model.Node) flowMilestone {
			if n.TargetProvisionState == states.Manageable {
				return milestoneManualCleaning
			}
			return milestoneAutomatedCleaning
		},
		progressFailure:  "Node failed to check cleaning progress",
		maintenanceError: "Cleaning aborted as node is in maintenance mode",
		agentLogsLabel:   "cleaning",
		fail: func(ctx context.Context, t *task.Task, logmsg, errmsg string) {
			c.cleaningErrorHandler(ctx, t, logmsg, cleanErrOpts{errmsg: errmsg, tearDown: true, setFail: true})
		},
		startSteps:   c.startCleanSteps,
		continueNode: c.continueNodeClean,
		abort:        c.doNodeCleanAbort,
		finish:       c.finishCleaning,
	}
	f.failAsync = f.fail
	c.userStepFailures(f, model.DIICleaningDisableRamdisk, "cleaning")
	return f
}

// startCleanSteps is the first heartbeat of a cleaning: the agent's clean
// steps are fetched and the list to run is set (upstream
// _heartbeat_clean_wait).
func (c *Conductor) startCleanSteps(ctx context.Context, t *task.Task, st driver.AgentStepper) bool {
	n := t.Node
	if err := st.RefreshSteps(ctx, t.DriverTask(), driver.StepClean); err != nil {
		c.cleaningErrorHandler(ctx, t, fmt.Sprintf("Node failed to start the first cleaning step: %s", err), cleanErrOpts{tearDown: true, setFail: true})
		return false
	}
	manual := n.TargetProvisionState == states.Manageable
	declarative, _ := n.InternalInfo().Bool(model.DIIDeclarativeCleaning)
	if err := c.setNodeCleaningSteps(ctx, t, manual || declarative, false); err != nil {
		c.cleaningErrorHandler(ctx, t, fmt.Sprintf("Cannot clean node %s: %s", n.UUID, err), cleanErrOpts{tearDown: true, setFail: true})
		return false
	}
	return true
}

// DoNodeClean starts manual cleaning with the user's steps (upstream
// do_node_clean): refused in maintenance; power and network are validated
// now for quick feedback; the clean event keeps manageable as the target.
func (c *Conductor) DoNodeClean(ctx context.Context, _ string, nodeID string, cleanSteps []map[string]any, disableRamdisk bool) error {
	if err := c.concurrentActionLimit(ctx, actionCleaning); err != nil {
		return err
	}
	t, err := c.acquire(ctx, nodeID, "node manual cleaning", false)
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	if n.Maintenance {
		return errs.NodeInMaintenance("cleaning", n.UUID)
	}
	if err := validateStepsRequest(ctx, t, "cleaning"); err != nil {
		return err
	}
	if err := c.checkDisallowedSteps(cleanSteps, "clean"); err != nil {
		return err
	}
	steps := cleanSteps
	if steps == nil {
		steps = []map[string]any{}
	}
	err = t.ProcessEvent(ctx, states.EventClean, task.EventOptions{
		Spawner: c.spawner(), TargetState: states.Manageable, ErrHandler: task.ProvisioningErrorHandler,
		Work: task.Work{Name: "do_node_clean", Fn: func(ctx context.Context, t *task.Task) error {
			return c.doNodeClean(ctx, t, steps, disableRamdisk, true)
		}},
	})
	if errs.Is(err, errs.ClassInvalidState) {
		return errs.InvalidStateRequested("manual clean", n.UUID, n.ProvisionState)
	}
	if err != nil {
		return err
	}
	return t.End()
}

// skipAutomatedCleaning is upstream skip_automated_cleaning: the node's
// automated_clean wins over [conductor]/automated_clean.
func (c *Conductor) skipAutomatedCleaning(automated *bool) bool {
	if automated != nil {
		return !*automated
	}
	return !c.cfg.BoolOf(config.ConductorAutomatedClean)
}

// doNodeClean is upstream cleaning.do_node_clean, run in a worker: manual
// cleaning runs the user's steps (cleanSteps non-nil), automated cleaning
// the driver's enabled steps, or nothing when automated cleaning is off.
func (c *Conductor) doNodeClean(ctx context.Context, t *task.Task, cleanSteps []map[string]any, disableRamdisk, manual bool) error {
	n := t.Node
	if !manual && c.skipAutomatedCleaning(n.AutomatedClean) {
		n.CleanStep = nil
		c.restoreDeployInterface(ctx, t)
		if err := t.Save(ctx); err != nil {
			return err
		}
		t.Log().InfoContext(ctx, "automated cleaning is disabled, node has been successfully moved to AVAILABLE state")
		return t.ProcessEvent(ctx, states.EventDone, task.EventOptions{})
	}
	if !c.cfg.BoolOf(config.ConductorAllowProvisioningInMaintenance) && n.Maintenance {
		c.cleaningErrorHandler(ctx, t, "Cleaning a node in maintenance mode is not allowed", cleanErrOpts{setFail: true})
		return nil
	}
	if verr := validatePowerNetwork(ctx, t, !disableRamdisk); verr != nil {
		c.cleaningErrorHandler(ctx, t, fmt.Sprintf("Validation of node %s for cleaning failed: %s", n.UUID, verr), cleanErrOpts{tearDown: true, setFail: true})
		return nil
	}
	c.keepAgentIfFastTrack(ctx, t, func() { wipeCleaningInternalInfo(n) })
	if len(cleanSteps) > 0 {
		n.InternalInfo().Set(model.DIICleanSteps, stepsValue(cleanSteps))
		n.InternalInfo().Set(model.DIICleaningDisableRamdisk, disableRamdisk)
		n.InternalInfo().Set(model.DIIDeclarativeCleaning, true)
	}
	if err := t.Save(ctx); err != nil {
		return err
	}
	c.nodeUpdateCache(ctx, t)
	if !disableRamdisk {
		res := ""
		var err error
		if p, ok := t.Driver.Deploy.(driver.CleaningPreparer); ok {
			res, err = p.PrepareCleaning(ctx, t.DriverTask())
		}
		if err != nil {
			c.cleaningErrorHandler(ctx, t, fmt.Sprintf("Failed to prepare node %s for cleaning: %s", n.UUID, err), cleanErrOpts{tearDown: true, setFail: true})
			return nil
		}
		if res == states.CleanWait {
			return c.cleanFlow().event(ctx, t, states.EventWait)
		}
	}
	// A runbook's steps (automated cleaning with steps) are the user's
	// steps of a manual clean: validated against the driver, not
	// replaced by its prioritised ones.
	if err := c.setNodeCleaningSteps(ctx, t, manual || len(cleanSteps) > 0, disableRamdisk); err != nil {
		c.cleaningErrorHandler(ctx, t, fmt.Sprintf("Cannot clean node %s: %s", n.UUID, err), cleanErrOpts{tearDown: true, setFail: true})
		return nil
	}
	f := c.cleanFlow()
	c.flowStarted(ctx, t, f)
	index := -1
	if len(n.InternalInfo().Steps(model.DIICleanSteps)) > 0 {
		index = 0
	}
	return c.runSteps(ctx, t, f, index)
}

// setNodeCleaningSteps stores the steps to run: the user's, validated
// against the driver, or the driver's enabled ones in order (upstream
// set_node_cleaning_steps).
func (c *Conductor) setNodeCleaningSteps(ctx context.Context, t *task.Task, useExisting, disableRamdisk bool) error {
	f := c.cleanFlow()
	var list []map[string]any
	var err error
	if useExisting {
		list, err = c.validatedUserSteps(ctx, t, f, disableRamdisk)
	} else {
		list, err = c.driverSteps(ctx, t, f.kind, true, true)
	}
	if err != nil {
		return err
	}
	c.setFlowSteps(t.Node, f, list)
	return t.Save(ctx)
}

// finishCleaning ends cleaning after the last step: tear down, then
// manageable for manual cleaning or a retired node, available otherwise.
func (c *Conductor) finishCleaning(ctx context.Context, t *task.Task) error {
	n := t.Node
	manual := n.TargetProvisionState == states.Manageable
	disableRamdisk := n.InternalInfo().BoolOr(model.DIICleaningDisableRamdisk, false)
	if !disableRamdisk {
		c.collectRamdiskLogsAlways(ctx, t, "cleaning")
	}
	n.CleanStep = nil
	c.keepAgentIfFastTrack(ctx, t, func() { wipeCleaningInternalInfo(n) })
	if err := t.Save(ctx); err != nil {
		return err
	}
	if !disableRamdisk {
		if p, ok := t.Driver.Deploy.(driver.CleaningPreparer); ok {
			if err := p.TearDownCleaning(ctx, t.DriverTask()); err != nil {
				c.cleaningErrorHandler(ctx, t, fmt.Sprintf("Failed to tear down from cleaning for node %s, reason: %s", n.UUID, err), cleanErrOpts{setFail: true})
				return nil
			}
		}
	}
	c.nodeUpdateCache(ctx, t)
	c.flowEnded(ctx, t, c.cleanFlow())
	c.restoreDeployInterface(ctx, t)
	event := states.EventDone
	if manual || n.Retired {
		event = states.EventManage
	}
	return t.ProcessEvent(ctx, event, task.EventOptions{})
}

type cleanErrOpts struct {
	errmsg   string
	tearDown bool
	setFail  bool
	// maintenance, when set, decides whether the node goes into
	// maintenance; by default it does when a step was running.
	maintenance *bool
}

// cleaningErrorHandler is upstream cleaning_error_handler: maintenance
// with fault "clean failure" when a step was running, tear down, clean
// step and agent data dropped, the error in node history and last_error,
// then fail (towards manageable for manual cleaning).
func (c *Conductor) cleaningErrorHandler(ctx context.Context, t *task.Task, logmsg string, o cleanErrOpts) {
	n := t.Node
	setMaint := len(n.CleanStep) > 0
	if o.maintenance != nil {
		setMaint = *o.maintenance
	}
	errmsg := o.errmsg
	if errmsg == "" {
		errmsg = logmsg
	}
	t.Log().ErrorContext(ctx, logmsg)
	if setMaint {
		f := faultCleanFailure
		n.Fault = &f
		n.Maintenance = true
	}
	if o.tearDown {
		if p, ok := t.Driver.Deploy.(driver.CleaningPreparer); ok {
			if err := p.TearDownCleaning(ctx, t.DriverTask()); err != nil {
				errmsg = fmt.Sprintf("%s. Also Failed to tear down cleaning on node %s, reason: %s", errmsg, n.UUID, err)
			}
		}
	}
	switch n.ProvisionState {
	case states.Cleaning, states.CleanWait, states.CleanFail:
		n.CleanStep = map[string]any{}
		n.InternalInfo().Delete(model.DIICleanStepIndex)
		n.InternalInfo().RemoveAsyncStepFlags()
		n.InternalInfo().WipeAgentTokenAndURL()
	}
	manual := n.TargetProvisionState == states.Manageable
	record(ctx, t, errmsg, states.HistoryCleaning, true)
	if setMaint && (n.MaintenanceReason == nil || *n.MaintenanceReason == "") {
		msg := errmsg
		n.MaintenanceReason = &msg
	}
	if c.cfg.BoolOf(config.ConductorPoweroffInCleanfail) {
		if err := c.nodePowerAction(ctx, t, states.PowerOff, 0); err != nil {
			t.Log().ErrorContext(ctx, "power off in clean fail", "error", err)
		}
	}
	c.restoreDeployInterface(ctx, t)
	save(ctx, t)
	if o.setFail && n.ProvisionState != states.CleanFail {
		target := ""
		if manual {
			target = states.Manageable
		}
		if err := t.ProcessEvent(ctx, states.EventFail, task.EventOptions{TargetState: target}); err != nil {
			t.Log().ErrorContext(ctx, "move node to clean failed", "error", err)
		}
	}
}

// ContinueNodeClean resumes cleaning after an asynchronous step (upstream
// continue_node_clean): the node must be in clean wait.
func (c *Conductor) ContinueNodeClean(ctx context.Context, _ string, nodeID string) error {
	t, err := c.tasks.Acquire(ctx, nodeID, task.AcquireOptions{Purpose: "continue node cleaning", Patient: true})
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	if n.ProvisionState != states.CleanWait {
		return errs.NewMessage(errs.ClassInvalidStateRequested, fmt.Sprintf(
			"Cannot continue cleaning on %s, node is in %s state, should be %s", n.UUID, n.ProvisionState, states.CleanWait))
	}
	if err := t.ResumeCleaning(ctx); err != nil {
		return err
	}
	t.SetSpawnErrorHook(task.SpawnErrorHandler(states.Cleaning))
	t.SpawnAfter(c.spawner(), task.Work{Name: "continue_node_clean", Fn: c.continueNodeClean})
	return t.End()
}

// continueNodeClean runs the next clean step, or aborts when the step
// that finished was flagged abort_after.
func (c *Conductor) continueNodeClean(ctx context.Context, t *task.Task) error {
	return c.continueSteps(ctx, t, c.cleanFlow())
}

// cleanAbortError is upstream cleaning.get_last_error.
func cleanAbortError(step map[string]any) string {
	return abortError("clean", step)
}

// doNodeCleanAbort tears cleaning down after an abort (upstream
// do_node_clean_abort).
func (c *Conductor) doNodeCleanAbort(ctx context.Context, t *task.Task) error {
	n := t.Node
	if p, ok := t.Driver.Deploy.(driver.CleaningPreparer); ok {
		if err := p.TearDownCleaning(ctx, t.DriverTask()); err != nil {
			c.cleaningErrorHandler(ctx, t, fmt.Sprintf("Failed to tear down cleaning for node %s after aborting the operation. Error: %s", n.UUID, err),
				cleanErrOpts{errmsg: "Failed to tear down cleaning after aborting the operation"})
			return nil
		}
	}
	msg := cleanAbortError(n.CleanStep)
	n.LastError = &msg
	n.CleanStep = nil
	c.keepAgentIfFastTrack(ctx, t, func() { wipeCleaningInternalInfo(n) })
	return t.Save(ctx)
}
