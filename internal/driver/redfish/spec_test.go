package redfish

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/spectest"
)

// TestRegisteredClassesMatchDriversJSON checks every registered redfish
// implementation against its class in drivers.json: entry point, kind,
// properties and declared steps.
func TestRegisteredClassesMatchDriversJSON(t *testing.T) {
	var spec struct {
		Interfaces map[string]map[string]string `json:"interfaces"`
		Classes    map[string]struct {
			InterfaceType string                      `json:"interface_type"`
			Properties    map[string]string           `json:"properties"`
			Steps         map[string][]map[string]any `json:"steps"`
		} `json:"classes"`
	}
	spectest.LoadJSON(t, "ironic/core/drivers.json", &spec)

	r := driver.NewRegistry()
	must(t, Register(r, DefaultOptions()))
	checked := map[string]bool{}
	for _, kind := range driver.AllKinds {
		for _, name := range r.Names(kind) {
			impl, _ := r.Implementation(kind, name)
			class, ok := spec.Interfaces[string(kind)][name]
			if !ok {
				t.Errorf("%s/%s: no such entry point upstream", kind, name)
				continue
			}
			c := spec.Classes[class]
			t.Run(class, func(t *testing.T) {
				if c.InterfaceType != string(kind) {
					t.Errorf("interface_type %q, registered as %s", c.InterfaceType, kind)
				}
				if got := impl.Properties(); !maps.Equal(got, c.Properties) {
					t.Errorf("properties differ:\n got  %v\n want %v", got, c.Properties)
				}
				for _, sk := range driver.StepKinds {
					got, err := driver.StepsOf(context.Background(), &driver.Task{}, kind, impl, sk)
					must(t, err)
					want := c.Steps[string(sk)]
					if len(got) != len(want) {
						t.Errorf("%s steps: %d, spec %d", sk, len(got), len(want))
						continue
					}
					for i := range got {
						data, err := json.Marshal(got[i].Map())
						must(t, err)
						var gotMap map[string]any
						must(t, json.Unmarshal(data, &gotMap))
						w := maps.Clone(want[i])
						delete(w, "defined_in")
						delete(w, "source")
						if !reflect.DeepEqual(gotMap, w) {
							t.Errorf("%s step %d:\n got  %v\n want %v", sk, i, gotMap, w)
						}
					}
				}
			})
			checked[string(kind)+"/"+name] = true
		}
	}
	for _, want := range []string{"power/redfish", "management/redfish", "boot/redfish-virtual-media", "inspect/redfish",
		"bios/redfish", "raid/redfish", "firmware/redfish", "vendor/redfish"} {
		if !checked[want] {
			t.Errorf("%s was not registered and checked", want)
		}
	}
}
