package network

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/neutron"
)

const (
	vnicBaremetal = "baremetal"
	vnicSmartNIC  = "smart-nic"
)

// NeutronNetworks names the service networks ([neutron]/*_network), by
// UUID or name.
type NeutronNetworks struct {
	Provisioning, Cleaning, Rescuing, Inspection, Servicing string
}

// NeutronSecurityGroups are [neutron]/*_network_security_groups: the
// security groups of the ports created on each service network.
type NeutronSecurityGroups struct {
	Provisioning, Cleaning, Rescuing, Inspection, Servicing []string
}

// NeutronOptions are the Neutron side of the flat and neutron network
// interfaces: the client and the [neutron] options they read.
type NeutronOptions struct {
	// Client calls with the [neutron] service credentials.
	Client *neutron.Client
	// UserClient calls on behalf of the API caller when the request
	// carries their (project-scoped) token, as upstream's get_client
	// without auth_from_config; nil means Client.
	UserClient     *neutron.Client
	Networks       NeutronNetworks
	SecurityGroups NeutronSecurityGroups
	// AddAllPorts is [neutron]/add_all_ports: also plug ports that are not
	// PXE enabled (without an IP address).
	AddAllPorts bool
	// FailOnPortBindingFailure is [neutron]/fail_on_port_binding_failure:
	// with the neutron interface, wait for each bound port to become
	// ACTIVE and fail when Neutron could not bind it.
	FailOnPortBindingFailure bool
	// AllowDisablingPowerOff is [neutron]/allow_disabling_power_off.
	AllowDisablingPowerOff bool
	// CallerRoles returns the roles of the caller a validation runs for;
	// upstream checks the neutron interface's networks only for admins
	// (the conductor's own admin context has no roles). Nil checks always.
	CallerRoles func(ctx context.Context) []string
	// DHCPv6StatefulAddressCount is [neutron]/dhcpv6_stateful_address_count:
	// the addresses reserved for a port on a DHCPv6-stateful subnet, as
	// each boot stage asks with its own client identity.
	DHCPv6StatefulAddressCount int
	// StatusAttempts and StatusInterval are [agent]/neutron_agent_max_attempts
	// and neutron_agent_status_retry_interval, the wait for ACTIVE.
	StatusAttempts int
	StatusInterval time.Duration
}

// NeutronOptionsFromConfig reads [neutron] and [agent]; client talks to
// Neutron with the [neutron] credentials.
func NeutronOptionsFromConfig(c *config.Config, client, userClient *neutron.Client) *NeutronOptions {
	return &NeutronOptions{
		Client:     client,
		UserClient: userClient,
		Networks: NeutronNetworks{
			Provisioning: c.StringOf(config.NeutronProvisioningNetwork),
			Cleaning:     c.StringOf(config.NeutronCleaningNetwork),
			Rescuing:     c.StringOf(config.NeutronRescuingNetwork),
			Inspection:   c.StringOf(config.NeutronInspectionNetwork),
			Servicing:    c.StringOf(config.NeutronServicingNetwork),
		},
		SecurityGroups: NeutronSecurityGroups{
			Provisioning: c.ListOf(config.NeutronProvisioningNetworkSecurityGroups),
			Cleaning:     c.ListOf(config.NeutronCleaningNetworkSecurityGroups),
			Rescuing:     c.ListOf(config.NeutronRescuingNetworkSecurityGroups),
			Inspection:   c.ListOf(config.NeutronInspectionNetworkSecurityGroups),
			Servicing:    c.ListOf(config.NeutronServicingNetworkSecurityGroups),
		},
		AddAllPorts:                c.BoolOf(config.NeutronAddAllPorts),
		FailOnPortBindingFailure:   c.BoolOf(config.NeutronFailOnPortBindingFailure),
		AllowDisablingPowerOff:     c.BoolOf(config.NeutronAllowDisablingPowerOff),
		DHCPv6StatefulAddressCount: c.IntOf(config.NeutronDhcpv6StatefulAddressCount),
		StatusAttempts:             c.IntOf(config.AgentNeutronAgentMaxAttempts),
		StatusInterval:             c.DurationOf(config.AgentNeutronAgentStatusRetryInterval),
	}
}

// Neutron is the "neutron" network interface: VIF bookkeeping as flat,
// plus Neutron ports for the node on each service network and the
// tenant's VIFs bound to the node (upstream's network/neutron.py).
type Neutron struct {
	Flat
}

