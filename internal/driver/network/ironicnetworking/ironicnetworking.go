// Package ironicnetworking is master's "ironic-networking" network
// interface (ironic/drivers/modules/network/ironic_networking.py): for
// standalone deployments, it moves each port's switch port (named by the
// port's local_link_connection switch_id and port_id) between the
// VLANs of the provisioning, cleaning, rescuing, inspection and servicing
// networks ([ironic_networking] options or the node's driver_info) and
// the tenant's (the port's extra["switchport"]), through the switch
// configuration service of internal/networking.
package ironicnetworking

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/network"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/networking"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// Name is the interface's name.
const Name = "ironic-networking"

// Network types, as master's ironic.common.network constants.
const (
	Idle         = "idle"
	Rescuing     = "rescuing"
	Cleaning     = "cleaning"
	Servicing    = "servicing"
	Inspection   = "inspection"
	Provisioning = "provisioning"
	Tenant       = "tenant"
)

// Switches is the switch configuration service the interface calls
// (master's ironic.networking.api update_port and reset_port).
type Switches interface {
	UpdatePort(ctx context.Context, switchID, portName, description, mode string, nativeVLAN int, allowedVLANs []int, defaultVLAN int) error
	ResetPort(ctx context.Context, switchID, portName string, nativeVLAN int, allowedVLANs []int, defaultVLAN int) error
}

// Options are the interface's configuration.
type Options struct {
	// Networks are the [ironic_networking]/<type>_network options by
	// network type (idle, cleaning, provisioning, rescuing, inspection,
	// servicing).
	Networks map[string]string
	// Service starts the switch configuration service; it is called on
	// first use, and again after a failure.
	Service func() (Switches, error)
}

// Interface is the ironic-networking network interface.
type Interface struct {
	ports PortStore
	opts  Options

	mu  sync.Mutex
	svc Switches
}

// PortStore is what the interface reads of the node's ports.
type PortStore = network.PortStore

var (
	_ driver.NetworkInterface    = (*Interface)(nil)
	_ driver.RescuingNetworker   = (*Interface)(nil)
	_ driver.InspectionNetworker = (*Interface)(nil)
	_ driver.ServicingNetworker  = (*Interface)(nil)
	_ driver.NetworkPowerNeeder  = (*Interface)(nil)
	_ driver.NetworkDataProvider = (*Interface)(nil)
)

// New builds the interface.
func New(ports PortStore, o Options) *Interface { return &Interface{ports: ports, opts: o} }

// Register adds ironic-networking to r.
func Register(r *driver.Registry, ports PortStore, o Options) error {
	if err := r.Register(driver.KindNetwork, Name, New(ports, o)); err != nil {
		return fmt.Errorf("network %s: %w", Name, err)
	}
	return nil
}

// service is the switch configuration service, started on first use.
func (i *Interface) service() (Switches, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.svc != nil {
		return i.svc, nil
	}
	if i.opts.Service == nil {
		return nil, errs.NewMessage(errs.ClassNetworkError, "the ironic-networking switch configuration service is not configured")
	}
	svc, err := i.opts.Service()
	if err != nil {
		return nil, err
	}
	i.svc = svc
	return svc, nil
}

// Properties is empty, as master's.
func (*Interface) Properties() map[string]string { return map[string]string{} }

// Steps declares none.
func (*Interface) Steps() []driver.StepSpec { return nil }

// NeedPowerOn is false: switches are configured with the node off.
func (*Interface) NeedPowerOn(context.Context, *driver.Task) bool { return false }

func (i *Interface) load(ctx context.Context, node *model.Node) ([]*model.Port, []*model.Portgroup, error) {
	if i.ports == nil {
		return nil, nil, errs.NewMessage(errs.ClassInvalidParameterValue, "the ironic-networking network interface has no port store configured")
	}
	id := node.ID
	ports, err := i.ports.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("ports of node %s: %w", node.UUID, err)
	}
	pgs, err := i.ports.ListPortgroups(ctx, store.PortgroupFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("portgroups of node %s: %w", node.UUID, err)
	}
	return ports, pgs, nil
}

