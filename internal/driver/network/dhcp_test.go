package network

import (
	"context"
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/noop"
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
