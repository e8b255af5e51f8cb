package redfish

import (
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

func TestInspectHardwareFillsProperties(t *testing.T) {
	e := newMgmtEnv(t,
		redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Cores: 4, Threads: 8, Model: "Xeon"}),
		redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Cores: 4, Threads: 8, Model: "Xeon"}),
		redfishbmc.MemoryGiB(64),
		// SimpleStorage: a 2 GiB device is too small; 100 GiB is the pick.
		redfishbmc.SimpleStorageDevice("small", "m", 2<<30),
		redfishbmc.SimpleStorageDevice("sda", "m", 100<<30),
		redfishbmc.SimpleStorageDevice("sdb", "m", 500<<30),
		// Storage: a 50 GiB volume is smaller, so it wins over SimpleStorage.
		redfishbmc.StorageVolume(50<<30),
		redfishbmc.StorageDrive(1000<<30),
		redfishbmc.EthernetInterface("1", "52:54:00:AA:BB:01", "Enabled"),
		redfishbmc.EthernetInterface("2", "52:54:00:aa:bb:02", "Disabled"),
		redfishbmc.EthernetInterface("3", "52:54:00:aa:bb:03", "Enabled"),
		redfishbmc.BootMode("Legacy"),
	)
	e.node.Properties["capabilities"] = "foo:bar"
	inspect := &Inspect{core: e.core}
	res, err := inspect.DiscoverHardware(e.ctx, e.task)
	must(t, err)
	next, err := inspect.InspectHardware(e.ctx, e.task)
	must(t, err)
	if next != states.Manageable {
		t.Fatalf("next state %q", next)
	}
	p := e.node.Properties
	for k, want := range map[string]any{
		"cpus": 16, "cpu_arch": "x86_64", "memory_mb": "65536", "local_gb": "49", "capabilities": "foo:bar,boot_mode:bios",
	} {
		if p[k] != want {
			t.Errorf("%s = %#v, want %#v", k, p[k], want)
		}
	}
	if !slices.Equal(res.MACs, []string{"52:54:00:aa:bb:01", "52:54:00:aa:bb:03"}) {
		t.Errorf("enabled MACs %v", res.MACs)
	}
	if cpu := res.Inventory["cpu"].(map[string]any); cpu["count"] != 16 || cpu["architecture"] != "x86_64" {
		t.Errorf("inventory cpu %v", cpu)
	}
	if ifaces := res.Inventory["interfaces"].([]any); len(ifaces) != 3 {
		t.Errorf("inventory interfaces %v", ifaces)
	}
	if disks := res.Inventory["disks"].([]any); len(disks) != 4 {
		t.Errorf("inventory disks %v", disks)
	}
}

func TestInspectHardwareKeepsBootModeCapabilityAndDisklessNode(t *testing.T) {
	e := newMgmtEnv(t,
		redfishbmc.Processor(redfishbmc.CPU{Arch: "ARM", Cores: 2, Threads: 2}),
		redfishbmc.MemoryGiB(8),
		redfishbmc.StorageDrive(1<<30),
	)
	e.node.Properties["capabilities"] = "boot_mode:bios"
	_, err := (&Inspect{core: e.core}).InspectHardware(e.ctx, e.task)
	must(t, err)
	p := e.node.Properties
	if p["capabilities"] != "boot_mode:bios" || p["local_gb"] != "0" || p["cpu_arch"] != "arm" || p["cpus"] != 2 {
		t.Fatalf("properties %v", p)
	}
}

func TestInspectHardwareMissingProperties(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.MemoryGiB(8))
	_, err := (&Inspect{core: e.core}).InspectHardware(e.ctx, e.task)
	wantClass(t, err, "HardwareInspectionFailure", "Failed to inspect hardware. Reason: Failed to discover the following "+
		"properties: cpu_arch, cpus on node "+testNode)
	if _, set := e.node.Properties["memory_mb"]; set {
		t.Fatalf("a failed inspection changed the node: %v", e.node.Properties)
	}
}
