package network

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// The DHCP provider puts the boot options on the VIF each port boots
// through now (the provisioning port while provisioning), keeping those of
// the IP versions the port has addresses of; without a VIF, or when every
// update fails, it fails as upstream's neutron provider.
func TestDHCPUpdatesCurrentVIFs(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	fn.Subnet("sub-4", provNet, "192.0.2.0/24", nil)
	fx.task.Driver = &driver.Interfaces{Network: n}
	d := &DHCP{Ports: fx.st, Neutron: n.Neutron}
	opts := []map[string]any{
		{"opt_name": "67", "opt_value": "pxelinux.0", "ip_version": 4},
		{"opt_name": "66", "opt_value": "192.0.2.1", "ip_version": 4},
		{"opt_name": "59", "opt_value": "tftp://192.0.2.1/pxelinux.0", "ip_version": 6},
	}
	uuid := fx.task.Node.UUID
	wantClass(t, d.UpdateDHCPOpts(ctx, fx.task, opts), "FailedToUpdateDHCPOptOnPort",
		"No VIFs found for node "+uuid+" when attempting to update DHCP BOOT options.")

	if err := n.AddProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	if err := d.UpdateDHCPOpts(ctx, fx.task, opts); err != nil {
		t.Fatal(err)
	}
	vif, _ := fx.port(t, 0).InternalInfo["provisioning_vif_port_id"].(string)
	got, _ := fn.GetPort(vif)["extra_dhcp_opts"].([]any)
	if len(got) != 2 {
		t.Fatalf("extra_dhcp_opts %v, want the two IPv4 options", got)
	}
	for i, o := range got {
		m := o.(map[string]any)
		if m["opt_name"] != opts[i]["opt_name"] || m["opt_value"] != opts[i]["opt_value"] || m["ip_version"] != 4.0 {
			t.Errorf("option %d = %v, want %v", i, m, opts[i])
		}
	}

	fn.Fail(http.MethodPut, "/v2.0/ports/", http.StatusInternalServerError, 1)
	wantClass(t, d.UpdateDHCPOpts(ctx, fx.task, opts), "FailedToUpdateDHCPOptOnPort",
		"Failed to set DHCP BOOT options for any port on node "+uuid+".")

	// The noop interface has no VIFs, whatever internal_info says.
	fx.task.Driver.Network = noop.Network{}
	wantClass(t, d.UpdateDHCPOpts(ctx, fx.task, opts), "FailedToUpdateDHCPOptOnPort", "No VIFs found")
}

// The provider's addresses are the first fixed IP of each port's current
// VIF; ports without a VIF or whose Neutron port cannot be read are
// skipped, and an address that does not parse fails the call, as
// upstream's get_ip_addresses.
func TestDHCPGetIPAddresses(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	fn.Subnet("sub-4", provNet, "192.0.2.0/24", nil)
	fx.task.Driver = &driver.Interfaces{Network: n}
	d := &DHCP{Ports: fx.st, Neutron: n.Neutron}
	if got, err := d.GetIPAddresses(ctx, fx.task); err != nil || len(got) != 0 {
		t.Fatalf("without VIFs: %v, %v", got, err)
	}
	if err := n.AddProvisioningNetwork(ctx, fx.task); err != nil {
		t.Fatal(err)
	}
	vif, _ := fx.port(t, 0).InternalInfo["provisioning_vif_port_id"].(string)
	fips, _ := fn.GetPort(vif)["fixed_ips"].([]any)
	if len(fips) == 0 {
		t.Fatalf("provisioning port %s has no fixed IP", vif)
	}
	want, _ := fips[0].(map[string]any)["ip_address"].(string)
	got, err := d.GetIPAddresses(ctx, fx.task)
	if err != nil || len(got) != 1 || got[0] != want {
		t.Fatalf("addresses %v, %v; want [%s]", got, err, want)
	}

	fn.Fail(http.MethodGet, "/v2.0/ports/", http.StatusInternalServerError, 1)
	if got, err := d.GetIPAddresses(ctx, fx.task); err != nil || len(got) != 0 {
		t.Fatalf("with Neutron failing: %v, %v", got, err)
	}

	fn.Port(map[string]any{"id": "bad-ip", "network_id": provNet, "fixed_ips": []any{map[string]any{"ip_address": "192.0.2.300"}}})
	p := fx.port(t, 1)
	p.InternalInfo = map[string]any{TenantVIFKey: "bad-ip"}
	if _, err := fx.st.UpdatePort(ctx, p, "internal_info"); err != nil {
		t.Fatal(err)
	}
	_, err = d.GetIPAddresses(ctx, fx.task)
	wantClass(t, err, "InvalidIPAddress", "Invalid IP address 192.0.2.300.")
}

