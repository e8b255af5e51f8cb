package fake

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/states"
)

// Deploy is upstream FakeDeploy: its single deploy step (priority 100)
// finishes synchronously, so a fake deployment ends at once.
type Deploy struct {
	noProperties
	accept
	delay delay
}

var (
	_ driver.DeployInterface = (*Deploy)(nil)
	_ driver.StepRunner      = (*Deploy)(nil)
)

// Steps declares deploy.deploy.
func (d *Deploy) Steps() []driver.StepSpec {
	return []driver.StepSpec{driver.DeployStep("deploy", 100)}
}

// StepHandlers maps the deploy step.
func (d *Deploy) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"deploy": func(ctx context.Context, t *driver.Task, _ map[string]any) (string, error) {
			return d.Deploy(ctx, t)
		},
	}
}

// Deploy finishes synchronously.
func (d *Deploy) Deploy(ctx context.Context, _ *driver.Task) (string, error) {
	return "", d.delay.sleep(ctx)
}

// TearDown answers "deleted", as upstream.
func (d *Deploy) TearDown(ctx context.Context, _ *driver.Task) (string, error) {
	if err := d.delay.sleep(ctx); err != nil {
		return "", err
	}
	return states.Deleted, nil
}

// Prepare does nothing.
func (d *Deploy) Prepare(ctx context.Context, _ *driver.Task) error { return d.delay.sleep(ctx) }

// CleanUp does nothing.
func (d *Deploy) CleanUp(ctx context.Context, _ *driver.Task) error { return d.delay.sleep(ctx) }

// TakeOver does nothing.
func (d *Deploy) TakeOver(ctx context.Context, _ *driver.Task) error { return d.delay.sleep(ctx) }
