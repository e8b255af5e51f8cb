package swift

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/openkeel/ironic/internal/errs"
)

// inspectionPrefix names the objects of [inventory]/data_backend swift,
// as upstream's inspect_utils (and ironic-inspector before it) does:
// inspector_data-<node uuid>-inventory and -plugin.
const inspectionPrefix = "inspector_data"

// InspectionObjects are the names of a node's inventory and plugin data
// objects.
func InspectionObjects(nodeUUID string) (inventory, plugin string) {
	base := inspectionPrefix + "-" + nodeUUID
	return base + "-inventory", base + "-plugin"
}

// StoreInspectionData is upstream's _store_inspection_data_in_swift: the
// inventory and the plugin data as JSON objects in container.
func (c *Client) StoreInspectionData(ctx context.Context, container, nodeUUID string, inventory, pluginData map[string]any) error {
	invObj, plugObj := InspectionObjects(nodeUUID)
	for _, o := range []struct {
		name string
		data map[string]any
	}{{invObj, inventory}, {plugObj, pluginData}} {
		b, err := json.Marshal(o.data)
		if err != nil {
			return fmt.Errorf("encode %s: %w", o.name, err)
		}
		if err := c.CreateObjectFromData(ctx, container, o.name, b); err != nil {
			return err
		}
	}
	return nil
}

// InspectionData is upstream's get_inspection_data for the swift
// backend: the node's inventory and plugin data, NodeInventoryNotFound
// when Swift does not give either object.
func (c *Client) InspectionData(ctx context.Context, container, nodeUUID string, log *slog.Logger) (inventory, pluginData map[string]any, err error) {
	invObj, plugObj := InspectionObjects(nodeUUID)
	read := func(name string) (map[string]any, error) {
		b, err := c.GetObject(ctx, container, name)
		if err != nil && !errs.Is(err, errs.ClassSwiftOperationError) {
			return nil, err
		}
		if err != nil {
			log.ErrorContext(ctx, fmt.Sprintf("Failed to retrieve object %s from container %s", name, container), "node", nodeUUID, "error", err)
			return nil, errs.New(errs.ClassNodeInventoryNotFound, map[string]any{"node": nodeUUID})
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("decode object %s from container %s: %w", name, container, err)
		}
		return m, nil
	}
	if inventory, err = read(invObj); err != nil {
		return nil, nil, err
	}
	if pluginData, err = read(plugObj); err != nil {
		return nil, nil, err
	}
	return inventory, pluginData, nil
}

// CleanUpInspectionData is upstream's clean_up_swift_entries: both
// objects are deleted, missing ones being no error; any other failure is
// SwiftObjectStillExists.
func (c *Client) CleanUpInspectionData(ctx context.Context, container, nodeUUID string, log *slog.Logger) error {
	invObj, plugObj := InspectionObjects(nodeUUID)
	for _, o := range []struct{ name, what string }{{invObj, "inventory"}, {plugObj, "plugin data"}} {
		err := c.DeleteObject(ctx, container, o.name)
		if err == nil || errs.Is(err, errs.ClassSwiftObjectNotFoundError) {
			continue
		}
		log.ErrorContext(ctx, fmt.Sprintf("Object %s in container %s with %s for node %s failed to be deleted: %s", o.name, container, o.what, nodeUUID, err), "node", nodeUUID)
		return errs.New(errs.ClassSwiftObjectStillExists, map[string]any{"obj": o.name, "node": nodeUUID})
	}
	return nil
}
