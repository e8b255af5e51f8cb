package conductor

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc/ovo"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// portUpdateAllowedStates are the states in which connectivity attributes
// of ports (and the node of a portgroup) may change.
var portUpdateAllowedStates = []string{states.Enroll, states.Inspecting, states.InspectWait, states.Manageable}

func nodeRef(id *int64) string {
	if id == nil {
		return ""
	}
	return fmt.Sprint(*id)
}

// CreatePort stores a port under a shared lock of its node (upstream
// create_port).
func (c *Conductor) CreatePort(ctx context.Context, _ string, port *model.Port) (*model.Port, error) {
	t, err := c.tasks.Acquire(ctx, nodeRef(port.NodeID), task.AcquireOptions{Shared: true, Purpose: "port create", NoDriver: true})
	if err != nil {
		return nil, err
	}
	defer t.Release()
	if err := c.validatePortPhysnet(ctx, port); err != nil {
		return nil, err
	}
	p := *port
	p.Version = c.objects.Version(ovo.PortClass)
	out, err := c.store.CreatePort(ctx, &p)
	if err != nil {
		return nil, storeErr(err, "create port")
	}
	return out, nil
}

// UpdatePort saves a changed port (upstream update_port): the address of
// an active or associated node's port is fixed outside maintenance, and
// connectivity attributes change only in the allowed states; the network
// interface is told.
func (c *Conductor) UpdatePort(ctx context.Context, _ string, port *model.Port) (*model.Port, error) {
	old, err := c.store.GetPortByID(ctx, port.ID)
	if err != nil {
		return nil, storeErr(err, "load port")
	}
	t, err := c.acquire(ctx, nodeRef(port.NodeID), "port update", false)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	n := t.Node
	if (n.ProvisionState == states.Active || n.InstanceUUID != nil) && !reflect.DeepEqual(old.Address, port.Address) && !n.Maintenance {
		return nil, errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf(
			"Cannot update hardware address for port %s as node %s is active or has instance UUID assigned", port.UUID, n.UUID))
	}
	connectivity := !reflect.DeepEqual(old.PortgroupID, port.PortgroupID) || !reflect.DeepEqual(old.PXEEnabled, port.PXEEnabled) ||
		!reflect.DeepEqual(old.LocalLinkConnection, port.LocalLinkConnection) || !reflect.DeepEqual(old.PhysicalNetwork, port.PhysicalNetwork)
	if connectivity && !containsStr(portUpdateAllowedStates, n.ProvisionState) && !n.Maintenance {
		return nil, errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf(
			"Port %s can not have any connectivity attributes (%s) updated unless node %s is in a %s state or in maintenance mode. The current state is %s.",
			port.UUID, "portgroup_id, pxe_enabled, local_link_connection, physical_network", n.UUID, strings.Join(portUpdateAllowedStates, ", "), n.ProvisionState))
	}
	if !reflect.DeepEqual(old.PortgroupID, port.PortgroupID) || !reflect.DeepEqual(old.PhysicalNetwork, port.PhysicalNetwork) {
		if err := c.validatePortPhysnet(ctx, port); err != nil {
			return nil, err
		}
	}
	dt := t.DriverTask()
	if err := t.Driver.Network.Validate(ctx, dt); err != nil {
		return nil, err
	}
	if err := t.Driver.Network.PortChanged(ctx, dt, port); err != nil {
		return nil, err
	}
	out, err := c.store.UpdatePort(ctx, port)
	if err != nil {
		return nil, storeErr(err, "update port")
	}
	return out, nil
}

// DestroyPort deletes a port unless it is bound to a VIF outside
// maintenance (upstream destroy_port).
func (c *Conductor) DestroyPort(ctx context.Context, _ string, port *model.Port) error {
	t, err := c.acquire(ctx, nodeRef(port.NodeID), "port deletion", false)
	if err != nil {
		return err
	}
	defer t.Release()
	vif, err := t.Driver.Network.GetCurrentVif(ctx, t.DriverTask(), port.InternalInfo)
	if err != nil {
		return err
	}
	if vif != "" && !t.Node.Maintenance {
		return errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf("Cannot delete the port %s as it is bound to VIF %s for use.", port.UUID, vif))
	}
	if err := c.store.DeletePort(ctx, port.ID); err != nil {
		return storeErr(err, "delete port")
	}
	return nil
}

// UpdatePortgroup saves a changed portgroup (upstream update_portgroup).
func (c *Conductor) UpdatePortgroup(ctx context.Context, _ string, pg *model.Portgroup) (*model.Portgroup, error) {
	old, err := c.store.GetPortgroupByID(ctx, pg.ID)
	if err != nil {
		return nil, storeErr(err, "load portgroup")
	}
	t, err := c.acquire(ctx, nodeRef(pg.NodeID), "update portgroup", false)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	n := t.Node
	if !reflect.DeepEqual(old.NodeID, pg.NodeID) {
		if !containsStr(portUpdateAllowedStates, n.ProvisionState) && !n.Maintenance {
			return nil, errs.NewMessage(errs.ClassInvalidState, fmt.Sprintf(
				"Portgroup %s can not be associated to node %s unless the node is in a %s state or in maintenance mode. Current state is '%s'.",
				pg.UUID, n.UUID, strings.Join(portUpdateAllowedStates, ", "), n.ProvisionState))
		}
		id := pg.ID
		ports, err := c.store.ListPorts(ctx, portFilterByGroup(id), listAll())
		if err != nil {
			return nil, fmt.Errorf("list ports of portgroup %s: %w", pg.UUID, err)
		}
		if len(ports) > 0 {
			return nil, errs.NewMessage(errs.ClassPortgroupNotEmpty, fmt.Sprintf(
				"Portgroup %s can not be associated with node %s because there are ports associated with this portgroup.", pg.UUID, n.UUID))
		}
	}
	dt := t.DriverTask()
	if err := t.Driver.Network.Validate(ctx, dt); err != nil {
		return nil, err
	}
	if err := t.Driver.Network.PortgroupChanged(ctx, dt, pg); err != nil {
		return nil, err
	}
	out, err := c.store.UpdatePortgroup(ctx, pg)
	if err != nil {
		return nil, storeErr(err, "update portgroup")
	}
	return out, nil
}

