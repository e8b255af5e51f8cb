package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// PortCreator is what pre-creating ports needs of the conductor's store.
type PortCreator interface {
	CreatePort(ctx context.Context, p *model.Port) (*model.Port, error)
}

// lookupCacheKey is upstream's LOOKUP_CACHE_FIELD: the BMC addresses the
// continue_inspection lookup matches against the ramdisk's bmc_address.
const lookupCacheKey = model.DIILookupBMCAddresses

// HostResolver is the part of net.Resolver the lookup cache uses.
type HostResolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

// cacheLookupAddresses is upstream cache_lookup_addresses: the hosts of
// every *_address in driver_info with the IPs they resolve to, loopback
// left out (a ramdisk never reports its BMC as loopback). An IP literal
// is taken as it is, without asking the resolver.
func (i *Inspect) cacheLookupAddresses(ctx context.Context, task *driver.Task) {
	n := task.Node
	resolver := i.o.Resolver
	if resolver == nil {
		resolver = net.DefaultResolver
	}
	seen := map[string]bool{}
	for name, v := range n.DriverInfo {
		address, ok := v.(string)
		if !strings.HasSuffix(name, "_address") || !ok || address == "" {
			continue
		}
		if strings.HasPrefix(name, "ipmi_") && bridged(n) {
			continue
		}
		if strings.Contains(address, "//") {
			if u, err := url.Parse(address); err == nil {
				address = u.Hostname()
			}
		}
		address = strings.Trim(address, "[]")
		if ip := net.ParseIP(address); ip != nil {
			if !ip.IsLoopback() {
				seen[address] = true
			}
			continue
		}
		ips, err := resolver.LookupHost(ctx, address)
		if err != nil {
			task.Logger().WarnContext(ctx, "failed to resolve a BMC address for inspection lookup", "field", name, "address", address, "error", err)
			continue
		}
		for _, ip := range ips {
			if p := net.ParseIP(ip); p != nil && !p.IsLoopback() {
				seen[ip] = true
			}
		}
		if address != "localhost" {
			seen[address] = true
		}
	}
	if len(seen) == 0 {
		n.InternalInfo().Delete(lookupCacheKey)
		return
	}
	list := make([]any, 0, len(seen))
	keys := make([]string, 0, len(seen))
	for a := range seen {
		keys = append(keys, a)
	}
	sort.Strings(keys)
	for _, a := range keys {
		list = append(list, a)
	}
	n.InternalInfo().Set(lookupCacheKey, list)
}

// bridged tells whether IPMI bridging is on, which makes ipmi_address
// useless for lookup.
func bridged(n *model.Node) bool {
	b, _ := n.DriverInfo["ipmi_bridging"].(string)
	return b == "single" || b == "dual"
}

// preCreatePorts is upstream create_ports_if_not_exist with the MACs the
// management interface reports ([inspector]/pre_create_ports), so that
// the ramdisk's lookup finds the node by MAC before inspection made any
// port.
func (i *Inspect) preCreatePorts(ctx context.Context, task *driver.Task) {
	lister, ok := task.Driver.Management.(driver.MACAddressLister)
	if !ok || i.o.Ports == nil {
		return
	}
	macs, err := lister.GetMACAddresses(ctx, task)
	if err != nil {
		task.Logger().WarnContext(ctx, "could not get MAC addresses to pre-create ports", "error", err)
		return
	}
	if len(macs) == 0 {
		task.Logger().WarnContext(ctx, "not attempting to create any port as no NICs were discovered in 'enabled' state")
		return
	}
	for _, mac := range macs {
		if _, err := net.ParseMAC(mac); err != nil {
			task.Logger().WarnContext(ctx, "ignoring NIC address because it is not a valid MAC", "address", mac)
			continue
		}
		address, node := strings.ToLower(mac), task.Node.ID
		_, err := i.o.Ports.CreatePort(ctx, &model.Port{UUID: uuid.NewString(), NodeID: &node, Address: &address})
		switch {
		case err == nil:
			task.Logger().InfoContext(ctx, "port created for MAC address", "address", address)
		case errors.Is(err, store.ErrDuplicate):
			task.Logger().InfoContext(ctx, "port already exists for MAC address", "address", address)
		default:
			task.Logger().WarnContext(ctx, "could not pre-create a port", "address", address, "error", fmt.Errorf("create port: %w", err))
		}
	}
}
