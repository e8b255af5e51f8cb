package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// What manual cleaning and servicing do alike: both run user steps from
// driver_internal_info through the step loop, so upstream's cleaning.py
// and servicing.py repeat these checks with only the names changed.

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