// DestroyPortgroup deletes a portgroup under its node's lock.
func (c *Conductor) DestroyPortgroup(ctx context.Context, _ string, pg *model.Portgroup) error {
	t, err := c.tasks.Acquire(ctx, nodeRef(pg.NodeID), task.AcquireOptions{Purpose: "portgroup deletion", NoDriver: true})
	if err != nil {
		return err
	}
	defer t.Release()
	if err := c.store.DeletePortgroup(ctx, pg.ID); err != nil {
		return storeErr(err, "delete portgroup")
	}
	return nil
}

// UpdatePortgroupPhysicalNetwork sets the physical network of every port
// of the portgroup (upstream update_portgroup_physical_network).
func (c *Conductor) UpdatePortgroupPhysicalNetwork(ctx context.Context, _ string, pg *model.Portgroup, newPhysicalNetwork string) error {
	t, err := c.tasks.Acquire(ctx, nodeRef(pg.NodeID), task.AcquireOptions{Purpose: "update portgroup physical network", NoDriver: true})
	if err != nil {
		return err
	}
	defer t.Release()
	ports, err := c.store.ListPorts(ctx, portFilterByGroup(pg.ID), listAll())
	if err != nil {
		return fmt.Errorf("list ports of portgroup %s: %w", pg.UUID, err)
	}
	var phys *string
	if newPhysicalNetwork != "" {
		phys = &newPhysicalNetwork
	}
	for _, p := range ports {
		p.PhysicalNetwork = phys
		if _, err := c.store.UpdatePort(ctx, p, "physical_network"); err != nil {
			return storeErr(err, "update port")
		}
	}
	return nil
}

// UpdateVolumeConnector saves a volume connector; the node must be off.
func (c *Conductor) UpdateVolumeConnector(ctx context.Context, _ string, vc *model.VolumeConnector) (*model.VolumeConnector, error) {
	t, err := c.tasks.Acquire(ctx, nodeRef(vc.NodeID), task.AcquireOptions{Purpose: "volume connector update", NoDriver: true})
	if err != nil {
		return nil, err
	}
	defer t.Release()
	if t.Node.PowerState != states.PowerOff {
		return nil, errs.InvalidStateRequested("volume connector update", t.Node.UUID, pyNone(t.Node.PowerState))
	}
	out, err := c.store.UpdateVolumeConnector(ctx, vc)
	if err != nil {
		return nil, storeErrFor(err, "update volume connector", vc)
	}
	return out, nil
}

// DestroyVolumeConnector deletes a volume connector.
func (c *Conductor) DestroyVolumeConnector(ctx context.Context, _ string, vc *model.VolumeConnector) error {
	t, err := c.tasks.Acquire(ctx, nodeRef(vc.NodeID), task.AcquireOptions{Purpose: "volume connector deletion", NoDriver: true})
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	if !states.DeleteAllowedStates.Contains(n.ProvisionState) && n.PowerState != states.PowerOff {
		return errs.InvalidStateRequested("volume connector deletion", n.UUID, pyNone(n.PowerState))
	}
	if err := c.store.DeleteVolumeConnector(ctx, vc.ID); err != nil {
		return storeErr(err, "delete volume connector")
	}
	return nil
}

// UpdateVolumeTarget saves a volume target; the node must be off.
func (c *Conductor) UpdateVolumeTarget(ctx context.Context, _ string, vt *model.VolumeTarget) (*model.VolumeTarget, error) {
	t, err := c.tasks.Acquire(ctx, nodeRef(vt.NodeID), task.AcquireOptions{Purpose: "volume target update", NoDriver: true})
	if err != nil {
		return nil, err
	}
	defer t.Release()
	if t.Node.PowerState != states.PowerOff {
		return nil, errs.InvalidStateRequested("volume target update", t.Node.UUID, pyNone(t.Node.PowerState))
	}
	out, err := c.store.UpdateVolumeTarget(ctx, vt)
	if err != nil {
		return nil, storeErrFor(err, "update volume target", vt)
	}
	return out, nil
}

// DestroyVolumeTarget deletes a volume target.
func (c *Conductor) DestroyVolumeTarget(ctx context.Context, _ string, vt *model.VolumeTarget) error {
	t, err := c.tasks.Acquire(ctx, nodeRef(vt.NodeID), task.AcquireOptions{Purpose: "volume target deletion", NoDriver: true})
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	if !states.DeleteAllowedStates.Contains(n.ProvisionState) && n.PowerState != states.PowerOff {
		return errs.InvalidStateRequested("volume target deletion", n.UUID, pyNone(n.PowerState))
	}
	if err := c.store.DeleteVolumeTarget(ctx, vt.ID); err != nil {
		return storeErr(err, "delete volume target")
	}
	return nil
}

func portFilterByGroup(id int64) store.PortFilter { return store.PortFilter{PortgroupID: &id} }

func listAll() store.ListOptions { return store.ListOptions{} }
