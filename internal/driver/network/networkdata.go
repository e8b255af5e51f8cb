package network

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
)

var _ driver.NetworkDataProvider = (*Flat)(nil)

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
	port, err := o.user().ShowPort(ctx, vif)
	if err != nil {
		return nil, netErr(err, fmt.Sprintf("Unable to get port info for %s. Error: %v", vif, err))
	}
	linkID := p.UUID
	if name, _ := port["name"].(string); name != "" {
		linkID = name
	}
	netID, _ := port["network_id"].(string)
	network, err := o.user().ShowNetwork(ctx, netID)
	if err != nil {
		return nil, netErr(err, fmt.Sprintf("Unable to get network info for %s. Error: %v", netID, err))
	}
	data := map[string][]any{
		"links": {map[string]any{
			"id": linkID, "type": "vif", "ethernet_mac_address": port["mac_address"],
			"vif_id": port["id"], "mtu": network["mtu"],
		}},
	}
	fixed, _ := port["fixed_ips"].([]any)
	for _, fi := range fixed {
		ip, _ := fi.(map[string]any)
		subnetID, _ := ip["subnet_id"].(string)
		subnet, err := o.user().ShowSubnet(ctx, subnetID)
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
