package builtin

import (
	"maps"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
)

func load(t *testing.T, defaults map[string]string) *config.Config {
	t.Helper()
	c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"DEFAULT": defaults}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// drivers are the drivers of the configuration whose [DEFAULT] options
// are defaults.
func drivers(t *testing.T, defaults map[string]string) *driver.Drivers {
	t.Helper()
	d, err := Drivers(load(t, defaults))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// minimal enables the fake hardware type with, for each interface kind,
// one that needs nothing from outside; overrides set the kinds a test is
// about.
func minimal(overrides map[string]string) map[string]string {
	d := map[string]string{
		"enabled_hardware_types":        "fake-hardware",
		"enabled_power_interfaces":      "fake",
		"enabled_management_interfaces": "fake",
		"enabled_boot_interfaces":       "fake",
		"enabled_deploy_interfaces":     "fake",
		"enabled_inspect_interfaces":    "no-inspect",
		"enabled_network_interfaces":    "noop",
		"enabled_storage_interfaces":    "noop",
		"enabled_bios_interfaces":       "no-bios",
		"enabled_console_interfaces":    "no-console",
		"enabled_firmware_interfaces":   "no-firmware",
		"enabled_raid_interfaces":       "no-raid",
		"enabled_rescue_interfaces":     "no-rescue",
		"enabled_vendor_interfaces":     "no-vendor",
	}
	maps.Copy(d, overrides)
	return d
}

func TestDriversEnablesWhatTheConfigurationSays(t *testing.T) {
	d := drivers(t, minimal(map[string]string{
		"enabled_power_interfaces":      "fake,redfish",
		"enabled_management_interfaces": "fake,redfish",
		"enabled_inspect_interfaces":    "fake,no-inspect",
	}))
	rows, err := d.HardwareInterfaces()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, r := range rows {
		found[r.HardwareType+"/"+string(r.InterfaceType)+"/"+r.InterfaceName] = true
	}
	for _, want := range []string{"fake-hardware/power/fake", "fake-hardware/inspect/no-inspect", "fake-hardware/bios/no-bios"} {
		if !found[want] {
			t.Errorf("%s not enabled; have %v", want, found)
		}
	}
	ht, err := d.HardwareType("fake-hardware")
	if err != nil {
		t.Fatal(err)
	}
	if name, err := d.DefaultInterface(ht, driver.KindPower, ""); err != nil || name != "fake" {
		t.Errorf("default fake-hardware power interface = %q, %v", name, err)
	}
}

// The redfish hardware type needs a boot interface it supports; with
// none of them enabled the conductor refuses to register it, as upstream.
func TestRedfishNeedsASupportedBootInterface(t *testing.T) {
	c := load(t, minimal(map[string]string{
		"enabled_hardware_types":        "redfish",
		"enabled_power_interfaces":      "redfish",
		"enabled_management_interfaces": "redfish",
	}))
	d, err := Drivers(c)
	if err == nil {
		_, err = d.HardwareInterfaces()
	}
	if !errs.Is(err, errs.ClassNoValidDefaultForInterface) {
		t.Fatalf("got %v, want NoValidDefaultForInterface", err)
	}
}

func TestDriversRefusesUnknownInterface(t *testing.T) {
	c := load(t, map[string]string{
		"enabled_hardware_types":   "fake-hardware",
		"enabled_power_interfaces": "fake,no-such-power",
	})
	if _, err := Drivers(c); !errs.Is(err, errs.ClassDriverNotFoundInEntrypoint) {
		t.Fatalf("got %v, want DriverNotFoundInEntrypoint", err)
	}
}

// The ipmitool interfaces are registered when enabled (which probes the
// ipmitool binary, installed by .ci/run).
func TestIPMIEnabled(t *testing.T) {
	d := drivers(t, minimal(map[string]string{
		"enabled_power_interfaces":      "fake,ipmitool",
		"enabled_management_interfaces": "fake,ipmitool",
		"enabled_console_interfaces":    "no-console,ipmitool-socat",
		"enabled_vendor_interfaces":     "no-vendor,ipmitool",
	}))
	for _, k := range []driver.Kind{driver.KindPower, driver.KindManagement, driver.KindVendor} {
		if !slices.Contains(d.Enabled(k), "ipmitool") {
			t.Errorf("%s interfaces %v lack ipmitool", k, d.Enabled(k))
		}
	}
	if !slices.Contains(d.Enabled(driver.KindConsole), "ipmitool-socat") {
		t.Errorf("console interfaces %v lack ipmitool-socat", d.Enabled(driver.KindConsole))
	}
}

// With virtual media boot and the direct deploy, the redfish hardware type
// has every interface it needs.
func TestRedfishHardwareType(t *testing.T) {
	d := drivers(t, minimal(map[string]string{
		"enabled_hardware_types":        "redfish",
		"enabled_power_interfaces":      "redfish",
		"enabled_management_interfaces": "redfish",
		"enabled_boot_interfaces":       "redfish-virtual-media",
		"enabled_deploy_interfaces":     "direct",
	}))
	if _, err := d.HardwareInterfaces(); err != nil {
		t.Fatal(err)
	}
	ht, err := d.HardwareType("redfish")
	if err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[driver.Kind]string{driver.KindBoot: "redfish-virtual-media", driver.KindDeploy: "direct", driver.KindPower: "redfish"} {
		if got, err := d.DefaultInterface(ht, kind, ""); err != nil || got != want {
			t.Errorf("default %s interface = %q, %v; want %s", kind, got, err, want)
		}
	}
}

// intel-ipmitool alone also registers the ipmitool interfaces.
func TestIntelIPMIToolEnabled(t *testing.T) {
	d := drivers(t, minimal(map[string]string{
		"enabled_management_interfaces": "fake,intel-ipmitool",
	}))
	if !slices.Contains(d.Enabled(driver.KindManagement), "intel-ipmitool") {
		t.Errorf("management interfaces %v lack intel-ipmitool", d.Enabled(driver.KindManagement))
	}
}
