package network

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/neutron"
)

var (
	_ driver.NetworkDataProvider              = (*Flat)(nil)
	_ driver.InstanceNetworkMetadataGenerator = (*Flat)(nil)
)

// GetNodeNetworkData is upstream's get_node_network_data: the node's
// static network_data when set, else (with Neutron) the network_data.json
// layout gathered from the VIF each port currently uses. As upstream,
// portgroups are not considered.
func (f *Flat) GetNodeNetworkData(ctx context.Context, task *driver.Task) (map[string]any, error) {
	if len(task.Node.NetworkData) > 0 {
		return task.Node.NetworkData, nil
	}
	if f.Neutron == nil {
		return map[string]any{}, nil
	}
	ports, _, err := f.load(ctx, task.Node)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, p := range ports {
		vif, _ := f.GetCurrentVif(ctx, task, p.InternalInfo)
		if vif == "" {
			continue
		}
		data, err := f.Neutron.portData(ctx, p, vif)
		if err != nil {
			return nil, err
		}
		for _, field := range []string{"links", "networks", "services"} {
			if items := data[field]; len(items) > 0 {
				prev, _ := out[field].([]any)
				out[field] = append(prev, items...)
			}
		}
	}
	return out, nil
}

// portData is upstream's get_neutron_port_data for one port's VIF.
func (o *NeutronOptions) portData(ctx context.Context, p *model.Port, vif string) (map[string][]any, error) {
	return neutronPortData(ctx, o.user(), portLink{id: p.UUID, vif: vif, ifaceType: "vif"})
}

// portLink is what get_neutron_port_data is asked for: the link id to use
// when the Neutron port has no name, the VIF, an override of its MAC
// address, the link type, and the member links that make it a bond.
type portLink struct {
	id, vif, mac, ifaceType string
	bondLinks               []any
}

// neutronPortData is upstream's get_neutron_port_data: the port's link,
// and a network and DNS services for each of its fixed IPs.
func neutronPortData(ctx context.Context, c *neutron.Client, pl portLink) (map[string][]any, error) {
	vif := pl.vif
	port, err := c.ShowPort(ctx, vif)
	if err != nil {
		return nil, netErr(err, fmt.Sprintf("Unable to get port info for %s. Error: %v", vif, err))
	}
	linkID := pl.id
	if name, _ := port["name"].(string); name != "" {
		linkID = name
	}
	netID, _ := port["network_id"].(string)
	network, err := c.ShowNetwork(ctx, netID)
	if err != nil {
		return nil, netErr(err, fmt.Sprintf("Unable to get network info for %s. Error: %v", netID, err))
	}
	mac := port["mac_address"]
	if pl.mac != "" {
		mac = pl.mac
	}
	link := map[string]any{
		"id": linkID, "type": pl.ifaceType, "ethernet_mac_address": mac,
		"vif_id": port["id"], "mtu": network["mtu"],
	}
	data := map[string][]any{"links": {link}}
	if len(pl.bondLinks) > 0 {
		link["type"] = "bond"
		ids := make([]any, 0, len(pl.bondLinks))
		for _, b := range pl.bondLinks {
			ids = append(ids, b.(map[string]any)["id"])
		}
		link["bond_links"] = ids
		data["links"] = append(data["links"], pl.bondLinks...)
	}
	fixed, _ := port["fixed_ips"].([]any)
	for _, fi := range fixed {
		ip, _ := fi.(map[string]any)
		subnetID, _ := ip["subnet_id"].(string)
		subnet, err := c.ShowSubnet(ctx, subnetID)
		if err != nil {
			return nil, netErr(err, fmt.Sprintf("Unable to get subnet info for %s. Error: %v", subnetID, err))
		}
		cidr, _ := subnet["cidr"].(string)
		_, mask, err := uncidr(cidr)
		if err != nil {
			return nil, netErr(err, fmt.Sprintf("Unable to read the CIDR of subnet %s: %v", subnetID, err))
		}
		version := fmt.Sprint(subnet["ip_version"])
		routes := []any{}
		if gw, _ := subnet["gateway_ip"].(string); gw != "" {
			zero := "0.0.0.0"
			if version == "6" {
				zero = "::0"
			}
			routes = append(routes, map[string]any{"network": zero, "netmask": zero, "gateway": gw})
		}
		hostRoutes, _ := subnet["host_routes"].([]any)
		for _, hr := range hostRoutes {
			r, _ := hr.(map[string]any)
			dest, _ := r["destination"].(string)
			rnet, rmask, err := uncidr(dest)
			if err != nil {
				return nil, netErr(err, fmt.Sprintf("Unable to read host route %s of subnet %s: %v", dest, subnetID, err))
			}
			routes = append(routes, map[string]any{"network": rnet, "netmask": rmask, "gateway": r["nexthop"]})
		}
		data["networks"] = append(data["networks"], map[string]any{
			"id": subnetID, "network_id": port["network_id"], "type": "ipv" + version,
			"link": linkID, "ip_address": ip["ip_address"], "netmask": mask, "routes": routes,
		})
		dns, _ := subnet["dns_nameservers"].([]any)
		for _, d := range dns {
			data["services"] = append(data["services"], map[string]any{"type": "dns", "address": d})
		}
	}
	return data, nil
}