// Validate checks the ports' switchport and the portgroups' LAG
// configuration, as master's validate.
func (i *Interface) Validate(ctx context.Context, task *driver.Task) error {
	ports, pgs, err := i.load(ctx, task.Node)
	if err != nil {
		return err
	}
	for _, p := range ports {
		if err := validatePortSwitchport(task.Node, p); err != nil {
			return err
		}
	}
	for _, pg := range pgs {
		if err := validateLAG(pg); err != nil {
			return err
		}
		if err := validateMembers(pg, ports); err != nil {
			return err
		}
	}
	return nil
}

func switchport(p *model.Port) map[string]any {
	sp, _ := p.Extra["switchport"].(map[string]any)
	if len(sp) == 0 {
		return nil
	}
	return sp
}

func validatePortSwitchport(node *model.Node, p *model.Port) error {
	sp := switchport(p)
	if sp == nil {
		return nil
	}
	if msg := checkSchema(sp, switchportSchema); msg != "" {
		return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("Invalid switchport configuration for port %s: %s", p.UUID, msg))
	}
	if p.PXEEnabled == nil || *p.PXEEnabled {
		if mode, _ := sp["mode"].(string); mode != networking.ModeAccess {
			return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf(
				"Port %s is PXE-enabled but has switchport mode '%s'. PXE-enabled ports must use 'access' mode when switchport configuration is present.", p.UUID, mode))
		}
	}
	if len(p.LocalLinkConnection) == 0 {
		// Inspection may fill it in from LLDP.
		if !states.InspectionStates.Contains(node.ProvisionState) {
			return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf(
				"Port %s has switchport configuration but is missing local_link_connection in state: %s.", p.UUID, node.ProvisionState))
		}
		return nil
	}
	var missing []string
	if s, _ := p.LocalLinkConnection["switch_id"].(string); s == "" {
		missing = append(missing, "'switch_id'")
	}
	if s, _ := p.LocalLinkConnection["port_id"].(string); s == "" {
		missing = append(missing, "'port_id'")
	}
	if len(missing) > 0 {
		return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf(
			"Port %s local_link_connection missing required field(s): %s", p.UUID, strings.Join(missing, ", ")))
	}
	return nil
}

func validateLAG(pg *model.Portgroup) error {
	lag, _ := pg.Extra["lag"].(map[string]any)
	if len(lag) == 0 {
		return nil
	}
	if msg := checkSchema(lag, lagSchema); msg != "" {
		return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("Invalid LAG configuration for portgroup %s: %s", pg.UUID, msg))
	}
	return nil
}

func validateMembers(pg *model.Portgroup, ports []*model.Port) error {
	if lag, _ := pg.Extra["lag"].(map[string]any); len(lag) == 0 {
		return nil
	}
	var members, noSwitchport, noLink []string
	for _, p := range ports {
		if p.PortgroupID == nil || *p.PortgroupID != pg.ID {
			continue
		}
		members = append(members, p.UUID)
		sw, _ := p.LocalLinkConnection["switch_id"].(string)
		port, _ := p.LocalLinkConnection["port_id"].(string)
		switch {
		case switchport(p) == nil:
			noSwitchport = append(noSwitchport, p.UUID)
		case sw == "" || port == "":
			noLink = append(noLink, p.UUID)
		}
	}
	if len(members) == 0 {
		return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("Portgroup %s has LAG configuration but no member ports", pg.UUID))
	}
	var problems []string
	if len(noSwitchport) > 0 {
		problems = append(problems, fmt.Sprintf("member ports %s lack switchport configuration", strings.Join(noSwitchport, ", ")))
	}
	if len(noLink) > 0 {
		problems = append(problems, fmt.Sprintf("member ports %s lack proper local_link_connection with switch_id and port_id fields", strings.Join(noLink, ", ")))
	}
	if len(problems) > 0 {
		return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("Portgroup %s has LAG configuration but: %s", pg.UUID, strings.Join(problems, "; ")))
	}
	return nil
}

// networkConfig is master's _get_switch_port_config: the node's
// driver_info <type>_network, else the option; nil when neither is set.
func (i *Interface) networkConfig(node *model.Node, networkType string) (*networking.PortConfig, error) {
	value, _ := node.DriverInfo[networkType+"_network"].(string)
	if value == "" {
		value = i.opts.Networks[networkType]
	}
	if value == "" {
		return nil, nil
	}
	return networking.ParsePortConfig(value, networkType)
}

