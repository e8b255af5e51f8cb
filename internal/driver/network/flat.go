// Package network holds the network interfaces that need no Neutron:
// flat, where every node sits on one shared network and a VIF is only a
// record in the port's internal_info (upstream's
// ironic/drivers/modules/network/{flat,common}.py).
package network

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// TenantVIFKey is the internal_info key holding the attached VIF, as
// upstream; clients and the agent read it.
const TenantVIFKey = "tenant_vif_port_id"

// legacyVIFKey is the extra key older Nova drivers wrote the VIF under;
// upstream still reads and clears it.
const legacyVIFKey = "vif_port_id"

// PortStore is what the interface reads and writes of the node's ports
// and portgroups; store.Store satisfies it.
type PortStore interface {
	GetPortByID(ctx context.Context, id int64) (*model.Port, error)
	ListPorts(ctx context.Context, f store.PortFilter, o store.ListOptions) ([]*model.Port, error)
	UpdatePort(ctx context.Context, p *model.Port, fields ...string) (*model.Port, error)
	GetPortgroupByID(ctx context.Context, id int64) (*model.Portgroup, error)
	ListPortgroups(ctx context.Context, f store.PortgroupFilter, o store.ListOptions) ([]*model.Portgroup, error)
	UpdatePortgroup(ctx context.Context, pg *model.Portgroup, fields ...string) (*model.Portgroup, error)
}

// Flat is the "flat" network interface. This build has no Neutron client,
// so the port binding upstream does on the provisioning, tenant, rescue
// and service networks has nothing to talk to and those hooks succeed
// without doing anything; VIF bookkeeping is as upstream.
type Flat struct {
	Ports PortStore
}

var (
	_ driver.NetworkInterface    = (*Flat)(nil)
	_ driver.RescuingNetworker   = (*Flat)(nil)
	_ driver.InspectionNetworker = (*Flat)(nil)
	_ driver.ServicingNetworker  = (*Flat)(nil)
)

// Register adds flat to r.
func Register(r *driver.Registry, ports PortStore) error {
	if err := r.Register(driver.KindNetwork, "flat", &Flat{Ports: ports}); err != nil {
		return fmt.Errorf("network flat: %w", err)
	}
	return nil
}

// Properties is empty: flat reads nothing from driver_info.
func (*Flat) Properties() map[string]string { return map[string]string{} }

// Steps declares none.
func (*Flat) Steps() []driver.StepSpec { return nil }

// Validate accepts any node: upstream only checks the Neutron cleaning
// network, which does not exist here.
func (f *Flat) Validate(context.Context, *driver.Task) error {
	if f.Ports == nil {
		return errs.NewMessage("InvalidParameterValue", "the flat network interface has no port store configured")
	}
	return nil
}

// portLike is a port or a portgroup, as upstream's port_like_obj.
type portLike struct {
	port *model.Port
	pg   *model.Portgroup
}

func (p portLike) internalInfo() map[string]any {
	if p.pg != nil {
		return p.pg.InternalInfo
	}
	return p.port.InternalInfo
}

func (p portLike) extra() map[string]any {
	if p.pg != nil {
		return p.pg.Extra
	}
	return p.port.Extra
}

func (p portLike) uuid() string {
	if p.pg != nil {
		return p.pg.UUID
	}
	return p.port.UUID
}

func (p portLike) className() string {
	if p.pg != nil {
		return "Portgroup"
	}
	return "Port"
}

// vifID is upstream's _get_vif_id_by_port_like_obj.
func vifID(internalInfo, extra map[string]any) string {
	if s, _ := internalInfo[TenantVIFKey].(string); s != "" {
		return s
	}
	s, _ := extra[legacyVIFKey].(string)
	return s
}

func (f *Flat) load(ctx context.Context, node *model.Node) ([]*model.Port, []*model.Portgroup, error) {
	if f.Ports == nil {
		return nil, nil, errs.NewMessage("InvalidParameterValue", "the flat network interface has no port store configured")
	}
	id := node.ID
	ports, err := f.Ports.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("list ports of node %s: %w", node.UUID, err)
	}
	pgs, err := f.Ports.ListPortgroups(ctx, store.PortgroupFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("list portgroups of node %s: %w", node.UUID, err)
	}
	return ports, pgs, nil
}

// VifList lists the VIFs recorded on the node's ports, then portgroups.
func (f *Flat) VifList(ctx context.Context, task *driver.Task) ([]map[string]any, error) {
	ports, pgs, err := f.load(ctx, task.Node)
	if err != nil {
		return nil, err
	}
	vifs := []map[string]any{}
	for _, p := range ports {
		if id := vifID(p.InternalInfo, p.Extra); id != "" {
			vifs = append(vifs, map[string]any{"id": id})
		}
	}
	for _, pg := range pgs {
		if id := vifID(pg.InternalInfo, pg.Extra); id != "" {
			vifs = append(vifs, map[string]any{"id": id})
		}
	}
	return vifs, nil
}

