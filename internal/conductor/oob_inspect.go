package conductor

import (
	"context"
	"regexp"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// hardwareDiscoverer is an inspect interface that reads the hardware out
// of band (redfish) and leaves persisting what it found to the conductor,
// as the driver layer has no store.
type hardwareDiscoverer interface {
	DiscoveredHardware(ctx context.Context, task *driver.Task) (properties map[string]any, macs []string, inventory map[string]any, err error)
}

// validMAC is oslo netutils.is_valid_mac: six colon- or dash-separated
// hex octets.
var validMAC = regexp.MustCompile(`^(?i)([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$`)

// inspectHardware runs the node's inspect interface. For an out-of-band
// discoverer it does the rest of upstream RedfishInspect.inspect_hardware:
// a port per enabled MAC (existing ones kept), the inventory stored, the
// main-phase inspection rules applied and the properties saved.
func (c *Conductor) inspectHardware(ctx context.Context, t *task.Task) (string, error) {
	d, ok := t.Driver.Inspect.(hardwareDiscoverer)
	if !ok {
		return t.Driver.Inspect.InspectHardware(ctx, t.DriverTask())
	}
	props, macs, inventory, err := d.DiscoveredHardware(ctx, t.DriverTask())
	if err != nil {
		return "", err
	}
	if err := c.createPortsIfNotExist(ctx, t, macs); err != nil {
		return "", err
	}
	pluginData := map[string]any{}
	if err := c.storeInspectionData(ctx, t, inventory, pluginData); err != nil {
		return "", err
	}
	// Properties first: rules that set properties act on what was found.
	t.Node.Properties = props
	if err := c.applyInspectionRules(ctx, &inspectTarget{c: c, t: t}, inventory, pluginData); err != nil {
		return "", err
	}
	if err := t.Save(ctx); err != nil {
		return "", err
	}
	t.Log().DebugContext(ctx, "node properties updated by inspection", "properties", props)
	return states.Manageable, nil
}

// createPortsIfNotExist is upstream inspect_utils.create_ports_if_not_exist:
// a port for each valid MAC; a MAC that already has a port (on this or
// another node) is left alone.
func (c *Conductor) createPortsIfNotExist(ctx context.Context, t *task.Task, macs []string) error {
	tg := &inspectTarget{c: c, t: t}
	for _, mac := range macs {
		if !validMAC.MatchString(mac) {
			t.Log().WarnContext(ctx, "ignoring NIC address because it is not a valid MAC", "address", mac)
			continue
		}
		id := t.Node.ID
		// The column's default, which upstream's Port object relies on.
		pxe := true
		err := tg.CreatePort(ctx, &model.Port{Address: &mac, NodeID: &id, PXEEnabled: &pxe})
		switch {
		case errs.Is(err, "MACAlreadyExists"):
			t.Log().InfoContext(ctx, "port already exists for MAC address", "address", mac)
		case err != nil:
			return err
		default:
			t.Log().InfoContext(ctx, "port created for MAC address", "address", mac)
		}
	}
	return nil
}

// storeInspectionData is upstream store_inspection_data for the database
// backend, the only one kept here; the inventory replaces any earlier one.
func (c *Conductor) storeInspectionData(ctx context.Context, t *task.Task, inventory, pluginData map[string]any) error {
	if c.cfg.String("inventory", "data_backend") != "database" {
		t.Log().DebugContext(ctx, "inspection data is not stored in the database", "backend", c.cfg.String("inventory", "data_backend"))
		return nil
	}
	id := t.Node.ID
	if _, err := c.store.CreateNodeInventory(ctx, &model.NodeInventory{NodeID: &id, InventoryData: inventory, PluginData: pluginData}); err != nil {
		return storeErr(err, "store node inventory")
	}
	t.Log().InfoContext(ctx, "inspection data was stored in database")
	return nil
}
