package inspection_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/openkeel/ironic/internal/inspection"
)

func TestMemoryHook(t *testing.T) {
	runCases(t, []hookCase{
		{name: "physical_mb", hooks: "memory", inv: ipaInventory, pd: `{}`, wantProps: `{"memory_mb":16384}`},
		{name: "null physical_mb is copied", hooks: "memory", inv: `{"memory": {"total": 1, "physical_mb": null}}`, pd: `{}`, wantProps: `{"memory_mb":null}`},
		{name: "no physical_mb", hooks: "memory", inv: `{"memory": {"total": 17179869184}}`, pd: `{}`, wantProps: `{}`,
			wantErr: unexpected("InvalidNodeInventory", nodeUUID, "Inventory for node "+nodeUUID+" is invalid: Inventory has missing memory information: {'total': 17179869184} for node "+nodeUUID+".")},
		{name: "no memory", hooks: "memory", inv: `{}`, pd: `{}`, wantProps: `{}`,
			wantErr: unexpected("InvalidNodeInventory", nodeUUID, "Inventory for node "+nodeUUID+" is invalid: Inventory has missing memory information: None for node "+nodeUUID+".")},
	})
}

func TestCPUsHook(t *testing.T) {
	runCases(t, []hookCase{
		{name: "count", hooks: "cpus", inv: ipaInventory, pd: `{}`, wantProps: `{"cpus":8}`},
		{name: "count as string", hooks: "cpus", inv: `{"cpu": {"count": " 16 "}}`, pd: `{}`, wantProps: `{"cpus":16}`},
		{name: "zero count warns only", hooks: "cpus", inv: `{"cpu": {"count": 0}}`, pd: `{}`, wantProps: `{}`},
		{name: "no cpu section", hooks: "cpus", inv: `{}`, pd: `{}`, wantProps: `{}`},
		{name: "null count", hooks: "cpus", inv: `{"cpu": {"count": null}}`, pd: `{}`, wantProps: `{}`,
			wantErr: unexpected("TypeError", nodeUUID, "int() argument must be a string, a bytes-like object or a real number, not 'NoneType'")},
		{name: "count not a number", hooks: "cpus", inv: `{"cpu": {"count": "eight"}}`, pd: `{}`, wantProps: `{}`,
			wantErr: unexpected("ValueError", nodeUUID, "invalid literal for int() with base 10: 'eight'")},
		{name: "null cpu section", hooks: "cpus", inv: `{"cpu": null}`, pd: `{}`, wantProps: `{}`,
			wantErr: unexpected("AttributeError", nodeUUID, "'NoneType' object has no attribute 'get'")},
	})
}

func TestArchitectureHook(t *testing.T) {
	runCases(t, []hookCase{
		{name: "architecture", hooks: "architecture", inv: ipaInventory, pd: `{}`, wantProps: `{"cpu_arch":"x86_64"}`},
		{name: "null architecture is copied", hooks: "architecture", inv: `{"cpu": {"architecture": null}}`, pd: `{}`, wantProps: `{"cpu_arch":null}`},
	})
}

func TestBootModeHook(t *testing.T) {
	runCases(t, []hookCase{
		{name: "uefi added", hooks: "boot-mode", inv: ipaInventory, pd: `{}`, wantProps: `{"capabilities":"boot_mode:uefi"}`},
		{name: "existing capability updated in place", hooks: "boot-mode", props: map[string]any{"capabilities": "boot_mode:bios,secure_boot:true"},
			inv: ipaInventory, pd: `{}`, wantProps: `{"capabilities":"boot_mode:uefi,secure_boot:true"}`},
		{name: "no boot mode", hooks: "boot-mode", props: map[string]any{"capabilities": "x:y"}, inv: `{"boot": {"pxe_interface": null}}`, pd: `{}`, wantProps: `{"capabilities":"x:y"}`},
		{name: "malformed capabilities", hooks: "boot-mode", props: map[string]any{"capabilities": "boot_mode:bios,boot_option"},
			inv: ipaInventory, pd: `{}`, wantProps: `{"capabilities":"boot_mode:bios,boot_option"}`,
			wantErr: unexpected("ValueError", nodeUUID, "Invalid capabilities string 'boot_mode:bios,boot_option'.")},
	})
}

