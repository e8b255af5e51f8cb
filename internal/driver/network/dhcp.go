package network

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/store"
)

// vifKeys are the internal_info keys of a port's VIFs in upstream's NetType
// order: a service network's VIF is the one in use while it is plugged,
// the tenant's otherwise.
var vifKeys = []string{
	cleaningNet.key, provisioningNet.key, rescuingNet.key, inspectionNet.key, servicingNet.key, TenantVIFKey,
}

// CurrentVIF is upstream's network.get_current_vif for the node's network
// interface: the VIF a port or portgroup with this internal_info boots
// through now; the interfaces without VIFs (noop and the others) have
// none.
func CurrentVIF(task *driver.Task, internal map[string]any) string {
	if !tracksVIFs(task) {
		return ""
	}
	return currentVIF(internal)
}

// tracksVIFs tells whether the node's network interface keeps VIFs in
// internal_info: flat and neutron do.
func tracksVIFs(task *driver.Task) bool {
	if task == nil || task.Driver == nil {
		return false
	}
	switch task.Driver.Network.(type) {
	case *Flat, *Neutron:
		return true
	}
	return false
}

// currentVIF is VIFPortIDMixin.get_current_vif: a service network's VIF
// while it is plugged, the tenant's otherwise. As upstream, the first key
// present wins even when its value is empty.
func currentVIF(internal map[string]any) string {
	for _, k := range vifKeys {
		if v, ok := internal[k]; ok {
			s, _ := v.(string)
			return s
		}
	}
	return ""
}

// DHCP is upstream's neutron DHCP provider (ironic/dhcp/neutron.py): the
// boot interfaces' DHCP options go to the Neutron ports the node's ports
// boot through, for Neutron's DHCP agent to hand out.
type DHCP struct {
	Ports   PortStore
	Neutron *NeutronOptions
	// PortSetupDelay is [neutron]/port_setup_delay, waited after an
	// update for Neutron's agents to catch up.
	PortSetupDelay time.Duration
}

// SupportsIPXETag is upstream supports_ipxe_tag: Neutron's dnsmasq tags
// iPXE's requests, so options can tell iPXE from firmware.
func (d *DHCP) SupportsIPXETag() bool { return true }

// nodeVIFs is upstream get_node_vif_ids: the current VIF of each of the
// node's portgroups and ports, for the flat and neutron interfaces (noop
// and the others have none).
func (d *DHCP) nodeVIFs(ctx context.Context, task *driver.Task) ([]string, error) {
	if !tracksVIFs(task) {
		return nil, nil
	}
	id := task.Node.ID
	pgs, err := d.Ports.ListPortgroups(ctx, store.PortgroupFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list portgroups of node %s: %w", task.Node.UUID, err)
	}
	ports, err := d.Ports.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list ports of node %s: %w", task.Node.UUID, err)
	}
	var vifs []string
	for _, pg := range pgs {
		if v := CurrentVIF(task, pg.InternalInfo); v != "" {
			vifs = append(vifs, v)
		}
	}
	for _, p := range ports {
		if v := CurrentVIF(task, p.InternalInfo); v != "" {
			vifs = append(vifs, v)
		}
	}
	return vifs, nil
}

// UpdateDHCPOpts is upstream update_dhcp_opts: every VIF gets the options
// of the IP versions of its addresses; the node fails only when no VIF
// could be updated.
func (d *DHCP) UpdateDHCPOpts(ctx context.Context, task *driver.Task, opts []map[string]any) error {
	n := task.Node
	vifs, err := d.nodeVIFs(ctx, task)
	if err != nil {
		return err
	}
	if len(vifs) == 0 {
		return errs.NewMessage(errs.ClassFailedToUpdateDHCPOptOnPort, fmt.Sprintf("No VIFs found for node %s when attempting to update DHCP BOOT options.", n.UUID))
	}
	var failed []string
	for _, vif := range vifs {
		if err := d.updatePort(ctx, task, vif, opts); err != nil {
			task.Logger().ErrorContext(ctx, "failed to update Neutron port", "node", n.UUID, "port", vif, "error", err)
			failed = append(failed, vif)
		}
	}
	if len(failed) == len(vifs) {
		return errs.NewMessage(errs.ClassFailedToUpdateDHCPOptOnPort, fmt.Sprintf("Failed to set DHCP BOOT options for any port on node %s.", n.UUID))
	}
	if len(failed) > 0 {
		task.Logger().WarnContext(ctx, "some errors were encountered when updating the DHCP BOOT options", "node", n.UUID, "ports", failed)
	}
	if d.PortSetupDelay > 0 {
		return clock.Sleep(ctx, d.PortSetupDelay)
	}
	return nil
}

