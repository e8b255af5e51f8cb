package conductor

import (
	"context"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
)

// DoProvisioningAction runs the provisioning verbs that need no arguments
// (upstream do_provisioning_action): provide from manageable (automated
// cleaning; refused for retired nodes and, unless allowed, in
// maintenance), manage from enroll (verification), adopt, abort in the
// abortable states, unhold, and any other event as a plain transition.
// An event that does not apply is InvalidStateRequested.
func (c *Conductor) DoProvisioningAction(ctx context.Context, _ string, nodeID, action string) error {
	t, err := c.acquire(ctx, nodeID, "provision action "+action, false)
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	spawn := func(event, name string, fn task.WorkFunc) error {
		if err := t.ProcessEvent(ctx, event, task.EventOptions{
			Spawner: c.spawner(), ErrHandler: task.ProvisioningErrorHandler, Work: task.Work{Name: name, Fn: fn},
		}); err != nil {
			return err
		}
		return t.End()
	}
	switch {
	case action == "provide" && n.ProvisionState == states.Manageable:
		if !c.cfg.BoolOf(config.ConductorAllowProvisioningInMaintenance) && n.Maintenance {
			return errs.NodeInMaintenance("providing", n.UUID)
		}
		if n.Retired {
			return errs.New(errs.ClassNodeIsRetired, map[string]any{"op": "providing", "node": n.UUID})
		}
		steps, disableRamdisk, err := c.automatedCleaningRunbook(ctx, t)
		if err != nil {
			return err
		}
		return spawn(states.EventProvide, "do_node_clean", func(ctx context.Context, t *task.Task) error {
			return c.doNodeClean(ctx, t, steps, disableRamdisk, false)
		})
	case action == "manage" && n.ProvisionState == states.Enroll:
		return spawn(states.EventManage, "do_node_verify", c.doNodeVerify)
	case action == "adopt" && (n.ProvisionState == states.Manageable || n.ProvisionState == states.AdoptFail):
		return spawn(states.EventAdopt, "_do_adoption", c.doAdoption)
	case action == "abort" && containsStr(abortableStates, n.ProvisionState):
		if err := c.doAbort(ctx, t); err != nil {
			return err
		}
		return t.End()
	case action == "unhold" && (n.ProvisionState == states.CleanHold || n.ProvisionState == states.DeployHold):
		// Upstream lets the machine's default target (available) replace
		// manageable here, turning a held manual cleaning into an
		// automated one; the manual target is kept instead.
		var opts task.EventOptions
		if n.TargetProvisionState == states.Manageable {
			opts.TargetState = states.Manageable
		}
		return t.ProcessEvent(ctx, states.EventUnhold, opts)
	case action == "unhold" && n.ProvisionState == states.ServiceHold:
		if err := t.ProcessEvent(ctx, states.EventUnhold, task.EventOptions{
			Spawner: c.spawner(),
			ErrHandler: func(ctx context.Context, err error, t *task.Task, _, _ string) {
				c.servicingErrorHandler(ctx, t, err.Error(), serviceErrOpts{tearDown: true, setFail: true})
			},
			// unhold lands in service wait, from which upstream's worker
			// cannot finish ("done" is not an event of service wait); it
			// resumes first, as continue_node_service does.
			Work: task.Work{Name: "continue_node_service", Fn: func(ctx context.Context, t *task.Task) error {
				if err := t.ProcessEvent(ctx, states.EventResume, task.EventOptions{}); err != nil {
					return err
				}
				return c.continueNodeService(ctx, t)
			}},
		}); err != nil {
			return err
		}
		return t.End()
	}
	err = t.ProcessEvent(ctx, action, task.EventOptions{})
	if errs.Is(err, errs.ClassInvalidState) {
		return errs.InvalidStateRequested(action, n.UUID, n.ProvisionState)
	}
	return err
}
