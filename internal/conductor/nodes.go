package conductor

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/rpc/ovo"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// traitVersion is upstream's Trait object version, stored with each row.
const traitVersion = "1.0"

// nodeUpdateAllowedStates are the provision states in which interfaces
// (and, when one is set, the resource class) may change (upstream
// update_node's allowed_update_states, in its order: messages list them).
var nodeUpdateAllowedStates = []string{states.Enroll, states.Inspecting, states.InspectWait, states.Manageable, states.Available}

// CreateNode stores a new node after filling its unset interfaces with the
// defaults of its hardware type (upstream create_node).
func (c *Conductor) CreateNode(ctx context.Context, _ string, node *model.Node) (*model.Node, error) {
	n := *node
	n.Version = c.objects.Version(ovo.NodeClass)
	if _, err := c.drivers.CheckAndUpdateNodeInterfaces(&n); err != nil {
		return nil, err
	}
	out, err := c.store.CreateNode(ctx, &n)
	if err != nil {
		return nil, storeErr(err, "create node")
	}
	return out, nil
}

// nodeDelta lists the columns (json names) whose values differ.
func nodeDelta(old, cur *model.Node) map[string]bool {
	ov, cv := reflect.ValueOf(old).Elem(), reflect.ValueOf(cur).Elem()
	typ := ov.Type()
	out := map[string]bool{}
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if !reflect.DeepEqual(ov.Field(i).Interface(), cv.Field(i).Interface()) {
			out[name] = true
		}
	}
	return out
}

// conductorColumns are the node columns an update never writes: keys and
// timestamps, the lock, the power and provision fields the conductor owns
// and the traits and tags that have their own calls.
var conductorColumns = map[string]bool{
	"id": true, "uuid": true, "created_at": true, "updated_at": true,
	"power_state": true, "target_power_state": true,
	"provision_state": true, "target_provision_state": true, "provision_updated_at": true,
	"reservation": true, "traits": true, "tags": true,
}

// UpdateNode applies a change to a node (upstream update_node). The
// change is applied to the node as read under its exclusive lock, so it
// writes only what it edits: nothing the caller read earlier is written
// back. A conditional edit whose value changed since the caller read it
// fails with NodeChanged and writes nothing; the API then re-reads the
// node and applies its PATCH again. Maintenance off clears its reason and
// fault; protected and retired follow upstream's rules; interfaces change
// only in the allowed states or in maintenance and are validated (reset to
// defaults with resetInterfaces when the driver changes); instance_uuid is
// never overwritten.
func (c *Conductor) UpdateNode(ctx context.Context, _ string, nodeID string, upd *model.NodeUpdate, resetInterfaces bool) (*model.Node, error) {
	if upd == nil {
		upd = &model.NodeUpdate{}
	}
	for _, col := range upd.Columns() {
		if conductorColumns[col] {
			return nil, errs.InvalidParameterValue(fmt.Sprintf("The %s field of node %s cannot be updated.", col, nodeID))
		}
	}
	// Upstream validates before it takes the lock, so that a bad update
	// is refused even while the node is busy and without the lock's
	// write (which moves updated_at). An update of a column upstream's
	// rules can refuse (protected, retired, driver, interfaces) is
	// checked on a preview read now; any other is checked on the node
	// read under the lock, and read beforehand only when the node is
	// busy, before waiting for it (issue 29: the preview's read was a
	// third of a PATCH's reads).
	preview := func() error {
		cur, err := c.lookupNode(ctx, nodeID)
		if err != nil {
			return err
		}
		_, _, err = c.updatedNode(cur, upd, resetInterfaces)
		return err
	}
	beforeWait := preview
	if refusable(upd) {
		if err := preview(); err != nil {
			return nil, err
		}
		beforeWait = nil
	}
	t, err := c.tasks.Acquire(ctx, nodeID, task.AcquireOptions{Purpose: "node update", NoDriver: true, BeforeWait: beforeWait})
	if err != nil {
		return nil, err
	}
	defer t.Release()
	stored := t.Node
	in, delta, err := c.updatedNode(stored, upd, resetInterfaces)
	if err != nil {
		return nil, err
	}
	if delta["instance_uuid"] && in.InstanceUUID != nil && stored.InstanceUUID != nil {
		return nil, errs.New(errs.ClassNodeAssociated, map[string]any{"node": in.UUID, "instance": *stored.InstanceUUID})
	}
	if delta["resource_class"] && stored.ResourceClass != nil && *stored.ResourceClass != "" &&
		!containsStr(nodeUpdateAllowedStates, stored.ProvisionState) {
		return nil, errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf(
			"Node %s can not have resource_class updated unless it is in one of allowed (%s) states. Current state is '%s'.",
			in.UUID, strings.Join(nodeUpdateAllowedStates, ", "), stored.ProvisionState))
	}
	if delta["instance_uuid"] && stored.AllocationID != nil && in.InstanceUUID == nil {
		if !stored.Maintenance && !containsStr(nodeUpdateAllowedStates, stored.ProvisionState) {
			return nil, errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf(
				"Node %s with an allocation can not have instance_uuid removed unless it is in one of allowed (%s) states or in maintenance mode. Current state is '%s'.",
				in.UUID, strings.Join(nodeUpdateAllowedStates, ", "), stored.ProvisionState))
		}
		if err := c.store.DeleteAllocation(ctx, *stored.AllocationID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("delete allocation of node %s: %w", in.UUID, err)
		}
		in.AllocationID = nil
	}
	if delta["driver"] {
		// The new driver may not reach the BMC the old one subscribed on.
		c.dropPushSubscription(ctx, cloneNode(stored), t.Log())
		in.InternalInfo().Delete(model.DIIOpenkeelEventSubscription, model.DIIOpenkeelEventSecret, model.DIIOpenkeelEventDestination)
	}
	*t.Node = *in
	saved, err := t.SaveAndRelease(ctx)
	if err != nil {
		return nil, storeErr(err, "update node "+in.UUID)
	}
	return saved, nil
}

