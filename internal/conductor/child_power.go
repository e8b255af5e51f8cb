package conductor

import (
	"context"
	"fmt"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// hasDedicatedPowerSupply reports a child node that is powered on its own
// (driver_info/has_dedicated_power_supply): its parent's power actions do
// not reach it, and it does not need its parent on.
func hasDedicatedPowerSupply(n *model.Node) bool {
	v, _ := n.DriverInfo["has_dedicated_power_supply"].(bool)
	return v
}

// parentPowerNeeded reports a child node that draws its power from its
// parent (a DPU in a server): powering it on powers the parent on first.
func parentPowerNeeded(n *model.Node) bool {
	return n.ParentNode != nil && *n.ParentNode != "" && !hasDedicatedPowerSupply(n)
}

// powerOnParent powers on the parent of a child node that needs it, before
// the child itself, as upstream's _handle_child_power_on: the parent is
// read under a shared lock and locked exclusively only when it is off; a
// parent another task holds fails the action with 409 ParentNodeLocked.
func (c *Conductor) powerOnParent(ctx context.Context, t *task.Task, target string, timeout time.Duration) error {
	pt, err := c.acquire(ctx, *t.Node.ParentNode, "power on parent node", true)
	if err != nil {
		return err
	}
	defer pt.Release()
	cur, err := pt.Driver.Power.GetPowerState(ctx, pt.DriverTask())
	if err != nil {
		return fmt.Errorf("power state of parent node %s: %w", pt.Node.UUID, err)
	}
	if cur == states.PowerOn {
		return nil
	}
	if err := pt.UpgradeLock(ctx, task.UpgradeOptions{}); err != nil {
		if errs.Is(err, errs.ClassNodeLocked) {
			t.Log().ErrorContext(ctx, "cannot power on the parent node, which is locked", "parent_node", pt.Node.UUID, "error", err)
			return errs.New(errs.ClassParentNodeLocked, map[string]any{"node": t.Node.UUID, "parent": pt.Node.UUID})
		}
		return err
	}
	return c.nodePowerAction(ctx, pt, target, timeout)
}

// powerOffChildren powers off, before their parent, the children that
// draw their power from it, as upstream's _handle_child_power_off: every
// such child that is not off is locked first, so that one another task
// holds fails the action (409 ChildNodeLocked) before any child is
// touched.
func (c *Conductor) powerOffChildren(ctx context.Context, t *task.Task, target string, timeout time.Duration) error {
	parent := t.Node.UUID
	children, err := c.store.ListNodeColumns(ctx, store.NodeFilter{ParentNode: &parent}, store.ListOptions{}, []string{"uuid", "driver_info"})
	if err != nil {
		return fmt.Errorf("list child nodes of %s: %w", parent, err)
	}
	var locked []*task.Task
	defer func() {
		for _, ct := range locked {
			ct.Release()
		}
	}()
	for _, child := range children {
		if hasDedicatedPowerSupply(child) {
			continue
		}
		ct, err := c.acquire(ctx, child.UUID, "child node power off", true)
		if err != nil {
			return err
		}
		cur, err := ct.Driver.Power.GetPowerState(ctx, ct.DriverTask())
		if err != nil || cur == states.PowerOff {
			ct.Release()
			if err != nil {
				return fmt.Errorf("power state of child node %s: %w", child.UUID, err)
			}
			continue
		}
		if err := ct.UpgradeLock(ctx, task.UpgradeOptions{}); err != nil {
			ct.Release()
			if errs.Is(err, errs.ClassNodeLocked) {
				t.Log().ErrorContext(ctx, "cannot power off the child node, which is locked", "child_node", child.UUID, "error", err)
				return errs.New(errs.ClassChildNodeLocked, map[string]any{"node": parent, "child": child.UUID})
			}
			return err
		}
		locked = append(locked, ct)
	}
	for _, ct := range locked {
		if err := c.nodePowerAction(ctx, ct, target, timeout); err != nil {
			return err
		}
	}
	return nil
}
