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

// serviceFlow is servicing as a step flow (upstream servicing.py): the
// user's steps return an active node to active; steps only the agent
// knows are validated at its first heartbeat.
func (c *Conductor) serviceFlow() *stepFlow {
	f := &stepFlow{
		kind: driver.StepService, name: "service", activeState: states.Servicing, waitState: states.ServiceWait,
		stepsKey: model.DIIServiceSteps, indexKey: model.DIIServiceStepIndex, skipKey: model.DIISkipCurrentServiceStep,
		rebootKey: model.DIIServicingReboot, pollKey: model.DIIServicingPolling,
		current:            func(n *model.Node) *map[string]any { return &n.ServiceStep },
		target:             func(*model.Node) string { return "" },
		milestone:          func(*model.Node) flowMilestone { return milestoneServicing },
		progressFailure:    "Node failed to check service progress",
		maintenanceError:   "Service aborted as node is in maintenance mode",
		refreshAfterReboot: true,
		fail: func(ctx context.Context, t *task.Task, logmsg, errmsg string) {
			c.servicingErrorHandler(ctx, t, logmsg, serviceErrOpts{errmsg: errmsg, tearDown: true, setFail: true})
		},
		continueNode: c.continueNodeService,
		abort:        c.doNodeServiceAbort,
		finish:       c.finishService,
	}
	f.failAsync = f.fail
	f.startSteps = func(ctx context.Context, t *task.Task, st driver.AgentStepper) bool {
		return c.startServiceSteps(ctx, t, st, f)
	}
	c.userStepFailures(f, model.DIIServiceDisableRamdisk, "service")
	return f
}

// startServiceSteps is the first heartbeat of a servicing that booted the
// ramdisk: the user's steps are validated now that the agent's are known
// (upstream _heartbeat_service_wait).
func (c *Conductor) startServiceSteps(ctx context.Context, t *task.Task, st driver.AgentStepper, f *stepFlow) bool {
	err := st.RefreshSteps(ctx, t.DriverTask(), driver.StepService)
	if err == nil {
		err = c.setNodeServiceSteps(ctx, t, false)
	}
	if err != nil {
		c.heartbeatFailed(ctx, t, f, "Node failed to start the first service step: "+err.Error())
		return false
	}
	return true
}

// DoNodeService starts servicing an active node with the user's service
// steps (upstream do_node_service): refused in maintenance; power and
// network validated now; the service event targets active.
func (c *Conductor) DoNodeService(ctx context.Context, _ string, nodeID string, serviceSteps []map[string]any, disableRamdisk bool) error {
	t, err := c.acquire(ctx, nodeID, "node service", false)
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	if n.Maintenance {
		return errs.NodeInMaintenance("service", n.UUID)
	}
	if err := validateStepsRequest(ctx, t, "servicing"); err != nil {
		return err
	}
	if err := c.checkDisallowedSteps(serviceSteps, "service"); err != nil {
		return err
	}
	err = t.ProcessEvent(ctx, states.EventService, task.EventOptions{
		Spawner: c.spawner(), TargetState: states.Active, ErrHandler: task.ProvisioningErrorHandler,
		Work: task.Work{Name: "do_node_service", Fn: func(ctx context.Context, t *task.Task) error {
			return c.doNodeService(ctx, t, serviceSteps, disableRamdisk)
		}},
	})
	if errs.Is(err, errs.ClassInvalidState) {
		return errs.InvalidStateRequested("service", n.UUID, n.ProvisionState)
	}
	if err != nil {
		return err
	}
	return t.End()
}

