// Package network holds the flat and neutron network interfaces
// (upstream's ironic/drivers/modules/network/{flat,neutron,common}.py).
// Both record VIFs in the port's internal_info; with a Neutron client
// they also bind the VIFs' Neutron ports to the node and create ports on
// the service networks, as upstream. Flat without Neutron is the
// standalone case: one shared network and nothing to bind.
package network

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
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
	// CreatePortgroup and DeletePortgroup make and remove the dynamic
	// portgroups of trait-based networking.
	CreatePortgroup(ctx context.Context, pg *model.Portgroup) (*model.Portgroup, error)
	DeletePortgroup(ctx context.Context, id int64) error
}

// Flat is the "flat" network interface. With Neutron set it binds the
// tenant VIFs on the shared network and plugs the node into the cleaning
// and inspection networks as upstream; without it (standalone) there is
// nothing to bind and those hooks succeed doing nothing.
type Flat struct {
	Ports   PortStore
	Neutron *NeutronOptions
	// TBN, when set, lets the node's traits choose the ports a VIF is
	// attached to ([conductor]/enable_trait_based_networking).
	TBN *TraitBased
}

var (
	_ driver.NetworkInterface    = (*Flat)(nil)
	_ driver.RescuingNetworker   = (*Flat)(nil)
	_ driver.InspectionNetworker = (*Flat)(nil)
	_ driver.ServicingNetworker  = (*Flat)(nil)
)

// Register adds flat to r; neutron may be nil (standalone), and so may
// traitBased (trait-based networking disabled).
func Register(r *driver.Registry, ports PortStore, neutron *NeutronOptions, traitBased *TraitBased) error {
	if err := r.Register(driver.KindNetwork, "flat", &Flat{Ports: ports, Neutron: neutron, TBN: traitBased}); err != nil {
		return fmt.Errorf("network flat: %w", err)
	}
	return nil
}

// Properties is empty: flat reads nothing from driver_info.
func (*Flat) Properties() map[string]string { return map[string]string{} }

// Steps declares none.
func (*Flat) Steps() []driver.StepSpec { return nil }

// Validate checks the cleaning network when there is a Neutron, as
// upstream; standalone there is none to check.
func (f *Flat) Validate(ctx context.Context, task *driver.Task) error {
	if f.Ports == nil {
		return errs.NewMessage(errs.ClassInvalidParameterValue, "the flat network interface has no port store configured")
	}
	if f.Neutron == nil {
		return nil
	}
	_, err := f.Neutron.networkUUID(ctx, task.Node, cleaningNet)
	return err
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

func (p portLike) address() string {
	if p.pg != nil {
		return deref(p.pg.Address)
	}
	return deref(p.port.Address)
}

func (p portLike) physicalNetwork() string {
	if p.pg != nil {
		return deref(p.pg.PhysicalNetwork)
	}
	return deref(p.port.PhysicalNetwork)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
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
		return nil, nil, errs.NewMessage(errs.ClassInvalidParameterValue, "the flat network interface has no port store configured")
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
		return false, errs.New(errs.ClassVifAlreadyAttached, map[string]any{"object_type": p.className(), "vif": vif, "object_uuid": p.uuid()})
	}
	return ok && cur != nil, nil
}