// idleVLAN is the idle network's VLAN, 0 when none.
func (i *Interface) idleVLAN(node *model.Node) (int, error) {
	c, err := i.networkConfig(node, Idle)
	if err != nil || c == nil {
		return 0, err
	}
	return c.NativeVLAN, nil
}

func link(p *model.Port) (switchID, portID string) {
	switchID, _ = p.LocalLinkConnection["switch_id"].(string)
	portID, _ = p.LocalLinkConnection["port_id"].(string)
	return switchID, portID
}

func description(p *model.Port) string { return "Ironic Port " + p.UUID }

// portConfig is the network's configuration for p: the network's own when
// valid, else the port's switchport one.
func portConfig(global *networking.PortConfig, p *model.Port) (*networking.PortConfig, error) {
	if global.Valid() {
		return global, nil
	}
	if sp := switchport(p); sp != nil {
		return networking.PortConfigFromSwitchport(sp)
	}
	return global, nil
}

// addNetwork is master's _add_network: every port with a
// local_link_connection onto the network's VLAN (or its own switchport
// configuration); the first failure fails the whole.
func (i *Interface) addNetwork(ctx context.Context, task *driver.Task, networkType string) error {
	task.Logger().InfoContext(ctx, "adding network to node", "network", networkType, "node", task.Node.UUID)
	ports, _, err := i.load(ctx, task.Node)
	if err != nil {
		return err
	}
	idle, err := i.idleVLAN(task.Node)
	if err != nil {
		return err
	}
	global, err := i.networkConfig(task.Node, networkType)
	if err != nil {
		return err
	}
	for _, p := range ports {
		if len(p.LocalLinkConnection) == 0 {
			continue
		}
		c, err := portConfig(global, p)
		if err != nil {
			return err
		}
		if !c.Valid() {
			continue
		}
		if err := i.update(ctx, p, c, idle); err != nil {
			return errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("Failed to configure %s network for port %s: %s", networkType, p.UUID, err.Error()))
		}
	}
	return nil
}

// removeNetwork is master's _remove_network: it resets every port it can
// and reports all failures together.
func (i *Interface) removeNetwork(ctx context.Context, task *driver.Task, networkType string) error {
	task.Logger().InfoContext(ctx, "removing network from node", "network", networkType, "node", task.Node.UUID)
	ports, _, err := i.load(ctx, task.Node)
	if err != nil {
		return err
	}
	idle, err := i.idleVLAN(task.Node)
	if err != nil {
		return err
	}
	global, err := i.networkConfig(task.Node, networkType)
	if err != nil {
		return err
	}
	var failures []string
	for _, p := range ports {
		if len(p.LocalLinkConnection) == 0 {
			continue
		}
		c, err := portConfig(global, p)
		if err != nil {
			return err
		}
		if !c.Valid() {
			continue
		}
		if err := i.reset(ctx, p, c, idle); err != nil {
			failures = append(failures, fmt.Sprintf("Failed to reset %s network for port %s: %s", networkType, p.UUID, err.Error()))
		}
	}
	if len(failures) > 0 {
		return errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("Failed to reset %s network, errors: %s", networkType, pyStrList(failures)))
	}
	return nil
}

func (i *Interface) update(ctx context.Context, p *model.Port, c *networking.PortConfig, idle int) error {
	svc, err := i.service()
	if err != nil {
		return err
	}
	sw, port := link(p)
	return svc.UpdatePort(ctx, sw, port, description(p), c.Mode, c.NativeVLAN, c.AllowedVLANs, idle)
}

func (i *Interface) reset(ctx context.Context, p *model.Port, c *networking.PortConfig, idle int) error {
	svc, err := i.service()
	if err != nil {
		return err
	}
	sw, port := link(p)
	return svc.ResetPort(ctx, sw, port, c.NativeVLAN, c.AllowedVLANs, idle)
}

