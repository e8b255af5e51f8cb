package redfish

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// captured is what InspectOutOfBand handed to the conductor's part.
type captured struct {
	calls      int
	inventory  map[string]any
	pluginData map[string]any
}

// process records the data and, as the default architecture hook does,
// sets cpu_arch from the inventory.
func (c *captured) process(e *env) func(context.Context, map[string]any, map[string]any) error {
	return func(_ context.Context, inventory, pluginData map[string]any) error {
		c.calls++
		c.inventory, c.pluginData = inventory, pluginData
		cpu, _ := inventory["cpu"].(map[string]any)
		e.node.Properties["cpu_arch"] = cpu["architecture"]
		return nil
	}
}

func fullSystem() []redfishbmc.SystemOption {
	return []redfishbmc.SystemOption{
		redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Cores: 4, Threads: 8, Model: "Xeon", MaxSpeedMHz: 3200}),
		redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Cores: 4, Threads: 8, Model: "Other"}),
		redfishbmc.MemoryGiB(64),
		// SimpleStorage: a 2 GiB device is too small; 100 GiB is the pick.
		redfishbmc.SimpleStorageDevice("small", "m", 2<<30),
		redfishbmc.SimpleStorageDevice("sda", "m", 100<<30),
		// Storage: a 50 GiB volume is smaller, so it wins over SimpleStorage.
		redfishbmc.StorageVolume(50 << 30),
		redfishbmc.StorageDrive(1000 << 30),
		redfishbmc.EthernetInterface("1", "52:54:00:AA:BB:01", "Enabled"), redfishbmc.NICSpeed("1", 25000),
		redfishbmc.EthernetInterface("2", "52:54:00:aa:bb:02", "Disabled"),
		redfishbmc.EthernetInterface("3", "not-a-mac", "Enabled"),
		redfishbmc.EthernetInterface("4", "", "Enabled"),
		redfishbmc.PCIeDevice(redfishbmc.PCIeFunction{DeviceClass: "NetworkController", DeviceID: "0x16d7",
			VendorID: "0x14e4", SubsystemID: "0x1402", SubsystemVendorID: "0x14e4", RevisionID: "0x01"}),
		redfishbmc.PCIeDevice(),
		redfishbmc.PCIeDevice(redfishbmc.PCIeFunction{DeviceClass: "NotAClass", DeviceID: "0x1234", VendorID: "0x1000"}),
		redfishbmc.SerialNumber("SN-1234"), redfishbmc.Model("R1234"), redfishbmc.Manufacturer("Sushy Emulator"),
		redfishbmc.BootMode("Legacy"),
	}
}