// freePortLikes is upstream's _get_free_portgroups_and_ports: physnets
// are the VIF's physical networks (none: any port), usable is
// validate_port_info, and vif_info's port_uuid or portgroup_uuid narrows
// the choice to that object. As upstream, a port_uuid naming a member of
// a portgroup leaves nothing to choose.
func freePortLikes(ports []*model.Port, pgs []*model.Portgroup, vif string, physnets []string, usable func(*model.Port) bool, vifInfo map[string]any) ([]portLike, error) {
	portUUID, _ := vifInfo["port_uuid"].(string)
	pgUUID := ""
	if portUUID == "" {
		pgUUID, _ = vifInfo["portgroup_uuid"].(string)
	}
	var free []portLike
	byGroup := map[int64][]portLike{}
	unusable := map[int64]bool{}
	for _, p := range ports {
		if (portUUID != "" && portUUID != p.UUID) || (usable != nil && !usable(p)) {
			continue
		}
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
		if len(physnets) > 0 && p.PhysicalNetwork != nil && !slices.Contains(physnets, *p.PhysicalNetwork) {
			continue
		}
		switch {
		case p.PortgroupID == nil && pgUUID == "":
			free = append(free, portLike{port: p})
		case p.PortgroupID != nil:
			byGroup[*p.PortgroupID] = append(byGroup[*p.PortgroupID], portLike{port: p})
		}
	}
	if portUUID != "" {
		return free, nil
	}
	for _, pg := range pgs {
		if pgUUID != "" && pgUUID != pg.UUID {
			continue
		}
		busy, err := attached(portLike{pg: pg}, vif)
		if err != nil {
			return nil, err
		}
		switch {
		case busy:
		case unusable[pg.ID]:
			if pgUUID == "" {
				free = append(free, byGroup[pg.ID]...)
			}
		case len(byGroup[pg.ID]) > 0:
			free = append(free, portLike{pg: pg})
		}
	}
	return free, nil
}

// VifAttach records the VIF on a free port or portgroup, preferring one
// on the VIF's physical network, then portgroups, then PXE-enabled ports,
// as upstream. With Neutron, the Neutron port's MAC is set to the
// physical one and the port is bound to the node (fully when the node is
// active, else with only a host id so Neutron can allocate addresses).
func (f *Flat) VifAttach(ctx context.Context, task *driver.Task, vifInfo map[string]any) error {
	vif, _ := vifInfo["id"].(string)
	if vif == "" {
		return errs.NewMessage(errs.ClassMissingParameterValue, "VIF information must contain an 'id'")
	}
	if f.TBN != nil {
		return f.vifAttachTBN(ctx, task, vifInfo, vif)
	}
	ports, pgs, err := f.load(ctx, task.Node)
	if err != nil {
		return err
	}
	var physnets []string
	var usable func(*model.Port) bool
	if f.Neutron != nil {
		if physnets, err = f.Neutron.physnets(ctx, vif); err != nil {
			return err
		}
		usable = func(p *model.Port) bool { return f.Neutron.validPortInfo(task, p) }
	}
	free, err := freePortLikes(ports, pgs, vif, physnets, usable, vifInfo)
	if err != nil {
		return err
	}
	if len(free) == 0 {
		return errs.New(errs.ClassNoFreePhysicalPorts, map[string]any{"vif": vif})
	}
	rank := func(p portLike) int {
		r := 0
		if p.pg != nil {
			r = 2
		} else if p.port.PXEEnabled == nil || *p.port.PXEEnabled {
			r = 1
		}
		if slices.Contains(physnets, p.physicalNetwork()) {
			r += 4
		}
		return r
	}
	sort.SliceStable(free, func(i, j int) bool { return rank(free[i]) > rank(free[j]) })
	return f.attachPortLike(ctx, task, free[0], vif, ports)
}