// tenantPorts are the ports with a switchport configuration and a
// local_link_connection, with that configuration when valid.
func tenantPorts(ports []*model.Port) ([]*model.Port, []*networking.PortConfig, error) {
	var out []*model.Port
	var cfgs []*networking.PortConfig
	for _, p := range ports {
		sp := switchport(p)
		if sp == nil || len(p.LocalLinkConnection) == 0 {
			continue
		}
		c, err := networking.PortConfigFromSwitchport(sp)
		if err != nil {
			return nil, nil, err
		}
		if !c.Valid() {
			continue
		}
		out = append(out, p)
		cfgs = append(cfgs, c)
	}
	return out, cfgs, nil
}

// ConfigureTenantNetworks puts every port on its own switchport
// configuration.
func (i *Interface) ConfigureTenantNetworks(ctx context.Context, task *driver.Task) error {
	ports, _, err := i.load(ctx, task.Node)
	if err != nil {
		return err
	}
	idle, err := i.idleVLAN(task.Node)
	if err != nil {
		return err
	}
	tp, cfgs, err := tenantPorts(ports)
	if err != nil {
		return err
	}
	for k, p := range tp {
		if err := i.update(ctx, p, cfgs[k], idle); err != nil {
			return errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf("Failed to configure tenant network for port %s: %s", p.UUID, err.Error()))
		}
	}
	return nil
}

// UnconfigureTenantNetworks takes every port off its tenant VLANs.
func (i *Interface) UnconfigureTenantNetworks(ctx context.Context, task *driver.Task) error {
	ports, _, err := i.load(ctx, task.Node)
	if err != nil {
		return err
	}
	idle, err := i.idleVLAN(task.Node)
	if err != nil {
		return err
	}
	tp, cfgs, err := tenantPorts(ports)
	if err != nil {
		return err
	}
	var failures []string
	for k, p := range tp {
		if err := i.reset(ctx, p, cfgs[k], idle); err != nil {
			failures = append(failures, fmt.Sprintf("Failed to reset tenant network for port %s: %s", p.UUID, err.Error()))
		}
	}
	if len(failures) > 0 {
		return errs.NewMessage(errs.ClassNetworkError, "Failed to reset ports for tenant network, errors: "+pyStrList(failures))
	}
	return nil
}

// AddProvisioningNetwork moves the ports to the provisioning network.
func (i *Interface) AddProvisioningNetwork(ctx context.Context, task *driver.Task) error {
	return i.addNetwork(ctx, task, Provisioning)
}

// RemoveProvisioningNetwork takes them off it.
func (i *Interface) RemoveProvisioningNetwork(ctx context.Context, task *driver.Task) error {
	return i.removeNetwork(ctx, task, Provisioning)
}

// AddCleaningNetwork moves the ports to the cleaning network.
func (i *Interface) AddCleaningNetwork(ctx context.Context, task *driver.Task) error {
	return i.addNetwork(ctx, task, Cleaning)
}

// RemoveCleaningNetwork takes them off it.
func (i *Interface) RemoveCleaningNetwork(ctx context.Context, task *driver.Task) error {
	return i.removeNetwork(ctx, task, Cleaning)
}

// AddRescuingNetwork moves the ports to the rescuing network.
func (i *Interface) AddRescuingNetwork(ctx context.Context, task *driver.Task) error {
	return i.addNetwork(ctx, task, Rescuing)
}

// RemoveRescuingNetwork takes them off it.
func (i *Interface) RemoveRescuingNetwork(ctx context.Context, task *driver.Task) error {
	return i.removeNetwork(ctx, task, Rescuing)
}

// AddInspectionNetwork moves the ports to the inspection network.
func (i *Interface) AddInspectionNetwork(ctx context.Context, task *driver.Task) error {
	return i.addNetwork(ctx, task, Inspection)
}

// RemoveInspectionNetwork takes them off it.
func (i *Interface) RemoveInspectionNetwork(ctx context.Context, task *driver.Task) error {
	return i.removeNetwork(ctx, task, Inspection)
}

// AddServicingNetwork moves the ports to the servicing network.
func (i *Interface) AddServicingNetwork(ctx context.Context, task *driver.Task) error {
	return i.addNetwork(ctx, task, Servicing)
}

