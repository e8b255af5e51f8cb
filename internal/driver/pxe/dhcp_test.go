package pxe

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
)

// upstreamDHCP is what upstream's dhcp_options_for_instance returns, IPv4
// then IPv6, for the cases of TestDHCPOptions: upstream's pxe_utils.py and
// deploy_utils' get_pxe_boot_file and get_ipxe_boot_file at 7bc6aba7dda0,
// run on Debian's ironic 21.4 libraries with [pxe]/tftp_server 192.0.2.1,
// [deploy]/http_url http://127.0.0.1:8080, [dhcp]/dhcp_provider neutron,
// [pxe]/ipxe_bootfile_name_by_arch {aarch64-uefi: snp-arm.efi},
// [pxe]/pxe_bootfile_name_by_arch {aarch64: grubaa64.efi}, other options
// at their defaults, and a node whose capabilities give the boot mode.
var upstreamDHCP = map[string]string{
	"http uefi":         `[{"ip_version":4,"opt_name":"67","opt_value":"http://127.0.0.1:8080/bootx64.efi"},{"ip_version":4,"opt_name":"60","opt_value":"HTTPClient"},{"ip_version":6,"opt_name":"59","opt_value":"http://127.0.0.1:8080/bootx64.efi"}]`,
	"http-ipxe uefi":    `[{"ip_version":4,"opt_name":"tag:!ipxe,67","opt_value":"http://127.0.0.1:8080/snponly.efi"},{"ip_version":4,"opt_name":"tag:ipxe,67","opt_value":"http://127.0.0.1:8080/boot.ipxe"},{"ip_version":4,"opt_name":"60","opt_value":"HTTPClient"},{"ip_version":6,"opt_name":"tag:!ipxe6,59","opt_value":"http://127.0.0.1:8080/snponly.efi"},{"ip_version":6,"opt_name":"tag:ipxe6,59","opt_value":"http://127.0.0.1:8080/boot.ipxe"}]`,
	"ipxe aarch64 uefi": `[{"ip_version":4,"opt_name":"tag:!ipxe,67","opt_value":"snp-arm.efi"},{"ip_version":4,"opt_name":"tag:ipxe,67","opt_value":"http://127.0.0.1:8080/boot.ipxe"},{"ip_version":4,"opt_name":"66","opt_value":"192.0.2.1"},{"ip_version":4,"opt_name":"150","opt_value":"192.0.2.1"},{"ip_version":4,"opt_name":"255","opt_value":"192.0.2.1"},{"ip_version":6,"opt_name":"tag:!ipxe6,59","opt_value":"tftp://192.0.2.1/snp-arm.efi"},{"ip_version":6,"opt_name":"tag:ipxe6,59","opt_value":"http://127.0.0.1:8080/boot.ipxe"}]`,
	"ipxe bios":         `[{"ip_version":4,"opt_name":"tag:!ipxe,67","opt_value":"undionly.kpxe"},{"ip_version":4,"opt_name":"tag:ipxe,67","opt_value":"http://127.0.0.1:8080/boot.ipxe"},{"ip_version":4,"opt_name":"66","opt_value":"192.0.2.1"},{"ip_version":4,"opt_name":"150","opt_value":"192.0.2.1"},{"ip_version":4,"opt_name":"255","opt_value":"192.0.2.1"},{"ip_version":6,"opt_name":"tag:!ipxe6,59","opt_value":"tftp://192.0.2.1/undionly.kpxe"},{"ip_version":6,"opt_name":"tag:ipxe6,59","opt_value":"http://127.0.0.1:8080/boot.ipxe"}]`,
	"pxe aarch64":       `[{"ip_version":4,"opt_name":"67","opt_value":"grubaa64.efi"},{"ip_version":4,"opt_name":"66","opt_value":"192.0.2.1"},{"ip_version":4,"opt_name":"150","opt_value":"192.0.2.1"},{"ip_version":4,"opt_name":"255","opt_value":"192.0.2.1"},{"ip_version":6,"opt_name":"59","opt_value":"tftp://192.0.2.1/grubaa64.efi"}]`,
	"pxe bios":          `[{"ip_version":4,"opt_name":"67","opt_value":"pxelinux.0"},{"ip_version":4,"opt_name":"66","opt_value":"192.0.2.1"},{"ip_version":4,"opt_name":"150","opt_value":"192.0.2.1"},{"ip_version":4,"opt_name":"255","opt_value":"192.0.2.1"},{"ip_version":6,"opt_name":"59","opt_value":"tftp://192.0.2.1/pxelinux.0"}]`,
	"pxe uefi":          `[{"ip_version":4,"opt_name":"67","opt_value":"bootx64.efi"},{"ip_version":4,"opt_name":"66","opt_value":"192.0.2.1"},{"ip_version":4,"opt_name":"150","opt_value":"192.0.2.1"},{"ip_version":4,"opt_name":"255","opt_value":"192.0.2.1"},{"ip_version":6,"opt_name":"59","opt_value":"tftp://192.0.2.1/bootx64.efi"}]`,
	"pxe uefi my_ipv6":  `[{"ip_version":4,"opt_name":"67","opt_value":"bootx64.efi"},{"ip_version":4,"opt_name":"66","opt_value":"192.0.2.1"},{"ip_version":4,"opt_name":"150","opt_value":"192.0.2.1"},{"ip_version":4,"opt_name":"255","opt_value":"192.0.2.1"},{"ip_version":6,"opt_name":"59","opt_value":"tftp://[2001:db8::1]/bootx64.efi"}]`,
}