func TestCPUCapabilitiesHook(t *testing.T) {
	runCases(t, []hookCase{
		{name: "default mapping in upstream order", hooks: "cpu-capabilities", props: map[string]any{"capabilities": "boot_mode:uefi"},
			inv: `{"cpu": {"flags": ["fpu", "aes", "pse", "vmx", "pdpe1gb", "smx"]}}`, pd: `{}`,
			wantProps: `{"capabilities":"boot_mode:uefi,cpu_vt:true,cpu_aes:true,cpu_hugepages:true,cpu_hugepages_1g:true,cpu_txt:true"}`},
		{name: "svm is cpu_vt too", hooks: "cpu-capabilities", inv: `{"cpu": {"flags": ["svm"]}}`, pd: `{}`, wantProps: `{"capabilities":"cpu_vt:true"}`},
		{name: "no flag matches still rewrites", hooks: "cpu-capabilities", inv: `{"cpu": {"flags": ["fpu"]}}`, pd: `{}`, wantProps: `{"capabilities":""}`},
		{name: "no flags", hooks: "cpu-capabilities", inv: `{"cpu": {"flags": []}}`, pd: `{}`, wantProps: `{}`},
		{name: "configured mapping", hooks: "cpu-capabilities", inv: `{"cpu": {"flags": ["avx2", "sse4_2"]}}`, pd: `{}`,
			opts: func(o *inspection.HookOptions) {
				o.CPUCapabilities = []inspection.KeyValue{{Key: "sse4_2", Value: "cpu_sse42"}, {Key: "avx2", Value: "cpu_avx2"}}
			},
			wantProps: `{"capabilities":"cpu_sse42:true,cpu_avx2:true"}`},
	})
}

func TestPCIDevicesHook(t *testing.T) {
	aliases := func(o *inspection.HookOptions) {
		o.PCIDeviceAlias = []string{
			`{"vendor_id": "8086", "product_id": "1572", "name": "intel_x710"}`,
			`{"vendor_id": "10de", "product_id": "1eb8", "name": "tesla_t4"}`,
			`{"vendor_id": "15b3", "product_id": "1017"}`,
			`not json`,
		}
	}
	devices := `{"pci_devices": [
	 {"vendor_id": "10de", "product_id": "1eb8", "class": "030200", "revision": "a1", "bus": "0000:3b:00.0"},
	 {"vendor_id": "8086", "product_id": "1572", "class": "020000", "revision": "01", "bus": "0000:18:00.0"},
	 {"vendor_id": "8086", "product_id": "1572", "class": "020000", "revision": "01", "bus": "0000:18:00.1"},
	 {"vendor_id": "15b3", "product_id": "1017", "class": "020000", "revision": "00", "bus": "0000:af:00.0"}]}`
	runCases(t, []hookCase{
		{name: "counted in order found", hooks: "pci-devices", opts: aliases, props: map[string]any{"capabilities": "boot_mode:uefi"},
			inv: `{}`, pd: devices, wantProps: `{"capabilities":"boot_mode:uefi,tesla_t4:1,intel_x710:2"}`},
		{name: "no alias matches", hooks: "pci-devices", opts: aliases, inv: `{}`, pd: `{"pci_devices": [{"vendor_id": "1af4", "product_id": "1000"}]}`, wantProps: `{}`},
		{name: "no pci devices", hooks: "pci-devices", opts: aliases, inv: `{}`, pd: `{}`, wantProps: `{}`},
		{name: "device without vendor", hooks: "pci-devices", opts: aliases, inv: `{}`, pd: `{"pci_devices": [{"product_id": "1000"}]}`, wantProps: `{}`,
			wantErr: unexpected("KeyError", nodeUUID, "'vendor_id'")},
	})
}

