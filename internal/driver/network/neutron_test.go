package network

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/neutron"
	fakeneutron "github.com/openkeel/ironic/testing/neutron"
)

const (
	provNet  = "11111111-1111-4111-8111-111111111111"
	cleanNet = "22222222-2222-4222-8222-222222222222"
)

func newNeutron(t *testing.T) (*Neutron, *fakeneutron.Fixture, *fixture) {
	t.Helper()
	ctx := context.Background()
	fx := newFixture(t)
	for i, p := range fx.ports {
		p.LocalLinkConnection = map[string]any{"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "Eth1/" + string(rune('1'+i))}
		if _, err := fx.st.UpdatePort(ctx, p, "local_link_connection"); err != nil {
			t.Fatal(err)
		}
	}
	fn := fakeneutron.New(t).Network(provNet, "provisioning").Network(cleanNet, "cleaning").RequireToken("svc")
	fx.task.Node.NetworkInterface = "neutron"
	n := &Neutron{Flat{Ports: fx.st, Neutron: &NeutronOptions{
		Client:                   &neutron.Client{Auth: func(context.Context) (string, string, error) { return "svc", fn.URL(), nil }},
		Networks:                 NeutronNetworks{Provisioning: provNet, Cleaning: "cleaning"},
		FailOnPortBindingFailure: true,
		StatusAttempts:           2,
	}}}
	return n, fn, fx
}

func wantClass(t *testing.T, err error, class errs.Class, msg string) {
	t.Helper()
	var e *errs.Error
	if !errors.As(err, &e) || e.Class != class || !strings.Contains(e.Error(), msg) {
		t.Fatalf("error = %v, want %s containing %q", err, class, msg)
	}
}

func TestNeutronValidate(t *testing.T) {
	ctx := context.Background()
	n, _, fx := newNeutron(t)
	if err := n.Validate(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	n.Neutron.Networks.Cleaning = ""
	wantClass(t, n.Validate(ctx, fx.task), "MissingParameterValue", "UUID or name of cleaning_network is not set in configuration or in node driver_info.")
	n.Neutron.Networks.Cleaning = "nowhere"
	wantClass(t, n.Validate(ctx, fx.task), "InvalidParameterValue", "cleaning_network with name or UUID nowhere was not found")
	wantClass(t, n.ValidateRescue(ctx, fx.task), "MissingParameterValue", "UUID or name of rescuing_network")
	n.Neutron.Networks.Servicing = "nowhere"
	wantClass(t, n.ValidateServicing(ctx, fx.task), "InvalidParameterValue", "servicing network with name or UUID nowhere was not found")
	n.Neutron.Networks.Cleaning = "cleaning"
	fx.task.Node.DisablePowerOff = true
	wantClass(t, n.Validate(ctx, fx.task), "InvalidParameterValue", "Nodes with disable_power_off cannot be used with the neutron network interface (disallowed in the configuration)")
	n.Neutron.AllowDisablingPowerOff = true
	if err := n.Validate(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
}

func TestNeutronProvisioningNetwork(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	if err := n.AddProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	ports := fn.Ports()
	if len(ports) != 1 {
		t.Fatalf("want one neutron port for the one PXE-enabled port, got %v", ports)
	}
	np := ports[0]
	prof, _ := np["binding:profile"].(map[string]any)
	lli, _ := prof["local_link_information"].([]any)
	if np["network_id"] != provNet || np["binding:host_id"] != fx.task.Node.UUID || np["binding:vnic_type"] != "baremetal" ||
		np["mac_address"] != "52:54:00:aa:bb:01" || np["device_owner"] != "baremetal:none" || len(lli) != 1 ||
		lli[0].(map[string]any)["port_id"] != "Eth1/1" {
		t.Fatalf("neutron port %v", np)
	}
	if got := fx.port(t, 0).InternalInfo["provisioning_vif_port_id"]; got != np["id"] {
		t.Fatalf("internal_info provisioning_vif_port_id = %v, want %v", got, np["id"])
	}
	if _, ok := fx.port(t, 1).InternalInfo["provisioning_vif_port_id"]; ok {
		t.Fatal("non-PXE port plugged")
	}
	// A second add replaces the leftover rather than clashing on the MAC.
	if err := n.AddProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if ports := fn.Ports(); len(ports) != 1 || ports[0]["id"] == np["id"] {
		t.Fatalf("after re-add: %v", ports)
	}
	if err := n.RemoveProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if ports := fn.Ports(); len(ports) != 0 {
		t.Fatalf("ports left: %v", ports)
	}
	if _, ok := fx.port(t, 0).InternalInfo["provisioning_vif_port_id"]; ok {
		t.Fatal("provisioning_vif_port_id kept")
	}
	// Cleaning resolves its network by name.
	if err := n.AddCleaningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if ports := fn.Ports(); len(ports) != 1 || ports[0]["network_id"] != cleanNet || fx.port(t, 0).InternalInfo["cleaning_vif_port_id"] != ports[0]["id"] {
		t.Fatalf("cleaning: %v", ports)
	}
}

func TestNeutronAddAllPortsAndMissingLinkInfo(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	n.Neutron.AddAllPorts = true
	if err := n.AddProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	noIP := 0
	for _, p := range fn.Ports() {
		if ips, _ := p["fixed_ips"].([]any); p["mac_address"] == "52:54:00:aa:bb:02" && len(ips) == 0 {
			noIP++
		}
	}
	if len(fn.Ports()) != 2 || noIP != 1 {
		t.Fatalf("add_all_ports: %v", fn.Ports())
	}
	n.Neutron.AddAllPorts = false
	p := fx.port(t, 0)
	p.LocalLinkConnection = map[string]any{}
	if _, err := fx.st.UpdatePort(ctx, p, "local_link_connection"); err != nil {
		t.Fatal(err)
	}
	wantClass(t, n.AddProvisioningNetwork(ctx, fx.task), "NetworkError", "Failed to create neutron ports for node's "+fx.task.Node.UUID+" ports "+p.UUID+".")
}

func TestNeutronFailureIsNetworkError(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	fn.Fail(http.MethodPost, "/v2.0/ports", http.StatusInternalServerError, -1)
	wantClass(t, n.AddProvisioningNetwork(ctx, fx.task), "NetworkError", "Failed to create neutron ports")
	if _, ok := fx.port(t, 0).InternalInfo["provisioning_vif_port_id"]; ok {
		t.Fatal("failed port recorded")
	}
	fn.Fail(http.MethodGet, "/v2.0/ports", http.StatusServiceUnavailable, -1)
	wantClass(t, n.RemoveProvisioningNetwork(ctx, fx.task), "NetworkError", "Could not get given network VIF for "+fx.task.Node.UUID+" from neutron, possible network issue.")
	fn.Fail(http.MethodGet, "/v2.0/networks", http.StatusServiceUnavailable, -1)
	wantClass(t, n.Validate(ctx, fx.task), "NetworkError", "Could not retrieve network: neutron GET /v2.0/networks/cleaning: 503 InjectedFault: injected fault 503")
}

func TestNeutronTenantNetworks(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	wantClass(t, n.ConfigureTenantNetworks(ctx, fx.task), "NetworkError", "No neutron ports or portgroups are associated with node "+fx.task.Node.UUID)
	vif := "33333333-3333-4333-8333-333333333333"
	fn.Port(map[string]any{"id": vif, "network_id": provNet, "mac_address": "fa:16:3e:00:00:01"})
	if err := n.VifAttach(ctx, fx.task, map[string]any{"id": vif}); err != nil {
		t.Fatal(err)
	}
	if vifs, err := n.VifList(ctx, fx.task); err != nil || len(vifs) != 1 || vifs[0]["id"] != vif {
		t.Fatalf("vif list %v %v", vifs, err)
	}
	// Before deployment the attach takes the physical MAC and seeds only
	// the host, with an empty profile.
	if p := fn.GetPort(vif); p["mac_address"] != "52:54:00:aa:bb:01" || p["binding:host_id"] != fx.task.Node.UUID ||
		p["binding:vnic_type"] != "baremetal" || len(p["binding:profile"].(map[string]any)) != 0 {
		t.Fatalf("attached port %v", p)
	}
	if err := n.ConfigureTenantNetworks(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	p := fn.GetPort(vif)
	prof, _ := p["binding:profile"].(map[string]any)
	lli, _ := prof["local_link_information"].([]any)
	if p["binding:host_id"] != fx.task.Node.UUID || p["binding:vnic_type"] != "baremetal" || p["mac_address"] != "52:54:00:aa:bb:01" ||
		len(lli) != 1 || lli[0].(map[string]any)["port_id"] != "Eth1/1" {
		t.Fatalf("tenant port %v", p)
	}
	if err := n.UnconfigureTenantNetworks(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if p := fn.GetPort(vif); p["binding:host_id"] != "" || len(p["binding:profile"].(map[string]any)) != 0 || p["mac_address"] != nil {
		t.Fatalf("not unbound: %v", p)
	}
	fn.Fail(http.MethodPut, "/v2.0/ports/", http.StatusInternalServerError, 1)
	wantClass(t, n.ConfigureTenantNetworks(ctx, fx.task), "NetworkError", "Could not add public network VIF "+vif+" to node "+fx.task.Node.UUID+", possible network issue.")
	if err := n.VifDetach(ctx, fx.task, vif); err != nil {
		t.Fatal(err)
	}
}

func TestNeutronPortChangesFollowToVIF(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	vif := "33333333-3333-4333-8333-333333333333"
	fn.Port(map[string]any{"id": vif, "network_id": provNet, "mac_address": "fa:16:3e:00:00:01"})
	if err := n.VifAttach(ctx, fx.task, map[string]any{"id": vif}); err != nil {
		t.Fatal(err)
	}
	// The VIF is bound (host seeded): the MAC change unbinds, changes and
	// restores the binding, as Neutron refuses to change a bound MAC.
	p := fx.port(t, 0)
	p.Address = ptr("52:54:00:aa:bb:99")
	if err := n.PortChanged(ctx, fx.task, p); err != nil {
		t.Fatal(err)
	}
	if np := fn.GetPort(vif); np["mac_address"] != "52:54:00:aa:bb:99" || np["binding:host_id"] != fx.task.Node.UUID {
		t.Fatalf("neutron port after MAC change %v", np)
	}
	save := func() {
		t.Helper()
		if _, err := fx.st.UpdatePort(ctx, p, "address", "extra"); err != nil {
			t.Fatal(err)
		}
	}
	save()
	p.Extra = map[string]any{"client-id": "ff:00:00:00:00:00:02:00:00:02:c9:00:00:02:c9:03:00:01:02:03"}
	if err := n.PortChanged(ctx, fx.task, p); err != nil {
		t.Fatal(err)
	}
	opts, _ := fn.GetPort(vif)["extra_dhcp_opts"].([]any)
	if len(opts) != 1 || opts[0].(map[string]any)["opt_name"] != "client-id" || opts[0].(map[string]any)["opt_value"] != p.Extra["client-id"] {
		t.Fatalf("extra_dhcp_opts %v", opts)
	}
	save()
	fn.Fail(http.MethodPut, "/v2.0/ports/", http.StatusInternalServerError, 1)
	p.Extra = map[string]any{}
	wantClass(t, n.PortChanged(ctx, fx.task, p), "FailedToUpdateDHCPOptOnPort", "Update DHCP options on port: "+vif+" failed.")
	fn.Fail(http.MethodGet, "/v2.0/ports/", http.StatusInternalServerError, 1)
	p.Address = ptr("52:54:00:aa:bb:98")
	wantClass(t, n.PortChanged(ctx, fx.task, p), "FailedToUpdateMacOnPort", "Update MAC address on port: "+vif+" failed.")
}

func TestNeutronVifAttachPhysnets(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	fn.NetworkAttrs(provNet, map[string]any{"provider:physical_network": "physnet2"})
	// The PXE port is on physnet1, the other on physnet2: the VIF's
	// physical network wins over PXE.
	for i, pn := range []string{"physnet1", "physnet2"} {
		p := fx.port(t, i)
		p.PhysicalNetwork = ptr(pn)
		if _, err := fx.st.UpdatePort(ctx, p, "physical_network"); err != nil {
			t.Fatal(err)
		}
	}
	vif := "33333333-3333-4333-8333-333333333333"
	fn.Port(map[string]any{"id": vif, "network_id": provNet})
	if err := n.VifAttach(ctx, fx.task, map[string]any{"id": vif}); err != nil {
		t.Fatal(err)
	}
	if fx.port(t, 1).InternalInfo[TenantVIFKey] != vif {
		t.Fatalf("VIF not on the physnet2 port: %v / %v", fx.port(t, 0).InternalInfo, fx.port(t, 1).InternalInfo)
	}
	other := "44444444-4444-4444-8444-444444444444"
	fn.Port(map[string]any{"id": other, "network_id": provNet})
	wantClass(t, n.VifAttach(ctx, fx.task, map[string]any{"id": other}), "NoFreePhysicalPorts", "Unable to attach VIF "+other+", not enough free physical ports.")
}

func TestNeutronNodeNetworkData(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	if d, err := n.GetNodeNetworkData(ctx, fx.task); err != nil || len(d) != 0 {
		t.Fatalf("no VIF: %v %v", d, err)
	}
	fn.Subnet("sub-4", provNet, "192.0.2.0/24", map[string]any{
		"gateway_ip": "192.0.2.1", "dns_nameservers": []any{"192.0.2.53"},
		"host_routes": []any{map[string]any{"destination": "198.51.100.0/25", "nexthop": "192.0.2.254"}},
	}).Subnet("sub-6", provNet, "2001:db8::/64", nil)
	vif := "33333333-3333-4333-8333-333333333333"
	fn.Port(map[string]any{"id": vif, "network_id": provNet, "name": "nic0", "fixed_ips": []any{
		map[string]any{"subnet_id": "sub-4", "ip_address": "192.0.2.10"},
		map[string]any{"subnet_id": "sub-6", "ip_address": "2001:db8::10"},
	}})
	if err := n.VifAttach(ctx, fx.task, map[string]any{"id": vif}); err != nil {
		t.Fatal(err)
	}
	d, err := n.GetNodeNetworkData(ctx, fx.task)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(d)
	want := `{"links":[{"ethernet_mac_address":"52:54:00:aa:bb:01","id":"nic0","mtu":1500,"type":"vif","vif_id":"` + vif + `"}],` +
		`"networks":[{"id":"sub-4","ip_address":"192.0.2.10","link":"nic0","netmask":"255.255.255.0","network_id":"` + provNet + `",` +
		`"routes":[{"gateway":"192.0.2.1","netmask":"0.0.0.0","network":"0.0.0.0"},{"gateway":"192.0.2.254","netmask":"255.255.255.128","network":"198.51.100.0"}],"type":"ipv4"},` +
		`{"id":"sub-6","ip_address":"2001:db8::10","link":"nic0","netmask":"ffff:ffff:ffff:ffff::","network_id":"` + provNet + `","routes":[],"type":"ipv6"}],` +
		`"services":[{"address":"192.0.2.53","type":"dns"}]}`
	if string(got) != want {
		t.Fatalf("network data\n got %s\nwant %s", got, want)
	}
	// Static network_data wins.
	fx.task.Node.NetworkData = map[string]any{"links": []any{}}
	if d, err := n.GetNodeNetworkData(ctx, fx.task); err != nil || fmt.Sprint(d) != "map[links:[]]" {
		t.Fatalf("static: %v %v", d, err)
	}
	fx.task.Node.NetworkData = nil
	fn.Fail(http.MethodGet, "/v2.0/subnets/", http.StatusInternalServerError, 1)
	_, err = n.GetNodeNetworkData(ctx, fx.task)
	wantClass(t, err, "NetworkError", "Unable to get subnet info for sub-4. Error:")
}

// noPXEBoot is a boot interface that cannot PXE boot (as virtual media).
type noPXEBoot struct{ driver.BootInterface }

func (noPXEBoot) Capabilities() []string { return []string{"ramdisk_boot"} }

// A boot interface without pxe_boot makes every port plugged, as
// add_all_ports does.
func TestNeutronPlugsAllPortsWithoutPXEBoot(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	fx.task.Driver = &driver.Interfaces{Boot: noPXEBoot{}}
	if err := n.AddProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if ports := fn.Ports(); len(ports) != 2 {
		t.Fatalf("ports %v", ports)
	}
	if err := n.RemoveProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if ports := fn.Ports(); len(ports) != 0 {
		t.Fatalf("ports left %v", ports)
	}
}

// Only an admin caller's validation looks the networks up.
func TestNeutronValidateOnlyForAdmins(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	roles := []string{"member"}
	n.Neutron.CallerRoles = func(context.Context) []string { return roles }
	n.Neutron.Networks.Cleaning = "nowhere"
	if err := n.Validate(ctx, fx.task); err != nil {
		t.Fatalf("member: %v", err)
	}
	if len(fn.Requests()) != 0 {
		t.Fatal("member validation called Neutron")
	}
	roles = []string{"reader", "admin"}
	wantClass(t, n.Validate(ctx, fx.task), "InvalidParameterValue", "cleaning_network with name or UUID nowhere was not found")
}

func TestNeutronSmartNIC(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	n.Neutron.StatusAttempts = 2
	p := fx.port(t, 0)
	p.IsSmartNIC = ptr(true)
	p.LocalLinkConnection = map[string]any{"port_id": "rep0-0", "hostname": "dpu-1"}
	if _, err := fx.st.UpdatePort(ctx, p, "is_smartnic", "local_link_connection"); err != nil {
		t.Fatal(err)
	}
	if !n.NeedPowerOn(ctx, fx.task) {
		t.Fatal("a Smart NIC needs the node powered on")
	}
	fn.Agent("dpu-1", false)
	wantClass(t, n.AddProvisioningNetwork(ctx, fx.task), "NetworkError", "Agent on host dpu-1 failed to reach state up")
	if len(fn.Ports()) != 0 {
		t.Fatalf("port created before the agent was up: %v", fn.Ports())
	}
	fn.Agent("dpu-1", true)
	if err := n.AddProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	ports := fn.Ports()
	if len(ports) != 1 || ports[0]["binding:host_id"] != "dpu-1" || ports[0]["binding:vnic_type"] != "smart-nic" {
		t.Fatalf("smart NIC port %v", ports)
	}
	// A port that is not a Smart NIC cannot carry a Smart NIC link.
	p.IsSmartNIC = ptr(false)
	if _, err := fx.st.UpdatePort(ctx, p, "is_smartnic"); err != nil {
		t.Fatal(err)
	}
	wantClass(t, n.AddProvisioningNetwork(ctx, fx.task), "NetworkError", "Failed to create neutron ports for node's "+fx.task.Node.UUID+" ports "+p.UUID+".")
}

// A port on a DHCPv6-stateful subnet gets an address per boot stage.
func TestNeutronDHCPv6StatefulAddresses(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	n.Neutron.DHCPv6StatefulAddressCount = 4
	fn.Subnet("sub-6", provNet, "2001:db8:1::/64", map[string]any{"ipv6_address_mode": "dhcpv6-stateful"})
	if err := n.AddProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	ports := fn.Ports()
	if len(ports) != 1 {
		t.Fatalf("ports %v", ports)
	}
	ips, _ := ports[0]["fixed_ips"].([]any)
	seen := map[any]bool{}
	for _, ip := range ips {
		m := ip.(map[string]any)
		if m["subnet_id"] != "sub-6" || !strings.HasPrefix(m["ip_address"].(string), "2001:db8:1::") {
			t.Fatalf("fixed ip %v", m)
		}
		seen[m["ip_address"]] = true
	}
	if len(ips) != 4 || len(seen) != 4 {
		t.Fatalf("fixed ips %v", ips)
	}
	// A SLAAC subnet keeps its one address.
	fn.Subnet("sub-6", provNet, "2001:db8:1::/64", map[string]any{"ipv6_address_mode": "slaac"})
	if err := n.AddProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if ips, _ := fn.Ports()[0]["fixed_ips"].([]any); len(ips) != 1 {
		t.Fatalf("slaac fixed ips %v", ips)
	}
}
