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
		if len(n.CleanStep) > 0 {
			if ab, _ := n.CleanStep["abortable"].(bool); !ab {
				t.Log().InfoContext(ctx, "current clean step is not abortable, cleaning will abort after it completes", "step", n.CleanStep["step"])
				return markAbortAfter(ctx, t, &n.CleanStep)
			}
		}
		target := ""
		if n.TargetProvisionState == states.Manageable {
			target = states.Manageable
		}
		msg := cleanAbortError(n.CleanStep)
		return spawnAbort("do_node_clean_abort", c.doNodeCleanAbort, task.EventOptions{TargetState: target, LastError: &msg})
	case states.ServiceWait, states.ServiceHold:
		if len(n.ServiceStep) > 0 {
			if ab, _ := n.ServiceStep["abortable"].(bool); !ab {
				t.Log().InfoContext(ctx, "current service step is not abortable, servicing will abort after it completes", "step", n.ServiceStep["step"])
				return markAbortAfter(ctx, t, &n.ServiceStep)
			}
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
		if len(n.DeployStep) > 0 {
			if ab, _ := n.DeployStep["abortable"].(bool); !ab {
				t.Log().InfoContext(ctx, "current deploy step is not abortable, deployment will abort after it completes", "step", n.DeployStep["step"])
				return markAbortAfter(ctx, t, &n.DeployStep)
			}
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
