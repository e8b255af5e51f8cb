package inspection_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/inspection"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
)

// ipaInventory is shaped like IPA's list_hardware_info: the PXE NIC with
// an address, a second NIC without one, loopback, 8 CPUs, 16 GiB, one
// 500 GB disk; plugin data carries root_disk as IPA's collector sends it.
const ipaInventory = `{
 "interfaces": [
  {"name": "eth0", "mac_address": "52:54:00:AA:BB:01", "ipv4_address": "192.0.2.10", "ipv6_address": "fe80::1%eth0", "has_carrier": true, "lldp": null, "vendor": "0x1af4", "product": "0x0001", "client_id": null},
  {"name": "eth1", "mac_address": "52:54:00:aa:bb:02", "ipv4_address": null, "ipv6_address": null, "has_carrier": false, "lldp": null},
  {"name": "lo", "mac_address": "00:00:00:00:00:00", "ipv4_address": "127.0.0.1"}
 ],
 "cpu": {"model_name": "Intel Xeon", "frequency": "2400", "count": 8, "architecture": "x86_64", "flags": ["vmx", "aes"]},
 "memory": {"total": 17179869184, "physical_mb": 16384},
 "disks": [{"name": "/dev/sda", "model": "QEMU HARDDISK", "size": 500107862016, "rotational": true, "serial": "S1", "vendor": "ATA", "wwn": null}],
 "bmc_address": "192.0.2.200",
 "system_vendor": {"product_name": "KVM", "serial_number": "SN1", "manufacturer": "QEMU"},
 "boot": {"current_boot_mode": "uefi", "pxe_interface": "01-52-54-00-aa-bb-01"},
 "hostname": "node-0"
}`

const ipaPluginData = `{"root_disk": {"name": "/dev/sda", "size": 500107862016}}`

func runHooks(t *testing.T, tg *memTarget, hooks string, o inspection.HookOptions, inv, pd map[string]any) error {
	t.Helper()
	names, err := inspection.ParseHooks(hooks, "ramdisk-error,validate-interfaces,ports,architecture")
	if err != nil {
		t.Fatalf("parse hooks: %v", err)
	}
	return inspection.RunHooks(context.Background(), tg, names, o, inv, pd)
}

func TestDefaultHooks(t *testing.T) {
	tg := newTarget()
	pd := decode(t, ipaPluginData)
	if err := runHooks(t, tg, "$default_hooks", inspection.DefaultHookOptions(), decode(t, ipaInventory), pd); err != nil {
		t.Fatal(err)
	}
	if got := tg.addresses(); !reflect.DeepEqual(got, []string{"52:54:00:aa:bb:01 pxe=true"}) {
		t.Errorf("ports = %v", got)
	}
	if !reflect.DeepEqual(tg.node.Properties, map[string]any{"cpu_arch": "x86_64"}) {
		t.Errorf("properties = %v", tg.node.Properties)
	}
	// Plugin data keeps the inventory's spelling of the MAC.
	if !reflect.DeepEqual(pd["macs"], []any{"52:54:00:AA:BB:01"}) {
		t.Errorf("macs = %v", pd["macs"])
	}
	all := pd["all_interfaces"].(map[string]any)
	if len(all) != 3 || all["eth0"].(map[string]any)["ipv6_address"] != "fe80::1" || all["eth1"].(map[string]any)["pxe_enabled"] != false {
		t.Errorf("all_interfaces = %v", all)
	}
}