// The instance's network metadata has a phy link per port with a tenant
// VIF and a bond link over the member ports per portgroup with one, each
// with its Neutron network's MTU and its subnet, the links renamed
// iface0… and the bond and networks pointing at the new names.
func TestGenerateInstanceNetworkData(t *testing.T) {
	ctx := context.Background()
	n, fn, fx := newNeutron(t)
	fn.Subnet("sub-4", provNet, "192.0.2.0/24", map[string]any{"gateway_ip": "192.0.2.1", "dns_nameservers": []any{"192.0.2.53"}})
	fx.task.Driver = &driver.Interfaces{Network: n}
	if md, err := n.GenerateInstanceNetworkData(ctx, fx.task); err != nil || len(md["links"].([]any)) != 0 {
		t.Fatalf("without VIFs: %v, %v", md, err)
	}
	fixed := func(ip string) []any { return []any{map[string]any{"subnet_id": "sub-4", "ip_address": ip}} }
	fn.Port(map[string]any{"id": "vif-a", "network_id": provNet, "mac_address": "fa:16:3e:00:00:0a", "fixed_ips": fixed("192.0.2.10")})
	fn.Port(map[string]any{"id": "vif-b", "name": "bond-port", "network_id": provNet, "mac_address": "fa:16:3e:00:00:0b", "fixed_ips": fixed("192.0.2.11")})
	pgMAC := "52:54:00:aa:bb:10"
	pg, err := fx.st.CreatePortgroup(ctx, &model.Portgroup{NodeID: &fx.task.Node.ID, Address: &pgMAC, InternalInfo: map[string]any{TenantVIFKey: "vif-b"}})
	if err != nil {
		t.Fatal(err)
	}
	p0 := fx.port(t, 0)
	p0.InternalInfo = map[string]any{TenantVIFKey: "vif-a"}
	p1 := fx.port(t, 1)
	p1.PortgroupID = &pg.ID
	for _, u := range []struct {
		p     *model.Port
		field string
	}{{p0, "internal_info"}, {p1, "portgroup_id"}} {
		if _, err := fx.st.UpdatePort(ctx, u.p, u.field); err != nil {
			t.Fatal(err)
		}
	}
	md, err := n.GenerateInstanceNetworkData(ctx, fx.task)
	if err != nil {
		t.Fatal(err)
	}
	route := []any{map[string]any{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "192.0.2.1"}}
	want := map[string]any{
		"links": []any{
			map[string]any{"id": "iface0", "type": "phy", "ethernet_mac_address": *p0.Address, "vif_id": "vif-a", "mtu": 1500.0},
			map[string]any{"id": "iface1", "type": "bond", "ethernet_mac_address": pgMAC, "vif_id": "vif-b", "mtu": 1500.0, "bond_links": []any{"iface2"}},
			map[string]any{"id": "iface2", "type": "phy", "ethernet_mac_address": *p1.Address},
		},
		"networks": []any{
			map[string]any{"id": "sub-4", "network_id": provNet, "type": "ipv4", "link": "iface0", "ip_address": "192.0.2.10", "netmask": "255.255.255.0", "routes": route},
			map[string]any{"id": "sub-4", "network_id": provNet, "type": "ipv4", "link": "iface1", "ip_address": "192.0.2.11", "netmask": "255.255.255.0", "routes": route},
		},
		"services": []any{
			map[string]any{"type": "dns", "address": "192.0.2.53"},
			map[string]any{"type": "dns", "address": "192.0.2.53"},
		},
	}
	if got, _ := json.Marshal(md); string(got) != string(mustJSON(t, want)) {
		t.Errorf("metadata\n%s\nwant\n%s", got, mustJSON(t, want))
	}

	fn.Fail(http.MethodGet, "/v2.0/networks/", http.StatusInternalServerError, 1)
	if _, err := n.GenerateInstanceNetworkData(ctx, fx.task); !errs.Is(err, errs.ClassNetworkError) {
		t.Fatalf("Neutron failing: %v", err)
	}
	// Standalone flat has no Neutron to describe its VIFs: no metadata.
	standalone := &Flat{Ports: fx.st}
	if md, err := standalone.GenerateInstanceNetworkData(ctx, fx.task); err != nil || len(md["links"].([]any)) != 0 {
		t.Fatalf("standalone flat: %v, %v", md, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
