package agent

import (
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/drivertest"
	"github.com/openkeel/ironic/internal/model"
)

// TestDeployClassesMatchDriversJSON checks the registered agent deploy
// interfaces against their classes in drivers.json: entry point, kind,
// properties and declared steps (with no agent steps cached).
func TestDeployClassesMatchDriversJSON(t *testing.T) {
	spec := drivertest.LoadSpec(t)
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
		class, c, ok := spec.ClassOf(t, driver.KindDeploy, name)
		if !ok {
			continue
		}
		if _, ok := spec.Classes[class]; !ok {
			t.Errorf("deploy/%s: class %s missing from the spec", name, class)
			continue
		}
		t.Run(name, func(t *testing.T) {
			drivertest.CheckClass(t, c, driver.KindDeploy, impl, &driver.Task{Node: &model.Node{}})
		})
	}
}
