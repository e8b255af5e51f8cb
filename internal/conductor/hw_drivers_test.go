package conductor_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/builtin"
	"github.com/openkeel/ironic/internal/spectest"
)

// hwNotRegistered are the interfaces upstream's redfish, ipmi, intel-ipmi
// and manual-management hardware types support that this build does not
// register, with why. Anything else they support must be registered.
var hwNotRegistered = map[string]string{}

// The service's registry (builtin, ipmitool enabled so that its
// interfaces are loaded) against drivers.json: every interface the five
// hardware types support upstream is registered, or listed above.
func TestHWUpstreamInterfacesRegistered(t *testing.T) {
	var spec struct {
		HardwareTypes map[string]struct {
			SupportedInterfaces map[string][]*string `json:"supported_interfaces"`
		} `json:"hardware_types"`
	}
	spectest.LoadJSON(t, "ironic/core/drivers.json", &spec)
	cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"DEFAULT": {"enabled_power_interfaces": "ipmitool,redfish"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := builtin.OptionsFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if o.IPMI != nil {
		o.IPMI.TempDir = t.TempDir()
	}
	r, err := builtin.Registry(o)
	if err != nil {
		t.Fatal(err)
	}
	missing := map[string]bool{}
	for _, hw := range []string{"redfish", "idrac", "ipmi", "intel-ipmi", "manual-management"} {
		h, ok := spec.HardwareTypes[hw]
		if !ok || len(h.SupportedInterfaces) == 0 {
			t.Fatalf("drivers.json has no hardware type %s", hw)
		}
		for _, kind := range driver.AllKinds {
			for _, name := range h.SupportedInterfaces[string(kind)] {
				if name == nil {
					continue
				}
				key := string(kind) + "/" + *name
				if _, ok := r.Implementation(kind, *name); ok {
					if hwNotRegistered[key] != "" {
						t.Errorf("%s is registered now: drop it from hwNotRegistered", key)
					}
					continue
				}
				missing[key] = true
				if hwNotRegistered[key] == "" {
					t.Errorf("%s (supported by %s upstream) is not registered", key, hw)
				}
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(hwNotRegistered)) {
		kind, name, _ := strings.Cut(key, "/")
		_, registered := r.Implementation(driver.Kind(kind), name)
		switch {
		case missing[key]:
			t.Logf("not registered: %s (%s)", key, hwNotRegistered[key])
		case !registered:
			t.Errorf("%s is listed but none of the five hardware types supports it", key)
		}
	}
}
