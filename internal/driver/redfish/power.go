package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/stmcginnis/gofish/redfish"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
	"github.com/openkeel/ironic/internal/states"
)

// getPowerStateMap is upstream GET_POWER_STATE_MAP: transitional states
// count as the state being reached; anything else is unknown (NoState).
var getPowerStateMap = map[redfish.PowerState]string{
	redfish.OnPowerState:          states.PowerOn,
	redfish.PoweringOnPowerState:  states.PowerOn,
	redfish.OffPowerState:         states.PowerOff,
	redfish.PoweringOffPowerState: states.PowerOff,
}

// setPowerStateMap is upstream SET_POWER_STATE_MAP: the ResetType sent for
// each requested state.
var setPowerStateMap = map[string]redfish.ResetType{
	states.PowerOn:      redfish.OnResetType,
	states.PowerOff:     redfish.ForceOffResetType,
	states.Reboot:       redfish.ForceRestartResetType,
	states.SoftReboot:   redfish.GracefulRestartResetType,
	states.SoftPowerOff: redfish.GracefulShutdownResetType,
}

// supportedPowerStates keeps upstream's order (the map's insertion order).
var supportedPowerStates = []string{states.PowerOn, states.PowerOff, states.Reboot, states.SoftReboot, states.SoftPowerOff}

// targetStateMap is upstream TARGET_STATE_MAP: the state to wait for.
var targetStateMap = map[string]string{
	states.Reboot:       states.PowerOn,
	states.SoftReboot:   states.PowerOn,
	states.SoftPowerOff: states.PowerOff,
}

func targetState(s string) string {
	if t, ok := targetStateMap[s]; ok {
		return t
	}
	return s
}

// rebootSettleDelay is how long upstream waits after a hard reboot before
// polling, so the node has had a chance to go down first.
const rebootSettleDelay = 15 * time.Second

// Power is upstream RedfishPower.
type Power struct {
	driver.NoSteps
	core *core
}

var (
	_ driver.PowerInterface = (*Power)(nil)
)

// Properties returns the redfish driver_info properties.
func (p *Power) Properties() map[string]string { return Properties() }

// Validate checks driver_info.
func (p *Power) Validate(_ context.Context, task *driver.Task) error {
	_, err := ParseDriverInfo(task.Node, &p.core.opts)
	return err
}

// GetPowerState reads PowerState from the system.
func (p *Power) GetPowerState(ctx context.Context, task *driver.Task) (string, error) {
	sys, err := p.core.getSystem(ctx, task)
	if err != nil {
		return "", err
	}
	return getPowerStateMap[sys.PowerState], nil
}

// GetSupportedPowerStates lists what set_power_state accepts.
func (p *Power) GetSupportedPowerStates(context.Context, *driver.Task) ([]string, error) {
	return slices.Clone(supportedPowerStates), nil
}

// defaultTimeout is what the conductor passes when the caller gave none:
// soft actions wait [conductor]soft_power_off_timeout, the others
// [conductor]power_state_change_timeout.
func (p *Power) defaultTimeout(state string, timeout time.Duration) time.Duration {
	if timeout > 0 {
		return timeout
	}
	if state == states.SoftPowerOff || state == states.SoftReboot {
		return p.core.opts.SoftPowerOffTimeout
	}
	return p.core.opts.PowerStateChangeTimeout
}

// SetPowerState sends the ResetType for state and waits for the system to
// reach it. A 400/409 answer is accepted when the system turns out to be
// in the target state already, as some BMCs refuse a no-op reset.
func (p *Power) SetPowerState(ctx context.Context, task *driver.Task, state string, timeout time.Duration) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	if _, ok := setPowerStateMap[state]; !ok {
		return driver.InvalidParameterValue("set_power_state called with an invalid power state: %s.", state)
	}
	sys, err := p.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	if state == states.PowerOn || state == states.SoftReboot || state == states.Reboot {
		if m, ok := task.Driver.Get(driver.KindManagement).(*Management); ok {
			m.restoreBootDevice(ctx, task, sys)
		}
	}
	err = p.setPowerState(ctx, task, sys, state, p.defaultTimeout(state, timeout))
	if err == nil {
		return nil
	}
	var herr *HTTPError
	if errors.As(err, &herr) && (herr.Status == http.StatusBadRequest || herr.Status == http.StatusConflict) {
		target := targetState(state)
		current := ""
		if rerr := sys.refresh(); rerr != nil {
			task.Logger().Warn("failed to refresh system state", "node", task.Node.UUID, "error", rerr)
		} else {
			current = getPowerStateMap[sys.PowerState]
		}
		if current == "" {
			msg := strings.ToLower(herr.Error())
			switch {
			case target == states.PowerOff && (strings.Contains(msg, "host is powered off") || strings.Contains(msg, "already powered off")):
				current = states.PowerOff
			case target == states.PowerOn && (strings.Contains(msg, "host is powered on") || strings.Contains(msg, "already powered on")):
				current = states.PowerOn
			}
		}
		if current == target {
			task.Logger().Info("power operation failed but the node is already in the expected state; treating as success",
				"node", task.Node.UUID, "requested", state, "code", herr.Status, "final", target, "error", herr.Error())
			return nil
		}
	}
	if _, isIronic := errs.As(err); isIronic {
		return err
	}
	msg := fmt.Sprintf("Setting power state to %s failed for node %s. Error: %s", state, task.Node.UUID, err)
	task.Logger().Error(msg)
	return redfishError(msg)
}

