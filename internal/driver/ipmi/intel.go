package ipmi

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// intelSSTPPConfigs are upstream INTEL_SST_PP_CONFIG_HEXA_CODES: the Intel
// Speed Select performance profile levels a BMC accepts.
var intelSSTPPConfigs = []string{"0x00", "0x01", "0x02"}

// IntelManagement is upstream IntelIPMIManagement (intel-ipmitool): the
// ipmitool management interface plus a deploy step that selects the Intel
// SST-PP profile of every CPU socket through the BMC.
type IntelManagement struct {
	*Management
}

var (
	_ driver.ManagementInterface = (*IntelManagement)(nil)
	_ driver.StepRunner          = (*IntelManagement)(nil)
)

// Steps declares configure_intel_speedselect as upstream's @deploy_step does.
func (m *IntelManagement) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.DeployStep("configure_intel_speedselect", 200).WithArgs(map[string]driver.ArgInfo{
			"intel_speedselect_config": driver.Required(
				"Hexadecimal code of Intel SST-PP configuration provided. Input value should be string. " +
					"Accepted values are " + strings.Join(intelSSTPPConfigs, ", ") + "."),
			"socket_count": {Description: "Number of sockets. Input value should be a positive integer."},
		}),
	}
}

// StepHandlers maps configure_intel_speedselect.
func (m *IntelManagement) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"configure_intel_speedselect": func(ctx context.Context, task *driver.Task, args map[string]any) (string, error) {
			return "", m.configureSpeedSelect(ctx, task, args)
		},
	}
}

// configureSpeedSelect sends the OEM "set SST-PP level" request (netfn
// 0x2c, command 0x41) once per socket, numbering sockets from 0.
func (m *IntelManagement) configureSpeedSelect(ctx context.Context, task *driver.Task, args map[string]any) error {
	config := args["intel_speedselect_config"]
	rawSockets, ok := args["socket_count"]
	if !ok {
		rawSockets = float64(1)
	}
	cfg, isString := config.(string)
	if !isString || !slices.Contains(intelSSTPPConfigs, cfg) {
		return driver.InvalidParameterValue("Invalid Intel SST-PP configuration value %s specified. Valid values are %s.",
			pyfmt.StrJSON(config), pyfmt.Repr(intelSSTPPConfigs))
	}
	// Upstream checks int(socket_count) but then loops over the raw value,
	// so a string count passes validation and crashes the loop; the
	// validated number is used here instead.
	sockets, ok := pyInt(rawSockets)
	if !ok || sockets <= 0 {
		return driver.InvalidParameterValue("Invalid number of socket %s value specified. Expected a positive integer.",
			pyfmt.StrJSON(rawSockets))
	}
	d, err := m.core.parse(task)
	if err != nil {
		return err
	}
	task.Logger().Debug("setting Intel SST-PP configuration level", "node", task.Node.UUID, "config", cfg, "sockets", sockets)
	for socket := range sockets {
		raw := fmt.Sprintf("0x2c 0x41 0x04 0x00 0x0%d %s", socket, cfg)
		if _, _, err := m.core.sendRaw(ctx, task, d, raw); err != nil {
			if !errs.Is(err, errs.ClassIPMIFailure) {
				return err
			}
			msg := fmt.Sprintf("Failed to set Intel SST-PP configuration level %s on socket number %d due to reason %s.",
				cfg, socket, err)
			task.Logger().Error("Intel SST-PP configuration failed", "node", task.Node.UUID, "error", msg)
			return errs.NewMessage(errs.ClassIPMIFailure, msg)
		}
	}
	return nil
}
