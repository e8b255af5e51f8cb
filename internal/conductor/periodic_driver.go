package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// Driver periodics: interfaces whose steps leave a job running on the BMC
// (driver.AsyncStepPoller) are polled here, as upstream's
// @periodics.node_periodic methods of those interfaces are, for the nodes
// of this conductor waiting in one of the step flows. A finished job
// resumes the flow (upstream notify_conductor_resume_<flow>), a failed one
// fails it through the flow's error handler with the driver's message.

// asyncWaitStates are the states whose steps the pollers follow;
// asyncFailStates those in which a discarder drops what is left.
var (
	asyncWaitStates = []string{states.CleanWait, states.DeployWait, states.ServiceWait}
	asyncFailStates = []string{states.CleanFail, states.DeployFail, states.ServiceFail}
)

// asyncPoller is one enabled implementation with a poll.
type asyncPoller struct {
	kind   driver.Kind
	name   string
	poller driver.AsyncStepPoller
}

// enabledImplementation is an enabled interface implementation by name.
type enabledImplementation struct {
	name string
	impl driver.Interface
}

// enabledImplementations lists the enabled implementations of kind, once
// each, in enabled order; an implementation no enabled hardware type
// accepts is left out.
func (c *Conductor) enabledImplementations(kind driver.Kind) []enabledImplementation {
	var out []enabledImplementation
	hws := c.drivers.EnabledHardwareTypes()
	for _, name := range c.drivers.Enabled(kind) {
		for _, ht := range hws {
			if impl, err := c.drivers.Interface(ht, kind, name); err == nil {
				out = append(out, enabledImplementation{name: name, impl: impl})
				break
			}
		}
	}
	return out
}

// asyncPollers lists the enabled implementations that poll BMC jobs, in
// kind and enabled order.
func (c *Conductor) asyncPollers() []asyncPoller {
	var out []asyncPoller
	for _, kind := range driver.AllKinds {
		for _, e := range c.enabledImplementations(kind) {
			if p, ok := e.impl.(driver.AsyncStepPoller); ok {
				out = append(out, asyncPoller{kind: kind, name: e.name, poller: p})
			}
		}
	}
	return out
}

// driverPeriodics are the periodic tasks of the enabled pollers, each at
// its own interval, and of the discarders.
func (c *Conductor) driverPeriodics() []periodic {
	var out []periodic
	for _, p := range c.asyncPollers() {
		out = append(out, periodic{
			name:     fmt.Sprintf("%s %s: poll asynchronous steps", p.name, p.kind),
			interval: p.poller.AsyncStepInterval(),
			run:      func(ctx context.Context) { c.pollAsyncSteps(ctx, p) },
		})
		if d, ok := p.poller.(driver.AsyncStepDiscarder); ok {
			out = append(out, periodic{
				name:     fmt.Sprintf("%s %s: discard failed asynchronous steps", p.name, p.kind),
				interval: d.AsyncStepFailInterval(),
				run:      func(ctx context.Context) { c.discardFailedAsyncSteps(ctx, p, d) },
			})
		}
	}
	return append(out, c.consoleSessionPeriodics()...)
}

// DiscardFailedAsyncSteps runs one pass of every driver discarder.
func (c *Conductor) DiscardFailedAsyncSteps(ctx context.Context) {
	for _, p := range c.asyncPollers() {
		if d, ok := p.poller.(driver.AsyncStepDiscarder); ok {
			c.discardFailedAsyncSteps(ctx, p, d)
		}
	}
}

// discardFailedAsyncSteps is upstream's _query_*_failed: nodes whose step
// failed (and were put in maintenance) lose the jobs still recorded, so
// that they do not carry on when the node leaves maintenance.
func (c *Conductor) discardFailedAsyncSteps(ctx context.Context, p asyncPoller, d driver.AsyncStepDiscarder) {
	pred := func(n *model.Node) bool {
		return driver.NodeInterface(n, p.kind) == p.name && p.poller.AsyncStepPending(n)
	}
	f := store.NodeFilter{Reserved: boolPtr(false), Maintenance: boolPtr(true), ProvisionStateIn: asyncFailStates}
	purpose := fmt.Sprintf("checking failed asynchronous %s steps", p.kind)
	c.nodePeriodic(ctx, purpose, f, c.withNode(ctx, pred), 0, false, func(ctx context.Context, t *task.Task) (bool, error) {
		n := t.Node
		if !t.Node.Maintenance || !containsStr(asyncFailStates, n.ProvisionState) || !pred(n) {
			return true, nil
		}
		if err := d.DiscardAsyncStep(ctx, t.DriverTask()); err != nil {
			t.Log().ErrorContext(ctx, "discarding failed asynchronous steps", "interface", p.kind, "error", err)
		}
		return true, t.Save(ctx)
	})
}

// PollAsyncSteps runs one pass of every driver poller (for tests and
// operators' tools, as the other periodic tasks are exported).
func (c *Conductor) PollAsyncSteps(ctx context.Context) {
	for _, p := range c.asyncPollers() {
		c.pollAsyncSteps(ctx, p)
	}
}

// pollAsyncSteps is one pass of one poller over the unreserved nodes of
// this conductor that wait in a step flow, use the poller's
// implementation and have one of its jobs pending.
func (c *Conductor) pollAsyncSteps(ctx context.Context, p asyncPoller) {
	pred := func(n *model.Node) bool {
		return driver.NodeInterface(n, p.kind) == p.name && p.poller.AsyncStepPending(n)
	}
	f := store.NodeFilter{Reserved: boolPtr(false), ProvisionStateIn: asyncWaitStates}
	purpose := fmt.Sprintf("checking asynchronous %s steps", p.kind)
	c.nodePeriodic(ctx, purpose, f, c.withNode(ctx, pred), 0, false, func(ctx context.Context, t *task.Task) (bool, error) {
		return true, c.pollAsyncStep(ctx, t, p)
	})
}