var (
	_ driver.NetworkPowerNeeder  = (*Neutron)(nil)
	_ driver.NetworkInterface    = (*Neutron)(nil)
	_ driver.RescuingNetworker   = (*Neutron)(nil)
	_ driver.InspectionNetworker = (*Neutron)(nil)
	_ driver.ServicingNetworker  = (*Neutron)(nil)
)

// RegisterNeutron adds neutron to r; traitBased may be nil (trait-based
// networking disabled).
func RegisterNeutron(r *driver.Registry, ports PortStore, opts *NeutronOptions, traitBased *TraitBased) error {
	if opts == nil {
		return fmt.Errorf("network neutron: no Neutron options")
	}
	if err := r.Register(driver.KindNetwork, "neutron", &Neutron{Flat{Ports: ports, Neutron: opts, TBN: traitBased}}); err != nil {
		return fmt.Errorf("network neutron: %w", err)
	}
	return nil
}

// netErr is upstream's NetworkError for a failed Neutron call, except
// that a failure to get credentials or the endpoint keeps its own class
// (ConfigInvalid, KeystoneUnauthorized, CatalogNotFound...), as upstream
// raises those before calling Neutron.
func netErr(err error, msg string) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return e
	}
	return errs.NewMessage(errs.ClassNetworkError, msg)
}

func (o *NeutronOptions) user() *neutron.Client {
	if o.UserClient != nil {
		return o.UserClient
	}
	return o.Client
}

// updatePort is upstream's update_neutron_port: the port is read first
// (with the caller's rights when asUser, so a user cannot have Ironic
// change a port they cannot see), then changed with the service's.
func (o *NeutronOptions) updatePort(ctx context.Context, id string, attrs map[string]any, asUser bool) (neutron.Port, error) {
	reader := o.Client
	if asUser {
		reader = o.user()
	}
	if _, err := reader.ShowPort(ctx, id); err != nil {
		return nil, err
	}
	return o.Client.UpdatePort(ctx, id, attrs)
}

// serviceNet describes one service network: its option, its name in
// messages (upstream passes the option name, except for servicing) and
// the internal_info key of the ports created on it.
type serviceNet struct {
	option, label, key string
}

var (
	provisioningNet = serviceNet{"provisioning_network", "provisioning_network", "provisioning_vif_port_id"}
	cleaningNet     = serviceNet{"cleaning_network", "cleaning_network", "cleaning_vif_port_id"}
	rescuingNet     = serviceNet{"rescuing_network", "rescuing_network", "rescuing_vif_port_id"}
	inspectionNet   = serviceNet{"inspection_network", "inspection_network", "inspection_vif_port_id"}
	servicingNet    = serviceNet{"servicing_network", "servicing network", "servicing_vif_port_id"}
)

func (o *NeutronOptions) configured(s serviceNet) (string, []string) {
	switch s {
	case provisioningNet:
		return o.Networks.Provisioning, o.SecurityGroups.Provisioning
	case cleaningNet:
		return o.Networks.Cleaning, o.SecurityGroups.Cleaning
	case rescuingNet:
		return o.Networks.Rescuing, o.SecurityGroups.Rescuing
	case inspectionNet:
		return o.Networks.Inspection, o.SecurityGroups.Inspection
	default:
		return o.Networks.Servicing, o.SecurityGroups.Servicing
	}
}

// networkUUID is upstream's validate_network: the node's driver_info
// overrides the configuration, and the network must exist exactly once.
// It is looked up as openstacksdk's find_network does: by id, then by
// name.
func (o *NeutronOptions) networkUUID(ctx context.Context, node *model.Node, s serviceNet) (string, error) {
	want, _ := node.DriverInfo[s.option].(string)
	if want == "" {
		want, _ = o.configured(s)
	}
	if want == "" {
		return "", errs.NewMessage(errs.ClassMissingParameterValue, fmt.Sprintf("UUID or name of %s is not set in configuration or in node driver_info.", s.label))
	}
	net, err := o.user().ShowNetwork(ctx, want)
	if err == nil {
		return net.ID(), nil
	}
	if !neutron.IsStatus(err, http.StatusNotFound, http.StatusBadRequest, http.StatusForbidden) {
		return "", netErr(err, fmt.Sprintf("Could not retrieve network: %v", err))
	}
	nets, err := o.user().ListNetworks(ctx, url.Values{"name": {want}})
	if err != nil {
		return "", netErr(err, fmt.Sprintf("Could not retrieve network: %v", err))
	}
	switch len(nets) {
	case 0:
		return "", errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("%s with name or UUID %s was not found", s.label, want))
	case 1:
		return nets[0].ID(), nil
	}
	ids := make([]string, len(nets))
	for i, n := range nets {
		ids[i] = n.ID()
	}
	return "", errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("More than one %s was found for name %s: %s", s.label, want, strings.Join(ids, ", ")))
}

