package inspection_test

import (
	"reflect"
	"sort"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/inspection"
	"github.com/openkeel/ironic/internal/spectest"
)

// TestHookNamesMatchEntryPoints: every upstream ironic.inspection.hooks
// entry point is implemented, and nothing else.
func TestHookNamesMatchEntryPoints(t *testing.T) {
	var drivers struct {
		OtherEntryPoints map[string]map[string]string `json:"other_entry_points"`
	}
	spectest.LoadJSON(t, "ironic/core/drivers.json", &drivers)
	eps := drivers.OtherEntryPoints["ironic.inspection.hooks"]
	if len(eps) == 0 {
		t.Fatal("no ironic.inspection.hooks entry points in the spec")
	}
	var want []string
	for n := range eps {
		want = append(want, n)
	}
	sort.Strings(want)
	if got := inspection.HookNames(); !reflect.DeepEqual(got, want) {
		t.Errorf("hooks = %v\nupstream = %v", got, want)
	}
}

func TestHookOptionsFromConfig(t *testing.T) {
	cfg, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := inspection.HookOptionsFromConfig(cfg), inspection.DefaultHookOptions(); !reflect.DeepEqual(got, want) {
		t.Errorf("defaults:\n%+v\nwant\n%+v", got, want)
	}
	cfg, err = config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"inspector": {
		"cpu_capabilities":          "vmx:cpu_vt,avx2:cpu_avx2",
		"pci_device_alias":          `{"vendor_id": "8086", "product_id": "1572", "name": "x710"}`,
		"physical_network_cidr_map": "10.10.10.0/24:physnet_a,2001:db8::/64:physnet_b",
		"known_accelerators":        "/etc/ironic/accelerators.yaml",
		"extra_hardware_strict":     "true",
		"add_ports":                 "all",
	}}})
	if err != nil {
		t.Fatal(err)
	}
	o := inspection.HookOptionsFromConfig(cfg)
	want := inspection.DefaultHookOptions()
	want.AddPorts = "all"
	want.CPUCapabilities = []inspection.KeyValue{{Key: "avx2", Value: "cpu_avx2"}, {Key: "vmx", Value: "cpu_vt"}}
	want.PCIDeviceAlias = []string{`{"vendor_id": "8086", "product_id": "1572", "name": "x710"}`}
	want.PhysicalNetworkCIDRMap = []string{"10.10.10.0/24:physnet_a", "2001:db8::/64:physnet_b"}
	want.KnownAccelerators = "/etc/ironic/accelerators.yaml"
	want.ExtraHardwareStrict = true
	if !reflect.DeepEqual(o, want) {
		t.Errorf("options:\n%+v\nwant\n%+v", o, want)
	}
}
