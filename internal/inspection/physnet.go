package inspection

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/openkeel/ironic/internal/model"
)

// cidrPhysnet is one physical_network_cidr_map item.
type cidrPhysnet struct {
	prefix  netip.Prefix
	physnet string
}

// parseCIDRMap reads [inspector]/physical_network_cidr_map as upstream
// does each time it is needed: "CIDR:physnet", split at the last colon,
// the CIDR strict (no host bits); a later item for the same network
// replaces the physnet in place.
func parseCIDRMap(items []string) ([]cidrPhysnet, error) {
	var out []cidrPhysnet
	for _, item := range items {
		cidr, physnet := item, ""
		i := strings.LastIndexByte(item, ':')
		if i >= 0 {
			cidr, physnet = item[:i], item[i+1:]
		}
		// Upstream parses the network before it takes the physnet.
		p, err := strictNetwork(cidr)
		if err != nil {
			return nil, err
		}
		if i < 0 {
			return nil, pyErr("IndexError", "list index out of range")
		}
		replaced := false
		for j := range out {
			if out[j].prefix == p {
				out[j].physnet, replaced = physnet, true
			}
		}
		if !replaced {
			out = append(out, cidrPhysnet{p, physnet})
		}
	}
	return out, nil
}

// strictNetwork is Python's ipaddress.ip_network(s): a bare address is a
// host network, host bits set are refused.
func strictNetwork(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, pyErr("ValueError", "%s does not appear to be an IPv4 or IPv6 network", pyRepr(s))
		}
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, pyErr("ValueError", "%s does not appear to be an IPv4 or IPv6 network", pyRepr(s))
	}
	if p.Masked() != p {
		return netip.Prefix{}, pyErr("ValueError", "%s has host bits set", s)
	}
	return p, nil
}

// interfaceIPs are the interface's addresses Python's ip_address accepts,
// IPv4 first; a scope does not keep an IPv6 address out of a network.
func interfaceIPs(iface map[string]any) []netip.Addr {
	var out []netip.Addr
	for _, k := range []string{"ipv4_address", "ipv6_address"} {
		s, ok := iface[k].(string)
		if !ok {
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, a.WithZone(""))
		}
	}
	return out
}

// physicalNetworkHook is upstream's physical-network hook: a port whose
// interface has an address in a mapped CIDR gets that physical network.
// Ports are matched on the inventory's MAC exactly as written.
func physicalNetworkHook(ctx context.Context, r *hookRun) error {
	return walkPortInterfaces(ctx, r, func(iface map[string]any, _, mac any, ports []*model.Port) error {
		var port *model.Port
		for _, p := range ports {
			if p.Address != nil && any(*p.Address) == mac {
				port = p
			}
		}
		if port == nil {
			r.log.Debug("Skipping physical network processing: matching port not found", "mac", pyStr(mac))
			return nil
		}
		cidrs, err := parseCIDRMap(r.o.PhysicalNetworkCIDRMap)
		if err != nil {
			return err
		}
		physnet, found := "", false
		for _, ip := range interfaceIPs(iface) {
			for _, c := range cidrs {
				if c.prefix.Contains(ip) {
					physnet, found = c.physnet, true
					break
				}
			}
			if found {
				break
			}
		}
		if !found {
			r.log.Debug("Skipping physical network processing: no physical network mapping", "mac", pyStr(mac))
			return nil
		}
		if port.PhysicalNetwork == nil || *port.PhysicalNetwork != physnet {
			port.PhysicalNetwork = &physnet
			if err := r.t.UpdatePort(ctx, port); err != nil {
				return fmt.Errorf("update port %s: %w", port.UUID, err)
			}
		}
		return nil
	})
}

// walkPortInterfaces is the walk upstream's local-link-connection and
// physical-network hooks share: fn gets each inventory interface that
// plugin data all_interfaces names, with its name and MAC, and the
// node's ports to match it against. A missing key fails the hook as the
// KeyError it is upstream, at the interface where it is missing.
func walkPortInterfaces(ctx context.Context, r *hookRun, fn func(iface map[string]any, name, mac any, ports []*model.Port) error) error {
	ifaces, err := inventoryInterfaces(r.inventory)
	if err != nil {
		return err
	}
	all, _ := r.pluginData["all_interfaces"].(map[string]any)
	ports, err := r.t.Ports(ctx)
	if err != nil {
		return err
	}
	for _, iface := range ifaces {
		name, err := ifaceField(iface, "name")
		if err != nil {
			return err
		}
		if _, ok := all[pyStr(name)]; !ok {
			continue
		}
		mac, err := ifaceField(iface, "mac_address")
		if err != nil {
			return err
		}
		if err := fn(iface, name, mac, ports); err != nil {
			return err
		}
	}
	return nil
}

// inventoryInterfaces is upstream's inventory['interfaces'] for hooks
// that index it without checks.
func inventoryInterfaces(inventory map[string]any) ([]map[string]any, error) {
	raw, ok := inventory["interfaces"]
	if !ok {
		return nil, keyError("interfaces")
	}
	return pyDicts(raw, func(it any) error {
		return pyErr("TypeError", "'%s' object is not subscriptable", pyType(it))
	})
}

func ifaceField(iface map[string]any, key string) (any, error) {
	v, ok := iface[key]
	if !ok {
		return nil, keyError(key)
	}
	return v, nil
}