// RemoveServicingNetwork takes them off it.
func (i *Interface) RemoveServicingNetwork(ctx context.Context, task *driver.Task) error {
	return i.removeNetwork(ctx, task, Servicing)
}

// ValidateRescue only parses the rescuing network: master logs, and does
// not refuse, a node without a port it could configure.
func (i *Interface) ValidateRescue(ctx context.Context, task *driver.Task) error {
	return i.validateNetwork(ctx, task, Rescuing)
}

func (i *Interface) validateNetwork(ctx context.Context, task *driver.Task, networkType string) error {
	ports, _, err := i.load(ctx, task.Node)
	if err != nil {
		return err
	}
	for _, p := range ports {
		sp := switchport(p)
		if len(p.LocalLinkConnection) == 0 || sp == nil {
			continue
		}
		c, err := i.networkConfig(task.Node, networkType)
		if err != nil {
			return err
		}
		if !c.Valid() {
			if c, err = networking.PortConfigFromSwitchport(sp); err != nil {
				return err
			}
		}
		if c.Valid() {
			return nil
		}
	}
	task.Logger().WarnContext(ctx, "node has no port with a local_link_connection and a valid mode/native_vlan for the network",
		"node", task.Node.UUID, "network", networkType)
	return nil
}

// VifAttach does nothing: this interface manages no VIFs.
func (*Interface) VifAttach(context.Context, *driver.Task, map[string]any) error { return nil }

// VifDetach does nothing.
func (*Interface) VifDetach(context.Context, *driver.Task, string) error { return nil }

// VifList is always empty.
func (*Interface) VifList(context.Context, *driver.Task) ([]map[string]any, error) {
	return []map[string]any{}, nil
}

// GetCurrentVif is always none.
func (*Interface) GetCurrentVif(context.Context, *driver.Task, map[string]any) (string, error) {
	return "", nil
}

// PortgroupChanged does nothing: master does not act on portgroup
// changes yet.
func (*Interface) PortgroupChanged(context.Context, *driver.Task, *model.Portgroup) error { return nil }

// networkForState is master's get_network_type_for_state.
func networkForState(state string) string {
	switch state {
	case states.Inspecting, states.InspectWait:
		return Inspection
	case states.Cleaning, states.CleanWait:
		return Cleaning
	case states.Deploying, states.DeployWait:
		return Provisioning
	case states.Active:
		return Tenant
	case states.Rescue, states.Rescuing, states.RescueWait:
		return Rescuing
	case states.Servicing, states.ServiceWait:
		return Servicing
	}
	return Idle
}

// PortChanged reconfigures the switch port when a port's switchport or
// local_link_connection changes, for the network the node's state puts
// it on, as master's port_changed.
func (i *Interface) PortChanged(ctx context.Context, task *driver.Task, port *model.Port) error {
	if port.ID == 0 || i.ports == nil {
		return nil
	}
	old, err := i.ports.GetPortByID(ctx, port.ID)
	if err != nil {
		return fmt.Errorf("port %s before the change: %w", port.UUID, err)
	}
	oldSP, newSP := switchport(old), switchport(port)
	oldLL, newLL := old.LocalLinkConnection, port.LocalLinkConnection
	active := networkForState(task.Node.ProvisionState)
	switchportRemoved := oldSP != nil && newSP == nil
	linkRemoved := len(oldLL) > 0 && len(newLL) == 0
	linkChanged := len(oldLL) > 0 && len(newLL) > 0 && !equalJSON(oldLL, newLL)
	switchportChanged := oldSP != nil && newSP != nil && !equalJSON(oldSP, newSP)
	switchportAdded := oldSP == nil && newSP != nil
	if switchportRemoved || linkRemoved || linkChanged {
		if err := i.resetOld(ctx, task, old, active); err != nil {
			return err
		}
		if !linkChanged {
			return nil
		}
		switchportChanged = true
	}
	if !switchportAdded && !switchportChanged || len(newLL) == 0 {
		return nil
	}
	if err := validatePortSwitchport(task.Node, port); err != nil {
		return err
	}
	idle, err := i.idleVLAN(task.Node)
	if err != nil {
		return err
	}
	c, err := i.resolve(task.Node, port, active)
	if err != nil || !c.Valid() {
		return err
	}
	if sw, pid := link(port); sw == "" || pid == "" {
		return nil
	}
	return i.update(ctx, port, c, idle)
}