// dhcpRecorder is a DHCP provider keeping what it was asked to set and
// answering addrs for the node's addresses.
type dhcpRecorder struct {
	opts  [][]map[string]any
	err   error
	addrs []string
}

func (d *dhcpRecorder) GetIPAddresses(context.Context, *driver.Task) ([]string, error) {
	return d.addrs, nil
}

func (d *dhcpRecorder) UpdateDHCPOpts(_ context.Context, _ *driver.Task, opts []map[string]any) error {
	d.opts = append(d.opts, opts)
	return d.err
}

func (d *dhcpRecorder) SupportsIPXETag() bool { return true }

// The DHCP options sent when preparing the ramdisk are upstream's, for each
// interface, boot mode, architecture and IP version.
func TestDHCPOptions(t *testing.T) {
	for _, tc := range []struct {
		name, mode, arch, myIPv6 string
		iface                    func(Options) *Boot
	}{
		{name: "pxe bios", mode: "bios", iface: NewPXE},
		{name: "pxe uefi", mode: "uefi", iface: NewPXE},
		{name: "pxe uefi my_ipv6", mode: "uefi", myIPv6: "2001:db8::1", iface: NewPXE},
		{name: "pxe aarch64", mode: "uefi", arch: "aarch64", iface: NewPXE},
		{name: "ipxe bios", mode: "bios", iface: NewIPXE},
		{name: "ipxe aarch64 uefi", mode: "uefi", arch: "aarch64", iface: NewIPXE},
		{name: "http uefi", mode: "uefi", iface: NewHTTP},
		{name: "http-ipxe uefi", mode: "uefi", iface: NewHTTPIPXE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.mode)
			rec := &dhcpRecorder{}
			e.opts.DHCP, e.opts.MyIPv6 = rec, tc.myIPv6
			e.opts.IPXEBootfileByArch = map[string]string{"aarch64-uefi": "snp-arm.efi"}
			e.opts.PXEBootfileByArch = map[string]string{"aarch64": "grubaa64.efi"}
			e.node.Properties = map[string]any{"capabilities": "boot_mode:" + tc.mode}
			if tc.arch != "" {
				e.node.Properties["cpu_arch"] = tc.arch
			}
			if err := tc.iface(e.opts).PrepareRamdisk(context.Background(), e.task, nil); err != nil {
				t.Fatal(err)
			}
			if len(rec.opts) != 1 {
				t.Fatalf("%d DHCP updates, want 1", len(rec.opts))
			}
			got, _ := json.Marshal(rec.opts[0])
			var g, w any
			_ = json.Unmarshal(got, &g)
			if err := json.Unmarshal([]byte(upstreamDHCP[tc.name]), &w); err != nil {
				t.Fatal(err)
			}
			if gj, wj := mustJSON(t, g), mustJSON(t, w); gj != wj {
				t.Errorf("DHCP options:\n got  %s\n want %s", gj, wj)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A DHCP provider failing fails the ramdisk preparation, before anything
// is written; a URL too long for Neutron is refused as upstream.
func TestDHCPFailures(t *testing.T) {
	e := newEnv(t, "bios")
	e.opts.DHCP = &dhcpRecorder{err: errs.NewMessage(errs.ClassFailedToUpdateDHCPOptOnPort, "No VIFs found")}
	err := NewPXE(e.opts).PrepareRamdisk(context.Background(), e.task, nil)
	if !errs.Is(err, errs.ClassFailedToUpdateDHCPOptOnPort) {
		t.Fatalf("got %v", err)
	}
	if got := tree(t, e.tftp); !equal(got, grubFiles) {
		t.Errorf("node files written although DHCP failed: %v", got)
	}
	e.opts.DHCP = &dhcpRecorder{}
	e.opts.HTTPURL = "http://127.0.0.1:8080/a/rather/long/prefix/for/the/boot/files"
	err = NewHTTP(e.opts).PrepareRamdisk(context.Background(), e.task, nil)
	var ie *errs.Error
	if !errors.As(err, &ie) || ie.Class != errs.ClassInvalidParameterValue || ie.Message != "The resulting boot file or URL length exceeds Neutron limitations. Please explore shorter file names or hostnames." {
		t.Fatalf("long URL: %v", err)
	}
}

// Template options left at upstream's defaults use the embedded templates;
// an operator's file is used as set.
func TestOptionsFromConfigTemplates(t *testing.T) {
	c, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := OptionsFromConfig(c)
	if o.PXEConfigTemplate != "" || o.UEFIPXEConfigTemplate != "" || o.IPXEConfigTemplate != "" || o.IPXEBootScript != "" {
		t.Fatalf("default templates taken as operator files: %q %q %q %q", o.PXEConfigTemplate, o.UEFIPXEConfigTemplate, o.IPXEConfigTemplate, o.IPXEBootScript)
	}
	if o.PXEBootfileName != "pxelinux.0" || o.UEFIIPXEBootfileName != "snponly.efi" {
		t.Fatalf("boot file names %q %q", o.PXEBootfileName, o.UEFIIPXEBootfileName)
	}
	c, err = config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"pxe": {"pxe_config_template": "/etc/ironic/pxe.tmpl"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := OptionsFromConfig(c).PXEConfigTemplate; got != "/etc/ironic/pxe.tmpl" {
		t.Fatalf("operator template %q", got)
	}
}

// The dnsmasq provider writes the node's options under its tag and host
// entries setting that tag for its PXE-enabled MAC addresses; cleaning the
// instance up makes dnsmasq ignore them and drops the options.
func TestDnsmasqProvider(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "bios")
	hosts, optsDir := t.TempDir(), t.TempDir()
	e.opts.Ports = portList{
		{UUID: "p1", NodeID: &e.node.ID, Address: ptr(mac1)},
		{UUID: "p2", NodeID: &e.node.ID, Address: ptr(mac2), PXEEnabled: ptr(false)},
	}
	d := &Dnsmasq{HostsDir: hosts, OptsDir: optsDir, Ports: e.opts.Ports}
	e.opts.DHCP = d
	b := NewIPXE(e.opts)
	if err := b.PrepareRamdisk(ctx, e.task, nil); err != nil {
		t.Fatal(err)
	}
	tag, _ := e.node.DriverInternalInfo["dnsmasq_tag"].(string)
	if tag == "" {
		t.Fatal("no dnsmasq_tag recorded")
	}
	opts, err := os.ReadFile(filepath.Join(optsDir, "ironic-"+e.node.UUID+".conf"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"tag:" + tag + ",tag:!ipxe,67,undionly.kpxe", "tag:" + tag + ",tag:ipxe,67,http://127.0.0.1:8080/boot.ipxe",
		"tag:" + tag + ",66,192.0.2.1", "tag:" + tag + ",150,192.0.2.1", "tag:" + tag + ",255,192.0.2.1",
		"tag:" + tag + ",tag:!ipxe6,59,tftp://192.0.2.1/undionly.kpxe", "tag:" + tag + ",tag:ipxe6,59,http://127.0.0.1:8080/boot.ipxe",
	}, "\n") + "\n"
	if string(opts) != want {
		t.Errorf("options file:\n%s\nwant:\n%s", opts, want)
	}
	host := func(mac string) string {
		data, _ := os.ReadFile(filepath.Join(hosts, "ironic-"+mac+".conf"))
		return string(data)
	}
	if got := host(mac1); got != mac1+",set:"+tag+",set:ironic\n" {
		t.Errorf("host entry %q", got)
	}
	if got := host(mac2); got != "" {
		t.Errorf("host entry for a port without PXE: %q", got)
	}
	// A second preparation keeps the tag.
	if err := b.PrepareRamdisk(ctx, e.task, nil); err != nil || e.node.DriverInternalInfo["dnsmasq_tag"] != tag {
		t.Fatalf("tag changed: %v, %v", e.node.DriverInternalInfo["dnsmasq_tag"], err)
	}
	if err := b.CleanUpInstance(ctx, e.task); err != nil {
		t.Fatal(err)
	}
	if got := host(mac1); got != mac1+",ignore\n" {
		t.Errorf("host entry after clean-up %q", got)
	}
	if _, err := os.Stat(filepath.Join(optsDir, "ironic-"+e.node.UUID+".conf")); !os.IsNotExist(err) || e.node.DriverInternalInfo["dnsmasq_tag"] != nil {
		t.Errorf("options file or tag kept: %v %v", err, e.node.DriverInternalInfo["dnsmasq_tag"])
	}
}

// The dnsmasq provider reads the node's addresses from dnsmasq's lease
// file ("expiry mac ip hostname client-id"): those of its PXE-enabled MAC
// addresses only, whatever their case; a GRUB configuration is linked
// under each address and the links go at clean-up; a lease file that
// cannot be read fails both, as upstream.
func TestDnsmasqLeases(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "uefi")
	leases := filepath.Join(t.TempDir(), "dnsmasq.leases")
	e.opts.Ports = portList{
		{UUID: "p1", NodeID: &e.node.ID, Address: ptr(mac1)},
		{UUID: "p2", NodeID: &e.node.ID, Address: ptr(mac2), PXEEnabled: ptr(false)},
	}
	d := &Dnsmasq{HostsDir: t.TempDir(), OptsDir: t.TempDir(), LeaseFile: leases, Ports: e.opts.Ports}
	e.opts.DHCP = d
	b := NewPXE(e.opts)

	if _, err := d.GetIPAddresses(ctx, e.task); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing lease file: %v", err)
	}
	if err := b.PrepareRamdisk(ctx, e.task, nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("GRUB configuration without a lease file: %v", err)
	}

	content := strings.Join([]string{
		"1764800000 52:54:00:aa:bb:01 192.0.2.10 node-1 01:52:54:00:aa:bb:01",
		"1764800001 52:54:00:aa:bb:02 192.0.2.11 node-1 *",
		"1764800002 52:54:00:ff:ff:ff 192.0.2.12 other *",
		"duid 00:01:00:01:2c:9f:3a:11:52:54:00:00:00:01",
		"",
	}, "\n")
	if err := os.WriteFile(leases, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := d.GetIPAddresses(ctx, e.task)
	if err != nil || len(got) != 1 || got[0] != "192.0.2.10" {
		t.Fatalf("addresses %v, %v; want [192.0.2.10]", got, err)
	}

	if err := b.PrepareRamdisk(ctx, e.task, nil); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(e.tftp, "192.0.2.10.conf")
	target, err := os.Readlink(link)
	if err != nil || target != e.node.UUID+"/config" {
		t.Fatalf("link by address -> %q, %v", target, err)
	}
	for _, other := range []string{"192.0.2.11.conf", "192.0.2.12.conf"} {
		if _, err := os.Lstat(filepath.Join(e.tftp, other)); !os.IsNotExist(err) {
			t.Errorf("%s linked: %v", other, err)
		}
	}
	if err := b.CleanUpRamdisk(ctx, e.task); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Fatalf("link by address left after clean-up: %v", err)
	}

	// iPXE asks by MAC address only: no address links, no lease read.
	if err := os.Remove(leases); err != nil {
		t.Fatal(err)
	}
	if err := NewIPXE(e.opts).PrepareRamdisk(ctx, e.task, nil); err != nil {
		t.Fatal(err)
	}
}

// Without a DHCP provider (upstream's "none") a GRUB configuration gets
// no address links; a provider's addresses each get one.
func TestGrubAddressLinks(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "uefi")
	if err := NewPXE(e.opts).PrepareRamdisk(ctx, e.task, nil); err != nil {
		t.Fatal(err)
	}
	for _, entry := range tree(t, e.tftp) {
		if strings.Contains(entry, ".conf -> ") && !strings.HasPrefix(entry, mac1) && !strings.HasPrefix(entry, mac2) {
			t.Errorf("address link without a DHCP provider: %s", entry)
		}
	}
	rec := &dhcpRecorder{addrs: []string{"192.0.2.20", "2001:db8::20"}}
	e.opts.DHCP = rec
	if err := NewPXE(e.opts).PrepareRamdisk(ctx, e.task, nil); err != nil {
		t.Fatal(err)
	}
	for _, a := range rec.addrs {
		if target, err := os.Readlink(filepath.Join(e.tftp, a+".conf")); err != nil || target != e.node.UUID+"/config" {
			t.Errorf("link for %s -> %q, %v", a, target, err)
		}
	}
}