// pollAsyncStep polls one node under its exclusive lock: the state and the
// pending job are checked again (another worker may have moved the node
// on), then the poll's outcome is applied.
func (c *Conductor) pollAsyncStep(ctx context.Context, t *task.Task, p asyncPoller) error {
	n := t.Node
	flow := c.flowWaitingIn(n.ProvisionState)
	if flow == nil || driver.NodeInterface(n, p.kind) != p.name || !p.poller.AsyncStepPending(n) {
		return nil
	}
	status, err := p.poller.PollAsyncStep(ctx, t.DriverTask())
	if err != nil {
		t.Log().ErrorContext(ctx, "asynchronous step failed on the BMC", "interface", p.kind, "error", err)
		msg := stepFailureMessage(err)
		flow.fail(ctx, t, msg, msg)
		return nil
	}
	if status != driver.AsyncStepDone {
		return t.Save(ctx)
	}
	// A finished firmware job changed the versions the conductor caches
	// (upstream's firmware interfaces refresh them after an update).
	if p.kind == driver.KindFirmware {
		c.nodeCacheFirmwareComponents(ctx, t)
	}
	t.Log().InfoContext(ctx, "asynchronous step finished on the BMC, resuming", "interface", p.kind, "flow", flow.kind)
	// Nothing is saved before the worker starts: without a free worker the
	// job stays pending and the next pass finds it done again, where
	// saving would leave the node waiting for nothing until its timeout.
	t.SpawnAfter(c.spawner(), task.Work{Name: "continue_node_" + string(flow.kind), Fn: func(ctx context.Context, t *task.Task) error {
		return c.resumeFlow(ctx, t, flow)
	}})
	return nil
}

// stepFailureMessage is the text upstream puts in last_error: the
// message of the error, without our class wrapping when the driver raised
// one of ours.
func stepFailureMessage(err error) string {
	if e, ok := errs.As(err); ok {
		return e.Message
	}
	return err.Error()
}

// nodeUpdateCache is upstream node_update_cache: the vendor, boot mode
// and secure boot state, BIOS settings and firmware components are read
// again, when verification ends and when cleaning and servicing start
// and end.
func (c *Conductor) nodeUpdateCache(ctx context.Context, t *task.Task) {
	c.nodeCacheVendor(ctx, t)
	c.nodeCacheBootMode(ctx, t)
	c.nodeCacheBIOSSettings(ctx, t)
	c.nodeCacheFirmwareComponents(ctx, t)
}

// nodeCacheFirmwareComponents is upstream node_cache_firmware_components:
// the interface is validated and asked for its components, which a reader
// leaves to the conductor to write to firmware_information; caching never
// fails the caller.
func (c *Conductor) nodeCacheFirmwareComponents(ctx context.Context, t *task.Task) {
	fw := t.Driver.Firmware
	if fw == nil {
		return
	}
	dt := t.DriverTask()
	err := fw.Validate(ctx, dt)
	if err == nil {
		if r, ok := fw.(driver.FirmwareComponentReader); ok {
			var comps []model.FirmwareComponent
			if comps, err = r.FirmwareComponents(ctx, dt); err == nil {
				err = c.syncFirmwareComponents(ctx, t.Node.ID, comps)
			}
		} else {
			err = fw.CacheFirmwareComponents(ctx, dt)
		}
	}
	switch {
	case err == nil:
	case errs.Is(err, errs.ClassUnsupportedDriverExtension):
		t.Log().WarnContext(ctx, "firmware components are not supported for node, skipping")
	default:
		t.Log().ErrorContext(ctx, "caching of firmware components failed", "error", err)
	}
}

// syncFirmwareComponents is upstream's FirmwareComponentList
// sync_firmware_components and the writes after it: new components are
// created with their version as initial_version; for known ones a changed
// current_version is recorded as last_version_flashed, and vendor, model
// and serial number are refreshed.
func (c *Conductor) syncFirmwareComponents(ctx context.Context, nodeID int64, comps []model.FirmwareComponent) error {
	current, err := c.store.ListFirmwareComponents(ctx, nodeID)
	if err != nil {
		return storeErr(err, "list firmware components")
	}
	stored := make(map[string]*model.FirmwareComponent, len(current))
	for _, fc := range current {
		stored[fc.Component] = fc
	}
	for _, fc := range comps {
		old, ok := stored[fc.Component]
		if !ok {
			fc.NodeID = nodeID
			if fc.InitialVersion == "" && fc.CurrentVersion != nil {
				fc.InitialVersion = *fc.CurrentVersion
			}
			if _, err := c.store.CreateFirmwareComponent(ctx, &fc); err != nil {
				return storeErr(err, "create firmware component")
			}
			continue
		}
		if sameValue(old.CurrentVersion, fc.CurrentVersion) && sameValue(old.Vendor, fc.Vendor) &&
			sameValue(old.Model, fc.Model) && sameValue(old.SerialNumber, fc.SerialNumber) {
			continue
		}
		fields := []string{"vendor", "model", "serial_number"}
		if !sameValue(old.CurrentVersion, fc.CurrentVersion) {
			old.LastVersionFlashed, old.CurrentVersion = fc.CurrentVersion, fc.CurrentVersion
			fields = append(fields, "current_version", "last_version_flashed")
		}
		old.Vendor, old.Model, old.SerialNumber = fc.Vendor, fc.Model, fc.SerialNumber
		if _, err := c.store.UpdateFirmwareComponent(ctx, old, fields...); err != nil {
			return storeErr(err, "update firmware component")
		}
	}
	return nil
}