// setPowerState is upstream _set_power_state: the reset (retrying a power
// on the BMC refuses with 409 ActionParameterValueConflict while it
// settles), then the wait for the target state.
func (p *Power) setPowerState(ctx context.Context, task *driver.Task, sys *system, state string, timeout time.Duration) error {
	if err := p.reset(ctx, task, sys, state); err != nil {
		return err
	}
	if state == states.Reboot {
		task.Logger().Debug("waiting for the node to power off before checking its power state",
			"node", task.Node.UUID, "delay", rebootSettleDelay)
		if err := p.core.opts.clock().Sleep(ctx, rebootSettleDelay); err != nil {
			return err
		}
	}
	return p.waitForPowerState(ctx, task, targetState(state), timeout)
}

func (p *Power) reset(ctx context.Context, task *driver.Task, sys *system, state string) error {
	resetType := setPowerStateMap[state]
	retries := p.core.opts.PowerOnConflictRetryAttempts
	for attempt := 0; ; attempt++ {
		err := resetSystem(sys, resetType)
		if err == nil {
			return nil
		}
		var herr *HTTPError
		if state == states.PowerOn && errors.As(err, &herr) && herr.Status == http.StatusConflict &&
			strings.Contains(herr.Error(), "ActionParameterValueConflict") && attempt < retries {
			task.Logger().Warn("BMC rejected power-on with 409 (ActionParameterValueConflict); retrying after the BMC settles",
				"node", task.Node.UUID, "retry", attempt+1, "max", retries)
			if serr := p.core.opts.clock().Sleep(ctx, p.core.opts.PowerOnConflictRetryInterval); serr != nil {
				return serr
			}
			continue
		}
		return err
	}
}

// resetSystem posts #ComputerSystem.Reset, refusing a ResetType the system
// does not list as sushy does.
func resetSystem(sys *system, resetType redfish.ResetType) error {
	if len(sys.SupportedResetTypes) > 0 && !slices.Contains(sys.SupportedResetTypes, resetType) {
		valid := make([]string, len(sys.SupportedResetTypes))
		for i, t := range sys.SupportedResetTypes {
			valid[i] = string(t)
		}
		return fmt.Errorf(`The parameter "value" value "%s" is invalid. Valid values are: %s`, resetType, pyfmt.Repr(valid))
	}
	return sys.Reset(resetType)
}

// waitForPowerState is the conductor's node_wait_for_power_state: poll the
// power state with a growing interval (starting after one second) until it
// is the target or the timeout passes.
func (p *Power) waitForPowerState(ctx context.Context, task *driver.Task, target string, timeout time.Duration) error {
	clock := p.core.opts.clock()
	deadline := clock.Now().Add(timeout)
	interval := time.Second
	for {
		wait := min(interval, max(deadline.Sub(clock.Now()), 0))
		if err := clock.Sleep(ctx, wait); err != nil {
			return err
		}
		status, err := p.GetPowerState(ctx, task)
		if err != nil {
			return err
		}
		if status == target {
			return nil
		}
		if !clock.Now().Before(deadline) {
			task.Logger().Error("timed out waiting for power state", "node", task.Node.UUID,
				"timeout", timeout, "state", target)
			return errs.New(errs.ClassPowerStateFailure, map[string]any{"pstate": target})
		}
		interval *= 2
	}
}

// Reboot power cycles the node: off then on when it is on (a plain reboot
// when the node must not be powered off), on when it is off.
func (p *Power) Reboot(ctx context.Context, task *driver.Task, timeout time.Duration) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	sys, err := p.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	timeout = p.defaultTimeout(states.Reboot, timeout)
	next := states.PowerOn
	if getPowerStateMap[sys.PowerState] == states.PowerOn {
		if task.Node.DisablePowerOff {
			next = states.Reboot
		} else {
			next = states.PowerOff
			if err := p.setPowerState(ctx, task, sys, next, timeout); err != nil {
				return p.rebootFailed(task, next, err)
			}
			next = states.PowerOn
		}
	}
	if m, ok := task.Driver.Get(driver.KindManagement).(*Management); ok {
		m.restoreBootDevice(ctx, task, sys)
	}
	if err := p.setPowerState(ctx, task, sys, next, timeout); err != nil {
		return p.rebootFailed(task, next, err)
	}
	return nil
}

func (p *Power) rebootFailed(task *driver.Task, state string, err error) error {
	if _, isIronic := errs.As(err); isIronic {
		return err
	}
	msg := fmt.Sprintf("Reboot failed for node %s when setting power state to %s. Error: %s", task.Node.UUID, state, err)
	task.Logger().Error(msg)
	return redfishError(msg)
}