// GenerateInstanceNetworkData is upstream's
// generate_instance_network_data: the network_data.json layout of the
// tenant VIFs of the node's ports (a "phy" link each) and portgroups (a
// "bond" link over a "phy" link per member port), with the links renamed
// iface0, iface1… (some config drive readers take a link's id for the
// interface name) and the bonds and networks pointing at the new names.
// As upstream, Neutron is asked with the service's credentials.
func (f *Flat) GenerateInstanceNetworkData(ctx context.Context, task *driver.Task) (map[string]any, error) {
	if f.Neutron == nil {
		// Standalone flat (no [neutron] service, which master's flat
		// always has) knows nothing of its VIFs beyond their ids: no
		// metadata, so the submitted config drive is kept.
		return map[string]any{"links": []any{}, "networks": []any{}, "services": []any{}}, nil
	}
	ports, pgs, err := f.load(ctx, task.Node)
	if err != nil {
		return nil, err
	}
	var asked []portLink
	for _, p := range ports {
		if vif, _ := p.InternalInfo[TenantVIFKey].(string); vif != "" {
			asked = append(asked, portLink{id: fmt.Sprint(p.ID), vif: vif, mac: deref(p.Address), ifaceType: "phy"})
		}
	}
	for _, pg := range pgs {
		vif, _ := pg.InternalInfo[TenantVIFKey].(string)
		if vif == "" {
			continue
		}
		var members []any
		for _, p := range ports {
			if p.PortgroupID != nil && *p.PortgroupID == pg.ID {
				members = append(members, map[string]any{"id": p.UUID, "type": "phy", "ethernet_mac_address": deref(p.Address)})
			}
		}
		asked = append(asked, portLink{id: fmt.Sprint(pg.ID), vif: vif, mac: deref(pg.Address), ifaceType: "bond", bondLinks: members})
	}
	links, networks, services := []any{}, []any{}, []any{}
	for _, pl := range asked {
		data, err := neutronPortData(ctx, f.Neutron.Client, pl)
		if err != nil {
			return nil, err
		}
		links = append(links, data["links"]...)
		networks = append(networks, data["networks"]...)
		services = append(services, data["services"]...)
	}
	names := map[any]string{}
	for i, l := range links {
		link := l.(map[string]any)
		names[link["id"]] = fmt.Sprintf("iface%d", i)
		link["id"] = names[link["id"]]
	}
	// Upstream's loop over the bonds never advances its index, so it
	// renames only when the bond is the first link; every bond is renamed
	// here, which is what that loop means to do.
	for _, l := range links {
		link := l.(map[string]any)
		if members, _ := link["bond_links"].([]any); len(members) > 0 {
			renamed := make([]any, len(members))
			for i, m := range members {
				renamed[i] = names[m]
			}
			link["bond_links"] = renamed
		}
	}
	for _, n := range networks {
		network := n.(map[string]any)
		network["link"] = names[network["link"]]
	}
	return map[string]any{"links": links, "networks": networks, "services": services}, nil
}

// uncidr is upstream's _uncidr: a CIDR as network address and netmask in
// dotted (or IPv6) notation.
func uncidr(cidr string) (string, string, error) {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return "", "", fmt.Errorf("parse CIDR %q: %w", cidr, err)
	}
	prefix = prefix.Masked()
	mask := net.CIDRMask(prefix.Bits(), prefix.Addr().BitLen())
	maskAddr, _ := netip.AddrFromSlice(mask)
	return prefix.Addr().String(), maskAddr.String(), nil
}