// Validate checks the cleaning and provisioning networks when an admin
// asks and refuses nodes that never power off, as upstream.
func (n *Neutron) Validate(ctx context.Context, task *driver.Task) error {
	if n.Ports == nil {
		return errs.NewMessage(errs.ClassInvalidParameterValue, "the neutron network interface has no port store configured")
	}
	if n.Neutron.CallerRoles == nil || slices.Contains(n.Neutron.CallerRoles(ctx), "admin") {
		for _, s := range []serviceNet{cleaningNet, provisioningNet} {
			if _, err := n.Neutron.networkUUID(ctx, task.Node, s); err != nil {
				return err
			}
		}
	}
	if task.Node.DisablePowerOff && !n.Neutron.AllowDisablingPowerOff {
		return errs.NewMessage(errs.ClassInvalidParameterValue, "Nodes with disable_power_off cannot be used with the neutron network interface (disallowed in the configuration)")
	}
	return nil
}

// ValidateRescue checks the rescuing network.
func (n *Neutron) ValidateRescue(ctx context.Context, task *driver.Task) error {
	_, err := n.Neutron.networkUUID(ctx, task.Node, rescuingNet)
	return err
}

// ValidateServicing checks the servicing network.
func (n *Neutron) ValidateServicing(ctx context.Context, task *driver.Task) error {
	_, err := n.Neutron.networkUUID(ctx, task.Node, servicingNet)
	return err
}

// addAllPorts is upstream's effective add_all_ports: the option, or a
// boot interface that cannot PXE boot (every port is then plugged, the
// ones not PXE enabled without an address). A task without resolved
// interfaces counts as PXE capable.
func (o *NeutronOptions) addAllPorts(task *driver.Task) bool {
	if o.AddAllPorts || task.Driver == nil || task.Driver.Boot == nil {
		return o.AddAllPorts
	}
	c, ok := task.Driver.Boot.(interface{ Capabilities() []string })
	return !ok || !slices.Contains(c.Capabilities(), "pxe_boot")
}

func (o *NeutronOptions) portsToPlug(task *driver.Task, ports []*model.Port) []*model.Port {
	if o.addAllPorts(task) {
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

// validPortInfo is upstream's validate_port_info: the neutron interface
// needs the switch port of every port it plugs, unless DHCP identifies it
// by client id.
func (o *NeutronOptions) validPortInfo(task *driver.Task, p *model.Port) bool {
	if client, _ := p.Extra["client-id"].(string); client != "" {
		return true
	}
	if task.Node.NetworkInterface == "neutron" && len(p.LocalLinkConnection) == 0 {
		task.Logger().Warn("the local_link_connection is required for 'neutron' network interface and is not present", "node", task.Node.UUID, "port", p.UUID)
		return false
	}
	smartLink := smartNICLink(p.LocalLinkConnection)
	switch {
	case isSmartNIC(p) && !smartLink:
		task.Logger().Error("Smart NIC port must have port_id and hostname in local_link_connection", "port", p.UUID)
		return false
	case !isSmartNIC(p) && smartLink:
		task.Logger().Error("only Smart NIC ports can have port_id and hostname in local_link_connection", "port", p.UUID)
		return false
	}
	return true
}

func isSmartNIC(p *model.Port) bool { return p.IsSmartNIC != nil && *p.IsSmartNIC }

// smartNICLink is upstream's LOCAL_LINK_SMART_NIC_VALIDATOR: only the
// known string keys, with port_id and hostname.
func smartNICLink(llc map[string]any) bool {
	known := []string{"port_id", "switch_id", "hostname", "switch_info", "network_type", "vtep-logical-switch", "vtep-physical-switch"}
	for k, v := range llc {
		s, ok := v.(string)
		if !ok || !slices.Contains(known, k) || (k == "network_type" && s != "managed" && s != "unmanaged") {
			return false
		}
	}
	_, port := llc["port_id"]
	_, host := llc["hostname"]
	return port && host
}

// waitHostAgent is upstream's wait_for_host_agent(up): the Neutron agent
// on a Smart NIC's host must be alive before its port is bound.
func (o *NeutronOptions) waitHostAgent(ctx context.Context, client *neutron.Client, host string) error {
	attempts := max(o.StatusAttempts, 1)
	var last error
	for i := range attempts {
		if i > 0 {
			if err := clock.Sleep(ctx, o.StatusInterval); err != nil {
				return fmt.Errorf("wait for the neutron agent on %s: %w", host, err)
			}
		}
		agents, err := client.ListAgents(ctx, url.Values{"host": {host}})
		if err != nil {
			last = errs.NewMessage(errs.ClassNetworkError, "Failed to contact Neutron server")
			continue
		}
		// As upstream, only the first agent listed counts.
		if len(agents) > 0 && agents[0]["alive"] == true {
			return nil
		}
		last = errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("Agent on host %s failed to reach state up", host))
	}
	return last
}

// NeedPowerOn tells the conductor to power the node on before its ports
// are bound when any is a Smart NIC (its agent runs on the node).
func (n *Neutron) NeedPowerOn(ctx context.Context, task *driver.Task) bool {
	ports, _, err := n.load(ctx, task.Node)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(ports, isSmartNIC)
}

// failOnBinding is upstream's choice of whether to wait for the port to
// become ACTIVE: driver_info's fail_on_binding_failure, else always for
// a Smart NIC and per the option for the neutron interface.
func (o *NeutronOptions) failOnBinding(node *model.Node, smartNIC bool) bool {
	if v, ok := node.DriverInfo["fail_on_binding_failure"]; ok {
		return truthy(v)
	}
	return smartNIC || (node.NetworkInterface == "neutron" && o.FailOnPortBindingFailure)
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x != ""
	case float64:
		return x != 0
	case nil:
		return false
	}
	return true
}

