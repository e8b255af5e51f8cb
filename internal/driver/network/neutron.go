package network

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/neutron"
)

// NeutronNetworks names the service networks ([neutron]/*_network), by
// UUID or name.
type NeutronNetworks struct {
	Provisioning, Cleaning, Rescuing, Inspection, Servicing string
}

// Neutron is the "neutron" network interface: VIF bookkeeping as flat,
// plus binding the node's ports to Neutron ports on the service networks
// and to the tenant's VIFs (upstream's network/neutron.py).
type Neutron struct {
	Flat
	Client   *neutron.Client
	Networks NeutronNetworks
	// AddAllPorts is [neutron]/add_all_ports: also plug ports that are not
	// PXE enabled (without an IP address).
	AddAllPorts bool
}

var (
	_ driver.NetworkInterface    = (*Neutron)(nil)
	_ driver.RescuingNetworker   = (*Neutron)(nil)
	_ driver.InspectionNetworker = (*Neutron)(nil)
	_ driver.ServicingNetworker  = (*Neutron)(nil)
)

// RegisterNeutron adds neutron to r.
func RegisterNeutron(r *driver.Registry, n *Neutron) error {
	if err := r.Register(driver.KindNetwork, "neutron", n); err != nil {
		return fmt.Errorf("network neutron: %w", err)
	}
	return nil
}

// serviceNet describes one service network: its option, its name in
// messages and the internal_info key of the ports created on it.
type serviceNet struct {
	option, label, key string
}

var (
	provisioningNet = serviceNet{"provisioning_network", "provisioning network", "provisioning_vif_port_id"}
	cleaningNet     = serviceNet{"cleaning_network", "cleaning network", "cleaning_vif_port_id"}
	rescuingNet     = serviceNet{"rescuing_network", "rescuing network", "rescuing_vif_port_id"}
	inspectionNet   = serviceNet{"inspection_network", "inspection network", "inspection_vif_port_id"}
	servicingNet    = serviceNet{"servicing_network", "servicing network", "servicing_vif_port_id"}
)

func (n *Neutron) configured(s serviceNet) string {
	switch s {
	case provisioningNet:
		return n.Networks.Provisioning
	case cleaningNet:
		return n.Networks.Cleaning
	case rescuingNet:
		return n.Networks.Rescuing
	case inspectionNet:
		return n.Networks.Inspection
	default:
		return n.Networks.Servicing
	}
}

// networkUUID is upstream's validate_network: the node's driver_info
// overrides the configuration, and the network must exist exactly once.
func (n *Neutron) networkUUID(ctx context.Context, node *model.Node, s serviceNet) (string, error) {
	want, _ := node.DriverInfo[s.option].(string)
	if want == "" {
		want = n.configured(s)
	}
	if want == "" {
		return "", errs.NewMessage("MissingParameterValue", fmt.Sprintf("UUID or name of %s is not set in configuration or in node driver_info.", s.label))
	}
	if n.Client == nil {
		return "", errs.NewMessage("NetworkError", "Could not retrieve network list: no Neutron client configured")
	}
	q := url.Values{"fields": {"id"}}
	if _, err := uuid.Parse(want); err == nil {
		q.Set("id", want)
	} else {
		q.Set("name", want)
	}
	nets, err := n.Client.ListNetworks(ctx, q)
	if err != nil {
		return "", errs.NewMessage("NetworkError", fmt.Sprintf("Could not retrieve network list: %v", err))
	}
	switch len(nets) {
	case 0:
		return "", errs.NewMessage("InvalidParameterValue", fmt.Sprintf("%s with name or UUID %s was not found", s.label, want))
	case 1:
		return nets[0].ID(), nil
	}
	ids := make([]string, len(nets))
	for i, net := range nets {
		ids[i] = net.ID()
	}
	return "", errs.NewMessage("InvalidParameterValue", fmt.Sprintf("More than one %s was found for name %s: %s", s.label, want, strings.Join(ids, ", ")))
}