func TestAllHooksAddAllAndKeepPresent(t *testing.T) {
	tg := newTarget()
	stale, old := "52:54:00:ff:ff:ff", "52:54:00:aa:bb:02"
	yes := true
	if err := tg.CreatePort(context.Background(), &model.Port{Address: &stale, PXEEnabled: &yes}); err != nil {
		t.Fatal(err)
	}
	if err := tg.CreatePort(context.Background(), &model.Port{Address: &old, PXEEnabled: &yes}); err != nil {
		t.Fatal(err)
	}
	o := inspection.DefaultHookOptions()
	o.AddPorts, o.KeepPorts = "all", "present"
	err := runHooks(t, tg, "$default_hooks,memory,cpus,root-device", o, decode(t, ipaInventory), decode(t, ipaPluginData))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"52:54:00:aa:bb:01 pxe=true", "52:54:00:aa:bb:02 pxe=false"}
	if got := tg.addresses(); !reflect.DeepEqual(got, want) {
		t.Errorf("ports = %v, want %v", got, want)
	}
	props, _ := json.Marshal(tg.node.Properties)
	if string(props) != `{"cpu_arch":"x86_64","cpus":8,"local_gb":464,"memory_mb":16384}` {
		t.Errorf("properties = %s", props)
	}
}

func TestActivePortsAndRootDeviceHints(t *testing.T) {
	tg := newTarget()
	tg.node.Properties["root_device"] = map[string]any{"serial": "S2"}
	o := inspection.DefaultHookOptions()
	o.AddPorts = "active"
	err := runHooks(t, tg, "validate-interfaces,ports,root-device", o, decode(t, ipaInventory), decode(t, ipaPluginData))
	if !errs.Is(err, errs.ClassHardwareInspectionFailure) || !strings.Contains(err.Error(), "No disks satisfied root device hints for node "+tg.node.UUID) {
		t.Fatalf("err = %v", err)
	}
	if got := tg.addresses(); !reflect.DeepEqual(got, []string{"52:54:00:aa:bb:01 pxe=true"}) {
		t.Errorf("ports = %v", got)
	}
	tg.node.Properties["root_device"] = map[string]any{"serial": "s1", "size": ">= 465"}
	o.DiskPartitioningSpacing = false
	if err := runHooks(t, tg, "root-device", o, decode(t, ipaInventory), map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if tg.node.Properties["local_gb"] != int64(465) {
		t.Errorf("local_gb = %#v", tg.node.Properties["local_gb"])
	}
}

func TestHookFailures(t *testing.T) {
	tg := newTarget()
	err := runHooks(t, tg, "$default_hooks", inspection.DefaultHookOptions(), map[string]any{}, map[string]any{"error": "boom"})
	want := "Failed to inspect hardware. Reason: The following failures happened while running preprocess hooks for node " + tg.node.UUID + ":\n" +
		"Error in preprocess hook ramdisk-error: Failed to inspect hardware. Reason: Ramdisk reported error: boom\n" +
		"Unexpected exception InvalidNodeInventory during preprocess hook validate-interfaces: Inventory for node " + tg.node.UUID + " is invalid: no interfaces present in inventory"
	if !errs.Is(err, errs.ClassHardwareInspectionFailure) || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
	err = runHooks(t, tg, "architecture", inspection.DefaultHookOptions(), map[string]any{"cpu": map[string]any{"count": 1.0}}, map[string]any{})
	if !errs.Is(err, errs.ClassHardwareInspectionFailure) || !strings.Contains(err.Error(), "InvalidNodeInventory") || !strings.Contains(err.Error(), "Inventory has malformed or missing CPU architecture information: {'count': 1} for node") {
		t.Errorf("err = %v", err)
	}
	inv := decode(t, ipaInventory)
	inv["interfaces"] = []any{map[string]any{"name": "lo", "mac_address": "00:00:00:00:00:00", "ipv4_address": "127.0.0.1"}}
	err = runHooks(t, tg, "validate-interfaces", inspection.DefaultHookOptions(), inv, map[string]any{})
	if err == nil || !strings.Contains(err.Error(), `no network interfaces match the configuration (add_ports set to "pxe")`) {
		t.Errorf("err = %v", err)
	}
}

func TestParseHooks(t *testing.T) {
	got, err := inspection.ParseHooks(" $default_hooks, memory ,", "ramdisk-error,validate-interfaces,ports")
	if err != nil || !reflect.DeepEqual(got, []string{"ramdisk-error", "validate-interfaces", "ports", "memory"}) {
		t.Errorf("got %v, %v", got, err)
	}
	_, err = inspection.ParseHooks("ports,validate-interfaces,local-link-connection", "")
	want := "Failed to inspect hardware. Reason: Some hooks failed to load due to dependency problems: " +
		"Hook ports requires these missing hooks to be enabled before it: validate-interfaces"
	if !errs.Is(err, errs.ClassHardwareInspectionFailure) || err.Error() != want {
		t.Errorf("dependency: %v", err)
	}
	_, err = inspection.ParseHooks("nope,cpus,other", "")
	if !errs.Is(err, errs.ClassHardwareInspectionFailure) || err.Error() != "Failed to inspect hardware. Reason: The following hook(s) are missing or failed to load: nope, other" {
		t.Errorf("unknown: %v", err)
	}
}

// TestAPIRefInventorySample runs the default hooks over the api-ref's
// node inventory: no PXE interface is reported, so the one NIC becomes a
// port that is not PXE-enabled, and the architecture is recorded.
func TestAPIRefInventorySample(t *testing.T) {
	var sample struct {
		Inventory map[string]any `json:"inventory"`
	}
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/node-inventory-response.json", &sample)
	tg := newTarget()
	if err := runHooks(t, tg, "$default_hooks,cpus", inspection.DefaultHookOptions(), sample.Inventory, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if got := tg.addresses(); !reflect.DeepEqual(got, []string{"52:54:00:90:35:d6 pxe=false"}) {
		t.Errorf("ports = %v", got)
	}
	if tg.node.Properties["cpu_arch"] != "x86_64" || tg.node.Properties["cpus"] != int64(1) {
		t.Errorf("properties = %v", tg.node.Properties)
	}
}

// TestAPIRefInventoryAllHooks runs every hook but memory over the
// api-ref's inventory, its one NIC seeing an LLDP switch: the port gets
// the switch port and the mapped physical network, the inventory's
// missing disks, boot and flags leave those properties alone.
func TestAPIRefInventoryAllHooks(t *testing.T) {
	var sample struct {
		Inventory map[string]any `json:"inventory"`
	}
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/node-inventory-response.json", &sample)
	sample.Inventory["interfaces"].([]any)[0].(map[string]any)["lldp"] = leafSwitchTLVs()
	tg := newTarget()
	o := inspection.DefaultHookOptions()
	o.PhysicalNetworkCIDRMap = []string{"10.0.0.0/8:tenant", "192.168.122.0/24:provisioning"}
	o.PCIDeviceAlias = []string{`{"vendor_id": "1af4", "product_id": "1000", "name": "virtio_net"}`}
	pd := map[string]any{}
	hooks := "$default_hooks,cpus,boot-mode,cpu-capabilities,root-device,raid-device,pci-devices,accelerators,extra-hardware,parse-lldp,local-link-connection,physical-network"
	if err := runHooks(t, tg, hooks, o, sample.Inventory, pd); err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(tg.node.Properties); got != `{"cpu_arch":"x86_64","cpus":1,"local_gb":0}` {
		t.Errorf("properties = %s", got)
	}
	if len(tg.ports) != 1 {
		t.Fatalf("ports = %v", tg.addresses())
	}
	p := tg.ports[0]
	if *p.Address != "52:54:00:90:35:d6" || *p.PXEEnabled || p.PhysicalNetwork == nil || *p.PhysicalNetwork != "provisioning" {
		t.Errorf("port = %s pxe=%v physnet=%v", *p.Address, *p.PXEEnabled, p.PhysicalNetwork)
	}
	if got := jsonOf(p.LocalLinkConnection); got != `{"port_id":"Ethernet1/18","switch_id":"88:5a:92:ec:d0:a1","switch_info":"leaf-01.example.net"}` {
		t.Errorf("local_link_connection = %s", got)
	}
	if got := jsonOf(pd["parsed_lldp"]); got != `{"eth0":`+leafSwitchParsed+`}` {
		t.Errorf("parsed_lldp = %s", got)
	}
	for k, want := range map[string]string{"local_gb": "0", "macs": `["52:54:00:90:35:d6"]`, "root_disk": "null", "extra": "null"} {
		if got := jsonOf(pd[k]); got != want {
			t.Errorf("plugin_data[%s] = %s, want %s", k, got, want)
		}
	}
	err := runHooks(t, newTarget(), "memory", o, sample.Inventory, map[string]any{})
	want := unexpected("InvalidNodeInventory", nodeUUID, "Inventory for node "+nodeUUID+" is invalid: Inventory has missing memory information: None for node "+nodeUUID+".")
	if err == nil || err.Error() != want {
		t.Errorf("memory: %v", err)
	}
}

func TestValidateInterfaces(t *testing.T) {
	inv := `{"boot": {"pxe_interface": "01-52-54-00-AA-BB-03"}, "interfaces": [
	 {"name": "eth3", "mac_address": "52:54:00:aa:bb:03", "ipv4_address": "192.0.2.13"},
	 {"name": "eth1", "mac_address": "52:54:00:aa:bb:01", "ipv6_address": "2001:db8::1%eth1"},
	 {"name": "eth2", "mac_address": "52-54-00-aa-bb-02", "ipv4_address": "192.0.2.12"},
	 {"name": "", "mac_address": "52:54:00:aa:bb:04"},
	 {"name": "eth5", "mac_address": null},
	 {"name": "lo", "mac_address": "00:00:00:00:00:00", "ipv4_address": "127.0.0.1"},
	 {"name": "eth6", "mac_address": "52:54:00:aa:bb:06", "ipv4_address": "127.0.0.2"}]}`
	all := `{"eth1":{"ipv6_address":"2001:db8::1","mac_address":"52:54:00:aa:bb:01","name":"eth1","pxe_enabled":false},` +
		`"eth3":{"ipv4_address":"192.0.2.13","ipv6_address":null,"mac_address":"52:54:00:aa:bb:03","name":"eth3","pxe_enabled":true},` +
		`"eth6":{"ipv4_address":"127.0.0.2","ipv6_address":null,"mac_address":"52:54:00:aa:bb:06","name":"eth6","pxe_enabled":false},` +
		`"lo":{"ipv4_address":"127.0.0.1","ipv6_address":null,"mac_address":"00:00:00:00:00:00","name":"lo","pxe_enabled":false}}`
	runCases(t, []hookCase{
		{name: "pxe", hooks: "validate-interfaces", inv: inv, pd: `{}`, wantPD: map[string]string{
			"all_interfaces": all, "macs": `["52:54:00:aa:bb:03"]`}},
		// macs follow the inventory's order; loopback addresses never count.
		{name: "all", hooks: "validate-interfaces", opts: func(o *inspection.HookOptions) { o.AddPorts = "all" }, inv: inv, pd: `{}`,
			wantPD: map[string]string{"macs": `["52:54:00:aa:bb:03","52:54:00:aa:bb:01"]`}},
		{name: "active", hooks: "validate-interfaces", opts: func(o *inspection.HookOptions) { o.AddPorts = "active" },
			inv: `{"interfaces": [{"name": "eth0", "mac_address": "52:54:00:aa:bb:00"}, {"name": "eth1", "mac_address": "52:54:00:aa:bb:01", "ipv4_address": "192.0.2.11"}]}`,
			pd:  `{}`, wantPD: map[string]string{"macs": `["52:54:00:aa:bb:01"]`}},
		{name: "no valid interface", hooks: "validate-interfaces", inv: `{"interfaces": [{"name": "eth2", "mac_address": "52-54-00-aa-bb-02"}]}`, pd: `{}`,
			wantErr: "Failed to inspect hardware. Reason: The following failures happened while running preprocess hooks for node " + nodeUUID + ":\n" +
				"Unexpected exception InvalidNodeInventory during preprocess hook validate-interfaces: Inventory for node " + nodeUUID + " is invalid: no valid network interfaces"},
	})
}
