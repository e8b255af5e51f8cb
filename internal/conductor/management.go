package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
)

// withManagement runs fn under the node's lock after validating the
// management interface, as upstream's management calls do.
func (c *Conductor) withManagement(ctx context.Context, nodeID, purpose string, shared bool, fn func(t *task.Task, dt *driver.Task) error) error {
	t, err := c.acquire(ctx, nodeID, purpose, shared)
	if err != nil {
		return err
	}
	defer t.Release()
	dt := t.DriverTask()
	if err := t.Driver.Management.Validate(ctx, dt); err != nil {
		return err
	}
	return fn(t, dt)
}

// SetBootDevice sets the next boot device (upstream set_boot_device).
func (c *Conductor) SetBootDevice(ctx context.Context, _ string, nodeID, device string, persistent bool) error {
	return c.withManagement(ctx, nodeID, "setting boot device", false, func(t *task.Task, dt *driver.Task) error {
		return t.Driver.Management.SetBootDevice(ctx, dt, device, persistent)
	})
}

// GetBootDevice reads the boot device (upstream get_boot_device).
func (c *Conductor) GetBootDevice(ctx context.Context, _ string, nodeID string) (*rpc.BootDevice, error) {
	var out *rpc.BootDevice
	err := c.withManagement(ctx, nodeID, "getting boot device", true, func(t *task.Task, dt *driver.Task) error {
		bd, err := t.Driver.Management.GetBootDevice(ctx, dt)
		if err != nil {
			return err
		}
		out = &rpc.BootDevice{BootDevice: bd.BootDevice, Persistent: bd.Persistent}
		return nil
	})
	return out, err
}

// GetSupportedBootDevices lists the boot devices the node supports.
func (c *Conductor) GetSupportedBootDevices(ctx context.Context, _ string, nodeID string) ([]string, error) {
	var out []string
	err := c.withManagement(ctx, nodeID, "getting supported boot devices", true, func(t *task.Task, dt *driver.Task) error {
		var err error
		out, err = t.Driver.Management.GetSupportedBootDevices(ctx, dt)
		return err
	})
	return out, err
}

// InjectNMI injects a non-maskable interrupt (upstream inject_nmi).
func (c *Conductor) InjectNMI(ctx context.Context, _ string, nodeID string) error {
	return c.withManagement(ctx, nodeID, "inject nmi", false, func(t *task.Task, dt *driver.Task) error {
		inj, ok := t.Driver.Management.(driver.NMIInjector)
		if !ok {
			return unsupportedCall(dt, "inject_nmi")
		}
		return inj.InjectNMI(ctx, dt)
	})
}

// ChangeNodeBootMode sets the boot mode in a worker (upstream
// change_node_boot_mode and node_change_boot_mode): nothing is done when
// the mode already matches; a failure lands in last_error.
func (c *Conductor) ChangeNodeBootMode(ctx context.Context, _ string, nodeID, newState string) error {
	return c.spawnManagement(ctx, nodeID, "changing node boot mode", func(ctx context.Context, t *task.Task) error {
		dt := t.DriverTask()
		var err error
		bm, ok := t.Driver.Management.(driver.BootModeManager)
		if ok {
			if cur, gerr := bm.GetBootMode(ctx, dt); gerr == nil && cur == newState {
				return nil
			}
			err = bm.SetBootMode(ctx, dt, newState)
		} else {
			err = unsupportedCall(dt, "set_boot_mode")
		}
		if err != nil {
			msg := fmt.Sprintf("Failed to change boot mode to '%s: %s", newState, err)
			t.Node.LastError = &msg
			return t.Save(ctx)
		}
		mode := newState
		t.Node.BootMode = &mode
		return t.Save(ctx)
	})
}

// ChangeNodeSecureBoot turns UEFI secure boot on or off in a worker
// (upstream change_node_secure_boot and node_change_secure_boot).
func (c *Conductor) ChangeNodeSecureBoot(ctx context.Context, _ string, nodeID string, newState bool) error {
	return c.spawnManagement(ctx, nodeID, "changing node secure boot", func(ctx context.Context, t *task.Task) error {
		dt := t.DriverTask()
		var err error
		sb, ok := t.Driver.Management.(driver.SecureBootManager)
		if ok {
			if cur, gerr := sb.GetSecureBootState(ctx, dt); gerr == nil && cur == newState {
				return nil
			}
			err = sb.SetSecureBootState(ctx, dt, newState)
		} else {
			err = unsupportedCall(dt, "set_secure_boot_state")
		}
		if err != nil {
			msg := fmt.Sprintf("Failed to change secure_boot state to '%s': %s", pyRepr(newState), err)
			t.Node.LastError = &msg
			return t.Save(ctx)
		}
		v := newState
		t.Node.SecureBoot = &v
		return t.Save(ctx)
	})
}

// spawnManagement validates management, clears last_error and runs fn in
// a worker under the lock.
func (c *Conductor) spawnManagement(ctx context.Context, nodeID, purpose string, fn task.WorkFunc) error {
	t, err := c.acquire(ctx, nodeID, purpose, false)
	if err != nil {
		return err
	}
	defer t.Release()
	if err := t.Driver.Management.Validate(ctx, t.DriverTask()); err != nil {
		return err
	}
	t.Node.LastError = nil
	if err := t.Save(ctx); err != nil {
		return err
	}
	t.SetSpawnErrorHook(task.SpawnErrorHandler(purpose))
	t.SpawnAfter(c.spawner(), task.Work{Name: purpose, Fn: fn})
	return t.End()
}

