package builtin

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/ipa"
)

const (
	tenantNet   = "77777777-7777-4777-8777-777777777777"
	instanceVIF = "88888888-8888-4888-8888-888888888888"
)

// flow is a started conductor whose drivers come from Drivers with the
// cloud's Neutron, so that the network interfaces run inside real
// cleaning and deployment flows with the agent fixture.
type flow struct {
	t   *testing.T
	cl  *cloud
	st  store.Store
	api rpc.ConductorAPI
	// image is the URL of an image the agent fixture "writes".
	image string
	nodes int
}

func newFlow(t *testing.T) *flow {
	t.Helper()
	return newFlowWith(t, nil)
}

// newFlowWith is newFlow with extra options.
func newFlowWith(t *testing.T, extra map[string]map[string]string) *flow {
	t.Helper()
	cl := newCloud(t)
	// The tenant network is not the provisioning one, as in a cloud,
	// so leaving the provisioning network keeps the instance's VIF.
	cl.fn.Network(tenantNet, "tenant").Port(map[string]any{"id": instanceVIF, "network_id": tenantNet, "mac_address": "fa:16:3e:00:00:02"})
	over := map[string]map[string]string{
		"conductor": {
			"sync_power_state_interval": "0", "power_failure_recovery_interval": "0",
			"check_provision_state_interval": "0", "sync_local_state_interval": "0",
			"check_allocations_interval": "0", "conductor_cleanup_interval": "0",
			"node_history_cleanup_interval": "0", "graceful_shutdown_timeout": "10",
		},
		// Fake power reads the node's recorded state, which the agent's
		// power off cannot change (as upstream's): the wait for it after
		// standby.power_off would last its full 6 × 5 s.
		"agent":   {"require_tls": "false", "command_wait_interval": "0", "post_deploy_get_power_state_retry_interval": "0"},
		"DEFAULT": {"enabled_deploy_interfaces": "direct,fake"},
	}
	for sec, opts := range extra {
		if over[sec] == nil {
			over[sec] = map[string]string{}
		}
		maps.Copy(over[sec], opts)
	}
	c := cl.configWith(t, true, over)
	st := store.New(storetest.Backends(t)[0].DB)
	d, err := DriversWithPorts(c, st)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	cond, err := conductor.New(conductor.Options{Store: st, Drivers: d, Config: c, Host: "conductor-a", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := cond.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cond.Stop(context.Background()) })
	img := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "disk.img", time.Time{}, strings.NewReader("hello"))
	}))
	t.Cleanup(img.Close)
	return &flow{t: t, cl: cl, st: st, api: rpc.NewLocal(cond, log), image: img.URL + "/disk.img"}
}

