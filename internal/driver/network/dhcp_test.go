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
