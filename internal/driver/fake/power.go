package fake

import (
	"context"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/states"
)

// Power is upstream FakePower. The node's power_state field is the only
// state: the power state read is the one last set, as upstream (which keeps
// nothing in driver_internal_info).
type Power struct {
	driver.NoSteps
	noProperties
	accept
	delay delay
}

var (
	_ driver.PowerInterface = (*Power)(nil)
	_ driver.Validator      = (*Power)(nil)
)

// GetPowerState returns the node's recorded power state.
func (p *Power) GetPowerState(ctx context.Context, task *driver.Task) (string, error) {
	if err := p.delay.sleep(ctx); err != nil {
		return "", err
	}
	return task.Node.PowerState, nil
}

// SetPowerState records state on the node; only on, off, soft reboot and
// soft power off are accepted, as upstream (reboot goes through Reboot).
func (p *Power) SetPowerState(ctx context.Context, task *driver.Task, state string, _ time.Duration) error {
	if err := p.delay.sleep(ctx); err != nil {
		return err
	}
	switch state {
	case states.PowerOn, states.PowerOff, states.SoftReboot, states.SoftPowerOff:
		task.Node.PowerState = state
		return nil
	}
	return driver.InvalidParameterValue("set_power_state called with an invalid power state: %s.", state)
}

// Reboot does nothing after the delay; the node's state is left as is.
func (p *Power) Reboot(ctx context.Context, _ *driver.Task, _ time.Duration) error {
	return p.delay.sleep(ctx)
}

// GetSupportedPowerStates lists what upstream's fake power supports.
func (p *Power) GetSupportedPowerStates(context.Context, *driver.Task) ([]string, error) {
	return []string{states.PowerOn, states.PowerOff, states.Reboot, states.SoftReboot, states.SoftPowerOff}, nil
}
