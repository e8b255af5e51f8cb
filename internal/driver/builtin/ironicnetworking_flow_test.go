package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/ipa"
	"github.com/openkeel/ironic/testing/sshswitch"
)

// switchFlow is a flow whose ironic-networking interface drives an IOS
// switch fixture over SSH: cleaning on VLAN 110, provisioning on 100,
// idle ports on 10.
func switchFlow(t *testing.T) (*flow, *sshswitch.Switch) {
	t.Helper()
	sw := sshswitch.Start(t, sshswitch.Options{User: "admin", Password: "pa55", EnableSecret: "s3cret", Delay: time.Millisecond})
	file := filepath.Join(t.TempDir(), "switches.conf")
	conf := fmt.Sprintf("[switch:tor1]\ndriver_type = generic-switch\ndevice_type = netmiko_cisco_ios\naddress = %s\nport = %d\n"+
		"username = admin\npassword = pa55\nenable_secret = s3cret\nmac_address = aa:bb:cc:dd:ee:ff\n", sw.Address(), sw.Port)
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFlowWith(t, map[string]map[string]string{
		"DEFAULT": {"enabled_network_interfaces": "flat,neutron,noop,ironic-networking"},
		"ironic_networking": {
			"enabled_switch_drivers": "generic-switch", "switch_config_file": file,
			"provisioning_network": "access/native_vlan=100", "cleaning_network": "access/native_vlan=110",
			"idle_network": "access/native_vlan=10",
		},
	})
	return f, sw
}

// tenantPort gives the node's port its tenant switchport: access on 200.
func (f *flow) tenantPort(p *model.Port) {
	f.t.Helper()
	p.Extra = map[string]any{"switchport": map[string]any{"mode": "access", "native_vlan": 200.0}}
	if _, err := f.st.UpdatePort(context.Background(), p, "extra"); err != nil {
		f.t.Fatal(err)
	}
}

// A node with ironic-networking cleans on the cleaning VLAN, deploys on
// the provisioning VLAN and ends active on its tenant VLAN; undeploying
// takes it off the tenant VLAN, cleans and leaves the port idle.
func TestIronicNetworkingFlow(t *testing.T) {
	ctx := context.Background()
	f, sw := switchFlow(t)
	n, port := f.node("ironic-networking")
	f.tenantPort(port)

	if err := f.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
		t.Fatal(err)
	}
	f.wait(n, states.CleanWait, nil)
	if got := sw.PortState("Eth1/1"); got.AccessVLAN != 110 {
		t.Fatalf("port while cleaning: %+v", got)
	}
	f.wait(n, states.Available, ipa.New(t))
	if got := sw.PortState("Eth1/1"); got.AccessVLAN != 10 {
		t.Fatalf("port of an available node: %+v, VLANs %v", got, sw.AccessVLANs("Eth1/1"))
	}
	cleaned := len(sw.AccessVLANs("Eth1/1"))

	cur := f.get(n)
	cur.InstanceInfo = f.instanceInfo()
	if _, err := f.st.UpdateNode(ctx, cur, "instance_info"); err != nil {
		t.Fatal(err)
	}
	if err := f.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	f.wait(n, states.DeployWait, nil)
	if got := sw.PortState("Eth1/1"); got.AccessVLAN != 100 || got.Mode != "access" {
		t.Fatalf("port while the ramdisk deploys: %+v", got)
	}
	active := f.wait(n, states.Active, ipa.New(t))
	if deref(active.LastError) != "" {
		t.Fatalf("last_error %q", deref(active.LastError))
	}
	if got := sw.PortState("Eth1/1"); got.AccessVLAN != 200 {
		t.Fatalf("port of the active node: %+v", got)
	}
	deployed := sw.AccessVLANs("Eth1/1")[cleaned:]
	// Preparing unconfigures the tenant network and adds the
	// provisioning one; once written, the port leaves the provisioning
	// network and joins the tenant's.
	if want := []int{10, 100, 10, 200}; !slices.Equal(deployed, want) {
		t.Fatalf("access VLANs while deploying %v, want %v (idle, provisioning, idle, tenant)", deployed, want)
	}

	if err := f.api.DoNodeTearDown(ctx, "", n.UUID); err != nil {
		t.Fatal(err)
	}
	f.wait(n, states.CleanWait, nil)
	if got := sw.PortState("Eth1/1"); got.AccessVLAN != 110 {
		t.Fatalf("port while cleaning after undeploy: %+v", got)
	}
	f.wait(n, states.Available, ipa.New(t))
	undeployed := sw.AccessVLANs("Eth1/1")[cleaned+len(deployed):]
	// Tearing down resets the tenant and the provisioning networks (each
	// back to idle), then cleaning comes and goes.
	if want := []int{10, 10, 110, 10}; !slices.Equal(undeployed, want) {
		t.Fatalf("access VLANs while undeploying %v, want %v (idle, idle, cleaning, idle)", undeployed, want)
	}
}

// A switch rejecting the provisioning VLAN fails the deployment with
// master's NetworkError in last_error, and nothing is left on that VLAN.
func TestIronicNetworkingSwitchFailure(t *testing.T) {
	ctx := context.Background()
	f, sw := switchFlow(t)
	n, port := f.node("ironic-networking")
	f.tenantPort(port)
	cur := f.get(n)
	cur.ProvisionState = states.Available
	cur.InstanceInfo = f.instanceInfo()
	if _, err := f.st.UpdateNode(ctx, cur, "provision_state", "instance_info"); err != nil {
		t.Fatal(err)
	}
	sw.RejectCommand("switchport access vlan 100")
	if err := f.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, nil); err != nil {
		t.Fatal(err)
	}
	failed := f.wait(n, states.DeployFail, nil)
	want := "Failed to prepare to deploy: Failed to configure provisioning network for port " + port.UUID +
		": Failed to configure network port: switch tor1: Found invalid configuration in device response. Operation: switchport access vlan 100. " +
		"Output: switchport access vlan 100\n                ^\n% Invalid input detected at '^' marker.\nsw1(config-if)#"
	if got := deref(failed.LastError); got != want {
		t.Fatalf("last_error:\n got  %q\n want %q", got, want)
	}
	if got := sw.PortState("Eth1/1"); got.AccessVLAN == 100 {
		t.Fatalf("port on the rejected VLAN: %+v", got)
	}
}
