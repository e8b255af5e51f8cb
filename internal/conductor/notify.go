package conductor

import (
	"context"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/notify"
)

// The conductor's notifications about a node (upstream
// ironic/conductor/notification_utils.py) and its power events to Nova
// (ironic/common/nova.py). Both are sent after the node is saved and
// never fail the operation: the notifier queues without blocking and the
// Nova client logs its failures.

// emitPowerSet sends baremetal.node.power_set.<status>; toPower is the
// power action asked for.
func (c *Conductor) emitPowerSet(ctx context.Context, t *task.Task, status notify.Status, toPower string) {
	level := notify.LevelInfo
	if status == notify.StatusError {
		level = notify.LevelError
	}
	if !c.notifier.Enabled(level) {
		return
	}
	c.notifier.Emit(ctx, notify.Notification{Level: level, Object: "node", Action: "power_set", Status: status,
		Payload: c.notifier.NodeSetPowerStatePayload(t.Node, toPower)})
}

// powerStateCorrected tells Nova of the instance's new power state and
// sends baremetal.node.power_state_corrected.success, once the node's
// recorded power state has changed from fromPower behind Ironic's back.
func (c *Conductor) powerStateCorrected(ctx context.Context, t *task.Task, fromPower string) {
	n := t.Node
	if n.InstanceUUID != nil && *n.InstanceUUID != "" {
		c.nova.PowerUpdate(ctx, *n.InstanceUUID, n.PowerState)
	}
	if !c.notifier.Enabled(notify.LevelInfo) {
		return
	}
	c.notifier.Emit(ctx, notify.Notification{Level: notify.LevelInfo, Object: "node", Action: "power_state_corrected",
		Status: notify.StatusSuccess, Payload: c.notifier.NodeCorrectedPowerStatePayload(n, fromPower)})
}

// emitConsoleSet sends baremetal.node.console_set.<status>.
func (c *Conductor) emitConsoleSet(ctx context.Context, t *task.Task, status notify.Status) {
	level := notify.LevelInfo
	if status == notify.StatusError {
		level = notify.LevelError
	}
	if !c.notifier.Enabled(level) {
		return
	}
	c.notifier.Emit(ctx, notify.Notification{Level: level, Object: "node", Action: "console_set", Status: status,
		Payload: c.notifier.NodePayload(t.Node)})
}