// attachPortLike records the VIF on the chosen port or portgroup and,
// with Neutron, gives the Neutron port its MAC and binds it (upstream's
// _attach_port_to_vif); ports are the node's, for binding a portgroup.
func (f *Flat) attachPortLike(ctx context.Context, task *driver.Task, chosen portLike, vif string, ports []*model.Port) error {
	if f.Neutron == nil {
		return f.save(ctx, chosen, func(info, _ map[string]any) { info[TenantVIFKey] = vif })
	}
	if mac := chosen.address(); mac != "" {
		if err := f.Neutron.updatePortAddress(ctx, task, vif, mac); err != nil {
			return errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("Unable to attach VIF %s because Ironic can not update Neutron port %s MAC address to match physical MAC address %s", vif, vif, mac))
		}
	}
	if err := f.save(ctx, chosen, func(info, _ map[string]any) { info[TenantVIFKey] = vif }); err != nil {
		return err
	}
	if task.Node.ProvisionState == states.Active {
		chosen.internalInfo()[TenantVIFKey] = vif
		return f.Neutron.plugTenant(ctx, task, chosen, ports)
	}
	return f.Neutron.seedHostID(ctx, task, vif)
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
		return errs.New(errs.ClassVifNotAttached, map[string]any{"vif": vif, "node": task.Node.UUID})
	}
	if err := f.save(ctx, *holder, func(info, extra map[string]any) {
		delete(info, TenantVIFKey)
		delete(extra, legacyVIFKey)
	}); err != nil {
		return err
	}
	if holder.pg != nil && holder.pg.DynamicPortgroup != nil && *holder.pg.DynamicPortgroup {
		if err := f.teardownDynamicPortgroup(ctx, holder.pg, ports); err != nil {
			return err
		}
	}
	// Nova deletes the Neutron port itself; Ironic unbinds it where the
	// node may still be using it.
	if f.Neutron != nil && slices.Contains([]string{states.Active, states.Deleting, states.Available}, task.Node.ProvisionState) {
		return f.Neutron.unbind(ctx, task, vif, true, true)
	}
	return nil
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
	return currentVIF(internalInfo), nil
}

// PortChanged refuses, as upstream, a port in a portgroup without
// standalone port support that would be PXE enabled or carry a VIF.
func (f *Flat) PortChanged(ctx context.Context, task *driver.Task, port *model.Port) error {
	if f.Ports == nil {
		return nil
	}
	if err := f.portChangedInNeutron(ctx, task, port); err != nil {
		return err
	}
	if port.PortgroupID == nil {
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
	return errs.NewMessage(errs.ClassConflict, fmt.Sprintf("Port group %s doesn't support standalone ports. This port %s cannot be  a member of that port group because of: %s",
		pg.UUID, port.UUID, strings.Join(reason, ", ")))
}

// PortgroupChanged refuses turning standalone port support off while a
// member port is PXE enabled or carries a VIF.
func (f *Flat) PortgroupChanged(ctx context.Context, task *driver.Task, pg *model.Portgroup) error {
	if f.Ports == nil {
		return nil
	}
	// The bond's MAC follows to its VIF; a removed address leaves the
	// Neutron port alone, as upstream.
	if f.Neutron != nil && pg.ID != 0 && deref(pg.Address) != "" {
		if old, err := f.Ports.GetPortgroupByID(ctx, pg.ID); err == nil && deref(old.Address) != deref(pg.Address) {
			if vif := vifID(pg.InternalInfo, pg.Extra); vif != "" {
				if err := f.Neutron.updatePortAddress(ctx, task, vif, *pg.Address); err != nil {
					task.Logger().Error("failed to update the neutron port MAC", "portgroup", pg.UUID, "vif", vif, "error", err)
					return errs.New(errs.ClassFailedToUpdateMacOnPort, map[string]any{"port_id": vif})
				}
			}
		}
	}
	if pg.StandalonePortsSupported == nil || *pg.StandalonePortsSupported {
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
			return errs.NewMessage(errs.ClassConflict, fmt.Sprintf("standalone_ports_supported can not be set to False, because the port group %s contains port with %s",
				pg.UUID, strings.Join(reason, ", ")))
		}
	}
	return nil
}

