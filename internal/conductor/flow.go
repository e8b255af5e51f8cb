package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// The step flows: cleaning, deployment and servicing run their steps
// through one loop (steps_exec.go), wait in the same way for the agent or
// a BMC job, and are moved along by a heartbeat (heartbeat.go), a driver
// poll (periodic_driver.go) or a continue_node_<kind> call. What differs
// between them is one stepFlow value, defined beside the flow's handlers
// in clean.go, deploy.go and service.go; the code they share asks the
// value, never which flow it is.
//
// stepFlow is a struct of data and function fields rather than an
// interface with three implementations: most of what differs is data
// (driver_internal_info keys, states, messages), and each behaviour that
// differs is one short function, so a flow reads as one literal, like a
// row of a table, and a nil function says plainly that the flow has no
// such stage. Verification and inspection are not step flows: verify
// runs its steps in one go and never waits, inspection has no steps.
type stepFlow struct {
	kind driver.StepKind
	// name is what messages call the flow.
	name string
	// activeState is where the flow runs its steps, waitState where it
	// waits for the agent or a BMC job.
	activeState string
	waitState   string
	// failedInPlace, when set, is the state a step may fail the flow into
	// without returning an error; the loop stops there.
	failedInPlace string
	stepsKey      string
	indexKey      string
	skipKey       string
	rebootKey     string
	pollKey       string
	// current points at node.<kind>_step.
	current func(n *model.Node) *map[string]any
	// target is the explicit target of the flow's events (manual
	// cleaning keeps manageable), "" for the machine's.
	target func(n *model.Node) string
	// milestone names the flow in its start and end records
	// (stepflows.go).
	milestone func(n *model.Node) flowMilestone

	// progressFailure prefixes an error met while checking the agent's
	// progress (upstream's heartbeat handlers).
	progressFailure string
	// maintenanceError is last_error when a heartbeat finds the node in
	// maintenance during the flow.
	maintenanceError string
	// agentLogsLabel labels the ramdisk logs collected when the agent
	// reports a failed step (upstream _step_failure_handler).
	agentLogsLabel string
	// refreshAfterReboot: the agent's steps are fetched again when it
	// comes back from a reboot a step asked for; cleaning keeps the list
	// its first heartbeat set.
	refreshAfterReboot bool

	// fail is the flow's error handler with clean-up (upstream
	// cleaning_error_handler, deploying_error_handler,
	// servicing_error_handler): logmsg is logged, errmsg becomes
	// last_error.
	fail func(ctx context.Context, t *task.Task, logmsg, errmsg string)
	// failAsync is the except clause of upstream's heartbeat handlers,
	// the flow's error handler except that a deployment fails in place
	// (set_failed_state).
	failAsync func(ctx context.Context, t *task.Task, logmsg, errmsg string)
	// failStep reports a step that raised; failInvalid one that returned
	// an unexpected value; both end in the flow's failure state.
	failStep    func(ctx context.Context, t *task.Task, step map[string]any, err error)
	failInvalid func(ctx context.Context, t *task.Task, step map[string]any, result string)
	// startSteps is the first heartbeat of a flow that knows its steps
	// only once the agent runs: it fetches the agent's steps and sets the
	// list, and reports false when it failed the flow instead. nil for a
	// flow that sets its steps before the ramdisk boots (deployment).
	startSteps func(ctx context.Context, t *task.Task, st driver.AgentStepper) bool
	// afterStep, when set, runs after each step that ended synchronously
	// and reports true when it ended the flow.
	afterStep func(ctx context.Context, t *task.Task) bool
	// continueNode is continue_node_<kind> once the node has left the
	// wait state: it runs the remaining steps.
	continueNode func(ctx context.Context, t *task.Task) error
	// abort ends the flow by request once a step flagged abort_after has
	// finished (upstream do_node_<kind>_abort).
	abort func(ctx context.Context, t *task.Task) error
	// finish runs after the last step.
	finish func(ctx context.Context, t *task.Task) error
}

// flowFor is the step flow a provision state belongs to, its active or
// its wait state; nil for none.
func (c *Conductor) flowFor(state string) *stepFlow {
	for _, f := range []*stepFlow{c.cleanFlow(), c.deployFlow(), c.serviceFlow()} {
		if state == f.activeState || state == f.waitState {
			return f
		}
	}
	return nil
}

// flowWaitingIn is the step flow whose wait state is state, nil for none.
func (c *Conductor) flowWaitingIn(state string) *stepFlow {
	if f := c.flowFor(state); f != nil && f.waitState == state {
		return f
	}
	return nil
}

// event moves the node along event with the flow's target and logs a
// refusal (the loop has nothing better to do with it).
func (f *stepFlow) event(ctx context.Context, t *task.Task, event string) error {
	opts := task.EventOptions{TargetState: f.target(t.Node)}
	if err := t.ProcessEvent(ctx, event, opts); err != nil {
		t.Log().ErrorContext(ctx, "step flow could not move the node", "event", event, "error", err)
		return err
	}
	return nil
}