// attached is upstream's _vif_attached: whether another VIF sits on p,
// failing when vif itself does. Unlike vifID, an empty internal_info value
// hides the legacy extra key, as upstream's dict.get default does.
func attached(p portLike, vif string) (bool, error) {
	cur, ok := p.internalInfo()[TenantVIFKey]
	if !ok {
		cur, ok = p.extra()[legacyVIFKey]
	}
	if ok && cur == vif {
		return false, errs.New("VifAlreadyAttached", map[string]any{"object_type": p.className(), "vif": vif, "object_uuid": p.uuid()})
	}
	return ok && cur != nil, nil
}

// freePortLikes is upstream's _get_free_portgroups_and_ports with no
// physical network constraint (there is no Neutron to give the VIF's).
func freePortLikes(ports []*model.Port, pgs []*model.Portgroup, vif string) ([]portLike, error) {
	var free []portLike
	byGroup := map[int64][]portLike{}
	unusable := map[int64]bool{}
	for _, p := range ports {
		busy, err := attached(portLike{port: p}, vif)
		if err != nil {
			return nil, err
		}
		if busy {
			if p.PortgroupID != nil {
				unusable[*p.PortgroupID] = true
			}
			continue
		}
		if p.PortgroupID == nil {
			free = append(free, portLike{port: p})
		} else {
			byGroup[*p.PortgroupID] = append(byGroup[*p.PortgroupID], portLike{port: p})
		}
	}
	for _, pg := range pgs {
		busy, err := attached(portLike{pg: pg}, vif)
		if err != nil {
			return nil, err
		}
		switch {
		case busy:
		case unusable[pg.ID]:
			free = append(free, byGroup[pg.ID]...)
		case len(byGroup[pg.ID]) > 0:
			free = append(free, portLike{pg: pg})
		}
	}
	return free, nil
}

// VifAttach records the VIF on a free port or portgroup, preferring
// portgroups, then PXE-enabled ports, as upstream.
func (f *Flat) VifAttach(ctx context.Context, task *driver.Task, vifInfo map[string]any) error {
	vif, _ := vifInfo["id"].(string)
	if vif == "" {
		return errs.NewMessage("MissingParameterValue", "VIF information must contain an 'id'")
	}
	ports, pgs, err := f.load(ctx, task.Node)
	if err != nil {
		return err
	}
	free, err := freePortLikes(ports, pgs, vif)
	if err != nil {
		return err
	}
	if len(free) == 0 {
		return errs.New("NoFreePhysicalPorts", map[string]any{"vif": vif})
	}
	rank := func(p portLike) int {
		if p.pg != nil {
			return 2
		}
		if p.port.PXEEnabled == nil || *p.port.PXEEnabled {
			return 1
		}
		return 0
	}
	sort.SliceStable(free, func(i, j int) bool { return rank(free[i]) > rank(free[j]) })
	return f.save(ctx, free[0], func(info, _ map[string]any) { info[TenantVIFKey] = vif })
}

// VifDetach removes the VIF from the port or portgroup holding it.
func (f *Flat) VifDetach(ctx context.Context, task *driver.Task, vif string) error {
	ports, pgs, err := f.load(ctx, task.Node)
	if err != nil {
		return err
	}
	var holder *portLike
	for _, pg := range pgs {
		if vifID(pg.InternalInfo, pg.Extra) == vif {
			holder = &portLike{pg: pg}
			break
		}
	}
	for _, p := range ports {
		if holder == nil && vifID(p.InternalInfo, p.Extra) == vif {
			holder = &portLike{port: p}
		}
	}
	if holder == nil {
		return errs.New("VifNotAttached", map[string]any{"vif": vif, "node": task.Node.UUID})
	}
	return f.save(ctx, *holder, func(info, extra map[string]any) {
		delete(info, TenantVIFKey)
		delete(extra, legacyVIFKey)
	})
}

