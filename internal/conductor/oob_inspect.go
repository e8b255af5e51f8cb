package conductor

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/inspection"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/swift"
)

// outOfBandInspector is an inspect interface that reads the hardware out
// of band (redfish) and calls process with the inventory and plugin data
// it built, before its essential properties check, so that the conductor,
// which has the store, does the persisting part of upstream's
// inspect_hardware there.
type outOfBandInspector interface {
	InspectOutOfBand(ctx context.Context, task *driver.Task,
		process func(ctx context.Context, inventory, pluginData map[string]any) error) (string, error)
}

// inspectHardware runs the node's inspect interface. For an out-of-band
// one, the [redfish]/inspection_hooks run on what it found (the default
// ones create the ports and set cpu_arch), the data is stored, the
// main-phase inspection rules apply and, once the interface is satisfied,
// the node is saved.
func (c *Conductor) inspectHardware(ctx context.Context, t *task.Task) (string, error) {
	oob, ok := t.Driver.Inspect.(outOfBandInspector)
	if !ok {
		return t.Driver.Inspect.InspectHardware(ctx, t.DriverTask())
	}
	hooks, err := c.redfishInspectionHooks(t.Node.InspectInterface)
	if err != nil {
		return "", err
	}
	before := t.Node.Properties
	next, err := oob.InspectOutOfBand(ctx, t.DriverTask(), func(ctx context.Context, inventory, pluginData map[string]any) error {
		tg := &inspectTarget{c: c, t: t}
		o := inspection.HookOptionsFromConfig(c.cfg)
		o.Log = t.Log()
		if err := inspection.RunHooks(ctx, tg, hooks, o, inventory, pluginData); err != nil {
			// Upstream changes the properties in place and nothing saves
			// them before the architecture hook does; the failure
			// handler's save must not either.
			t.Node.Properties = before
			return err
		}
		// Upstream's architecture hook saves the node, and with it all the
		// inspection found so far.
		if err := t.Save(ctx); err != nil {
			return err
		}
		if err := c.storeInspectionData(ctx, t, inventory, pluginData); err != nil {
			return err
		}
		return c.applyInspectionRules(ctx, tg, inventory, pluginData)
	})
	if err != nil {
		return "", err
	}
	if err := t.Save(ctx); err != nil {
		return "", err
	}
	return next, nil
}

// redfishInspectionHooks are the hooks [redfish]/inspection_hooks enables,
// checked as upstream's RedfishInspect does when it loads: an unknown
// name or a hook enabled before the ones it needs means the interface
// cannot be loaded.
func (c *Conductor) redfishInspectionHooks(iface string) ([]string, error) {
	opt := c.cfg.StringOf(config.RedfishInspectionHooks)
	known := inspection.HookNames()
	var unknown []string
	for n := range strings.SplitSeq(opt, ",") {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(known, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return nil, driverLoadError(iface, "The following hook(s) are missing or failed to load: "+strings.Join(unknown, ", "))
	}
	names, err := inspection.ParseHooks(opt, c.cfg.StringOf(config.RedfishDefaultInspectionHooks))
	if err != nil {
		return nil, driverLoadError(iface, err.Error())
	}
	return names, nil
}

func driverLoadError(iface, reason string) error {
	return errs.New(errs.ClassDriverLoadError, map[string]any{"driver": iface, "reason": reason})
}

// storeInspectionData is upstream store_inspection_data: the inventory
// goes to the database (replacing any earlier one) or to Swift as
// [inventory]/data_backend says, or nowhere with none.
func (c *Conductor) storeInspectionData(ctx context.Context, t *task.Task, inventory, pluginData map[string]any) error {
	switch backend := c.cfg.StringOf(config.InventoryDataBackend); backend {
	case "database":
		id := t.Node.ID
		if _, err := c.store.CreateNodeInventory(ctx, &model.NodeInventory{NodeID: &id, InventoryData: inventory, PluginData: pluginData}); err != nil {
			return storeErr(err, "store node inventory")
		}
		t.Log().InfoContext(ctx, "inspection data was stored in database")
	case "swift":
		container := c.cfg.StringOf(config.InventorySwiftDataContainer)
		if err := c.objectStore().StoreInspectionData(ctx, container, t.Node.UUID, inventory, pluginData); err != nil {
			return err
		}
		invObj, plugObj := swift.InspectionObjects(t.Node.UUID)
		t.Log().InfoContext(ctx, fmt.Sprintf("Inspection data was stored in Swift for node %s: objects %s and %s", t.Node.UUID, invObj, plugObj))
	default:
		t.Log().DebugContext(ctx, fmt.Sprintf("Inspection data storage is disabled, the data will not be saved for node %s", t.Node.UUID))
	}
	return nil
}
