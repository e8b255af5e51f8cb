package redfish

import (
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/drivertest"
)

// TestRegisteredClassesMatchDriversJSON checks every registered redfish
// implementation against its class in drivers.json: entry point, kind,
// properties and declared steps.
func TestRegisteredClassesMatchDriversJSON(t *testing.T) {
	r := driver.NewRegistry()
	must(t, Register(r, DefaultOptions()))
	checked := drivertest.CheckRegistered(t, drivertest.LoadSpec(t), r, &driver.Task{})
	for _, want := range []string{"power/redfish", "management/redfish", "boot/redfish-virtual-media", "inspect/redfish",
		"bios/redfish", "raid/redfish", "firmware/redfish", "vendor/redfish"} {
		if !checked[want] {
			t.Errorf("%s was not registered and checked", want)
		}
	}
}