// refusable reports whether upd edits a column whose change updatedNode's
// rules can refuse on the node as it stands.
func refusable(upd *model.NodeUpdate) bool {
	for _, col := range upd.Columns() {
		switch {
		case col == "protected", col == "protected_reason", col == "retired", col == "retired_reason", col == "driver",
			strings.HasSuffix(col, "_interface"):
			return true
		}
	}
	return false
}

// updatedNode is n with upd applied and upstream's update rules followed,
// and the columns that changed.
func (c *Conductor) updatedNode(n *model.Node, upd *model.NodeUpdate, resetInterfaces bool) (*model.Node, map[string]bool, error) {
	in := cloneNode(n)
	if err := upd.Apply(in); err != nil {
		var changed *model.NodeChangedError
		if errors.As(err, &changed) {
			return nil, nil, errs.NodeChanged(n.UUID, changed.Path)
		}
		return nil, nil, errs.InvalidParameterValue(err.Error())
	}
	delta := nodeDelta(n, in)
	if delta["maintenance"] && !in.Maintenance {
		in.MaintenanceReason = nil
		in.Fault = nil
	}
	if err := checkUpdateProtected(in, delta); err != nil {
		return nil, nil, err
	}
	if err := checkUpdateRetired(in, delta); err != nil {
		return nil, nil, err
	}
	updatingDriver := delta["driver"]
	checkInterfaces := updatingDriver
	for _, kind := range driver.AllKinds {
		field := string(kind) + "_interface"
		if !delta[field] {
			if updatingDriver && resetInterfaces {
				driver.SetNodeInterface(in, kind, "")
			}
			continue
		}
		if !containsStr(nodeUpdateAllowedStates, in.ProvisionState) && !in.Maintenance {
			return nil, nil, errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf(
				"Node %s can not have %s updated unless it is in one of allowed (%s) states or in maintenance mode. Current state is '%s'.",
				in.UUID, field, strings.Join(nodeUpdateAllowedStates, ", "), in.ProvisionState))
		}
		checkInterfaces = true
	}
	if checkInterfaces {
		if _, err := c.drivers.CheckAndUpdateNodeInterfaces(in); err != nil {
			return nil, nil, err
		}
	}
	return in, delta, nil
}

func checkUpdateProtected(n *model.Node, delta map[string]bool) error {
	if delta["protected"] {
		if !n.Protected {
			n.ProtectedReason = nil
		} else if n.ProvisionState != states.Active && n.ProvisionState != states.Rescue {
			return errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf(
				"Node %s can only be made protected in provision states 'active' or 'rescue', the current state is '%s'",
				n.UUID, n.ProvisionState))
		}
	}
	if delta["protected_reason"] && n.ProtectedReason != nil && *n.ProtectedReason != "" && !n.Protected {
		return errs.InvalidParameterValue("The protected_reason field can only be set when protected is True")
	}
	return nil
}

