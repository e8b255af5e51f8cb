package conductor

import (
	"context"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
)

// switchDeployInterface is task.driver.deploy.switch_interface: the
// autodetect deploy interface replaces itself with the interface that
// suits the image, on the node and in the task. The change is saved at
// once, as upstream saves it, even if validation then refuses the
// deployment.
func (c *Conductor) switchDeployInterface(ctx context.Context, t *task.Task) error {
	sw, ok := t.Driver.Deploy.(driver.InterfaceSwitcher)
	if !ok {
		return nil
	}
	if err := sw.SwitchInterface(ctx, t.DriverTask()); err != nil {
		return err
	}
	return t.Save(ctx)
}

// restoreDeployInterface is task.driver.deploy.restore_interface: the
// node gets back the deploy interface a switch replaced (autodetect),
// saved with the caller's next save.
func (c *Conductor) restoreDeployInterface(ctx context.Context, t *task.Task) {
	r, ok := t.Driver.Deploy.(driver.InterfaceRestorer)
	if !ok {
		return
	}
	if err := r.RestoreInterface(ctx, t.DriverTask()); err != nil {
		t.Log().ErrorContext(ctx, "restore the original deploy interface", "error", err)
	}
}