// resetOld resets the switch port the port had before a change.
func (i *Interface) resetOld(ctx context.Context, task *driver.Task, old *model.Port, active string) error {
	if switchport(old) == nil || len(old.LocalLinkConnection) == 0 {
		return nil
	}
	idle, err := i.idleVLAN(task.Node)
	if err != nil {
		return err
	}
	c, err := i.resolve(task.Node, old, active)
	if err != nil || !c.Valid() {
		return err
	}
	if sw, pid := link(old); sw == "" || pid == "" {
		return nil
	}
	return i.reset(ctx, old, c, idle)
}

// resolve is master's _resolve_network_configuration.
func (i *Interface) resolve(node *model.Node, p *model.Port, networkType string) (*networking.PortConfig, error) {
	var c *networking.PortConfig
	if networkType != Tenant {
		var err error
		if c, err = i.networkConfig(node, networkType); err != nil {
			return nil, err
		}
	}
	if c.Valid() {
		return c, nil
	}
	if networkType == Idle {
		return nil, nil
	}
	sp := switchport(p)
	if sp == nil {
		return nil, nil
	}
	return networking.PortConfigFromSwitchport(sp)
}

// GetNodeNetworkData is the node's network_data when set, else a physical
// link per port with a MAC and a VLAN link per allowed VLAN of its
// switchport, as master's.
func (i *Interface) GetNodeNetworkData(ctx context.Context, task *driver.Task) (map[string]any, error) {
	if len(task.Node.NetworkData) > 0 {
		return task.Node.NetworkData, nil
	}
	ports, _, err := i.load(ctx, task.Node)
	if err != nil {
		return nil, err
	}
	links := []any{}
	for _, p := range ports {
		if p.Address == nil || *p.Address == "" {
			continue
		}
		links = append(links, map[string]any{"id": p.UUID, "type": "phy", "ethernet_mac_address": *p.Address, "mtu": 1500})
		allowed, _ := switchport(p)["allowed_vlans"].([]any)
		for _, v := range allowed {
			links = append(links, map[string]any{"id": fmt.Sprintf("%s_vlan_%v", p.UUID, v), "type": "vlan",
				"vlan_mac_address": *p.Address, "vlan_id": v, "vlan_link": p.UUID, "mtu": 1500})
		}
	}
	return map[string]any{"links": links}, nil
}

// OptionsFromConfig reads [ironic_networking]: the networks' VLANs, and
// the switch configuration service started on first use from
// enabled_switch_drivers, switch_config_file and allowed_vlans with the
// noop and generic-switch (Cisco IOS over SSH) drivers.
func OptionsFromConfig(c *config.Config, log *slog.Logger) Options {
	svc := networking.Options{
		EnabledSwitchDrivers: c.ListOf(config.IronicNetworkingEnabledSwitchDrivers),
		SwitchConfigFile:     c.StringOf(config.IronicNetworkingSwitchConfigFile),
		Factories: map[string]networking.DriverFactory{
			"noop":                       networking.NewNoop,
			networking.GenericSwitchName: networking.NewGenericSwitch,
		},
		Log: log,
	}
	if c.HasOf(config.IronicNetworkingAllowedVlans) {
		svc.AllowedVLANs = append([]string{}, c.ListOf(config.IronicNetworkingAllowedVlans)...)
	}
	return Options{
		Networks: map[string]string{
			Idle:         c.StringOf(config.IronicNetworkingIdleNetwork),
			Cleaning:     c.StringOf(config.IronicNetworkingCleaningNetwork),
			Provisioning: c.StringOf(config.IronicNetworkingProvisioningNetwork),
			Rescuing:     c.StringOf(config.IronicNetworkingRescuingNetwork),
			Inspection:   c.StringOf(config.IronicNetworkingInspectionNetwork),
			Servicing:    c.StringOf(config.IronicNetworkingServicingNetwork),
		},
		Service: func() (Switches, error) { return networking.New(svc) },
	}
}