func checkUpdateRetired(n *model.Node, delta map[string]bool) error {
	if delta["retired"] {
		if !n.Retired {
			n.RetiredReason = nil
		} else if n.ProvisionState == states.Available {
			return errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf(
				"Node %s can not have 'retired' set in provision state 'available', the current state is '%s'",
				n.UUID, n.ProvisionState))
		}
	}
	if delta["retired_reason"] && n.RetiredReason != nil && *n.RetiredReason != "" && !n.Retired {
		return errs.InvalidParameterValue("The retired_reason field can only be set when retired is True")
	}
	return nil
}

// DestroyNode deletes a node (upstream destroy_node). Outside maintenance
// the node must have no instance and be in DELETE_ALLOWED_STATES (plus
// available with [conductor]/allow_deleting_available_nodes); a protected
// node is never deleted; an enabled console is stopped first, and the
// inspection data kept in Swift is deleted with the node.
func (c *Conductor) DestroyNode(ctx context.Context, _ string, nodeID string) error {
	t, err := c.tasks.Acquire(ctx, nodeID, task.AcquireOptions{Purpose: "node deletion", NoDriver: true})
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	if !n.Maintenance && n.InstanceUUID != nil {
		return errs.New(errs.ClassNodeAssociated, map[string]any{"node": n.UUID, "instance": *n.InstanceUUID})
	}
	if n.Protected {
		return errs.New(errs.ClassNodeProtected, map[string]any{"node": n.UUID})
	}
	allowed := states.DeleteAllowedStates.Values()
	if c.cfg.BoolOf(config.ConductorAllowDeletingAvailableNodes) {
		allowed = append(allowed, states.Available)
	}
	if !n.Maintenance && !containsStr(allowed, n.ProvisionState) {
		return errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf(
			"Can not delete node \"%s\" while it is in provision state \"%s\". Valid provision states to perform deletion are: \"%s\", or set the node into maintenance mode",
			n.UUID, n.ProvisionState, pyTuple(allowed)))
	}
	if n.ConsoleEnabled {
		ifaces, err := c.drivers.ForNode(n)
		if err != nil {
			return err
		}
		dt := &driver.Task{Node: n, Driver: ifaces, Log: t.Log()}
		if err := ifaces.Console.StopConsole(ctx, dt); err != nil {
			t.Log().ErrorContext(ctx, "failed to stop console while deleting the node", "error", err)
		} else {
			n.ConsoleEnabled = false
		}
	}
	if err := c.cleanUpInspectionData(ctx, t); err != nil {
		return err
	}
	c.removePublishedImages(ctx, t)
	c.dropPushSubscription(ctx, n, t.Log())
	if err := c.store.DeleteNode(ctx, n.ID); err != nil {
		return storeErr(err, "delete node "+n.UUID)
	}
	t.Log().InfoContext(ctx, "successfully deleted node")
	return nil
}

// ValidateDriverInterfaces validates every non-vendor interface of the
// node (upstream validate_driver_interfaces): result true, or false with
// the reason.
func (c *Conductor) ValidateDriverInterfaces(ctx context.Context, _ string, nodeID string) (map[string]rpc.InterfaceValidation, error) {
	t, err := c.acquire(ctx, nodeID, "driver interface validation", true)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	dt := t.DriverTask()
	out := map[string]rpc.InterfaceValidation{}
	kinds := append(append([]driver.Kind{}, driver.CoreKinds...), driver.OptionalKinds...)
	for _, kind := range kinds {
		impl := t.Driver.Get(kind)
		var verr error
		if v, ok := impl.(driver.Validator); ok {
			verr = v.Validate(ctx, dt)
		}
		if verr == nil && kind == driver.KindDeploy {
			verr = validateInstanceInfoTraits(t.Node)
			if verr == nil {
				verr = c.validateUserDeploySteps(ctx, t, nil, true)
			}
		}
		res := verr == nil
		entry := rpc.InterfaceValidation{Result: &res}
		if verr != nil {
			if errs.Is(verr, errs.ClassInvalidParameterValue) || errs.Is(verr, errs.ClassUnsupportedDriverExtension) {
				entry.Reason = verr.Error()
			} else {
				entry.Reason = fmt.Sprintf("Unexpected exception, traceback saved into log by ironic conductor service that is running on %s: %s", c.host, verr)
				t.Log().ErrorContext(ctx, "unexpected exception while validating driver interface", "interface", kind, "error", verr)
			}
		}
		out[string(kind)] = entry
	}
	return out, nil
}

