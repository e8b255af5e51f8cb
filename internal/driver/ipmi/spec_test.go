package ipmi

import (
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/drivertest"
)

// TestRegisteredClassesMatchDriversJSON checks every registered ipmitool
// implementation against its class in drivers.json: entry point, kind,
// properties and declared steps.
func TestRegisteredClassesMatchDriversJSON(t *testing.T) {
	r := driver.NewRegistry()
	o := DefaultOptions()
	o.Support = allSupported
	o.TempDir = t.TempDir()
	must(t, Register(r, o))
	if checked := drivertest.CheckRegistered(t, drivertest.LoadSpec(t), r, &driver.Task{}); len(checked) != 5 {
		t.Fatalf("checked %v, want power, both managements, vendor and console", checked)
	}
}

// TestIPMIHardwareTypesAreComplete checks that what the ipmi and
// intel-ipmi hardware types prefer for the kinds this package owns is
// registered here.
func TestIPMIHardwareTypesAreComplete(t *testing.T) {
	r := driver.NewRegistry()
	o := DefaultOptions()
	o.Support = allSupported
	o.TempDir = t.TempDir()
	must(t, Register(r, o))
	seen := 0
	for _, ht := range driver.StockHardwareTypes() {
		if ht.Name != "ipmi" && ht.Name != "intel-ipmi" {
			continue
		}
		seen++
		for _, kind := range []driver.Kind{driver.KindPower, driver.KindManagement, driver.KindVendor, driver.KindConsole} {
			if _, ok := r.Implementation(kind, ht.Supported[kind][0]); !ok {
				t.Errorf("%s %s: %s not registered", ht.Name, kind, ht.Supported[kind][0])
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d of the ipmi and intel-ipmi hardware types declared", seen)
	}
}