// save applies change to copies of the object's internal_info and extra
// and writes both.
func (f *Flat) save(ctx context.Context, p portLike, change func(info, extra map[string]any)) error {
	info := cloneMap(p.internalInfo())
	extra := cloneMap(p.extra())
	change(info, extra)
	if p.pg != nil {
		pg := *p.pg
		pg.InternalInfo, pg.Extra = info, extra
		if _, err := f.Ports.UpdatePortgroup(ctx, &pg, "internal_info", "extra"); err != nil {
			return fmt.Errorf("save portgroup %s: %w", pg.UUID, err)
		}
		return nil
	}
	port := *p.port
	port.InternalInfo, port.Extra = info, extra
	if _, err := f.Ports.UpdatePort(ctx, &port, "internal_info", "extra"); err != nil {
		return fmt.Errorf("save port %s: %w", port.UUID, err)
	}
	return nil
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// GetCurrentVif is the VIF the node uses on that port now: a service
// network's while cleaning, provisioning or rescuing, else the tenant's.
func (*Flat) GetCurrentVif(_ context.Context, _ *driver.Task, internalInfo map[string]any) (string, error) {
	for _, k := range []string{"cleaning_vif_port_id", "provisioning_vif_port_id", "rescuing_vif_port_id", TenantVIFKey} {
		if s, _ := internalInfo[k].(string); s != "" {
			return s, nil
		}
	}
	return "", nil
}

// PortChanged refuses, as upstream, a port in a portgroup without
// standalone port support that would be PXE enabled or carry a VIF.
func (f *Flat) PortChanged(ctx context.Context, _ *driver.Task, port *model.Port) error {
	if port.PortgroupID == nil || f.Ports == nil {
		return nil
	}
	vif := vifID(port.InternalInfo, port.Extra)
	changed := true
	if port.ID != 0 {
		if old, err := f.Ports.GetPortByID(ctx, port.ID); err == nil {
			changed = !sameBool(old.PXEEnabled, port.PXEEnabled) || !sameID(old.PortgroupID, port.PortgroupID)
		}
	}
	if !changed && vif == "" {
		return nil
	}
	pg, err := f.Ports.GetPortgroupByID(ctx, *port.PortgroupID)
	if err != nil {
		return fmt.Errorf("portgroup of port %s: %w", port.UUID, err)
	}
	if pg.StandalonePortsSupported == nil || *pg.StandalonePortsSupported {
		return nil
	}
	var reason []string
	if port.PXEEnabled == nil || *port.PXEEnabled {
		reason = append(reason, "'pxe_enabled' was set to True")
	}
	if vif != "" {
		reason = append(reason, "VIF "+vif+" is attached to the port")
	}
	if len(reason) == 0 {
		return nil
	}
	return errs.NewMessage("Conflict", fmt.Sprintf("Port group %s doesn't support standalone ports. This port %s cannot be  a member of that port group because of: %s",
		pg.UUID, port.UUID, strings.Join(reason, ", ")))
}

// PortgroupChanged refuses turning standalone port support off while a
// member port is PXE enabled or carries a VIF.
func (f *Flat) PortgroupChanged(ctx context.Context, task *driver.Task, pg *model.Portgroup) error {
	if f.Ports == nil || pg.StandalonePortsSupported == nil || *pg.StandalonePortsSupported {
		return nil
	}
	if pg.ID != 0 {
		if old, err := f.Ports.GetPortgroupByID(ctx, pg.ID); err == nil && sameBool(old.StandalonePortsSupported, pg.StandalonePortsSupported) {
			return nil
		}
	}
	ports, _, err := f.load(ctx, task.Node)
	if err != nil {
		return err
	}
	for _, p := range ports {
		if p.PortgroupID == nil || *p.PortgroupID != pg.ID {
			continue
		}
		var reason []string
		if p.PXEEnabled == nil || *p.PXEEnabled {
			reason = append(reason, "'pxe_enabled' is set to True")
		}
		if vif := vifID(p.InternalInfo, p.Extra); vif != "" {
			reason = append(reason, "VIF "+vif+" is attached to this port")
		}
		if len(reason) > 0 {
			return errs.NewMessage("Conflict", fmt.Sprintf("standalone_ports_supported can not be set to False, because the port group %s contains port with %s",
				pg.UUID, strings.Join(reason, ", ")))
		}
	}
	return nil
}

func sameBool(a, b *bool) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func sameID(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// The network hooks below bind ports in Neutron upstream; without Neutron
// the node stays on the one flat network and there is nothing to do.

// AddProvisioningNetwork does nothing (no Neutron).
func (*Flat) AddProvisioningNetwork(context.Context, *driver.Task) error { return nil }

// RemoveProvisioningNetwork does nothing (no Neutron).
func (*Flat) RemoveProvisioningNetwork(context.Context, *driver.Task) error { return nil }

// ConfigureTenantNetworks does nothing (no Neutron).
func (*Flat) ConfigureTenantNetworks(context.Context, *driver.Task) error { return nil }

// UnconfigureTenantNetworks does nothing (no Neutron).
func (*Flat) UnconfigureTenantNetworks(context.Context, *driver.Task) error { return nil }

// AddCleaningNetwork does nothing (no Neutron).
func (*Flat) AddCleaningNetwork(context.Context, *driver.Task) error { return nil }

// RemoveCleaningNetwork does nothing (no Neutron).
func (*Flat) RemoveCleaningNetwork(context.Context, *driver.Task) error { return nil }

// ValidateRescue accepts: the rescue ramdisk boots on the flat network.
func (*Flat) ValidateRescue(context.Context, *driver.Task) error { return nil }

// AddRescuingNetwork does nothing (no Neutron).
func (*Flat) AddRescuingNetwork(context.Context, *driver.Task) error { return nil }

// RemoveRescuingNetwork does nothing (no Neutron).
func (*Flat) RemoveRescuingNetwork(context.Context, *driver.Task) error { return nil }

// AddInspectionNetwork does nothing (no Neutron).
func (*Flat) AddInspectionNetwork(context.Context, *driver.Task) error { return nil }

// RemoveInspectionNetwork does nothing (no Neutron).
func (*Flat) RemoveInspectionNetwork(context.Context, *driver.Task) error { return nil }

// AddServicingNetwork does nothing (no Neutron).
func (*Flat) AddServicingNetwork(context.Context, *driver.Task) error { return nil }

// RemoveServicingNetwork does nothing (no Neutron).
func (*Flat) RemoveServicingNetwork(context.Context, *driver.Task) error { return nil }
