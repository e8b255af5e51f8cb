package ansible

import (
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/driver/drivertest"
	"github.com/openkeel/ironic/internal/model"
)

// TestDeployClassMatchesDriversJSON checks the ansible deploy interface
// against AnsibleDeploy in drivers.json: kind, properties and steps.
func TestDeployClassMatchesDriversJSON(t *testing.T) {
	spec := drivertest.LoadSpec(t)
	r := driver.NewRegistry()
	if err := Register(r, Options{}, agent.Options{}); err != nil {
		t.Fatal(err)
	}
	impl, _ := r.Implementation(driver.KindDeploy, "ansible")
	_, c, ok := spec.ClassOf(t, driver.KindDeploy, "ansible")
	if !ok {
		t.Fatal("drivers.json has no ansible deploy class")
	}
	// drivers.json lists the decorated steps; the clean steps come from
	// the clean steps file at run time (TestCleanSteps), so ListSteps is
	// hidden here.
	drivertest.CheckClass(t, c, driver.KindDeploy, declaredOnly{impl}, &driver.Task{Node: &model.Node{}})
}

// declaredOnly shows an implementation's properties and declared steps
// only.
type declaredOnly struct{ driver.Interface }