// doNodeService is upstream servicing.do_node_service, run in a worker:
// the steps are validated against the driver's service steps; the ramdisk
// is prepared only when a step needs it or when a step is unknown until
// the agent reports its own.
func (c *Conductor) doNodeService(ctx context.Context, t *task.Task, serviceSteps []map[string]any, disableRamdisk bool) error {
	n := t.Node
	if verr := validatePowerNetwork(ctx, t, !disableRamdisk); verr != nil {
		c.servicingErrorHandler(ctx, t, fmt.Sprintf("Validation of node %s for service failed: %s", n.UUID, verr), serviceErrOpts{tearDown: true, setFail: true})
		return nil
	}
	wipeServiceInternalInfo(n)
	n.InternalInfo().Set(model.DIIServiceSteps, stepsValue(serviceSteps))
	n.InternalInfo().Set(model.DIIServiceDisableRamdisk, disableRamdisk)
	if err := t.Save(ctx); err != nil {
		return err
	}
	c.nodeUpdateCache(ctx, t)
	// Steps only the agent knows cannot be validated before it runs: the
	// ramdisk is booted and the first heartbeat validates them.
	ramdiskNeeded := false
	if err := c.setNodeServiceSteps(ctx, t, disableRamdisk); err != nil {
		if !errs.Is(err, errs.ClassInvalidParameterValue) || disableRamdisk {
			c.servicingErrorHandler(ctx, t, fmt.Sprintf("Cannot service node %s: %s", n.UUID, err), serviceErrOpts{tearDown: true, setFail: true})
			return nil
		}
		t.Log().DebugContext(ctx, "unable to compose the list of service steps, will retry once the ramdisk is booted", "error", err)
		ramdiskNeeded = true
	}
	list := n.InternalInfo().Steps(model.DIIServiceSteps)
	c.flowStarted(ctx, t, c.serviceFlow())
	for _, s := range list {
		if b, _ := s["requires_ramdisk"].(bool); b {
			ramdiskNeeded = true
		}
	}
	if ramdiskNeeded && !disableRamdisk {
		res := ""
		var err error
		if p, ok := t.Driver.Deploy.(driver.ServicePreparer); ok {
			res, err = p.PrepareService(ctx, t.DriverTask())
		}
		if err != nil {
			c.servicingErrorHandler(ctx, t, fmt.Sprintf("Failed to prepare node %s for service: %s", n.UUID, err), serviceErrOpts{tearDown: true, setFail: true})
			return nil
		}
		if res == states.ServiceWait {
			return c.serviceFlow().event(ctx, t, states.EventWait)
		}
	} else {
		n.InternalInfo().Set(model.DIIServiceDisableRamdisk, true)
	}
	if err := t.Save(ctx); err != nil {
		return err
	}
	index := -1
	if len(list) > 0 {
		index = 0
	}
	return c.runSteps(ctx, t, c.serviceFlow(), index)
}

// setNodeServiceSteps is upstream set_node_service_steps: the user's
// steps in driver_internal_info validated against the driver's (the
// agent's included once it has reported them).
func (c *Conductor) setNodeServiceSteps(ctx context.Context, t *task.Task, disableRamdisk bool) error {
	f := c.serviceFlow()
	list, err := c.validatedUserSteps(ctx, t, f, disableRamdisk)
	if err != nil {
		return err
	}
	c.setFlowSteps(t.Node, f, list)
	return nil
}

// finishService tears servicing down and returns the node to active.
func (c *Conductor) finishService(ctx context.Context, t *task.Task) error {
	n := t.Node
	disableRamdisk := n.InternalInfo().BoolOr(model.DIIServiceDisableRamdisk, false)
	if !disableRamdisk {
		c.collectRamdiskLogsAlways(ctx, t, "service")
	}
	n.ServiceStep = nil
	wipeServiceInternalInfo(n)
	if err := t.Save(ctx); err != nil {
		return err
	}
	c.flowEnded(ctx, t, c.serviceFlow())
	if !disableRamdisk {
		if p, ok := t.Driver.Deploy.(driver.ServicePreparer); ok {
			if err := p.TearDownService(ctx, t.DriverTask()); err != nil {
				c.servicingErrorHandler(ctx, t, fmt.Sprintf("Failed to tear down from service for node %s, reason: %s", n.UUID, err), serviceErrOpts{setFail: true})
				return nil
			}
		}
	}
	c.nodeUpdateCache(ctx, t)
	return t.ProcessEvent(ctx, states.EventDone, task.EventOptions{})
}

type serviceErrOpts struct {
	errmsg   string
	tearDown bool
	setFail  bool
}

