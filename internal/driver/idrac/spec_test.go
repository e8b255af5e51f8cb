package idrac

import (
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/drivertest"
	"github.com/openkeel/ironic/internal/driver/redfish"
)

// TestRegisteredClassesMatchDriversJSON checks every idrac implementation
// against its class in drivers.json: entry point, kind, properties and
// the declared steps with their priorities, argsinfo and flags.
func TestRegisteredClassesMatchDriversJSON(t *testing.T) {
	r := driver.NewRegistry()
	if err := Register(r, redfish.DefaultOptions(), redfish.DefaultBootOptions(), DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	checked := drivertest.CheckRegistered(t, drivertest.LoadSpec(t), r, &driver.Task{})
	for _, want := range []string{"power/idrac-redfish", "management/idrac-redfish", "boot/idrac-redfish-virtual-media",
		"inspect/idrac-redfish", "bios/idrac-redfish", "raid/idrac-redfish", "vendor/idrac-redfish"} {
		if !checked[want] {
			t.Errorf("%s was not registered and checked", want)
		}
	}
}