// waitActive is upstream's wait_for_port_status(ACTIVE).
func (o *NeutronOptions) waitActive(ctx context.Context, client *neutron.Client, id string) error {
	attempts := max(o.StatusAttempts, 1)
	var last error
	for i := range attempts {
		if i > 0 {
			if err := clock.Sleep(ctx, o.StatusInterval); err != nil {
				return fmt.Errorf("wait for neutron port %s: %w", id, err)
			}
		}
		p, err := client.ShowPort(ctx, id)
		switch {
		case neutron.IsNotFound(err):
			return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("Neutron port %s was not found", id))
		case err != nil:
			return netErr(err, fmt.Sprintf("Could not retrieve neutron port: %v", err))
		}
		if p["status"] == "ACTIVE" {
			return nil
		}
		if p["binding:vif_type"] == "binding_failed" {
			return fmt.Errorf("binding failed for neutron port %s", id)
		}
		last = errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("Port %s failed to reach status ACTIVE", id))
	}
	return last
}

// verifySecurityGroups is upstream's _verify_security_groups.
func (o *NeutronOptions) verifySecurityGroups(ctx context.Context, groups []string) error {
	if len(groups) == 0 {
		return nil
	}
	found, err := o.Client.ListSecurityGroups(ctx, url.Values{"id": groups})
	if err != nil {
		return netErr(err, fmt.Sprintf("Could not retrieve security groups from neutron: %v", err))
	}
	var missing []string
	for _, g := range groups {
		if !slices.ContainsFunc(found, func(sg map[string]any) bool { return sg["id"] == g }) {
			missing = append(missing, "'"+g+"'")
		}
	}
	if len(missing) > 0 {
		return errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("Could not find these security groups (specified via ironic config) in neutron: [%s]", strings.Join(missing, ", ")))
	}
	return nil
}

// addNetwork is upstream's rollback_ports + add_ports_to_network, then
// records each Neutron port id under s.key in its ironic port.
func (o *NeutronOptions) addNetwork(ctx context.Context, task *driver.Task, f *Flat, s serviceNet, groups []string) error {
	node := task.Node
	netID, err := o.networkUUID(ctx, node, s)
	if err != nil {
		return err
	}
	ports, _, err := f.load(ctx, node)
	if err != nil {
		return err
	}
	// Ports left over from an earlier attempt would clash on the MAC.
	if err := o.removePorts(ctx, task, ports, netID); err != nil {
		task.Logger().Warn("failed to roll back neutron ports", "node", node.UUID, "network", netID, "error", err)
	}
	if err := o.verifySecurityGroups(ctx, groups); err != nil {
		return err
	}
	toPlug := o.portsToPlug(task, ports)
	if len(toPlug) == 0 {
		enabled := "PXE-enabled "
		if o.addAllPorts(task) {
			enabled = ""
		}
		return errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("No available %sports on node %s.", enabled, node.UUID))
	}
	var failures []string
	for _, p := range toPlug {
		if !o.validPortInfo(task, p) {
			failures = append(failures, p.UUID)
			continue
		}
		id, err := o.plug(ctx, node, p, netID, groups)
		var ironicErr *errs.Error
		if errors.As(err, &ironicErr) {
			// Upstream counts only Neutron's refusals as failed ports; its
			// own errors (agent or port never up) end the operation.
			return ironicErr
		}
		if err != nil {
			task.Logger().Warn("could not create neutron port", "node", node.UUID, "port", p.UUID, "network", netID, "error", err)
			failures = append(failures, p.UUID)
			continue
		}
		if err := f.save(ctx, portLike{port: p}, func(info, _ map[string]any) { info[s.key] = id }); err != nil {
			return err
		}
	}
	if len(failures) > 0 && len(failures) == len(toPlug) {
		if err := o.removePorts(ctx, task, ports, netID); err != nil {
			task.Logger().Warn("failed to roll back neutron ports", "node", node.UUID, "network", netID, "error", err)
		}
		return errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("Failed to create neutron ports for node's %s ports %s.", node.UUID, strings.Join(failures, ", ")))
	}
	if len(failures) > 0 {
		task.Logger().Warn("some neutron ports could not be created", "node", node.UUID, "ports", failures)
	}
	return nil
}

