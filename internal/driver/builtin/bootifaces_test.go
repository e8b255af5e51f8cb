package builtin

import (
	"testing"

	"github.com/openkeel/ironic/internal/driver"
)

// The http, http-ipxe and redfish-https boot interfaces (issue #10) can be
// enabled and are served to nodes of the hardware types supporting them.
func TestHTTPBootInterfacesEnabled(t *testing.T) {
	c := load(t, map[string]string{
		"enabled_hardware_types":        "redfish",
		"enabled_power_interfaces":      "redfish",
		"enabled_management_interfaces": "redfish",
		"enabled_boot_interfaces":       "http,http-ipxe,redfish-https",
		"enabled_deploy_interfaces":     "direct",
		"enabled_inspect_interfaces":    "no-inspect",
		"enabled_network_interfaces":    "noop",
		"enabled_storage_interfaces":    "noop",
		"enabled_bios_interfaces":       "no-bios",
		"enabled_console_interfaces":    "no-console",
		"enabled_firmware_interfaces":   "no-firmware",
		"enabled_raid_interfaces":       "no-raid",
		"enabled_rescue_interfaces":     "no-rescue",
		"enabled_vendor_interfaces":     "no-vendor",
	})
	d, err := Drivers(c)
	if err != nil {
		t.Fatal(err)
	}
	ht, err := d.HardwareType("redfish")
	if err != nil {
		t.Fatal(err)
	}
	// The redfish type lists http-ipxe before http and redfish-https.
	if got, err := d.DefaultInterface(ht, driver.KindBoot, ""); err != nil || got != "http-ipxe" {
		t.Errorf("default boot interface = %q, %v; want http-ipxe", got, err)
	}
	for _, name := range []string{"http", "http-ipxe", "redfish-https"} {
		impl, err := d.Interface(ht, driver.KindBoot, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if _, ok := impl.(driver.BootInterface); !ok {
			t.Errorf("%s is %T, not a boot interface", name, impl)
		}
	}
}
