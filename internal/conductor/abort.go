package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// abortableStates are the states in which "abort" is handled by doAbort.
var abortableStates = []string{
	states.CleanWait, states.RescueWait, states.InspectWait, states.CleanHold, states.DeployWait,
	states.DeployHold, states.ServiceWait, states.ServiceHold, states.ServiceFail,
}

// doAbort aborts the operation under way (upstream _do_abort, seed
// § 3.3.6). A running step that is not abortable is flagged abort_after
// and the abort happens when it finishes; otherwise the abort event runs
// the flow's abort worker. The caller ends the task.
func (c *Conductor) doAbort(ctx context.Context, t *task.Task) error {
	n := t.Node
	spawnAbort := func(name string, fn task.WorkFunc, opts task.EventOptions) error {
		opts.Spawner = c.spawner()
		opts.ErrHandler = task.ProvisioningErrorHandler
		opts.Work = task.Work{Name: name, Fn: fn}
		return t.ProcessEvent(ctx, states.EventAbort, opts)
	}
	switch n.ProvisionState {
	case states.CleanWait, states.CleanHold:
		if f := c.cleanFlow(); !stepAbortable(n, f) {
			return abortAfterStep(ctx, t, f)
		}
		target := ""
		if n.TargetProvisionState == states.Manageable {
			target = states.Manageable
		}
		msg := cleanAbortError(n.CleanStep)
		return spawnAbort("do_node_clean_abort", c.doNodeCleanAbort, task.EventOptions{TargetState: target, LastError: &msg})
	case states.ServiceWait, states.ServiceHold:
		if f := c.serviceFlow(); !stepAbortable(n, f) {
			return abortAfterStep(ctx, t, f)
		}
		if err := t.ProcessEvent(ctx, states.EventFail, task.EventOptions{}); err != nil {
			return err
		}
		return spawnAbort("do_node_service_abort", c.doNodeServiceAbort, task.EventOptions{})
	case states.RescueWait:
		removeRescuePassword(n)
		if err := t.Save(ctx); err != nil {
			return err
		}
		return spawnAbort("_do_node_rescue_abort", c.doNodeRescueAbort, task.EventOptions{})
	case states.InspectWait:
		return c.abortInspection(ctx, t)
	case states.DeployWait:
		if f := c.deployFlow(); !stepAbortable(n, f) {
			return abortAfterStep(ctx, t, f)
		}
		n.InternalInfo().Delete(model.DIIAgentURL)
		return spawnAbort("do_node_deploy_abort", c.doNodeDeployAbort, task.EventOptions{})
	case states.DeployHold:
		n.InternalInfo().Delete(model.DIIAgentURL)
		initial := n.ProvisionState
		return spawnAbort("_do_node_tear_down", func(ctx context.Context, t *task.Task) error {
			return c.doNodeTearDown(ctx, t, initial)
		}, task.EventOptions{})
	case states.ServiceFail:
		if n.Maintenance {
			return errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf(
				"Can not abort service on node \"%s\" while it is in maintenance mode. Please remove the node from maintenance prior to issuing the request to abort the service operation.", n.UUID))
		}
		return spawnAbort("do_node_service_abort", c.doNodeServiceAbort, task.EventOptions{})
	}
	return nil
}

// stepAbortable tells whether the flow may be aborted now: no step is
// running, or the running one is abortable.
func stepAbortable(n *model.Node, f *stepFlow) bool {
	step := *f.current(n)
	ab, _ := step["abortable"].(bool)
	return len(step) == 0 || ab
}

// abortAfterStep flags the running step to abort the flow once it
// finishes (non-abortable steps, seed § 3.3.6).
func abortAfterStep(ctx context.Context, t *task.Task, f *stepFlow) error {
	step := f.current(t.Node)
	t.Log().InfoContext(ctx, "current step is not abortable, the flow will abort after it completes", "flow", f.name, "step", (*step)["step"])
	if ab, _ := (*step)["abort_after"].(bool); ab {
		return nil
	}
	s := cloneMap(*step)
	s["abort_after"] = true
	*step = s
	return t.Save(ctx)
}
