package conductor

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/inspection"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// ContinueInspection takes the data the ramdisk sent (upstream manager
// continue_inspection): only a node waiting in inspect wait (or in enroll
// under auto-discovery) accepts it, anything else is NotFound; the data is
// processed in a worker after the resume event.
func (c *Conductor) ContinueInspection(ctx context.Context, _ string, nodeID string, inventory, pluginData map[string]any) error {
	t, err := c.acquire(ctx, nodeID, "continue inspection", false)
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	enroll := n.ProvisionState == states.Enroll && c.cfg.BoolOf(config.AutoDiscoveryEnabled)
	if n.ProvisionState != states.InspectWait && !enroll {
		t.Log().ErrorContext(ctx, "refusing to process inspection data in invalid state", "state", n.ProvisionState)
		return errs.New(errs.ClassNotFound, nil)
	}
	// Upstream finds out in the worker and leaves the node in inspecting
	// until the timeout; refusing here keeps it waiting and tells the caller.
	if _, ok := t.Driver.Inspect.(driver.InspectionContinuer); !ok {
		return driver.Unsupported(t.DriverTask(), driver.KindInspect)
	}
	if pluginData == nil {
		pluginData = map[string]any{}
	}
	work := task.Work{Name: "continue_inspection", Fn: func(ctx context.Context, t *task.Task) error {
		return c.doContinueInspection(ctx, t, inventory, pluginData)
	}}
	if enroll {
		t.SpawnAfter(c.spawner(), work)
		return t.End()
	}
	if err := t.ProcessEvent(ctx, states.EventResume, task.EventOptions{
		Spawner: c.spawner(), ErrHandler: task.ProvisioningErrorHandler, Work: work,
	}); err != nil {
		return err
	}
	return t.End()
}

// doContinueInspection is upstream inspection.continue_inspection: the
// hooks (for in-band interfaces), the interface's own processing, the
// rules of the main phase, then the inventory is stored and the node
// becomes manageable; any failure fails the inspection.
func (c *Conductor) doContinueInspection(ctx context.Context, t *task.Task, inventory, pluginData map[string]any) error {
	n := t.Node
	enroll := n.ProvisionState == states.Enroll
	// A heartbeat time makes the node fast-trackable while the ramdisk
	// is torn down, as upstream records one here.
	n.InternalInfo().Set(model.DIIAgentLastHeartbeat, c.clock.Now().UTC().Format(driver.AgentHeartbeatLayout))
	if err := t.Save(ctx); err != nil {
		return err
	}
	err := c.processInspectionData(ctx, t, inventory, pluginData)
	if errs.Is(err, errs.ClassUnsupportedDriverExtension) {
		return err
	}
	if err != nil {
		msg := fmt.Sprintf("Failed to finish inspection: %s", err)
		c.inspectingErrorHandler(ctx, t, fmt.Sprintf("Inspection processing failed for node %s: %s", n.UUID, msg), msg)
		if !enroll {
			if perr := t.ProcessEvent(ctx, states.EventFail, task.EventOptions{}); perr != nil {
				t.Log().ErrorContext(ctx, "move node to inspect failed", "error", perr)
			}
		}
		return err
	}
	if n.ProvisionState == states.InspectWait {
		return nil
	}
	if enroll {
		return t.Save(ctx)
	}
	// The node is still powered on: some BMCs report NIC firmware only then.
	c.nodeCacheFirmwareComponents(ctx, t)
	return t.ProcessEvent(ctx, states.EventDone, task.EventOptions{})
}

// processInspectionData runs the hooks, the interface, the rules and
// stores the data; the node is saved with the changes they made.
func (c *Conductor) processInspectionData(ctx context.Context, t *task.Task, inventory, pluginData map[string]any) error {
	n := t.Node
	ic, ok := t.Driver.Inspect.(driver.InspectionContinuer)
	if !ok {
		return driver.Unsupported(t.DriverTask(), driver.KindInspect)
	}
	tg := &inspectTarget{c: c, t: t}
	if h, ok := t.Driver.Inspect.(driver.HookedInspector); ok && h.InspectionHooks() {
		names, err := inspection.ParseHooks(c.cfg.StringOf(config.InspectorHooks), c.cfg.StringOf(config.InspectorDefaultHooks))
		if err != nil {
			return err
		}
		o := inspection.HookOptionsFromConfig(c.cfg)
		o.Log = t.Log()
		if err := inspection.RunHooks(ctx, tg, names, o, inventory, pluginData); err != nil {
			return errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf("failed to run inspection hooks: %s", err)})
		}
		if err := t.Save(ctx); err != nil {
			return err
		}
	}
	next, err := ic.ContinueInspection(ctx, t.DriverTask(), inventory, pluginData)
	if err != nil {
		return err
	}
	if next == states.InspectWait {
		if n.ProvisionState == states.Inspecting {
			return t.ProcessEvent(ctx, states.EventWait, task.EventOptions{})
		}
		return nil
	}
	if err := c.applyInspectionRules(ctx, tg, inventory, pluginData); err != nil {
		return err
	}
	if err := t.Save(ctx); err != nil {
		return err
	}
	// Logs are big and kept apart upstream; they are not stored here.
	delete(pluginData, "logs")
	return c.storeInspectionData(ctx, t, inventory, pluginData)
}