// AddNodeTraits adds traits to the node, or replaces all of them.
func (c *Conductor) AddNodeTraits(ctx context.Context, _ string, nodeID string, traits []string, replace bool) error {
	t, err := c.tasks.Acquire(ctx, nodeID, task.AcquireOptions{Purpose: "add node traits", NoDriver: true})
	if err != nil {
		return err
	}
	defer t.Release()
	if replace {
		if _, err := c.store.SetNodeTraits(ctx, t.Node.ID, traits, traitVersion); err != nil {
			return storeErr(err, "set traits of node "+t.Node.UUID)
		}
		return nil
	}
	for _, tr := range traits {
		if _, err := c.store.AddNodeTrait(ctx, t.Node.ID, tr, traitVersion); err != nil {
			return storeErr(err, "add trait to node "+t.Node.UUID)
		}
	}
	return nil
}

// RemoveNodeTraits removes the traits (all of them when traits is nil); a
// trait the node lacks is NodeTraitNotFound, as upstream.
func (c *Conductor) RemoveNodeTraits(ctx context.Context, _ string, nodeID string, traits []string) error {
	t, err := c.tasks.Acquire(ctx, nodeID, task.AcquireOptions{Purpose: "remove node traits", NoDriver: true})
	if err != nil {
		return err
	}
	defer t.Release()
	if traits == nil {
		if err := c.store.UnsetNodeTraits(ctx, t.Node.ID); err != nil {
			return storeErr(err, "remove traits of node "+t.Node.UUID)
		}
		return nil
	}
	for _, tr := range traits {
		err := c.store.DeleteNodeTrait(ctx, t.Node.ID, tr)
		if errors.Is(err, store.ErrNotFound) {
			// Upstream's Trait.destroy raises NodeTraitNotFound (404)
			// naming the node's id: the API checked the trait before the
			// call, so this is a removal that lost a race to another.
			return errs.New(errs.ClassNodeTraitNotFound, map[string]any{"node_id": t.Node.ID, "trait": tr})
		}
		if err != nil {
			return storeErr(err, "remove trait of node "+t.Node.UUID)
		}
	}
	return nil
}

// lookupNode loads a node by id, UUID or name without locking it.
func (c *Conductor) lookupNode(ctx context.Context, ident string) (*model.Node, error) {
	t, err := c.tasks.Acquire(ctx, ident, task.AcquireOptions{Shared: true, NoDriver: true})
	if err != nil {
		return nil, err
	}
	defer t.Release()
	return cloneNode(t.Node), nil
}

// storeErr turns the store's typed errors into Ironic's classes; rec is
// the record written, when the message quotes its values.
func storeErr(err error, what string) error { return storeErrFor(err, what, nil) }

func storeErrFor(err error, what string, rec any) error {
	var nf *store.NotFoundError
	var locked *store.NodeLockedError
	var inval *store.InvalidParameterError
	switch {
	case errors.As(err, &locked):
		return errs.NodeLocked(locked.Node, locked.Host)
	case errors.As(err, &nf):
		if nf.Kind == store.KindNode {
			return errs.NodeNotFound(nf.Ident)
		}
		return errs.NewMessage(errs.ClassNotFound, err.Error())
	case errors.As(err, &inval):
		return errs.InvalidParameterValue(inval.Msg)
	}
	if mapped := store.Ironic(err, rec); mapped != err {
		return mapped
	}
	return fmt.Errorf("%s: %w", what, err)
}

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// cloneNode copies n so the caller does not share maps with a task.
func cloneNode(n *model.Node) *model.Node {
	c := *n
	c.InstanceInfo = cloneMap(n.InstanceInfo)
	c.DriverInfo = cloneMap(n.DriverInfo)
	c.DriverInternalInfo = cloneMap(n.DriverInternalInfo)
	c.Properties = cloneMap(n.Properties)
	c.Extra = cloneMap(n.Extra)
	c.CleanStep = cloneMap(n.CleanStep)
	c.DeployStep = cloneMap(n.DeployStep)
	c.ServiceStep = cloneMap(n.ServiceStep)
	c.RAIDConfig = cloneMap(n.RAIDConfig)
	c.TargetRAIDConfig = cloneMap(n.TargetRAIDConfig)
	c.NetworkData = cloneMap(n.NetworkData)
	return &c
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneAny(v)
	}
	return out
}

func cloneAny(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneAny(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneMap(e)
		}
		return out
	}
	return v
}