// plug creates the Neutron port, then sets the admin-only binding fields,
// as upstream does in two calls, and waits for the binding when asked.
func (o *NeutronOptions) plug(ctx context.Context, node *model.Node, p *model.Port, netID string, groups []string) (string, error) {
	attrs := map[string]any{
		"network_id": netID, "admin_state_up": true,
		"binding:vnic_type": vnicBaremetal, "device_id": deviceID(node),
	}
	if len(groups) > 0 {
		attrs["security_groups"] = groups
	}
	if p.PXEEnabled != nil && !*p.PXEEnabled {
		attrs["fixed_ips"] = []any{}
	}
	if client, _ := p.Extra["client-id"].(string); client != "" {
		attrs["extra_dhcp_opts"] = []any{map[string]any{"opt_name": "client-id", "opt_value": client}}
	}
	profile := map[string]any{"local_link_information": []any{p.LocalLinkConnection}}
	if p.PhysicalNetwork != nil && *p.PhysicalNetwork != "" {
		profile["physical_network"] = *p.PhysicalNetwork
	}
	host := node.UUID
	smart := isSmartNIC(p)
	if smart {
		// The Smart NIC's own host binds the port.
		host, _ = p.LocalLinkConnection["hostname"].(string)
		attrs["binding:vnic_type"] = vnicSmartNIC
		if err := o.waitHostAgent(ctx, o.Client, host); err != nil {
			return "", err
		}
	}
	created, err := o.Client.CreatePort(ctx, attrs)
	if err != nil {
		return "", fmt.Errorf("create port: %w", err)
	}
	update := map[string]any{
		"binding:host_id": host, "device_owner": "baremetal:none",
		"mac_address": nullable(deref(p.Address)), "binding:profile": profile,
	}
	bound, err := o.updatePort(ctx, created.ID(), update, true)
	if err != nil {
		return created.ID(), fmt.Errorf("bind port %s: %w", created.ID(), err)
	}
	if o.DHCPv6StatefulAddressCount > 1 {
		if err := o.addStatefulIPv6Addresses(ctx, bound); err != nil {
			return created.ID(), err
		}
	}
	if o.failOnBinding(node, smart) {
		if err := o.waitActive(ctx, o.Client, created.ID()); err != nil {
			return created.ID(), err
		}
	}
	return created.ID(), nil
}

// addStatefulIPv6Addresses is upstream's
// _add_ip_addresses_for_ipv6_stateful: a port whose first address is on a
// DHCPv6-stateful subnet gets more addresses on that subnet.
func (o *NeutronOptions) addStatefulIPv6Addresses(ctx context.Context, port neutron.Port) error {
	fixed, _ := port["fixed_ips"].([]any)
	if len(fixed) == 0 {
		return nil
	}
	first, _ := fixed[0].(map[string]any)
	ip, _ := first["ip_address"].(string)
	if addr, err := netip.ParseAddr(ip); err != nil || !addr.Is6() || addr.Is4In6() {
		return nil
	}
	subnetID, _ := first["subnet_id"].(string)
	subnet, err := o.Client.ShowSubnet(ctx, subnetID)
	if err != nil {
		return fmt.Errorf("subnet %s of port %s: %w", subnetID, port.ID(), err)
	}
	if subnet["ipv6_address_mode"] != "dhcpv6-stateful" {
		return nil
	}
	for i := 1; i < o.DHCPv6StatefulAddressCount; i++ {
		fixed = append(fixed, map[string]any{"subnet_id": subnet["id"]})
	}
	if _, err := o.Client.UpdatePort(ctx, port.ID(), map[string]any{"fixed_ips": fixed}); err != nil {
		return fmt.Errorf("reserve DHCPv6 addresses for port %s: %w", port.ID(), err)
	}
	return nil
}