// applyInspectionRules is upstream apply_rules for the main phase: the
// stored rules and the built-in ones.
func (c *Conductor) applyInspectionRules(ctx context.Context, tg *inspectTarget, inventory, pluginData map[string]any) error {
	phase := "main"
	stored, err := c.store.ListInspectionRules(ctx, store.InspectionRuleFilter{Phase: &phase}, store.ListOptions{})
	if err != nil {
		return storeErr(err, "list inspection rules")
	}
	rules := make([]inspection.Rule, 0, len(stored))
	for _, r := range stored {
		rules = append(rules, inspection.RuleFromModel(r))
	}
	builtIn, err := inspection.LoadBuiltInRules(c.cfg.StringOf(config.InspectionRulesBuiltInRules), phase)
	if err != nil {
		return err
	}
	rules = append(rules, builtIn...)
	if len(rules) == 0 {
		return nil
	}
	e := inspection.NewEngine(inspection.RuleOptions{MaskSecrets: c.cfg.StringOf(config.InspectionRulesMaskSecrets), Log: tg.t.Log()})
	return e.Apply(ctx, tg, rules, inventory, pluginData)
}

// inspectTarget gives the hooks and rules the locked node and the store.
type inspectTarget struct {
	c *Conductor
	t *task.Task
}

func (x *inspectTarget) Node() *model.Node { return x.t.Node }

func (x *inspectTarget) Ports(ctx context.Context) ([]*model.Port, error) {
	id := x.t.Node.ID
	ports, err := x.c.store.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		return nil, storeErr(err, "list ports")
	}
	return ports, nil
}

func (x *inspectTarget) CreatePort(ctx context.Context, p *model.Port) error {
	if p.UUID == "" {
		p.UUID = uuid.NewString()
	}
	if _, err := x.c.store.CreatePort(ctx, p); err != nil {
		return storeErrFor(err, "create port", p)
	}
	return nil
}

func (x *inspectTarget) UpdatePort(ctx context.Context, p *model.Port) error {
	if _, err := x.c.store.UpdatePort(ctx, p); err != nil {
		return storeErr(err, "update port")
	}
	return nil
}

func (x *inspectTarget) DeletePort(ctx context.Context, p *model.Port) error {
	if err := x.c.store.DeletePort(ctx, p.ID); err != nil {
		return storeErr(err, "delete port")
	}
	return nil
}

func (x *inspectTarget) AddTrait(ctx context.Context, name string) error {
	if _, err := x.c.store.AddNodeTrait(ctx, x.t.Node.ID, name, ""); err != nil {
		return storeErr(err, "add trait")
	}
	return nil
}

func (x *inspectTarget) RemoveTrait(ctx context.Context, name string) error {
	ok, err := x.c.store.NodeTraitExists(ctx, x.t.Node.ID, name)
	if err != nil {
		return storeErr(err, "load trait")
	}
	if !ok {
		return errs.New(errs.ClassNodeTraitNotFound, map[string]any{"node_id": x.t.Node.UUID, "trait": name})
	}
	if err := x.c.store.DeleteNodeTrait(ctx, x.t.Node.ID, name); err != nil {
		return storeErr(err, "delete trait")
	}
	return nil
}

func (x *inspectTarget) StoredInventory(ctx context.Context) (map[string]any, bool, error) {
	inv, err := x.c.store.GetNodeInventory(ctx, x.t.Node.ID)
	var nf *store.NotFoundError
	if errors.As(err, &nf) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, storeErr(err, "load node inventory")
	}
	return inv.InventoryData, true, nil
}