// SetIndicatorState sets a component's indicator (LED).
func (c *Conductor) SetIndicatorState(ctx context.Context, _ string, nodeID, component, indicator, state string) error {
	return c.withManagement(ctx, nodeID, "setting indicator state", false, func(t *task.Task, dt *driver.Task) error {
		s, ok := t.Driver.Management.(driver.IndicatorSetter)
		if !ok {
			return unsupportedCall(dt, "set_indicator_state")
		}
		return s.SetIndicatorState(ctx, dt, component, indicator, state)
	})
}

// GetIndicatorState reads a component's indicator.
func (c *Conductor) GetIndicatorState(ctx context.Context, _ string, nodeID, component, indicator string) (string, error) {
	var out string
	err := c.withManagement(ctx, nodeID, "getting indicator state", true, func(t *task.Task, dt *driver.Task) error {
		g, ok := t.Driver.Management.(driver.IndicatorGetter)
		if !ok {
			return unsupportedCall(dt, "get_indicator_state")
		}
		var err error
		out, err = g.GetIndicatorState(ctx, dt, component, indicator)
		return err
	})
	return out, err
}

// GetSupportedIndicators lists indicators per component.
func (c *Conductor) GetSupportedIndicators(ctx context.Context, _ string, nodeID, component string) (map[string]any, error) {
	out := map[string]any{}
	err := c.withManagement(ctx, nodeID, "getting supported indicators", true, func(t *task.Task, dt *driver.Task) error {
		l, ok := t.Driver.Management.(driver.IndicatorLister)
		if !ok {
			return unsupportedCall(dt, "get_supported_indicators")
		}
		got, err := l.GetSupportedIndicators(ctx, dt, component)
		if err != nil {
			return err
		}
		for comp, inds := range got {
			m := map[string]any{}
			for name, ind := range inds {
				m[name] = map[string]any{"readonly": ind.ReadOnly, "states": ind.States}
			}
			out[comp] = m
		}
		return nil
	})
	return out, err
}

// SetTargetRAIDConfig stores the requested RAID configuration after the
// RAID interface has checked it (upstream set_target_raid_config); an
// empty one unsets it unchecked. An interface without a check of its own
// gets the base RAIDInterface's.
func (c *Conductor) SetTargetRAIDConfig(ctx context.Context, _ string, nodeID string, target map[string]any) error {
	t, err := c.acquire(ctx, nodeID, "setting target RAID config", false)
	if err != nil {
		return err
	}
	defer t.Release()
	if len(target) > 0 {
		if v, ok := t.Driver.RAID.(driver.RAIDConfigValidator); ok {
			err = v.ValidateRAIDConfig(ctx, t.DriverTask(), target)
		} else {
			err = driver.ValidateRAIDConfig(target)
		}
		if err != nil {
			return err
		}
	}
	t.Node.TargetRAIDConfig = target
	return t.Save(ctx)
}

// GetConsoleInformation returns how to reach the console (upstream
// get_console_information): the console must be enabled.
func (c *Conductor) GetConsoleInformation(ctx context.Context, _ string, nodeID string) (map[string]any, error) {
	t, err := c.acquire(ctx, nodeID, "getting console information", true)
	if err != nil {
		return nil, err
	}
	defer t.Release()
	if !t.Node.ConsoleEnabled {
		return nil, nodeConsoleNotEnabled(t.Node.UUID)
	}
	dt := t.DriverTask()
	if err := t.Driver.Console.Validate(ctx, dt); err != nil {
		return nil, err
	}
	return t.Driver.Console.GetConsole(ctx, dt)
}

// SetConsoleMode enables or disables the console in a worker (upstream
// set_console_mode): nothing is done when the mode already holds.
func (c *Conductor) SetConsoleMode(ctx context.Context, _ string, nodeID string, enabled bool) error {
	t, err := c.acquire(ctx, nodeID, "setting console mode", false)
	if err != nil {
		return err
	}
	defer t.Release()
	dt := t.DriverTask()
	if err := t.Driver.Console.Validate(ctx, dt); err != nil {
		return err
	}
	if enabled == t.Node.ConsoleEnabled {
		return nil
	}
	t.SetSpawnErrorHook(task.SpawnErrorHandler("setting console mode"))
	t.SpawnAfter(c.spawner(), task.Work{Name: "_set_console_mode", Fn: func(ctx context.Context, t *task.Task) error {
		c.emitConsoleSet(ctx, t, notify.StatusStart)
		dt := t.DriverTask()
		var err error
		op := "enabling"
		if enabled {
			err = t.Driver.Console.StartConsole(ctx, dt)
		} else {
			op = "disabling"
			err = t.Driver.Console.StopConsole(ctx, dt)
		}
		if err != nil {
			record(ctx, t, fmt.Sprintf("Error %s the console on node %s. Reason: %s", op, t.Node.UUID, err), states.HistoryConsole, true)
			if err := t.Save(ctx); err != nil {
				return err
			}
			c.emitConsoleSet(ctx, t, notify.StatusError)
			return nil
		}
		t.Node.ConsoleEnabled = enabled
		t.Node.LastError = nil
		if err := t.Save(ctx); err != nil {
			return err
		}
		c.emitConsoleSet(ctx, t, notify.StatusEnd)
		return nil
	}})
	return t.End()
}

func nodeConsoleNotEnabled(node string) error {
	return errs.New(errs.ClassNodeConsoleNotEnabled, map[string]any{"node": node})
}