// updatePort is upstream update_port_dhcp_opts.
func (d *DHCP) updatePort(ctx context.Context, task *driver.Task, vif string, opts []map[string]any) error {
	port, err := d.Neutron.Client.ShowPort(ctx, vif)
	if err != nil {
		return fmt.Errorf("show port %s: %w", vif, err)
	}
	versions := map[int]bool{}
	fips, _ := port["fixed_ips"].([]any)
	for _, f := range fips {
		fip, _ := f.(map[string]any)
		ip, _ := fip["ip_address"].(string)
		if a, err := netip.ParseAddr(ip); err == nil && a.Is4() {
			versions[4] = true
		} else if err == nil {
			versions[6] = true
		}
	}
	if len(versions) == 0 {
		// As upstream, the port's options are still cleared.
		task.Logger().ErrorContext(ctx, "requested to update the DHCP options of a port that lacks an IP address", "node", task.Node.UUID, "port", vif)
	}
	update := []any{}
	for _, o := range opts {
		v := 4
		if iv, ok := o["ip_version"].(int); ok {
			v = iv
		}
		if versions[v] {
			update = append(update, o)
		}
	}
	if _, err := d.Neutron.Client.UpdatePort(ctx, vif, map[string]any{"extra_dhcp_opts": update}); err != nil {
		return fmt.Errorf("update port %s: %w", vif, err)
	}
	return nil
}

// GetIPAddresses is upstream get_ip_addresses: the first fixed IP of the
// current VIF of each of the node's ports, then of its portgroups. A port
// without a VIF or address, or whose Neutron port cannot be read, is
// skipped with a warning; an address that does not parse fails the call
// (upstream's InvalidIPAddress).
func (d *DHCP) GetIPAddresses(ctx context.Context, task *driver.Task) ([]string, error) {
	id := task.Node.ID
	ports, err := d.Ports.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list ports of node %s: %w", task.Node.UUID, err)
	}
	pgs, err := d.Ports.ListPortgroups(ctx, store.PortgroupFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list portgroups of node %s: %w", task.Node.UUID, err)
	}
	type held struct{ uuid, vif string }
	var portVIFs, pgVIFs []held
	for _, p := range ports {
		portVIFs = append(portVIFs, held{p.UUID, CurrentVIF(task, p.InternalInfo)})
	}
	for _, pg := range pgs {
		pgVIFs = append(pgVIFs, held{pg.UUID, CurrentVIF(task, pg.InternalInfo)})
	}
	addresses := []string{}
	for _, set := range []struct {
		kind string
		objs []held
	}{{"ports", portVIFs}, {"portgroups", pgVIFs}} {
		var failures []string
		for _, o := range set.objs {
			if o.vif == "" {
				task.Logger().WarnContext(ctx, "no VIF found when attempting to get an IP address", "node", task.Node.UUID, "object", o.uuid)
				failures = append(failures, o.uuid)
				continue
			}
			ip, err := d.fixedIP(ctx, task, o.vif)
			if err != nil {
				if errs.Is(err, errs.ClassInvalidIPAddress) {
					return nil, err
				}
				failures = append(failures, o.uuid)
				continue
			}
			addresses = append(addresses, ip)
		}
		if len(failures) > 0 {
			task.Logger().WarnContext(ctx, "some errors were encountered while retrieving IP addresses", "node", task.Node.UUID, set.kind, failures)
		}
	}
	return addresses, nil
}

// fixedIP is upstream _get_fixed_ip_address: the first fixed IP of the
// Neutron port, the only one Nova allocates.
func (d *DHCP) fixedIP(ctx context.Context, task *driver.Task, vif string) (string, error) {
	port, err := d.Neutron.Client.ShowPort(ctx, vif)
	if err != nil {
		return "", errs.NewMessage(errs.ClassNetworkError, "Could not retrieve neutron port: "+vif)
	}
	var ip string
	if fips, _ := port["fixed_ips"].([]any); len(fips) > 0 {
		fip, _ := fips[0].(map[string]any)
		ip, _ = fip["ip_address"].(string)
	}
	if ip == "" {
		task.Logger().ErrorContext(ctx, "no IP address assigned to Neutron port", "port", vif)
		return "", errs.New(errs.ClassFailedToGetIPAddressOnPort, map[string]any{"port_id": vif})
	}
	if _, err := netip.ParseAddr(ip); err != nil {
		task.Logger().ErrorContext(ctx, "an invalid IP address failed basic validation", "port", vif, "error", err)
		return "", errs.New(errs.ClassInvalidIPAddress, map[string]any{"ip_address": ip})
	}
	return ip, nil
}