func TestInspectOutOfBandInventoryPropertiesAndPluginData(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1", fullSystem()...).WithBasicAuth(testUser, testPassword).
		WithNetworkAdapter(redfishbmc.NetworkAdapter{ID: "NIC.1", Ports: []redfishbmc.AdapterPort{
			{ID: "NIC.1-1", LLDP: &redfishbmc.LLDPReceive{ChassisID: "c0:ff:ee:00:00:01", PortID: "Ethernet1/1",
				SystemName: "leaf-1", SystemDescription: "Switch OS", ManagementVlanID: 100}},
			{ID: "NIC.1-2"},
			{ID: "NIC.1-3", LLDP: &redfishbmc.LLDPReceive{}},
		}})
	e := newEnv(t, bmc, nil)
	e.node.Properties = map[string]any{"capabilities": "foo:bar", "cpus": 2}
	var got captured
	next, err := (&Inspect{core: e.core}).InspectOutOfBand(e.ctx, e.task, got.process(e))
	must(t, err)
	if next != states.Manageable || got.calls != 1 {
		t.Fatalf("next state %q, process called %d times", next, got.calls)
	}
	wantProps := map[string]any{
		"memory_mb": int64(65536), "local_gb": int64(49), "capabilities": "foo:bar,boot_mode:bios",
		"cpu_arch": "x86_64", "cpus": 2,
	}
	if !reflect.DeepEqual(e.node.Properties, wantProps) {
		t.Errorf("properties\n got  %#v\n want %#v", e.node.Properties, wantProps)
	}
	inv := got.inventory
	for key, want := range map[string]any{
		"memory": map[string]any{"physical_mb": int64(65536)},
		"cpu":    map[string]any{"count": 16, "architecture": "x86_64", "model_name": "Xeon", "frequency": 3200},
		// Storage drives only: SimpleStorage counts for local_gb, not here.
		"disks": []any{map[string]any{"name": "Drive 1", "size": int64(1000 << 30)}},
		"interfaces": []any{
			map[string]any{"mac_address": "52:54:00:aa:bb:01", "name": "1", "speed_mbps": int64(25000)},
			map[string]any{"mac_address": "52:54:00:aa:bb:02", "name": "2"},
		},
		"pci_devices": []any{
			map[string]any{"class": "NetworkController", "product_id": "0x16d7", "vendor_id": "0x14e4",
				"subsystem_id": "0x1402", "subsystem_vendor_id": "0x14e4", "revision": "0x01"},
			map[string]any{"product_id": "0x1234", "vendor_id": "0x1000"},
		},
		"system_vendor": map[string]any{"product_name": "R1234", "serial_number": "SN-1234",
			"manufacturer": "Sushy Emulator", "system_uuid": bmc.Snapshot("sys-1").UUID},
		"boot": map[string]any{"current_boot_mode": "bios"},
		"storage_controllers": []any{map[string]any{
			"id": "1", "name": "Storage Controller",
			"storage_controllers": []any{map[string]any{"member_id": "0", "name": "SATA Controller",
				"raid_types": []any{}, "speed_gbps": float64(6), "controller_protocols": []any{"PCIe"},
				"device_protocols": []any{"SATA"}, "status": map[string]any{"state": "Enabled", "health": "OK"}}},
			"drives": []any{map[string]any{"name": "Drive 1", "size": int64(1000 << 30), "id": "1", "media_type": "HDD",
				"serial_number": "DRIVE-1", "manufacturer": "OpenKeel", "model": "Emulated Disk", "revision": "1.0",
				"protocol": "SATA", "status": map[string]any{"state": "Enabled", "health": "OK"}}},
		}},
	} {
		if !reflect.DeepEqual(inv[key], want) {
			t.Errorf("inventory %s\n got  %#v\n want %#v", key, inv[key], want)
		}
	}
	if len(inv) != 8 {
		t.Errorf("inventory keys %v", reflect.ValueOf(inv).MapKeys())
	}
	// Storage is read once, though local_gb, disks and controllers use it.
	if n := bmc.Count(http.MethodGet, "/redfish/v1/Systems/sys-1/Storage/1/Drives/1"); n != 1 {
		t.Errorf("drive read %d times", n)
	}
	wantPlugin := map[string]any{"parsed_lldp": map[string]any{"NIC.1-1": map[string]any{
		"switch_chassis_id": "c0:ff:ee:00:00:01", "switch_port_id": "Ethernet1/1", "switch_system_name": "leaf-1",
		"switch_system_description": "Switch OS", "switch_vlan_id": int64(100),
	}}}
	if !reflect.DeepEqual(got.pluginData, wantPlugin) {
		t.Errorf("plugin data\n got  %#v\n want %#v", got.pluginData, wantPlugin)
	}
}

func TestInspectOutOfBandInstructionSets(t *testing.T) {
	for _, tc := range []struct{ arch, set, want string }{
		{"x86", "x86-64", "x86_64"}, {"x86", "x86", "i686"}, {"ARM", "ARM-A64", "aarch64"}, {"ARM", "ARM-A32", "arm"},
		{"IA-64", "IA-64", "ia64"}, {"MIPS", "MIPS32", "mips"}, {"MIPS", "MIPS64", "mips64"},
		{"OEM", "OEM", ""}, {"Power", "PowerISA", ""}, {"MIPS", "", ""},
	} {
		t.Run(tc.set, func(t *testing.T) {
			e := newMgmtEnv(t, redfishbmc.Processor(redfishbmc.CPU{Arch: tc.arch, InstructionSet: tc.set, Threads: 2}),
				redfishbmc.MemoryGiB(8), redfishbmc.EthernetInterface("1", "52:54:00:aa:bb:01", "Enabled"))
			var got captured
			_, err := (&Inspect{core: e.core}).InspectOutOfBand(e.ctx, e.task, got.process(e))
			must(t, err)
			cpu := got.inventory["cpu"].(map[string]any)
			if cpu["architecture"] != tc.want || cpu["count"] != 2 {
				t.Fatalf("cpu %v, want architecture %q", cpu, tc.want)
			}
			if _, has := cpu["frequency"]; has {
				t.Errorf("frequency without MaxSpeedMHz: %v", cpu)
			}
		})
	}
}

