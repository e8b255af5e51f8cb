package ipmi

import (
	"context"
	"errors"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// rebootSettleDelay is how long upstream waits after "power reset" before
// polling, so the node has had a chance to go down first.
const rebootSettleDelay = 15 * time.Second

// supportedPowerStates is upstream's list, in its order.
var supportedPowerStates = []string{states.PowerOn, states.PowerOff, states.Reboot, states.SoftReboot, states.SoftPowerOff}

// Power is upstream IPMIPower.
type Power struct {
	driver.NoSteps
	core *core
}

var _ driver.PowerInterface = (*Power)(nil)

// Properties returns the ipmitool driver_info keys.
func (p *Power) Properties() map[string]string { return Properties() }

// Validate checks driver_info and the BMC address without touching the
// BMC: validate runs often and BMCs are fragile.
func (p *Power) Validate(_ context.Context, task *driver.Task) error {
	d, err := p.core.parse(task)
	if err != nil {
		return err
	}
	return validateAddress(d.Address, task.Node.UUID)
}

// GetPowerState runs "power status".
func (p *Power) GetPowerState(ctx context.Context, task *driver.Task) (string, error) {
	d, err := p.core.parse(task)
	if err != nil {
		return "", err
	}
	return p.core.powerStatus(ctx, task, d)
}

// GetSupportedPowerStates lists what SetPowerState accepts.
func (p *Power) GetSupportedPowerStates(context.Context, *driver.Task) ([]string, error) {
	return append([]string(nil), supportedPowerStates...), nil
}

// SetPowerState turns the node on or off (hard or soft), or soft reboots
// it, and waits for the resulting state.
func (p *Power) SetPowerState(ctx context.Context, task *driver.Task, state string, timeout time.Duration) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	d, err := p.core.parse(task)
	if err != nil {
		return err
	}
	switch state {
	case states.PowerOn:
		if err := p.core.ensureNextBootDevice(ctx, task, d); err != nil {
			return err
		}
		return p.core.setAndWait(ctx, task, d, states.PowerOn, timeout)
	case states.PowerOff:
		return p.core.setAndWait(ctx, task, d, states.PowerOff, timeout)
	case states.SoftPowerOff:
		return p.core.setAndWait(ctx, task, d, states.SoftPowerOff, timeout)
	case states.SoftReboot:
		if task.Node.DisablePowerOff {
			// ipmitool has no graceful reboot that keeps the power on.
			return errs.New(errs.ClassUnsupportedHardwareFeature, map[string]any{"node": task.Node.UUID, "feature": states.SoftPowerOff})
		}
		if err := p.core.setAndWait(ctx, task, d, states.SoftPowerOff, timeout); err != nil {
			return err
		}
		if err := p.core.ensureNextBootDevice(ctx, task, d); err != nil {
			return err
		}
		return p.core.setAndWait(ctx, task, d, states.PowerOn, timeout)
	}
	return driver.InvalidParameterValue("set_power_state called with invalid power state %s.", state)
}

// Reboot power cycles the node: off (unless already off) then on; a node
// that must stay powered gets "power reset" instead.
func (p *Power) Reboot(ctx context.Context, task *driver.Task, timeout time.Duration) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	d, err := p.core.parse(task)
	if err != nil {
		return err
	}
	if task.Node.DisablePowerOff {
		if err := p.core.ensureNextBootDevice(ctx, task, d); err != nil {
			return err
		}
		return p.core.setAndWait(ctx, task, d, states.Reboot, timeout)
	}
	// Some BMCs fail "power off" on a node that is off already.
	current, err := p.core.powerStatus(ctx, task, d)
	if err != nil {
		return err
	}
	if current != states.PowerOff {
		if err := p.core.setAndWait(ctx, task, d, states.PowerOff, timeout); err != nil {
			return err
		}
	}
	if err := p.core.ensureNextBootDevice(ctx, task, d); err != nil {
		return err
	}
	return p.core.setAndWait(ctx, task, d, states.PowerOn, timeout)
}

// powerStatus is upstream _power_status: the exact "Chassis Power is
// on/off" lines, anything else is the error state.
func (c *core) powerStatus(ctx context.Context, task *driver.Task, d DriverInfo) (string, error) {
	const cmd = "power status"
	out, _, err := c.exec(ctx, d, cmd, execOptions{killOnTimeout: c.opts.KillOnTimeout})
	if err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		task.Logger().Warn("IPMI power status failed", "node", d.UUID, "error", err)
		return "", ipmiFailure(cmd)
	}
	switch out {
	case "Chassis Power is on\n":
		return states.PowerOn, nil
	case "Chassis Power is off\n":
		return states.PowerOff, nil
	}
	return states.Error, nil
}

