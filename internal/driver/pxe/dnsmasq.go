package pxe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// DHCPCleaner is a DHCP provider that forgets a node's options when its
// instance is cleaned up (upstream clean_dhcp_opts).
type DHCPCleaner interface {
	CleanDHCPOpts(ctx context.Context, task *driver.Task) error
}

// Dnsmasq is upstream's dnsmasq DHCP provider (ironic/dhcp/dnsmasq.py):
// the node's options go to a file of [dnsmasq]/dhcp_optsdir under a tag
// of its own, and each PXE-enabled MAC address to a file of
// [dnsmasq]/dhcp_hostsdir setting that tag, for a dnsmasq configured with
// dhcp-optsdir, dhcp-hostsdir and "dhcp-match=set:ipxe,175". The
// addresses it handed out are read back from its lease file
// ([dnsmasq]/dhcp_leasefile).
type Dnsmasq struct {
	HostsDir, OptsDir, LeaseFile string
	Ports                        PortLister
}

var (
	_ DHCPProvider = (*Dnsmasq)(nil)
	_ DHCPCleaner  = (*Dnsmasq)(nil)
)

// SupportsIPXETag is true: dnsmasq tags iPXE's requests with dhcp-match.
func (d *Dnsmasq) SupportsIPXETag() bool { return true }

func (d *Dnsmasq) optFile(n *model.Node) string {
	return filepath.Join(d.OptsDir, "ironic-"+n.UUID+".conf")
}

func (d *Dnsmasq) hostFile(mac string) string {
	return filepath.Join(d.HostsDir, "ironic-"+mac+".conf")
}

func (d *Dnsmasq) pxeMACs(ctx context.Context, n *model.Node) ([]string, error) {
	id := n.ID
	ports, err := d.Ports.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list ports of node %s: %w", n.UUID, err)
	}
	var macs []string
	for _, p := range ports {
		if p.Address != nil && (p.PXEEnabled == nil || *p.PXEEnabled) {
			macs = append(macs, *p.Address)
		}
	}
	return macs, nil
}

// UpdateDHCPOpts writes the node's options under its tag (made once and
// kept in driver_internal_info dnsmasq_tag) and the host entries giving
// its PXE-enabled MAC addresses that tag.
func (d *Dnsmasq) UpdateDHCPOpts(ctx context.Context, task *driver.Task, opts []map[string]any) error {
	n := task.Node
	macs, err := d.pxeMACs(ctx, n)
	if err != nil {
		return err
	}
	tag, _ := n.InternalInfo().Get(model.DIIDnsmasqTag).(string)
	if tag == "" {
		tag = uuid.NewString()
		n.InternalInfo().Set(model.DIIDnsmasqTag, tag)
	}
	var lines []string
	for _, o := range opts {
		name, okName := o["opt_name"]
		value, okValue := o["opt_value"]
		if !okName || !okValue {
			task.Logger().WarnContext(ctx, "ignoring a DHCP option without name or value", "node", n.UUID, "option", o)
			continue
		}
		lines = append(lines, fmt.Sprintf("tag:%s,%v,%v", tag, name, value))
	}
	if err := writeDnsmasqFile(d.optFile(n), strings.Join(lines, "\n")+"\n"); err != nil {
		return err
	}
	for _, mac := range macs {
		if err := writeDnsmasqFile(d.hostFile(mac), mac+",set:"+tag+",set:ironic\n"); err != nil {
			return err
		}
	}
	return nil
}

// CleanDHCPOpts has dnsmasq ignore the node's MAC addresses and removes
// its options.
func (d *Dnsmasq) CleanDHCPOpts(ctx context.Context, task *driver.Task) error {
	n := task.Node
	n.InternalInfo().Delete(model.DIIDnsmasqTag)
	macs, err := d.pxeMACs(ctx, n)
	if err != nil {
		return err
	}
	for _, mac := range macs {
		if err := writeDnsmasqFile(d.hostFile(mac), mac+",ignore\n"); err != nil {
			return err
		}
	}
	if err := os.Remove(d.optFile(n)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove DHCP options of node %s: %w", n.UUID, err)
	}
	return nil
}

// GetIPAddresses is upstream's dnsmasq get_ip_addresses: the addresses
// of the lease file's entries for the node's PXE-enabled MAC addresses.
// A lease line reads "expiry mac ip hostname client-id"; as upstream, a
// lease file that cannot be read fails the caller.
func (d *Dnsmasq) GetIPAddresses(ctx context.Context, task *driver.Task) ([]string, error) {
	macs, err := d.pxeMACs(ctx, task.Node)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, m := range macs {
		known[strings.ToLower(m)] = true
	}
	data, err := os.ReadFile(d.LeaseFile)
	if err != nil {
		return nil, fmt.Errorf("read dnsmasq leases of node %s: %w", task.Node.UUID, err)
	}
	addresses := []string{}
	for _, line := range strings.Split(string(data), "\n") {
		// Short lines (the DHCPv6 "duid" line, blank ones) name no MAC
		// address.
		if f := strings.Fields(line); len(f) >= 3 && known[strings.ToLower(f[1])] {
			addresses = append(addresses, f[2])
		}
	}
	task.Logger().DebugContext(ctx, "found addresses in the dnsmasq leases", "node", task.Node.UUID, "addresses", strings.Join(addresses, ", "))
	return addresses, nil
}

func writeDnsmasqFile(path, content string) error {
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return fmt.Errorf("write dnsmasq file: %w", err)
	}
	return nil
}