// Without anything to set cpu_arch (the architecture hook disabled), the
// essential properties check fails after the conductor's part ran, as
// upstream's runs after hooks, storage and rules.
func TestInspectOutOfBandMissingEssentialProperties(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Threads: 2}),
		redfishbmc.EthernetInterface("1", "52:54:00:aa:bb:01", "Enabled"), redfishbmc.NoBootMode())
	calls := 0
	_, err := (&Inspect{core: e.core}).InspectOutOfBand(e.ctx, e.task, func(context.Context, map[string]any, map[string]any) error {
		calls++
		return nil
	})
	wantClass(t, err, "HardwareInspectionFailure", "Failed to inspect hardware. Reason: Failed to discover the following "+
		"properties: cpu_arch, memory_mb on node "+testNode)
	if calls != 1 {
		t.Errorf("process called %d times before the check", calls)
	}
	if !reflect.DeepEqual(e.node.Properties, map[string]any{"local_gb": int64(0)}) {
		t.Errorf("properties %#v", e.node.Properties)
	}

	// A memory size the node already has satisfies the check.
	e.node.Properties = map[string]any{"memory_mb": "4096", "cpu_arch": "aarch64"}
	next, err := (&Inspect{core: e.core}).InspectHardware(e.ctx, e.task)
	must(t, err)
	if next != states.Manageable || e.node.Properties["memory_mb"] != "4096" || e.node.Properties["cpu_arch"] != "aarch64" {
		t.Fatalf("next %q properties %v", next, e.node.Properties)
	}
}

func TestInspectOutOfBandProcessFailureStops(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Threads: 2}), redfishbmc.MemoryGiB(8))
	boom := errors.New("hooks failed")
	_, err := (&Inspect{core: e.core}).InspectOutOfBand(e.ctx, e.task, func(context.Context, map[string]any, map[string]any) error {
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the process error", err)
	}
}

// Sushy raises on a system without these collections, which upstream's
// conductor reports as an unexpected exception; nothing reaches the node.
func TestInspectOutOfBandSystemWithoutProcessors(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.MemoryGiB(8))
	called := false
	_, err := (&Inspect{core: e.core}).InspectOutOfBand(e.ctx, e.task, func(context.Context, map[string]any, map[string]any) error {
		called = true
		return nil
	})
	wantClass(t, err, "HardwareInspectionFailure", "Unexpected exception of type MissingAttributeError: The attribute "+
		"Processors is missing from the resource /redfish/v1/Systems/sys-1")
	if called || len(e.node.Properties) != 0 {
		t.Fatalf("a failed discovery went on: process %v, properties %v", called, e.node.Properties)
	}
}

func TestInspectOutOfBandDisklessAndSimpleStorage(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.Processor(redfishbmc.CPU{Arch: "ARM", Threads: 2}), redfishbmc.MemoryGiB(8),
		redfishbmc.SimpleStorageDevice("sda", "m", 2<<30), redfishbmc.SimpleStorageDevice("bay", "m", 0),
		redfishbmc.EthernetInterface("1", "52:54:00:aa:bb:01", "Enabled"), redfishbmc.BootMode("UEFI"))
	e.node.Properties["capabilities"] = "boot_mode:bios"
	var got captured
	_, err := (&Inspect{core: e.core}).InspectOutOfBand(e.ctx, e.task, got.process(e))
	must(t, err)
	p := e.node.Properties
	if p["capabilities"] != "boot_mode:bios" || p["local_gb"] != int64(0) || p["memory_mb"] != int64(8192) || p["cpu_arch"] != "aarch64" {
		t.Fatalf("properties %#v", p)
	}
	if _, has := p["cpus"]; has {
		t.Errorf("cpus set: %v", p)
	}
	wantDisks := []any{map[string]any{"name": "sda", "size": int64(2 << 30)}, map[string]any{"name": "bay", "size": nil}}
	if !reflect.DeepEqual(got.inventory["disks"], wantDisks) {
		t.Errorf("disks from SimpleStorage %#v", got.inventory["disks"])
	}
	if _, has := got.inventory["storage_controllers"]; has {
		t.Errorf("storage controllers without Storage: %v", got.inventory["storage_controllers"])
	}
	if _, has := got.inventory["pci_devices"]; has {
		t.Errorf("pci devices without any: %v", got.inventory["pci_devices"])
	}
	if got.inventory["boot"].(map[string]any)["current_boot_mode"] != "uefi" {
		t.Errorf("boot %v", got.inventory["boot"])
	}
	if len(got.pluginData) != 0 {
		t.Errorf("plugin data without LLDP: %v", got.pluginData)
	}
}
