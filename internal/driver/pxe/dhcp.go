package pxe

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// DHCPProvider is upstream's DHCP provider API as the boot interfaces use
// it ([dhcp]/dhcp_provider): network.DHCP for Neutron.
type DHCPProvider interface {
	// UpdateDHCPOpts sets the boot options on the node's current VIFs.
	UpdateDHCPOpts(ctx context.Context, task *driver.Task, opts []map[string]any) error
	// SupportsIPXETag tells whether the DHCP server tags iPXE's requests.
	SupportsIPXETag() bool
	// GetIPAddresses lists the addresses the node's ports hold, which
	// GRUB asks for its configuration by (upstream get_ip_addresses).
	GetIPAddresses(ctx context.Context, task *driver.Task) ([]string, error)
}

// DHCP option codes of upstream's pxe_utils.
const (
	dhcpVendorClassID    = "60"
	dhcpTFTPServerName   = "66"
	dhcpBootfileName     = "67"
	dhcpv6BootfileName   = "59"
	dhcpTFTPServerAddr   = "150"
	dhcpIPXEEncapOpts    = "175"
	dhcpServerIPAddress  = "255"
	neutronOptValueLimit = 64
)

// pxeBootFile is upstream get_pxe_boot_file: by architecture and boot
// mode, by architecture, then by boot mode.
func (b *Boot) pxeBootFile(n *model.Node) string {
	arch, _ := n.Properties["cpu_arch"].(string)
	mode := b.bootMode(n)
	if f, ok := b.opts.PXEBootfileByArch[arch+"-"+mode]; ok {
		return f
	}
	if f, ok := b.opts.PXEBootfileByArch[arch]; ok {
		return f
	}
	if mode == "uefi" {
		return b.opts.UEFIPXEBootfileName
	}
	return b.opts.PXEBootfileName
}

// ipxeBootFile is upstream get_ipxe_boot_file, the same for iPXE's
// binaries.
func (b *Boot) ipxeBootFile(n *model.Node) string {
	arch, _ := n.Properties["cpu_arch"].(string)
	mode := b.bootMode(n)
	if f, ok := b.opts.IPXEBootfileByArch[arch+"-"+mode]; ok {
		return f
	}
	if f, ok := b.opts.IPXEBootfileByArch[arch]; ok {
		return f
	}
	f := b.opts.IPXEBootfileName
	if mode == "uefi" {
		f = b.opts.UEFIIPXEBootfileName
	}
	if f == "" {
		return b.pxeBootFile(n)
	}
	return f
}

// escapeIPv6 brackets an IPv6 address for a URL, as oslo's escape_ipv6.
func escapeIPv6(host string) string {
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() {
		return "[" + host + "]"
	}
	return host
}

// bootFileOrURL is upstream _dhcp_option_file_or_url.
func (b *Boot) bootFileOrURL(n *model.Node, urlBoot bool, ipVersion int) (string, error) {
	file := b.pxeBootFile(n)
	if b.ipxe {
		file = b.ipxeBootFile(n)
	}
	result := file
	switch {
	case urlBoot && b.httpBoot:
		result = b.opts.HTTPURL + "/" + file
	case urlBoot:
		host := escapeIPv6(b.opts.TFTPServer)
		if b.opts.MyIPv6 != "" && ipVersion == 6 {
			host = escapeIPv6(b.opts.MyIPv6)
		}
		result = "tftp://" + host + "/" + file
	}
	if len(result) > neutronOptValueLimit {
		return "", errs.NewMessage(errs.ClassInvalidParameterValue, "The resulting boot file or URL length exceeds Neutron limitations. "+
			"Please explore shorter file names or hostnames.")
	}
	return result, nil
}

// dhcpOptions is upstream dhcp_options_for_instance for one IP version.
func (b *Boot) dhcpOptions(n *model.Node, ipVersion int) ([]map[string]any, error) {
	param, urlBoot := dhcpBootfileName, false
	if ipVersion == 6 {
		// DHCPv6 always answers with a URL.
		param, urlBoot = dhcpv6BootfileName, true
	}
	if b.httpBoot {
		urlBoot = true
	}
	file, err := b.bootFileOrURL(n, urlBoot, ipVersion)
	if err != nil {
		return nil, err
	}
	var opts []map[string]any
	add := func(name, value string) { opts = append(opts, map[string]any{"opt_name": name, "opt_value": value}) }
	if b.ipxe {
		script := BootScriptName
		if custom(b.opts.IPXEBootScript) {
			script = filepath.Base(b.opts.IPXEBootScript)
		}
		scriptURL := strings.Join([]string{b.opts.HTTPURL, script}, "/")
		switch {
		case b.opts.DHCP != nil && b.opts.DHCP.SupportsIPXETag() && ipVersion == 6:
			add("tag:!ipxe6,"+param, file)
			add("tag:ipxe6,"+param, scriptURL)
		case b.opts.DHCP != nil && b.opts.DHCP.SupportsIPXETag():
			add("tag:!ipxe,"+param, file)
			add("tag:ipxe,"+param, scriptURL)
		default:
			// Option 175 is iPXE's encapsulated options: its absence
			// marks firmware.
			add("!"+dhcpIPXEEncapOpts+","+param, file)
			add(param, scriptURL)
		}
	} else {
		add(param, file)
	}
	if b.httpBoot && ipVersion == 4 {
		add(dhcpVendorClassID, "HTTPClient")
	}
	if !urlBoot {
		add(dhcpTFTPServerName, b.opts.TFTPServer)
		add(dhcpTFTPServerAddr, b.opts.TFTPServer)
		// dnsmasq puts its own address in siaddr without it, which PXE
		// clients take for the TFTP server.
		add(dhcpServerIPAddress, b.opts.TFTPServer)
	}
	for _, o := range opts {
		o["ip_version"] = ipVersion
	}
	return opts, nil
}

// updateDHCP is what upstream's prepare_ramdisk and
// prepare_instance_pxe_config do with the DHCP provider: the options of
// both IP versions are sent for the provider to filter by address.
func (b *Boot) updateDHCP(ctx context.Context, task *driver.Task) error {
	if b.opts.DHCP == nil {
		return nil
	}
	var all []map[string]any
	for _, v := range []int{4, 6} {
		opts, err := b.dhcpOptions(task.Node, v)
		if err != nil {
			return err
		}
		all = append(all, opts...)
	}
	if err := b.opts.DHCP.UpdateDHCPOpts(ctx, task, all); err != nil {
		return fmt.Errorf("update DHCP options of node %s: %w", task.Node.UUID, err)
	}
	return nil
}
