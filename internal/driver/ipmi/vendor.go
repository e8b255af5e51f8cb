package ipmi

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// Vendor is upstream ipmitool VendorPassthru: send_raw (also a clean,
// deploy and service step) and bmc_reset.
type Vendor struct {
	core *core
}

var (
	_ driver.VendorInterface = (*Vendor)(nil)
	_ driver.StepRunner      = (*Vendor)(nil)
)

var sendRawArgs = map[string]driver.ArgInfo{
	"raw_bytes": driver.Required("A string of raw bytes to convey the request to transmit to the remote BMC."),
}

// Properties returns the ipmitool driver_info keys.
func (v *Vendor) Properties() map[string]string { return Properties() }

// Steps declares send_raw as upstream's three decorators do.
func (v *Vendor) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.CleanStep("send_raw", 0).WithArgs(sendRawArgs).WithRequiresRamdisk(false),
		driver.DeployStep("send_raw", 0).WithArgs(sendRawArgs),
		driver.ServiceStep("send_raw").WithArgs(sendRawArgs),
	}
}

// StepHandlers maps send_raw.
func (v *Vendor) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"send_raw": func(ctx context.Context, task *driver.Task, args map[string]any) (string, error) {
			return "", v.sendRaw(ctx, task, args)
		},
	}
}

// Validate requires raw_bytes for send_raw and a valid driver_info.
func (v *Vendor) Validate(_ context.Context, task *driver.Task, method string, args map[string]any) error {
	if method == "send_raw" && !pyfmt.Truthy(args["raw_bytes"]) {
		return driver.MissingParameterValue("Parameter raw_bytes (string of bytes) was not specified.")
	}
	_, err := v.core.parse(task)
	return err
}

// VendorRoutes declares send_raw and bmc_reset.
func (v *Vendor) VendorRoutes() map[string]driver.PassthruRoute {
	return map[string]driver.PassthruRoute{
		"send_raw": {
			HTTPMethods: []string{"POST"}, Async: true, RequireExclusiveLock: true,
			Description: "Send raw bytes to the BMC. Required argument: 'raw_bytes' - a string of raw bytes (e.g. '0x00 0x01').",
			Func: func(ctx context.Context, task *driver.Task, _ string, args map[string]any) (any, error) {
				return nil, v.sendRaw(ctx, task, args)
			},
		},
		"bmc_reset": {
			HTTPMethods: []string{"POST"}, Async: true, RequireExclusiveLock: true,
			Description: "Reset the BMC. Required argument: 'warm' (Boolean) - for warm (True) or cold (False) reset.",
			Func: func(ctx context.Context, task *driver.Task, _ string, args map[string]any) (any, error) {
				return nil, v.bmcReset(ctx, task, args)
			},
		},
	}
}

// DriverRoutes is empty: ipmitool has no driver passthru.
func (v *Vendor) DriverRoutes() map[string]driver.PassthruRoute { return nil }

func (v *Vendor) sendRaw(ctx context.Context, task *driver.Task, args map[string]any) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	raw := args["raw_bytes"]
	if !pyfmt.Truthy(raw) {
		return driver.MissingParameterValue("Argument raw_bytes is missing.")
	}
	d, err := v.core.parse(task)
	if err != nil {
		return err
	}
	_, _, err = v.core.sendRaw(ctx, task, d, pyfmt.StrJSON(raw))
	return err
}

// bmcReset runs "bmc reset warm|cold"; warm unless args say otherwise.
func (v *Vendor) bmcReset(ctx context.Context, task *driver.Task, args map[string]any) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	mode := "warm"
	if w, ok := args["warm"]; ok && !boolFromString(w) {
		mode = "cold"
	}
	d, err := v.core.parse(task)
	if err != nil {
		return err
	}
	cmd := "bmc reset " + mode
	task.Logger().Debug("resetting BMC", "node", d.UUID, "mode", mode)
	if _, _, err := v.core.exec(ctx, d, cmd, execOptions{}); err != nil {
		if ctx.Err() != nil {
			return err
		}
		task.Logger().Error(`IPMI "bmc reset" failed`, "node", d.UUID, "error", err)
		return ipmiFailure(cmd)
	}
	return nil
}