// portChangedInNeutron carries a port's new MAC and DHCP client id to its
// VIF, as upstream's NeutronVIFPortIDMixin.port_changed does before its
// portgroup checks.
func (f *Flat) portChangedInNeutron(ctx context.Context, task *driver.Task, port *model.Port) error {
	if f.Neutron == nil || port.ID == 0 {
		return nil
	}
	old, err := f.Ports.GetPortByID(ctx, port.ID)
	if err != nil {
		return fmt.Errorf("port %s before the change: %w", port.UUID, err)
	}
	vif := vifID(port.InternalInfo, port.Extra)
	if deref(old.Address) != deref(port.Address) && vif != "" {
		if err := f.Neutron.updatePortAddress(ctx, task, vif, deref(port.Address)); err != nil {
			task.Logger().Error("failed to update the neutron port MAC", "port", port.UUID, "vif", vif, "error", err)
			return errs.New(errs.ClassFailedToUpdateMacOnPort, map[string]any{"port_id": vif})
		}
	}
	oldClient, _ := old.Extra["client-id"].(string)
	newClient, _ := port.Extra["client-id"].(string)
	if oldClient == newClient {
		return nil
	}
	if vif == "" {
		if task.Node.InstanceUUID != nil && *task.Node.InstanceUUID != "" {
			task.Logger().Warn("no VIF found for the instance's port when updating its client-id", "port", port.UUID, "instance", *task.Node.InstanceUUID)
		}
		return nil
	}
	// A null value removes the option from the Neutron port.
	opt := map[string]any{"opt_name": "client-id", "opt_value": nullable(newClient)}
	if _, err := f.Neutron.updatePort(ctx, vif, map[string]any{"extra_dhcp_opts": []any{opt}}, true); err != nil {
		task.Logger().Error("failed to update DHCP options on the neutron port", "port", port.UUID, "vif", vif, "error", err)
		return errs.New(errs.ClassFailedToUpdateDHCPOptOnPort, map[string]any{"port_id": vif})
	}
	return nil
}