// servicingErrorHandler is upstream servicing_error_handler: maintenance
// with fault "service failure" when a step was running, tear down, the
// error recorded, then fail (service failed).
func (c *Conductor) servicingErrorHandler(ctx context.Context, t *task.Task, logmsg string, o serviceErrOpts) {
	n := t.Node
	setMaint := len(n.ServiceStep) > 0
	errmsg := o.errmsg
	if errmsg == "" {
		errmsg = logmsg
	}
	t.Log().ErrorContext(ctx, logmsg)
	if setMaint {
		f := faultServiceFailure
		n.Fault = &f
		n.Maintenance = true
	}
	if o.tearDown {
		if p, ok := t.Driver.Deploy.(driver.ServicePreparer); ok {
			if err := p.TearDownService(ctx, t.DriverTask()); err != nil {
				errmsg += ". Also failed to tear down servicing."
			}
		}
	}
	switch n.ProvisionState {
	case states.Servicing, states.ServiceWait, states.ServiceFail:
		n.ServiceStep = map[string]any{}
		n.InternalInfo().Delete(model.DIIServiceStepIndex)
		n.InternalInfo().RemoveAsyncStepFlags()
		n.InternalInfo().WipeAgentTokenAndURL()
	}
	record(ctx, t, errmsg, "servicing", true)
	if setMaint && (n.MaintenanceReason == nil || *n.MaintenanceReason == "") {
		msg := errmsg
		n.MaintenanceReason = &msg
	}
	if c.cfg.BoolOf(config.ConductorPoweroffInServicefail) {
		if err := c.nodePowerAction(ctx, t, states.PowerOff, 0); err != nil {
			t.Log().ErrorContext(ctx, "power off in service fail", "error", err)
		}
	}
	save(ctx, t)
	if o.setFail && n.ProvisionState != states.ServiceFail {
		if err := t.ProcessEvent(ctx, states.EventFail, task.EventOptions{}); err != nil {
			t.Log().ErrorContext(ctx, "move node to service failed", "error", err)
		}
	}
}

// ContinueNodeService resumes servicing after an asynchronous step
// (upstream continue_node_service).
func (c *Conductor) ContinueNodeService(ctx context.Context, _ string, nodeID string) error {
	t, err := c.tasks.Acquire(ctx, nodeID, task.AcquireOptions{Purpose: "continue node servicing", Patient: true})
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	if n.ProvisionState != states.ServiceWait && n.ProvisionState != states.Servicing {
		return errs.NewMessage(errs.ClassInvalidStateRequested, fmt.Sprintf(
			"Cannot continue servicing on %s. Node is in %s state; should be in one of %s, %s", n.UUID, n.ProvisionState, states.ServiceWait, states.Servicing))
	}
	if err := t.ProcessEvent(ctx, states.EventResume, task.EventOptions{}); err != nil {
		return err
	}
	t.SetSpawnErrorHook(task.SpawnErrorHandler(states.Servicing))
	t.SpawnAfter(c.spawner(), task.Work{Name: "continue_node_service", Fn: c.continueNodeService})
	return t.End()
}

// continueNodeService runs the next service step, or aborts when the
// step that finished was flagged abort_after.
func (c *Conductor) continueNodeService(ctx context.Context, t *task.Task) error {
	return c.continueSteps(ctx, t, c.serviceFlow())
}

// doNodeServiceAbort tears servicing down after an abort (upstream
// do_node_service_abort).
func (c *Conductor) doNodeServiceAbort(ctx context.Context, t *task.Task) error {
	n := t.Node
	attempted := n.InternalInfo().BoolOr(model.DIIAgentStartAttempted, false)
	err := func() error {
		dt := t.DriverTask()
		if attempted {
			if err := t.Driver.Power.SetPowerState(ctx, dt, states.PowerOff, 0); err != nil {
				return err
			}
		}
		if p, ok := t.Driver.Deploy.(driver.ServicePreparer); ok {
			if err := p.TearDownService(ctx, dt); err != nil {
				return err
			}
		}
		if attempted {
			if err := t.Driver.Boot.PrepareInstance(ctx, dt); err != nil {
				return err
			}
			return t.Driver.Power.SetPowerState(ctx, dt, states.PowerOn, 0)
		}
		return nil
	}()
	if err != nil {
		c.servicingErrorHandler(ctx, t, fmt.Sprintf("Failed to tear down service for node %s after aborting the operation. Error: %s", n.UUID, err),
			serviceErrOpts{errmsg: "Failed to tear down service after aborting the operation"})
		return nil
	}
	msg := abortError("service", n.ServiceStep)
	n.LastError = &msg
	n.ServiceStep = nil
	wipeServiceInternalInfo(n)
	return t.Save(ctx)
}