// resumeFlow is continue_node_<kind> run in this worker, which already
// holds the exclusive lock: the node leaves the wait state and the flow
// goes on.
func (c *Conductor) resumeFlow(ctx context.Context, t *task.Task, f *stepFlow) error {
	if err := t.Save(ctx); err != nil {
		return err
	}
	if err := t.ProcessEvent(ctx, states.EventResume, task.EventOptions{TargetState: f.target(t.Node)}); err != nil {
		return err
	}
	return f.continueNode(ctx, t)
}

// continueSteps runs the step after the one that finished
// asynchronously, or fails and aborts the flow when that step was
// flagged abort_after.
func (c *Conductor) continueSteps(ctx context.Context, t *task.Task, f *stepFlow) error {
	n := t.Node
	next := nextStepIndex(n, f)
	if ab, _ := (*f.current(n))["abort_after"].(bool); ab {
		if err := t.ProcessEvent(ctx, states.EventFail, task.EventOptions{TargetState: f.target(n)}); err != nil {
			return err
		}
		return f.abort(ctx, t)
	}
	return c.runSteps(ctx, t, f, next)
}

// What manual cleaning and servicing do alike: both run user steps from
// driver_internal_info through the step loop, so upstream's cleaning.py
// and servicing.py repeat these checks with only the names changed.

// userStepFailures sets failStep and failInvalid of a flow of user steps
// (cleaning, servicing; upstream do_next_clean_step and
// do_next_service_step): a step that raised has the ramdisk's logs
// collected under logsLabel, unless the flow runs without a ramdisk
// (disableRamdiskKey), before the flow fails.
func (c *Conductor) userStepFailures(f *stepFlow, disableRamdiskKey, logsLabel string) {
	f.failStep = func(ctx context.Context, t *task.Task, step map[string]any, err error) {
		msg := fmt.Sprintf("Node %s failed step %s: %s", t.Node.UUID, pyRepr(*f.current(t.Node)), err)
		if !t.Node.InternalInfo().BoolOr(disableRamdiskKey, false) {
			c.collectRamdiskLogs(ctx, t, logsLabel)
		}
		f.fail(ctx, t, msg, msg)
	}
	f.failInvalid = func(ctx context.Context, t *task.Task, step map[string]any, result string) {
		msg := fmt.Sprintf("While executing step %s on node %s, step returned invalid value: %s", pyRepr(step), t.Node.UUID, result)
		f.fail(ctx, t, msg, msg)
	}
}

// validatePowerNetwork validates the power interface and then, when
// network is set, the network interface; a ramdisk-less run does not
// need the network.
func validatePowerNetwork(ctx context.Context, t *task.Task, network bool) error {
	dt := t.DriverTask()
	if err := t.Driver.Power.Validate(ctx, dt); err != nil {
		return err
	}
	if !network {
		return nil
	}
	return t.Driver.Network.Validate(ctx, dt)
}

// validateStepsRequest is the quick feedback do_node_clean and
// do_node_service give before the event: an invalid parameter is
// answered as the validation of the node for purpose failing.
func validateStepsRequest(ctx context.Context, t *task.Task, purpose string) error {
	err := validatePowerNetwork(ctx, t, true)
	if errs.Is(err, errs.ClassInvalidParameterValue) {
		return errs.InvalidParameterValue(fmt.Sprintf("Validation of node %s for %s failed: %s", t.Node.UUID, purpose, err))
	}
	return err
}

// validatedUserSteps is the user's steps of the flow, as stored in
// driver_internal_info, checked against the driver's steps of that kind.
func (c *Conductor) validatedUserSteps(ctx context.Context, t *task.Task, f *stepFlow, disableRamdisk bool) ([]map[string]any, error) {
	drv, err := c.driverSteps(ctx, t, f.kind, false, false)
	if err != nil {
		return nil, err
	}
	return validateUserSteps(t.Node.InternalInfo().Steps(f.stepsKey), drv, string(f.kind), "", false, disableRamdisk)
}

// setFlowSteps stores the steps the flow will run, less the disallowed
// ones, with none running yet (upstream set_node_cleaning_steps and
// set_node_service_steps end alike).
func (c *Conductor) setFlowSteps(n *model.Node, f *stepFlow, list []map[string]any) {
	list = c.filterDisallowed(list, string(f.kind))
	*f.current(n) = map[string]any{}
	n.InternalInfo().Set(f.stepsKey, stepsValue(list))
	n.InternalInfo().Set(f.indexKey, nil)
}

// abortError is upstream's get_last_error of cleaning and servicing: the
// operation aborted by request, naming the step it was at.
func abortError(operation string, step map[string]any) string {
	msg := fmt.Sprintf("By request, the %s operation was aborted", operation)
	if len(step) > 0 {
		msg += fmt.Sprintf(" during or after the completion of step \"%s\"", stepID(step))
	}
	return msg
}