func sameBool(a, b *bool) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func sameID(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// The hooks below bind the VIFs' Neutron ports to the node on the one
// shared network, and plug the node into the cleaning and inspection
// networks, as upstream; standalone there is nothing to do.

// AddProvisioningNetwork binds the VIFs: the ramdisk boots on the flat
// network.
func (f *Flat) AddProvisioningNetwork(ctx context.Context, task *driver.Task) error {
	return f.bindFlatPorts(ctx, task)
}

// RemoveProvisioningNetwork unbinds them.
func (f *Flat) RemoveProvisioningNetwork(ctx context.Context, task *driver.Task) error {
	return f.unbindFlatPorts(ctx, task)
}

// ConfigureTenantNetworks binds the VIFs.
func (f *Flat) ConfigureTenantNetworks(ctx context.Context, task *driver.Task) error {
	return f.bindFlatPorts(ctx, task)
}

// UnconfigureTenantNetworks unbinds the VIFs, so a port is never bound to
// the tenant and the cleaning network at once.
func (f *Flat) UnconfigureTenantNetworks(ctx context.Context, task *driver.Task) error {
	return f.unbindFlatPorts(ctx, task)
}

// AddCleaningNetwork plugs the node into [neutron]/cleaning_network.
func (f *Flat) AddCleaningNetwork(ctx context.Context, task *driver.Task) error {
	return f.addServiceNetwork(ctx, task, cleaningNet)
}

// RemoveCleaningNetwork unplugs it.
func (f *Flat) RemoveCleaningNetwork(ctx context.Context, task *driver.Task) error {
	return f.removeServiceNetwork(ctx, task, cleaningNet)
}

// ValidateRescue accepts: the rescue ramdisk boots on the flat network.
func (*Flat) ValidateRescue(context.Context, *driver.Task) error { return nil }

// AddRescuingNetwork binds the VIFs again, as unconfiguring the tenant
// network unbound them.
func (f *Flat) AddRescuingNetwork(ctx context.Context, task *driver.Task) error {
	return f.bindFlatPorts(ctx, task)
}

// RemoveRescuingNetwork unbinds them.
func (f *Flat) RemoveRescuingNetwork(ctx context.Context, task *driver.Task) error {
	return f.unbindFlatPorts(ctx, task)
}

// AddInspectionNetwork plugs the node into [neutron]/inspection_network.
func (f *Flat) AddInspectionNetwork(ctx context.Context, task *driver.Task) error {
	return f.addServiceNetwork(ctx, task, inspectionNet)
}

// RemoveInspectionNetwork unplugs it.
func (f *Flat) RemoveInspectionNetwork(ctx context.Context, task *driver.Task) error {
	return f.removeServiceNetwork(ctx, task, inspectionNet)
}

// AddServicingNetwork binds the VIFs again, as for rescue.
func (f *Flat) AddServicingNetwork(ctx context.Context, task *driver.Task) error {
	return f.bindFlatPorts(ctx, task)
}

// RemoveServicingNetwork unbinds them.
func (f *Flat) RemoveServicingNetwork(ctx context.Context, task *driver.Task) error {
	return f.unbindFlatPorts(ctx, task)
}

// addServiceNetwork is upstream's _add_service_network: the flat
// interface plugs into a service network without security groups, and
// standalone it has none to plug into.
func (f *Flat) addServiceNetwork(ctx context.Context, task *driver.Task, s serviceNet) error {
	if f.Neutron == nil {
		return nil
	}
	return f.Neutron.addNetwork(ctx, task, f, s, nil)
}

// removeServiceNetwork is upstream's _remove_service_network.
func (f *Flat) removeServiceNetwork(ctx context.Context, task *driver.Task, s serviceNet) error {
	if f.Neutron == nil {
		return nil
	}
	return f.Neutron.removeNetwork(ctx, task, f, s)
}

// bindFlatPorts is upstream's _bind_flat_ports: every port or portgroup
// with a VIF gets its Neutron port bound to the node with its MAC.
func (f *Flat) bindFlatPorts(ctx context.Context, task *driver.Task) error {
	if f.Neutron == nil {
		return nil
	}
	ports, pgs, err := f.load(ctx, task.Node)
	if err != nil {
		return err
	}
	all := make([]portLike, 0, len(ports)+len(pgs))
	for _, p := range ports {
		all = append(all, portLike{port: p})
	}
	for _, pg := range pgs {
		all = append(all, portLike{pg: pg})
	}
	bound := 0
	for _, p := range all {
		vif := vifID(p.internalInfo(), p.extra())
		if vif == "" {
			continue
		}
		attrs := map[string]any{"binding:host_id": task.Node.UUID, "binding:vnic_type": vnicBaremetal, "mac_address": nullable(p.address())}
		if _, err := f.Neutron.updatePort(ctx, vif, attrs, true); err != nil {
			return netErr(err, fmt.Sprintf("Unable to set binding:host_id for neutron port %s. Error: %v", vif, err))
		}
		bound++
	}
	if bound == 0 {
		return errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("Failed to bind any flat network ports for node %s", task.Node.UUID))
	}
	return nil
}

// unbindFlatPorts is upstream's _unbind_flat_ports.
func (f *Flat) unbindFlatPorts(ctx context.Context, task *driver.Task) error {
	if f.Neutron == nil {
		return nil
	}
	ports, pgs, err := f.load(ctx, task.Node)
	if err != nil {
		return err
	}
	for _, p := range standalone(ports, pgs) {
		if vif := vifID(p.internalInfo(), p.extra()); vif != "" {
			if err := f.Neutron.unbind(ctx, task, vif, true, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// standalone is the ports outside portgroups, then the portgroups.
func standalone(ports []*model.Port, pgs []*model.Portgroup) []portLike {
	var out []portLike
	for _, p := range ports {
		if p.PortgroupID == nil {
			out = append(out, portLike{port: p})
		}
	}
	for _, pg := range pgs {
		out = append(out, portLike{pg: pg})
	}
	return out
}

// nullable is JSON null for an empty string, as Python's None.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