// Validate checks the cleaning and provisioning networks, as upstream.
func (n *Neutron) Validate(ctx context.Context, task *driver.Task) error {
	if err := n.Flat.Validate(ctx, task); err != nil {
		return err
	}
	for _, s := range []serviceNet{cleaningNet, provisioningNet} {
		if _, err := n.networkUUID(ctx, task.Node, s); err != nil {
			return err
		}
	}
	return nil
}

// ValidateRescue checks the rescuing network.
func (n *Neutron) ValidateRescue(ctx context.Context, task *driver.Task) error {
	_, err := n.networkUUID(ctx, task.Node, rescuingNet)
	return err
}

func (n *Neutron) portsToPlug(ports []*model.Port) []*model.Port {
	if n.AddAllPorts {
		return ports
	}
	var out []*model.Port
	for _, p := range ports {
		if p.PXEEnabled == nil || *p.PXEEnabled {
			out = append(out, p)
		}
	}
	return out
}

func deviceID(node *model.Node) string {
	if node.InstanceUUID != nil && *node.InstanceUUID != "" {
		return *node.InstanceUUID
	}
	return node.UUID
}

func address(p *model.Port) string {
	if p.Address == nil {
		return ""
	}
	return *p.Address
}

// addNetwork is upstream's rollback_ports + add_ports_to_network, then
// records each Neutron port id under s.key in its ironic port.
func (n *Neutron) addNetwork(ctx context.Context, task *driver.Task, s serviceNet) error {
	node := task.Node
	netID, err := n.networkUUID(ctx, node, s)
	if err != nil {
		return err
	}
	ports, _, err := n.load(ctx, node)
	if err != nil {
		return err
	}
	// Ports left over from an earlier attempt would clash on the MAC.
	if err := n.removePorts(ctx, node, ports, netID); err != nil {
		task.Logger().Warn("failed to roll back neutron ports", "node", node.UUID, "network", netID, "error", err)
	}
	toPlug := n.portsToPlug(ports)
	if len(toPlug) == 0 {
		enabled := "PXE-enabled "
		if n.AddAllPorts {
			enabled = ""
		}
		return errs.NewMessage("NetworkError", fmt.Sprintf("No available %sports on node %s.", enabled, node.UUID))
	}
	var failures []string
	for _, p := range toPlug {
		client, _ := p.Extra["client-id"].(string)
		if client == "" && len(p.LocalLinkConnection) == 0 {
			task.Logger().Warn("local_link_connection is required by the neutron network interface", "node", node.UUID, "port", p.UUID)
			failures = append(failures, p.UUID)
			continue
		}
		id, err := n.plug(ctx, node, p, netID, client)
		if err != nil {
			task.Logger().Warn("could not create neutron port", "node", node.UUID, "port", p.UUID, "network", netID, "error", err)
			failures = append(failures, p.UUID)
			continue
		}
		if err := n.save(ctx, portLike{port: p}, func(info, _ map[string]any) { info[s.key] = id }); err != nil {
			return err
		}
	}
	if len(failures) > 0 && len(failures) == len(toPlug) {
		if err := n.removePorts(ctx, node, ports, netID); err != nil {
			task.Logger().Warn("failed to roll back neutron ports", "node", node.UUID, "network", netID, "error", err)
		}
		return errs.NewMessage("NetworkError", fmt.Sprintf("Failed to create neutron ports for node's %s ports %s.", node.UUID, strings.Join(failures, ", ")))
	}
	return nil
}

// plug creates the Neutron port, then sets the admin-only binding fields,
// as upstream does in two calls.
func (n *Neutron) plug(ctx context.Context, node *model.Node, p *model.Port, netID, clientID string) (string, error) {
	attrs := map[string]any{
		"network_id": netID, "admin_state_up": true,
		"binding:vnic_type": "baremetal", "device_id": deviceID(node),
	}
	if p.PXEEnabled != nil && !*p.PXEEnabled {
		attrs["fixed_ips"] = []any{}
	}
	if clientID != "" {
		attrs["extra_dhcp_opts"] = []any{map[string]any{"opt_name": "client-id", "opt_value": clientID}}
	}
	created, err := n.Client.CreatePort(ctx, attrs)
	if err != nil {
		return "", fmt.Errorf("create port: %w", err)
	}
	update := map[string]any{
		"binding:host_id": node.UUID, "device_owner": "baremetal:none",
		"mac_address":     address(p),
		"binding:profile": map[string]any{"local_link_information": []any{p.LocalLinkConnection}},
	}
	if _, err := n.Client.UpdatePort(ctx, created.ID(), update); err != nil {
		return created.ID(), fmt.Errorf("bind port %s: %w", created.ID(), err)
	}
	return created.ID(), nil
}