func TestAcceleratorsHook(t *testing.T) {
	custom := filepath.Join(t.TempDir(), "accel.yaml")
	if err := os.WriteFile(custom, []byte("pci_devices:\n  - vendor_id: \"1002\"\n    device_id: \"740f\"\n    type: GPU\n    device_info: AMD Instinct MI210\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(broken, []byte("pci_devices:\n  - vendor_id: \"1002\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	devices := `{"pci_devices": [
	 {"vendor_id": "8086", "product_id": "1572", "class": "020000", "bus": "0000:18:00.0"},
	 {"vendor_id": "10de", "product_id": "1eb8", "class": "030200", "bus": "0000:3b:00.0"},
	 {"vendor_id": "1002", "product_id": "740f", "class": "038000", "bus": "0000:5e:00.0"}]}`
	runCases(t, []hookCase{
		{name: "shipped list", hooks: "accelerators", inv: `{}`, pd: devices,
			wantProps: `{"accelerators":[{"device_id":"1eb8","device_info":"NVIDIA Corporation Tesla T4","pci_address":"0000:3b:00.0","type":"GPU","vendor_id":"10de"}]}`},
		{name: "configured list", hooks: "accelerators", opts: func(o *inspection.HookOptions) { o.KnownAccelerators = custom }, inv: `{}`, pd: devices,
			wantProps: `{"accelerators":[{"device_id":"740f","device_info":"AMD Instinct MI210","pci_address":"0000:5e:00.0","type":"GPU","vendor_id":"1002"}]}`},
		{name: "none known sets an empty list", hooks: "accelerators", inv: `{}`, pd: `{"pci_devices": [{"vendor_id": "8086", "product_id": "1572", "bus": "0000:18:00.0"}]}`,
			wantProps: `{"accelerators":[]}`},
		{name: "no pci devices", hooks: "accelerators", inv: `{}`, pd: `{"pci_devices": []}`, wantProps: `{}`},
		{name: "invalid device list", hooks: "accelerators", opts: func(o *inspection.HookOptions) { o.KnownAccelerators = broken }, inv: `{}`, pd: devices,
			wantProps: `{}`,
			wantErr:   "Failed to inspect hardware. Reason: The following hook(s) are missing or failed to load: accelerators (One of the PCI devices in the configuration file is missing vendor_id or device_id.)"},
	})
}

func TestExtraHardwareHook(t *testing.T) {
	data := `{"data": [["cpu","logical","number","8"],["cpu","physical","frequency",2400.7],["disk","sda","size"],["memory"],[],
	 ["net","eth0",["x"],1],["system","product","name","KVM","extra"],["net","eth0","speed",null],["ipmi","lan","ip-address","0x10"]]}`
	runCases(t, []hookCase{
		{name: "converted", hooks: "extra-hardware", inv: `{}`, pd: data, wantProps: `{}`, wantPD: map[string]string{
			"data":  "",
			"extra": `{"cpu":{"logical":{"number":8},"physical":{"frequency":2400}},"disk":{"sda":{}},"ipmi":{"lan":{"ip-address":"0x10"}},"memory":{},"net":{"eth0":{"speed":null}},"system":{"product":{"name":"KVM"}}}`,
		}},
		{name: "strict refuses short records", hooks: "extra-hardware", opts: func(o *inspection.HookOptions) { o.ExtraHardwareStrict = true },
			inv: `{}`, pd: data, wantPD: map[string]string{"data": "", "extra": ""}},
		{name: "not lists kept when lenient", hooks: "extra-hardware", inv: `{}`, pd: `{"data": [["a","b","c","1"], "x"]}`,
			wantPD: map[string]string{"data": `[["a","b","c","1"],"x"]`, "extra": ""}},
		{name: "no data", hooks: "extra-hardware", inv: `{}`, pd: `{}`, wantPD: map[string]string{"extra": ""}},
	})
}

func TestRaidDeviceHook(t *testing.T) {
	previous := func(inv map[string]any) func(*memTarget) {
		return func(tg *memTarget) { tg.stored, tg.storedFound = inv, true }
	}
	disks := `{"disks": [{"name": "/dev/sda", "serial": "S1"}, {"name": "/dev/sdb", "serial": "S2"}, {"name": "/dev/md0", "serial": "RAID-1"}]}`
	runCases(t, []hookCase{
		{name: "one new device", hooks: "raid-device", inv: disks, pd: `{}`,
			setup:     previous(map[string]any{"disks": []any{map[string]any{"name": "/dev/sda", "serial": "S1"}, map[string]any{"name": "/dev/sdb", "serial": "S2"}}}),
			wantProps: `{"root_device":{"serial":"RAID-1"}}`},
		{name: "first inspection", hooks: "raid-device", inv: disks, pd: `{}`, wantProps: `{}`},
		{name: "two new devices", hooks: "raid-device", inv: disks, pd: `{}`,
			setup: previous(map[string]any{"disks": []any{map[string]any{"name": "/dev/sda", "serial": "S1"}}}), wantProps: `{}`},
		{name: "nothing new", hooks: "raid-device", inv: disks, pd: `{}`,
			setup: func(tg *memTarget) { tg.stored, tg.storedFound = decode(t, disks), true }, wantProps: `{}`},
		{name: "hint already set", hooks: "raid-device", props: map[string]any{"root_device": map[string]any{"name": "/dev/sda"}}, inv: disks, pd: `{}`,
			setup: previous(map[string]any{"disks": []any{}}), wantProps: `{"root_device":{"name":"/dev/sda"}}`},
		{name: "stored inventory without disks", hooks: "raid-device", inv: disks, pd: `{}`,
			setup: previous(map[string]any{"disks": []any{}}), wantProps: `{}`,
			wantErr: unexpected("TypeError", nodeUUID, "argument of type 'NoneType' is not iterable")},
	})
}
