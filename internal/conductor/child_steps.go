package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// executeOnChildNodes reports a step to be run on the node's children
// instead of the node (execute_on_child_nodes), which the API checked
// against the caller's rights on each child.
func executeOnChildNodes(step map[string]any) bool {
	b, _ := step["execute_on_child_nodes"].(bool)
	return b
}

// executeStepOnChildNodes runs a step on each child of the node, or on
// those of limit_child_node_execution, each under the child's own lock,
// as upstream's execute_step_on_child_nodes: power_on, power_off and
// reboot are power actions on the child; any other step runs on the
// child's interface. A child's step that ends asynchronously is accepted
// only with [conductor]/permit_child_node_step_async_result; any other
// result is returned as the parent step's invalid result, which fails the
// parent's flow.
func (c *Conductor) executeStepOnChildNodes(ctx context.Context, t *task.Task, f *stepFlow, step map[string]any) (string, error) {
	parent := t.Node.UUID
	filter := store.NodeFilter{ParentNode: &parent}
	if limit, _ := step["limit_child_node_execution"].([]any); len(limit) > 0 {
		filter.UUIDIn = []string{}
		for _, id := range limit {
			if s, ok := id.(string); ok {
				filter.UUIDIn = append(filter.UUIDIn, s)
			}
		}
	}
	children, err := c.store.ListNodeColumns(ctx, filter, store.ListOptions{}, []string{"uuid"})
	if err != nil {
		return "", fmt.Errorf("list child nodes of %s: %w", parent, err)
	}
	power := map[string]string{"power_on": states.PowerOn, "power_off": states.PowerOff, "reboot": states.Reboot}
	for _, child := range children {
		t.Log().InfoContext(ctx, "executing step on child node", "step", stepID(step), "child_node", child.UUID)
		result, err := func() (string, error) {
			ct, err := c.acquire(ctx, child.UUID, "execute step", false)
			if err != nil {
				return "", err
			}
			defer ct.Release()
			if st, ok := power[fmt.Sprint(step["step"])]; ok {
				return "", c.nodePowerAction(ctx, ct, st, 0)
			}
			return c.executeStep(ctx, ct, f.kind, step)
		}()
		if err != nil {
			return "", err
		}
		if result == "" || (result == f.waitState && c.cfg.BoolOf(config.ConductorPermitChildNodeStepAsyncResult)) {
			continue
		}
		msg := fmt.Sprintf("While executing step %s on child node %s, step returned invalid value: %s", pyRepr(step), child.UUID, result)
		t.Log().ErrorContext(ctx, msg)
		return msg, nil
	}
	return "", nil
}