// removePorts is upstream's remove_ports_from_network: delete the Neutron
// ports on netID carrying the plugged ports' MACs.
func (n *Neutron) removePorts(ctx context.Context, node *model.Node, ports []*model.Port, netID string) error {
	var macs []string
	for _, p := range n.portsToPlug(ports) {
		if a := address(p); a != "" {
			macs = append(macs, a)
		}
	}
	if len(macs) == 0 {
		return nil
	}
	found, err := n.Client.ListPorts(ctx, url.Values{"network_id": {netID}, "mac_address": macs})
	if err != nil {
		return errs.NewMessage("NetworkError", fmt.Sprintf("Could not get given network VIF for %s from neutron, possible network issue. %v", node.UUID, err))
	}
	for _, np := range found {
		if err := n.Client.DeletePort(ctx, np.ID()); err != nil && !neutron.IsNotFound(err) {
			return errs.NewMessage("NetworkError", fmt.Sprintf("Could not remove VIF %s of node %s, possibly a network issue: %v", np.ID(), node.UUID, err))
		}
	}
	return nil
}

// removeNetwork deletes the ports created by addNetwork and forgets them.
func (n *Neutron) removeNetwork(ctx context.Context, task *driver.Task, s serviceNet) error {
	netID, err := n.networkUUID(ctx, task.Node, s)
	if err != nil {
		return err
	}
	ports, _, err := n.load(ctx, task.Node)
	if err != nil {
		return err
	}
	if err := n.removePorts(ctx, task.Node, ports, netID); err != nil {
		return err
	}
	for _, p := range ports {
		if _, ok := p.InternalInfo[s.key]; ok {
			if err := n.save(ctx, portLike{port: p}, func(info, _ map[string]any) { delete(info, s.key) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// AddProvisioningNetwork plugs the node into the provisioning network.
func (n *Neutron) AddProvisioningNetwork(ctx context.Context, task *driver.Task) error {
	return n.addNetwork(ctx, task, provisioningNet)
}

// RemoveProvisioningNetwork unplugs it.
func (n *Neutron) RemoveProvisioningNetwork(ctx context.Context, task *driver.Task) error {
	return n.removeNetwork(ctx, task, provisioningNet)
}

// AddCleaningNetwork plugs the node into the cleaning network.
func (n *Neutron) AddCleaningNetwork(ctx context.Context, task *driver.Task) error {
	return n.addNetwork(ctx, task, cleaningNet)
}

// RemoveCleaningNetwork unplugs it.
func (n *Neutron) RemoveCleaningNetwork(ctx context.Context, task *driver.Task) error {
	return n.removeNetwork(ctx, task, cleaningNet)
}

// AddRescuingNetwork plugs the node into the rescuing network.
func (n *Neutron) AddRescuingNetwork(ctx context.Context, task *driver.Task) error {
	return n.addNetwork(ctx, task, rescuingNet)
}

// RemoveRescuingNetwork unplugs it.
func (n *Neutron) RemoveRescuingNetwork(ctx context.Context, task *driver.Task) error {
	return n.removeNetwork(ctx, task, rescuingNet)
}

// AddInspectionNetwork plugs the node into the inspection network.
func (n *Neutron) AddInspectionNetwork(ctx context.Context, task *driver.Task) error {
	return n.addNetwork(ctx, task, inspectionNet)
}

// RemoveInspectionNetwork unplugs it.
func (n *Neutron) RemoveInspectionNetwork(ctx context.Context, task *driver.Task) error {
	return n.removeNetwork(ctx, task, inspectionNet)
}

// AddServicingNetwork plugs the node into the servicing network.
func (n *Neutron) AddServicingNetwork(ctx context.Context, task *driver.Task) error {
	return n.addNetwork(ctx, task, servicingNet)
}

// RemoveServicingNetwork unplugs it.
func (n *Neutron) RemoveServicingNetwork(ctx context.Context, task *driver.Task) error {
	return n.removeNetwork(ctx, task, servicingNet)
}

// tenantVIFs pairs each standalone port and portgroup carrying a VIF with
// the switch ports it sits on.
func (n *Neutron) tenantVIFs(ctx context.Context, node *model.Node) ([]tenantVIF, error) {
	ports, pgs, err := n.load(ctx, node)
	if err != nil {
		return nil, err
	}
	if len(ports) == 0 {
		return nil, errs.NewMessage("NetworkError", fmt.Sprintf("No ports are associated with node %s", node.UUID))
	}
	var vifs []tenantVIF
	for _, p := range ports {
		if p.PortgroupID != nil {
			continue
		}
		if id := vifID(p.InternalInfo, p.Extra); id != "" {
			v := tenantVIF{id: id, links: []any{p.LocalLinkConnection}}
			v.clientID, _ = p.Extra["client-id"].(string)
			vifs = append(vifs, v)
		}
	}
	for _, pg := range pgs {
		id := vifID(pg.InternalInfo, pg.Extra)
		if id == "" {
			continue
		}
		v := tenantVIF{id: id, links: []any{}}
		for _, p := range ports {
			if p.PortgroupID != nil && *p.PortgroupID == pg.ID {
				v.links = append(v.links, p.LocalLinkConnection)
			}
		}
		vifs = append(vifs, v)
	}
	return vifs, nil
}

type tenantVIF struct {
	id, clientID string
	links        []any
}

// ConfigureTenantNetworks binds every tenant VIF to the node.
func (n *Neutron) ConfigureTenantNetworks(ctx context.Context, task *driver.Task) error {
	node := task.Node
	vifs, err := n.tenantVIFs(ctx, node)
	if err != nil {
		return err
	}
	if len(vifs) == 0 {
		return errs.NewMessage("NetworkError", fmt.Sprintf("No neutron ports or portgroups are associated with node %s", node.UUID))
	}
	if n.Client == nil {
		return errs.NewMessage("NetworkError", "no Neutron client configured")
	}
	for _, v := range vifs {
		body := map[string]any{
			"device_owner": "baremetal:none", "device_id": deviceID(node),
			"admin_state_up": true, "binding:vnic_type": "baremetal",
			"binding:host_id": node.UUID,
			"binding:profile": map[string]any{"local_link_information": v.links},
		}
		if v.clientID != "" {
			body["extra_dhcp_opts"] = []any{map[string]any{"opt_name": "client-id", "opt_value": v.clientID}}
		}
		if _, err := n.Client.UpdatePort(ctx, v.id, body); err != nil {
			return errs.NewMessage("NetworkError", fmt.Sprintf("Could not add public network VIF %s to node %s, possible network issue. %v", v.id, node.UUID, err))
		}
	}
	return nil
}

// UnconfigureTenantNetworks unbinds the tenant VIFs from the node so the
// ports are not bound to the tenant and a service network at once; the
// VIFs themselves stay attached.
func (n *Neutron) UnconfigureTenantNetworks(ctx context.Context, task *driver.Task) error {
	vifs, err := n.tenantVIFs(ctx, task.Node)
	if err != nil {
		return err
	}
	if len(vifs) > 0 && n.Client == nil {
		return errs.NewMessage("NetworkError", "no Neutron client configured")
	}
	for _, v := range vifs {
		_, err := n.Client.UpdatePort(ctx, v.id, map[string]any{"binding:host_id": "", "binding:profile": map[string]any{}})
		if err != nil && !neutron.IsNotFound(err) {
			return errs.NewMessage("NetworkError", fmt.Sprintf("Unable to clear binding profile for neutron port %s. Error: %v", v.id, err))
		}
	}
	return nil
}
