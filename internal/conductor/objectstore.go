package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/swift"
)

// objectStore is the [swift] client; upstream likewise builds its Swift
// session once per process.
func (c *Conductor) objectStore() *swift.Client {
	c.swiftOnce.Do(func() { c.swift = swift.FromConfig(c.cfg) })
	return c.swift
}

// cleanUpInspectionData is the part of upstream's destroy_node that
// deletes the node's inspection data from Swift (clean_up_swift_entries).
// Objects that cannot be deleted stop the deletion unless the node is in
// maintenance, which allows orphaning them.
func (c *Conductor) cleanUpInspectionData(ctx context.Context, t *task.Task) error {
	if c.cfg.StringOf(config.InventoryDataBackend) != "swift" {
		return nil
	}
	n := t.Node
	err := c.objectStore().CleanUpInspectionData(ctx, c.cfg.StringOf(config.InventorySwiftDataContainer), n.UUID, t.Log())
	switch {
	case err == nil:
		return nil
	case errs.Is(err, errs.ClassSwiftObjectStillExists) && n.Maintenance:
		t.Log().WarnContext(ctx, fmt.Sprintf("Swift object orphaned during destruction of node %s: %s", n.UUID, err))
		return nil
	case errs.Is(err, errs.ClassSwiftObjectStillExists):
		t.Log().ErrorContext(ctx, fmt.Sprintf("Swift object cannot be orphaned without maintenance mode during destruction of node %s: %s", n.UUID, err))
	default:
		t.Log().ErrorContext(ctx, fmt.Sprintf("Failed to delete Swift entries related to the node %s: %s.", n.UUID, err))
	}
	return err
}