// removePorts is upstream's remove_ports_from_network: delete the Neutron
// ports on netID carrying the plugged ports' MACs.
func (o *NeutronOptions) removePorts(ctx context.Context, task *driver.Task, ports []*model.Port, netID string) error {
	node := task.Node
	var macs []string
	for _, p := range o.portsToPlug(task, ports) {
		if a := deref(p.Address); a != "" {
			macs = append(macs, a)
		}
	}
	if len(macs) == 0 {
		return nil
	}
	found, err := o.Client.ListPorts(ctx, url.Values{"network_id": {netID}, "mac_address": macs})
	if err != nil {
		return netErr(err, fmt.Sprintf("Could not get given network VIF for %s from neutron, possible network issue. %v", node.UUID, err))
	}
	for _, np := range found {
		if err := o.Client.DeletePort(ctx, np.ID()); err != nil && !neutron.IsNotFound(err) {
			return netErr(err, fmt.Sprintf("Could not remove VIF %s of node %s, possibly a network issue: %v", np.ID(), node.UUID, err))
		}
	}
	return nil
}

// removeNetwork deletes the ports created by addNetwork and forgets them.
func (o *NeutronOptions) removeNetwork(ctx context.Context, task *driver.Task, f *Flat, s serviceNet) error {
	netID, err := o.networkUUID(ctx, task.Node, s)
	if err != nil {
		return err
	}
	ports, _, err := f.load(ctx, task.Node)
	if err != nil {
		return err
	}
	if err := o.removePorts(ctx, task, ports, netID); err != nil {
		return err
	}
	for _, p := range ports {
		if _, ok := p.InternalInfo[s.key]; ok {
			if err := f.save(ctx, portLike{port: p}, func(info, _ map[string]any) { delete(info, s.key) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// unbind is upstream's unbind_neutron_port: clear the binding, then (in
// a second call, as Neutron refuses to change a bound port's MAC) the MAC.
// A port already gone is not an error. asUser is whether the caller's
// context is passed, as upstream's callers do or not.
func (o *NeutronOptions) unbind(ctx context.Context, task *driver.Task, vif string, resetMAC, asUser bool) error {
	_, err := o.updatePort(ctx, vif, map[string]any{"binding:host_id": "", "binding:profile": map[string]any{}}, asUser)
	if err == nil && resetMAC {
		_, err = o.updatePort(ctx, vif, map[string]any{"mac_address": nil}, asUser)
	}
	if neutron.IsNotFound(err) {
		task.Logger().Info("neutron port was not found while unbinding", "port", vif)
		return nil
	}
	if err != nil {
		return netErr(err, fmt.Sprintf("Unable to clear binding profile for neutron port %s. Error: %v", vif, err))
	}
	return nil
}

// physnets is upstream's get_physnets_by_port_uuid, from the network's
// segments or provider attribute.
func (o *NeutronOptions) physnets(ctx context.Context, vif string) ([]string, error) {
	port, err := o.user().ShowPort(ctx, vif)
	switch {
	case neutron.IsNotFound(err):
		return nil, errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("Neutron port %s was not found", vif))
	case err != nil:
		return nil, netErr(err, fmt.Sprintf("Could not retrieve neutron port: %v", err))
	}
	netID, _ := port["network_id"].(string)
	net, err := o.user().ShowNetwork(ctx, netID)
	switch {
	case neutron.IsNotFound(err):
		return nil, errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("network with name or UUID %s was not found", netID))
	case err != nil:
		return nil, netErr(err, fmt.Sprintf("Could not retrieve network: %v", err))
	}
	var out []string
	if segs, ok := net["segments"].([]any); ok {
		for _, s := range segs {
			seg, _ := s.(map[string]any)
			if pn, _ := seg["provider:physical_network"].(string); pn != "" && !slices.Contains(out, pn) {
				out = append(out, pn)
			}
		}
		return out, nil
	}
	if pn, _ := net["provider:physical_network"].(string); pn != "" {
		out = append(out, pn)
	}
	return out, nil
}

// updatePortAddress is upstream's update_port_address: a bound port is
// unbound, given the MAC, then bound again as it was.
func (o *NeutronOptions) updatePortAddress(ctx context.Context, task *driver.Task, vif, mac string) error {
	port, err := o.user().ShowPort(ctx, vif)
	if err != nil {
		return fmt.Errorf("failed to get the current binding on Neutron port %s: %w", vif, err)
	}
	host, _ := port["binding:host_id"].(string)
	profile := port["binding:profile"]
	if host != "" {
		if err := o.unbind(ctx, task, vif, true, true); err != nil {
			return fmt.Errorf("failed to remove the current binding from Neutron port %s, while updating its MAC address: %w", vif, err)
		}
	}
	if _, err := o.updatePort(ctx, vif, map[string]any{"mac_address": mac}, true); err != nil {
		return fmt.Errorf("failed to update MAC address on Neutron port %s: %w", vif, err)
	}
	if host != "" {
		if _, err := o.updatePort(ctx, vif, map[string]any{"binding:host_id": host, "binding:profile": profile}, true); err != nil {
			return fmt.Errorf("failed to update binding:host_id and profile on Neutron port %s: %w", vif, err)
		}
	}
	return nil
}

// seedHostID is upstream's update_port_host_id: a VIF attached before
// deployment gets only the node as host so Neutron can allocate its
// addresses; a port someone bound beforehand is unbound first.
func (o *NeutronOptions) seedHostID(ctx context.Context, task *driver.Task, vif string) error {
	node := task.Node
	port, err := o.user().ShowPort(ctx, vif)
	switch {
	case neutron.IsNotFound(err):
		return errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("The neutron port %s was not found when we expect it to exist. We cannot proceed.", vif))
	case err != nil:
		return netErr(err, fmt.Sprintf("An unknown error was encountered while attempting to retrieve neutron port %s. Error: %v", vif, err))
	}
	// Upstream unbinds here without the caller's context: service rights.
	if host, _ := port["binding:host_id"].(string); host != "" {
		if err := o.unbind(ctx, task, vif, true, false); err != nil {
			return err
		}
	}
	attrs := map[string]any{"binding:vnic_type": vnicBaremetal, "binding:host_id": node.UUID, "binding:profile": map[string]any{}}
	if _, err := o.updatePort(ctx, vif, attrs, true); err != nil {
		// Upstream's message lacks the space before "to".
		return netErr(err, fmt.Sprintf("Could not seed network configuration for VIF %sto node %s, possible network, state, or access permission issue. %v", vif, node.UUID, err))
	}
	return nil
}

// plugTenant is upstream's plug_port_to_tenant_network: bind the VIF's
// Neutron port to the node with the switch ports it sits on.
func (o *NeutronOptions) plugTenant(ctx context.Context, task *driver.Task, p portLike, ports []*model.Port) error {
	node := task.Node
	vif, _ := p.internalInfo()[TenantVIFKey].(string)
	if vif == "" {
		return errs.NewMessage(errs.ClassVifNotAttached, fmt.Sprintf("Tenant VIF is not associated with %s %s", strings.ToLower(p.className()), p.uuid()))
	}
	links := []any{}
	profile := map[string]any{}
	attrs := map[string]any{"binding:vnic_type": vnicBaremetal, "binding:host_id": node.UUID}
	if p.pg != nil {
		for _, m := range ports {
			if m.PortgroupID != nil && *m.PortgroupID == p.pg.ID {
				links = append(links, m.LocalLinkConnection)
			}
		}
		props := map[string]any{}
		for k, v := range p.pg.Properties {
			if !strings.HasPrefix(k, "bond") {
				k = "bond_" + k
			}
			props[k] = v
		}
		profile["local_group_information"] = map[string]any{
			"id": p.pg.UUID, "name": p.pg.Name, "bond_mode": p.pg.Mode, "bond_properties": props,
		}
	} else {
		links = append(links, p.port.LocalLinkConnection)
		if client, _ := p.port.Extra["client-id"].(string); client != "" {
			attrs["extra_dhcp_opts"] = []any{map[string]any{"opt_name": "client-id", "opt_value": client}}
		}
	}
	if a := p.address(); a != "" {
		attrs["mac_address"] = a
	}
	profile["local_link_information"] = links
	if pn := p.physicalNetwork(); pn != "" {
		profile["physical_network"] = pn
	}
	attrs["binding:profile"] = profile
	smart := p.port != nil && isSmartNIC(p.port)
	if smart {
		host, _ := p.port.LocalLinkConnection["hostname"].(string)
		attrs["binding:host_id"], attrs["binding:vnic_type"] = host, vnicSmartNIC
		if err := o.waitHostAgent(ctx, o.user(), host); err != nil {
			return err
		}
	}
	_, err := o.updatePort(ctx, vif, attrs, true)
	if err == nil && o.failOnBinding(node, smart) {
		err = o.waitActive(ctx, o.user(), vif)
	}
	if err != nil {
		if errs.Is(err, errs.ClassInvalidParameterValue) || errs.Is(err, errs.ClassNetworkError) {
			return err
		}
		return netErr(err, fmt.Sprintf("Could not add public network VIF %s to node %s, possible network issue. %v", vif, node.UUID, err))
	}
	return nil
}

// plug adds the node to s with the security groups configured for s, which
// the flat interface does not apply.
func (n *Neutron) plug(ctx context.Context, task *driver.Task, s serviceNet) error {
	_, groups := n.Neutron.configured(s)
	return n.Neutron.addNetwork(ctx, task, &n.Flat, s, groups)
}

// AddProvisioningNetwork plugs the node into the provisioning network.
func (n *Neutron) AddProvisioningNetwork(ctx context.Context, task *driver.Task) error {
	return n.plug(ctx, task, provisioningNet)
}

// RemoveProvisioningNetwork unplugs it.
func (n *Neutron) RemoveProvisioningNetwork(ctx context.Context, task *driver.Task) error {
	return n.Neutron.removeNetwork(ctx, task, &n.Flat, provisioningNet)
}

// AddCleaningNetwork plugs the node into the cleaning network.
func (n *Neutron) AddCleaningNetwork(ctx context.Context, task *driver.Task) error {
	return n.plug(ctx, task, cleaningNet)
}

// RemoveCleaningNetwork unplugs it.
func (n *Neutron) RemoveCleaningNetwork(ctx context.Context, task *driver.Task) error {
	return n.Neutron.removeNetwork(ctx, task, &n.Flat, cleaningNet)
}

// AddRescuingNetwork plugs the node into the rescuing network.
func (n *Neutron) AddRescuingNetwork(ctx context.Context, task *driver.Task) error {
	return n.plug(ctx, task, rescuingNet)
}

// RemoveRescuingNetwork unplugs it.
func (n *Neutron) RemoveRescuingNetwork(ctx context.Context, task *driver.Task) error {
	return n.Neutron.removeNetwork(ctx, task, &n.Flat, rescuingNet)
}

// AddInspectionNetwork plugs the node into the inspection network.
func (n *Neutron) AddInspectionNetwork(ctx context.Context, task *driver.Task) error {
	return n.plug(ctx, task, inspectionNet)
}

// RemoveInspectionNetwork unplugs it.
func (n *Neutron) RemoveInspectionNetwork(ctx context.Context, task *driver.Task) error {
	return n.Neutron.removeNetwork(ctx, task, &n.Flat, inspectionNet)
}

// AddServicingNetwork plugs the node into the servicing network.
func (n *Neutron) AddServicingNetwork(ctx context.Context, task *driver.Task) error {
	return n.plug(ctx, task, servicingNet)
}

// RemoveServicingNetwork unplugs it.
func (n *Neutron) RemoveServicingNetwork(ctx context.Context, task *driver.Task) error {
	return n.Neutron.removeNetwork(ctx, task, &n.Flat, servicingNet)
}

// ConfigureTenantNetworks binds every tenant VIF to the node.
func (n *Neutron) ConfigureTenantNetworks(ctx context.Context, task *driver.Task) error {
	node := task.Node
	ports, pgs, err := n.load(ctx, node)
	if err != nil {
		return err
	}
	if len(ports) == 0 {
		return errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("No ports are associated with node %s", node.UUID))
	}
	all := standalone(ports, pgs)
	without := 0
	for _, p := range all {
		if err := n.Neutron.plugTenant(ctx, task, p, ports); err != nil {
			if errs.Is(err, errs.ClassVifNotAttached) {
				without++
				continue
			}
			return err
		}
	}
	if without == len(all) {
		return errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("No neutron ports or portgroups are associated with node %s", node.UUID))
	}
	return nil
}

// UnconfigureTenantNetworks unbinds the tenant VIFs from the node so the
// ports are not bound to the tenant and a service network at once; the
// VIFs themselves stay attached.
func (n *Neutron) UnconfigureTenantNetworks(ctx context.Context, task *driver.Task) error {
	ports, pgs, err := n.load(ctx, task.Node)
	if err != nil {
		return err
	}
	for _, p := range standalone(ports, pgs) {
		vif := vifID(p.internalInfo(), p.extra())
		if vif == "" {
			continue
		}
		if p.port != nil && isSmartNIC(p.port) {
			host, _ := p.port.LocalLinkConnection["hostname"].(string)
			if err := n.Neutron.waitHostAgent(ctx, n.Neutron.user(), host); err != nil {
				return err
			}
		}
		if err := n.Neutron.unbind(ctx, task, vif, p.address() != "", true); err != nil {
			return err
		}
	}
	return nil
}