// setAndWait is upstream _set_and_wait: one power command (the runner
// does the retries), then polling until the target state or the timeout.
func (c *core) setAndWait(ctx context.Context, task *driver.Task, d DriverInfo, action string, timeout time.Duration) error {
	var cmdName, target string
	switch action {
	case states.PowerOn:
		cmdName, target = "on", states.PowerOn
	case states.PowerOff:
		cmdName, target = "off", states.PowerOff
	case states.SoftPowerOff:
		cmdName, target = "soft", states.PowerOff
		if timeout <= 0 {
			timeout = c.opts.SoftPowerOffTimeout
		}
	case states.Reboot:
		cmdName, target = "reset", states.PowerOn
	}
	cmd := "power " + cmdName
	if _, _, err := c.exec(ctx, d, cmd, execOptions{}); err != nil {
		if ctx.Err() != nil {
			return err
		}
		task.Logger().Warn("IPMI power action failed", "node", d.UUID, "command", cmd, "error", err)
		return ipmiFailure(cmd)
	}
	clock := c.opts.clock()
	if action == states.Reboot {
		task.Logger().Debug("waiting for the node to power off before checking its state", "node", d.UUID, "delay", rebootSettleDelay)
		if err := clock.Sleep(ctx, rebootSettleDelay); err != nil {
			return err
		}
	}
	if timeout <= 0 {
		timeout = c.opts.PowerStateChangeTimeout
	}
	return c.waitForPowerState(ctx, task, d, target, timeout)
}

// waitForPowerState is the conductor's node_wait_for_power_state: poll
// after one second, then at doubling intervals, until the state is the
// target or the timeout has passed (PowerStateFailure).
func (c *core) waitForPowerState(ctx context.Context, task *driver.Task, d DriverInfo, target string, timeout time.Duration) error {
	clock := c.opts.clock()
	deadline := clock.Now().Add(timeout)
	interval := time.Second
	for {
		if err := clock.Sleep(ctx, min(interval, max(deadline.Sub(clock.Now()), 0))); err != nil {
			return err
		}
		status, err := c.powerStatus(ctx, task, d)
		if err != nil {
			return err
		}
		if status == target {
			return nil
		}
		if !clock.Now().Before(deadline) {
			task.Logger().Error("timed out waiting for power state", "node", d.UUID, "timeout", timeout, "state", target)
			return errs.New(errs.ClassPowerStateFailure, map[string]any{"pstate": target})
		}
		interval *= 2
	}
}

// ensureNextBootDevice is upstream driver_utils.ensure_next_boot_device:
// with ipmi_force_boot_device, re-send the remembered persistent boot
// device before powering on, unless a one-time device is pending.
func (c *core) ensureNextBootDevice(ctx context.Context, task *driver.Task, d DriverInfo) error {
	if !d.ForceBootDevice {
		return nil
	}
	ii := task.Node.InternalInfo()
	if v, ok := ii.Lookup(model.DIIIsNextBootPersistent); ok && v == false {
		ii.Delete(model.DIIIsNextBootPersistent)
		return nil
	}
	dev := ii.String(model.DIIPersistentBootDevice)
	if dev == "" {
		return nil
	}
	return nodeSetBootDevice(ctx, task, dev, false)
}

// nodeSetBootDevice is the conductor's node_set_boot_device: validate the
// management interface, leave adopted nodes alone, apply
// force_persistent_boot_device, then set the device.
func nodeSetBootDevice(ctx context.Context, task *driver.Task, device string, persistent bool) error {
	if task.Driver == nil || task.Driver.Management == nil {
		return errors.New("set boot device: the node has no management interface")
	}
	m := task.Driver.Management
	if err := m.Validate(ctx, task); err != nil {
		return err
	}
	if task.Node.ProvisionState == states.Adopting {
		return nil
	}
	switch fp := task.Node.DriverInfo["force_persistent_boot_device"]; fp {
	case "Always":
		persistent = true
	case "Never":
		persistent = false
	case nil, "Default":
	default:
		if boolFromString(fp) {
			persistent = true
		}
	}
	return m.SetBootDevice(ctx, task, device, persistent)
}
