package redfish

import (
	"context"
	"fmt"
	"time"

	"github.com/stmcginnis/gofish/redfish"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

var firmwareUpdateArgs = map[string]driver.ArgInfo{
	"firmware_images": driver.Required("A list of firmware images to apply."),
}

// Steps declares RedfishManagement's decorated steps.
func (m *Management) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.CleanStep("clear_secure_boot_keys", 0),
		driver.DeployStep("clear_secure_boot_keys", 0),
		driver.CleanStep("reset_secure_boot_keys_to_default", 0),
		driver.DeployStep("reset_secure_boot_keys_to_default", 0),
		driver.CleanStep("set_bmc_clock", 0).WithArgs(map[string]driver.ArgInfo{
			"target_datetime": driver.Optional("The datetime to set in ISO8601 format. If omitted, " +
				"the current conductor UTC time is used."),
			"datetime_local_offset": driver.Optional("The local time offset from UTC"),
		}),
		driver.VerifyStep("verify_bmc_clock", 1),
		driver.CleanStep("update_firmware", 0).WithArgs(firmwareUpdateArgs),
		driver.ServiceStep("update_firmware").WithArgs(firmwareUpdateArgs),
	}
}

// StepHandlers maps the declared steps to their implementations.
func (m *Management) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"clear_secure_boot_keys": func(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
			return "", m.resetKeys(ctx, task, redfish.DeleteAllKeysResetKeysType)
		},
		"reset_secure_boot_keys_to_default": func(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
			return "", m.resetKeys(ctx, task, redfish.ResetAllKeysToDefaultResetKeysType)
		},
		"set_bmc_clock": func(ctx context.Context, task *driver.Task, args map[string]any) (string, error) {
			target, _ := args["target_datetime"].(string)
			var offset *string
			if o, ok := args["datetime_local_offset"].(string); ok {
				offset = &o
			}
			return "", m.SetBMCClock(ctx, task, target, offset)
		},
		"verify_bmc_clock": func(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
			return "", m.VerifyBMCClock(ctx, task)
		},
		"update_firmware": func(ctx context.Context, task *driver.Task, args map[string]any) (string, error) {
			images, err := settingsArg(args["firmware_images"])
			if err != nil {
				return "", driver.InvalidParameterValue("Invalid firmware update %s. Errors: %s",
					pyfmt.ReprJSON(args["firmware_images"]), err)
			}
			return m.UpdateFirmware(ctx, task, images)
		},
	}
}

// pyISO formats t as Python's datetime.isoformat() does for an aware UTC
// time: microseconds only when non-zero, offset as +00:00.
func pyISO(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000000") + "+00:00"
	}
	return t.Format("2006-01-02T15:04:05") + "+00:00"
}

func parseISO(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse datetime %q: %w", s, err)
	}
	return t, nil
}

// SetBMCClock is the set_bmc_clock clean step: set the manager's DateTime
// (default: now) and check it took.
func (m *Management) SetBMCClock(ctx context.Context, task *driver.Task, target string, offset *string) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	err := func() error {
		sys, err := m.core.getSystem(ctx, task)
		if err != nil {
			return err
		}
		mgr, err := sys.manager()
		if err != nil {
			return err
		}
		if target == "" {
			target = pyISO(m.core.opts.clock().Now())
		}
		current, err := parseISO(mgr.DateTime)
		if err != nil {
			return err
		}
		// A BMC without sub-second precision cannot take microseconds.
		if current.Nanosecond()/1000 == 0 {
			t, err := parseISO(target)
			if err != nil {
				return err
			}
			target = pyISO(t.Truncate(time.Second))
		}
		if err := mgr.setDateTime(target, offset); err != nil {
			return err
		}
		if err := mgr.refresh(); err != nil {
			return err
		}
		if mgr.DateTime != target {
			return fmt.Errorf("BMC clock update failed: mismatch after setting datetime")
		}
		task.Logger().Info("updated BMC clock", "node", task.Node.UUID)
		return nil
	}()
	if err != nil {
		task.Logger().Error("BMC clock update failed", "node", task.Node.UUID, "error", err)
		return redfishError(err.Error())
	}
	return nil
}

// VerifyBMCClock is the verify_bmc_clock verify step: when enabled, bring a
// BMC clock more than a second off back to the conductor's UTC time.
func (m *Management) VerifyBMCClock(ctx context.Context, task *driver.Task) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	if !m.core.opts.EnableVerifyBMCClock {
		task.Logger().Info("skipping BMC clock verify step: disabled via config", "node", task.Node.UUID)
		return nil
	}
	err := func() error {
		local := m.core.opts.clock().Now().UTC()
		sys, err := m.core.getSystem(ctx, task)
		if err != nil {
			return err
		}
		mgr, err := sys.manager()
		if err != nil {
			return err
		}
		bmcTime, err := parseISO(mgr.DateTime)
		if err != nil {
			return err
		}
		if bmcTime.Nanosecond()/1000 == 0 {
			local = local.Truncate(time.Second)
		}
		if (bmcTime.Sub(local)).Abs() <= time.Second {
			return nil
		}
		task.Logger().Info("BMC clock is out of sync, updating", "node", task.Node.UUID)
		offset := "+00:00"
		var offsetArg *string
		if mgr.DateTimeLocalOffset != offset {
			offsetArg = &offset
		}
		if err := mgr.setDateTime(pyISO(local), offsetArg); err != nil {
			return err
		}
		if err := mgr.refresh(); err != nil {
			return err
		}
		updated, err := parseISO(mgr.DateTime)
		if err != nil {
			return err
		}
		if updated.Sub(local).Abs() > time.Second {
			return fmt.Errorf("BMC clock still incorrect after update")
		}
		return nil
	}()
	if err != nil {
		task.Logger().Error("BMC clock auto-update failed during verify", "node", task.Node.UUID, "error", err)
		return errs.New(errs.ClassNodeVerifyFailure, map[string]any{
			"node": task.Node.UUID, "reason": "BMC clock verify step failed: " + err.Error(),
		})
	}
	return nil
}
