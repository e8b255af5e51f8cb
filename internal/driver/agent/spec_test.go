package agent

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
)

// TestDeployClassesMatchDriversJSON checks the registered agent deploy
// interfaces against their classes in drivers.json: entry point, kind,
// properties and declared steps (with no agent steps cached).
func TestDeployClassesMatchDriversJSON(t *testing.T) {
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
	if err := Register(r, Options{}); err != nil {
		t.Fatal(err)
	}
	names := r.Names(driver.KindDeploy)
	if want := []string{"autodetect", "bootc", "custom-agent", "direct", "ramdisk"}; !slices.Equal(slices.Sorted(slices.Values(names)), want) {
		t.Fatalf("registered deploy interfaces %v, want %v", names, want)
	}
	for _, name := range names {
		impl, _ := r.Implementation(driver.KindDeploy, name)
		class, ok := spec.Interfaces["deploy"][name]
		if !ok {
			t.Errorf("deploy/%s: no such entry point upstream", name)
			continue
		}
		c, ok := spec.Classes[class]
		if !ok {
			t.Errorf("deploy/%s: class %s missing from the spec", name, class)
			continue
		}
		t.Run(name, func(t *testing.T) {
			if c.InterfaceType != "deploy" {
				t.Errorf("interface_type %q", c.InterfaceType)
			}
			if got := impl.Properties(); !maps.Equal(got, c.Properties) {
				t.Errorf("properties differ:\n got  %v\n want %v", got, c.Properties)
			}
			task := &driver.Task{Node: &model.Node{}}
			for _, sk := range driver.StepKinds {
				got, err := driver.StepsOf(context.Background(), task, driver.KindDeploy, impl, sk)
				if err != nil {
					t.Fatal(err)
				}
				// The spec lists declared steps by method name.
				slices.SortFunc(got, func(a, b driver.Step) int { return strings.Compare(a.Name, b.Name) })
				want := c.Steps[string(sk)]
				if len(got) != len(want) {
					t.Errorf("%s steps: %d, spec %d", sk, len(got), len(want))
					continue
				}
				for i := range got {
					data, err := json.Marshal(got[i].Map())
					if err != nil {
						t.Fatal(err)
					}
					var gotMap map[string]any
					if err := json.Unmarshal(data, &gotMap); err != nil {
						t.Fatal(err)
					}
					w := maps.Clone(want[i])
					delete(w, "defined_in")
					delete(w, "source")
					if !reflect.DeepEqual(gotMap, w) {
						t.Errorf("%s step %d:\n got  %v\n want %v", sk, i, gotMap, w)
					}
				}
			}
		})
	}
}