// node is a manageable fake-hardware node deployed by direct with
// networkInterface, with one PXE-enabled port on switch port Eth1/1.
func (f *flow) node(networkInterface string) (*model.Node, *model.Port) {
	f.t.Helper()
	ctx := context.Background()
	n, err := f.st.CreateNode(ctx, &model.Node{Driver: "fake-hardware", DeployInterface: "direct",
		NetworkInterface: networkInterface, ProvisionState: states.Manageable, PowerState: states.PowerOff})
	if err != nil {
		f.t.Fatal(err)
	}
	f.nodes++
	p, err := f.st.CreatePort(ctx, &model.Port{Address: ptr(fmt.Sprintf("52:54:00:aa:bb:%02x", f.nodes)), NodeID: &n.ID, PXEEnabled: ptr(true),
		LocalLinkConnection: map[string]any{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Eth1/1"}})
	if err != nil {
		f.t.Fatal(err)
	}
	return n, p
}

// instanceInfo deploys f.image, whose md5 is that of "hello".
func (f *flow) instanceInfo() map[string]any {
	return map[string]any{"image_source": f.image, "image_checksum": "5d41402abc4b2a76b9719d911017c592"}
}

func (f *flow) get(n *model.Node) *model.Node {
	f.t.Helper()
	out, err := f.st.GetNodeByID(context.Background(), n.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func (f *flow) internalInfo(p *model.Port) map[string]any {
	f.t.Helper()
	out, err := f.st.GetPortByID(context.Background(), p.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	return out.InternalInfo
}

// wait polls until the node is unlocked in state; an agent, when given,
// heartbeats meanwhile with the token the lookup hands out.
func (f *flow) wait(n *model.Node, state string, a *ipa.Agent) *model.Node {
	f.t.Helper()
	var token string
	var cur *model.Node
	await.UntilReason(f.t, 20*time.Second, "node unlocked in "+state, func() (bool, string) {
		cur = f.get(n)
		if cur.ProvisionState == state && cur.Reservation == nil {
			return true, ""
		}
		if a != nil && cur.Reservation == nil && (cur.ProvisionState == states.CleanWait || cur.ProvisionState == states.DeployWait) {
			if token == "" {
				got, err := f.api.GetNodeWithToken(context.Background(), "", n.UUID)
				if err != nil {
					f.t.Fatalf("lookup: %v", err)
				}
				token, _ = got.DriverInternalInfo["agent_secret_token"].(string)
				a.WithToken(token)
			}
			_ = f.api.Heartbeat(context.Background(), "", rpc.HeartbeatArgs{
				NodeID: n.UUID, CallbackURL: a.URL(), AgentToken: token, AgentVersion: ipa.Version,
			})
		}
		return false, fmt.Sprintf("node never reached %s: %s → %s, last_error %q", state, cur.ProvisionState, cur.TargetProvisionState, deref(cur.LastError))
	})
	return cur
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// boundTo tells whether the Neutron port is bound to the node's switch
// port as a bare metal port.
func boundTo(t *testing.T, p map[string]any, node string) bool {
	t.Helper()
	l := lli(t, p)
	return p != nil && p["binding:host_id"] == node && p["binding:vnic_type"] == "baremetal" &&
		len(l) == 1 && l[0].(map[string]any)["port_id"] == "Eth1/1"
}

// A neutron node cleans on the cleaning network, deploys on the
// provisioning network and ends active with its VIF bound to its switch
// port; each network's port is gone once its phase is over.
func TestNeutronNetworkFlow(t *testing.T) {
	ctx := context.Background()
	f := newFlow(t)
	n, port := f.node("neutron")

	if err := f.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
		t.Fatal(err)
	}
	f.wait(n, states.CleanWait, nil)
	cleanPort, _ := f.internalInfo(port)["cleaning_vif_port_id"].(string)
	if p := f.cl.fn.GetPort(cleanPort); p["network_id"] != cleanNet || !boundTo(t, p, n.UUID) {
		t.Fatalf("cleaning port %v", p)
	}
	f.wait(n, states.Available, ipa.New(t))
	if f.cl.fn.GetPort(cleanPort) != nil || f.internalInfo(port)["cleaning_vif_port_id"] != nil {
		t.Fatal("cleaning port left after cleaning")
	}

	if err := f.api.VifAttach(ctx, "", n.UUID, map[string]any{"id": instanceVIF}); err != nil {
		t.Fatal(err)
	}
	if vifs, err := f.api.VifList(ctx, "", n.UUID); err != nil || len(vifs) != 1 || vifs[0]["id"] != instanceVIF {
		t.Fatalf("vifs %v, %v", vifs, err)
	}
	cur := f.get(n)
	cur.InstanceInfo = f.instanceInfo()
	if _, err := f.st.UpdateNode(ctx, cur, "instance_info"); err != nil {
		t.Fatal(err)
	}
	if err := f.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	f.wait(n, states.DeployWait, nil)
	provPort, _ := f.internalInfo(port)["provisioning_vif_port_id"].(string)
	if p := f.cl.fn.GetPort(provPort); p["network_id"] != provNet || !boundTo(t, p, n.UUID) {
		t.Fatalf("provisioning port %v", p)
	}
	active := f.wait(n, states.Active, ipa.New(t))
	if deref(active.LastError) != "" {
		t.Fatalf("last_error %q", deref(active.LastError))
	}
	if f.cl.fn.GetPort(provPort) != nil || f.internalInfo(port)["provisioning_vif_port_id"] != nil {
		t.Fatal("provisioning port left on an active node")
	}
	if p := f.cl.fn.GetPort(instanceVIF); !boundTo(t, p, n.UUID) || f.internalInfo(port)["tenant_vif_port_id"] != instanceVIF {
		t.Fatalf("tenant VIF on the active node: %v, internal_info %v", p, f.internalInfo(port))
	}
}

// A flat node's VIF is bound to it in Neutron (host and MAC) while the
// ramdisk boots and again once deployed, as upstream's flat interface
// does.
func TestFlatNetworkFlow(t *testing.T) {
	ctx := context.Background()
	f := newFlow(t)
	n, port := f.node("flat")
	cur := f.get(n)
	cur.ProvisionState = states.Available
	cur.InstanceInfo = f.instanceInfo()
	if _, err := f.st.UpdateNode(ctx, cur, "provision_state", "instance_info"); err != nil {
		t.Fatal(err)
	}
	if err := f.api.VifAttach(ctx, "", n.UUID, map[string]any{"id": tenantVIF}); err != nil {
		t.Fatal(err)
	}
	if f.internalInfo(port)["tenant_vif_port_id"] != tenantVIF {
		t.Fatalf("internal_info %v", f.internalInfo(port))
	}
	if err := f.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	f.wait(n, states.DeployWait, nil)
	if p := f.cl.fn.GetPort(tenantVIF); p["binding:host_id"] != n.UUID || p["mac_address"] != *port.Address {
		t.Fatalf("VIF while the ramdisk boots: %v", p)
	}
	f.wait(n, states.Active, ipa.New(t))
	if p := f.cl.fn.GetPort(tenantVIF); p["binding:host_id"] != n.UUID || p["mac_address"] != *port.Address {
		t.Fatalf("VIF on the active node: %v", p)
	}
}

// Neutron failing makes the flow fail with the NetworkError in last_error,
// worded as upstream's conductor words a failed preparation.
func TestNeutronFailureInLastError(t *testing.T) {
	ctx := context.Background()
	f := newFlow(t)
	n, port := f.node("neutron")
	f.cl.fn.Fail(http.MethodPost, "/v2.0/ports", http.StatusInternalServerError, 1)
	if err := f.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
		t.Fatal(err)
	}
	failed := f.wait(n, states.CleanFail, nil)
	// Upstream's last_error is prefix+reason exactly.
	prefix, reason := "Failed to prepare node "+n.UUID+" for cleaning: ", "Failed to create neutron ports for node's "+n.UUID+" ports "+port.UUID+"."
	if got := deref(failed.LastError); got != prefix+reason {
		t.Errorf("clean failure last_error:\n got  %q\n want %q", got, prefix+reason)
	}

	n2, port2 := f.node("neutron")
	cur := f.get(n2)
	cur.ProvisionState = states.Available
	cur.InstanceInfo = f.instanceInfo()
	if _, err := f.st.UpdateNode(ctx, cur, "provision_state", "instance_info"); err != nil {
		t.Fatal(err)
	}
	f.cl.fn.Fail(http.MethodPost, "/v2.0/ports", http.StatusServiceUnavailable, 1)
	if err := f.api.DoNodeDeploy(ctx, "", n2.UUID, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	failed = f.wait(n2, states.DeployFail, nil)
	prefix, reason = "Failed to prepare to deploy: ", "Failed to create neutron ports for node's "+n2.UUID+" ports "+port2.UUID+"."
	if got := deref(failed.LastError); got != prefix+reason {
		t.Errorf("deploy failure last_error:\n got  %q\n want %q", got, prefix+reason)
	}
}

// A PXE-booted neutron node gets its boot configuration under tftp_root and
// its DHCP boot options on the Neutron port it cleans through; both go
// once cleaning is over.
func TestPXEWithNeutronDHCP(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	tftp, images := filepath.Join(dir, "tftp"), filepath.Join(dir, "images")
	if err := os.MkdirAll(images, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ipa.kernel", "ipa.initramfs"} {
		if err := os.WriteFile(filepath.Join(images, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := newFlowWith(t, map[string]map[string]string{
		"DEFAULT":   {"enabled_boot_interfaces": "fake,pxe"},
		"pxe":       {"tftp_root": tftp, "tftp_server": "192.0.2.1", "tftp_master_path": filepath.Join(dir, "master")},
		"deploy":    {"http_root": filepath.Join(dir, "http"), "http_url": "http://127.0.0.1:8080"},
		"conductor": {"file_url_allowed_paths": images},
	})
	f.cl.fn.Subnet("sub-clean", cleanNet, "10.1.0.0/24", nil)
	n, port := f.node("neutron")
	cur := f.get(n)
	cur.BootInterface = "pxe"
	// The capability decides the boot mode whatever the management
	// interface reports.
	cur.Properties = map[string]any{"capabilities": "boot_mode:bios"}
	cur.DriverInfo = map[string]any{"deploy_kernel": "file://" + filepath.Join(images, "ipa.kernel"), "deploy_ramdisk": "file://" + filepath.Join(images, "ipa.initramfs")}
	if _, err := f.st.UpdateNode(ctx, cur, "boot_interface", "properties", "driver_info"); err != nil {
		t.Fatal(err)
	}
	if err := f.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
		t.Fatal(err)
	}
	f.wait(n, states.CleanWait, nil)
	vif, _ := f.internalInfo(port)["cleaning_vif_port_id"].(string)
	opts := map[string]any{}
	for _, o := range f.cl.fn.GetPort(vif)["extra_dhcp_opts"].([]any) {
		m := o.(map[string]any)
		if m["ip_version"] != 4.0 {
			t.Errorf("option of IP version %v on an IPv4-only port: %v", m["ip_version"], m)
		}
		opts[m["opt_name"].(string)] = m["opt_value"]
	}
	if opts["67"] != "pxelinux.0" || opts["66"] != "192.0.2.1" || opts["150"] != "192.0.2.1" || opts["255"] != "192.0.2.1" || len(opts) != 4 {
		t.Fatalf("DHCP options of the cleaning port: %v", opts)
	}
	mac := strings.ReplaceAll(*port.Address, ":", "-")
	if target, err := os.Readlink(filepath.Join(tftp, "pxelinux.cfg", "01-"+mac)); err != nil || target != "../"+n.UUID+"/config" {
		t.Fatalf("MAC link: %q, %v", target, err)
	}
	f.wait(n, states.Available, ipa.New(t))
	if _, err := os.Stat(filepath.Join(tftp, n.UUID)); !os.IsNotExist(err) {
		t.Errorf("boot files left after cleaning: %v", err)
	}
	if f.cl.fn.GetPort(vif) != nil {
		t.Error("cleaning port left after cleaning")
	}
}

// A ramdisk deployment booted by iPXE through the conductor: the
// instance's kernel and ramdisk are published under http_root with a
// configuration starting boot_ramdisk, the VIF's DHCP options send iPXE to
// boot.ipxe, and tear down removes it all.
func TestRamdiskDeployWithIPXE(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	httpRoot, images := filepath.Join(dir, "http"), filepath.Join(dir, "images")
	if err := os.MkdirAll(images, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vmlinuz", "initrd"} {
		if err := os.WriteFile(filepath.Join(images, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := newFlowWith(t, map[string]map[string]string{
		"DEFAULT":   {"enabled_boot_interfaces": "fake,ipxe", "enabled_deploy_interfaces": "direct,fake,ramdisk"},
		"pxe":       {"tftp_root": filepath.Join(dir, "tftp"), "tftp_server": "192.0.2.1", "tftp_master_path": filepath.Join(dir, "master")},
		"deploy":    {"http_root": httpRoot, "http_url": "http://127.0.0.1:8080"},
		"conductor": {"file_url_allowed_paths": images, "automated_clean": "false"},
	})
	const vif = "99999999-9999-4999-8999-999999999999"
	f.cl.fn.Port(map[string]any{"id": vif, "network_id": provNet, "fixed_ips": []any{map[string]any{"ip_address": "192.0.2.20"}}})
	n, _ := f.node("flat")
	cur := f.get(n)
	cur.BootInterface, cur.DeployInterface, cur.ProvisionState = "ipxe", "ramdisk", states.Available
	cur.DriverInfo = map[string]any{"deploy_kernel": "file://" + filepath.Join(images, "vmlinuz"), "deploy_ramdisk": "file://" + filepath.Join(images, "initrd")}
	cur.InstanceInfo = map[string]any{"kernel": "file://" + filepath.Join(images, "vmlinuz"), "ramdisk": "file://" + filepath.Join(images, "initrd")}
	if _, err := f.st.UpdateNode(ctx, cur, "boot_interface", "deploy_interface", "provision_state", "driver_info", "instance_info"); err != nil {
		t.Fatal(err)
	}
	if err := f.api.VifAttach(ctx, "", n.UUID, map[string]any{"id": vif}); err != nil {
		t.Fatal(err)
	}
	if err := f.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	active := f.wait(n, states.Active, nil)
	if active.PowerState != states.PowerOn {
		t.Errorf("power state %q", active.PowerState)
	}
	cfg, err := os.ReadFile(filepath.Join(httpRoot, n.UUID, "config"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), "\ngoto boot_ramdisk\n") || !strings.Contains(string(cfg), "kernel http://127.0.0.1:8080/"+n.UUID+"/kernel root=/dev/ram0") {
		t.Fatalf("iPXE configuration:\n%s", cfg)
	}
	if data, _ := os.ReadFile(filepath.Join(httpRoot, n.UUID, "kernel")); string(data) != "vmlinuz" {
		t.Errorf("published kernel %q", data)
	}
	opts := map[string]any{}
	for _, o := range f.cl.fn.GetPort(vif)["extra_dhcp_opts"].([]any) {
		m := o.(map[string]any)
		opts[m["opt_name"].(string)] = m["opt_value"]
	}
	if opts["tag:ipxe,67"] != "http://127.0.0.1:8080/boot.ipxe" || opts["tag:!ipxe,67"] != "snponly.efi" {
		t.Errorf("DHCP options of the VIF: %v", opts)
	}
	if err := f.api.DoNodeTearDown(ctx, "", n.UUID); err != nil {
		t.Fatal(err)
	}
	f.wait(n, states.Available, nil)
	if _, err := os.Stat(filepath.Join(httpRoot, n.UUID)); !os.IsNotExist(err) {
		t.Errorf("instance boot files left after tear down: %v", err)
	}
}

// With [dhcp]/dhcp_provider dnsmasq the PXE interfaces' DHCP options go to
// dnsmasq's option and host directories, whatever the network interface.
func TestPXEWithDnsmasqDHCP(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	images, hosts, opts := filepath.Join(dir, "images"), filepath.Join(dir, "hosts"), filepath.Join(dir, "opts")
	for _, d := range []string{images, hosts, opts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"ipa.kernel", "ipa.initramfs"} {
		if err := os.WriteFile(filepath.Join(images, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// dnsmasq's lease of the node's address, which GRUB asks for its
	// configuration by.
	leases := filepath.Join(dir, "dnsmasq.leases")
	f := newFlowWith(t, map[string]map[string]string{
		"DEFAULT":   {"enabled_boot_interfaces": "fake,pxe"},
		"dhcp":      {"dhcp_provider": "dnsmasq"},
		"dnsmasq":   {"dhcp_hostsdir": hosts, "dhcp_optsdir": opts, "dhcp_leasefile": leases},
		"pxe":       {"tftp_root": filepath.Join(dir, "tftp"), "tftp_server": "192.0.2.1", "tftp_master_path": filepath.Join(dir, "master")},
		"deploy":    {"http_root": filepath.Join(dir, "http"), "http_url": "http://127.0.0.1:8080"},
		"conductor": {"file_url_allowed_paths": images},
	})
	n, port := f.node("noop")
	if err := os.WriteFile(leases, []byte("1764800000 "+*port.Address+" 192.0.2.50 node *\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cur := f.get(n)
	cur.BootInterface = "pxe"
	cur.Properties = map[string]any{"capabilities": "boot_mode:uefi"}
	cur.DriverInfo = map[string]any{"deploy_kernel": "file://" + filepath.Join(images, "ipa.kernel"), "deploy_ramdisk": "file://" + filepath.Join(images, "ipa.initramfs")}
	if _, err := f.st.UpdateNode(ctx, cur, "boot_interface", "properties", "driver_info"); err != nil {
		t.Fatal(err)
	}
	if err := f.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
		t.Fatal(err)
	}
	waiting := f.wait(n, states.CleanWait, nil)
	tag, _ := waiting.DriverInternalInfo["dnsmasq_tag"].(string)
	host, err := os.ReadFile(filepath.Join(hosts, "ironic-"+*port.Address+".conf"))
	if err != nil || tag == "" || string(host) != *port.Address+",set:"+tag+",set:ironic\n" {
		t.Fatalf("host entry %q (tag %q): %v", host, tag, err)
	}
	o, err := os.ReadFile(filepath.Join(opts, "ironic-"+n.UUID+".conf"))
	if err != nil || !strings.Contains(string(o), "tag:"+tag+",67,bootx64.efi\n") {
		t.Fatalf("options %q: %v", o, err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "tftp", "192.0.2.50.conf")); err != nil || target != n.UUID+"/config" {
		t.Fatalf("GRUB link by leased address -> %q: %v", target, err)
	}
}
