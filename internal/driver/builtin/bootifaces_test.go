package builtin

import (
	"testing"

	"github.com/openkeel/ironic/internal/driver"
)

// The http, http-ipxe and redfish-https boot interfaces (issue #10) can be
// enabled and are served to nodes of the hardware types supporting them.
func TestHTTPBootInterfacesEnabled(t *testing.T) {
	d := drivers(t, minimal(map[string]string{
		"enabled_hardware_types":        "redfish",
		"enabled_power_interfaces":      "redfish",
		"enabled_management_interfaces": "redfish",
		"enabled_boot_interfaces":       "http,http-ipxe,redfish-https",
		"enabled_deploy_interfaces":     "direct",
	}))
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
