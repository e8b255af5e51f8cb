package fake

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
)

// Boot devices, indicator states and components used by fake management
// (upstream ironic.common.boot_devices, indicator_states, components).
const (
	bootDevicePXE = "pxe"

	indicatorOff      = "off"
	indicatorOn       = "on"
	indicatorBlinking = "blinking"

	componentChassis = "chassis"
	componentSystem  = "system"
)

// Management is upstream FakeManagement. Like upstream it remembers
// nothing: the boot device is always PXE (non persistent), and setting
// another supported device is accepted without effect.
type Management struct {
	driver.NoSteps
	noProperties
	accept
	delay delay
}

var (
	_ driver.ManagementInterface = (*Management)(nil)
	_ driver.IndicatorLister     = (*Management)(nil)
	_ driver.IndicatorGetter     = (*Management)(nil)
	_ driver.NodeHealthGetter    = (*Management)(nil)
)

// DriverInfoHealth is the driver_info key whose value GetNodeHealth
// answers: openkeel's knob for tests of health monitoring, which
// upstream's fake management does not support.
const DriverInfoHealth = "fake_health"

// GetNodeHealth answers driver_info's fake_health; without it, health
// monitoring is unsupported, as upstream's fake.
func (m *Management) GetNodeHealth(ctx context.Context, task *driver.Task) (string, error) {
	if err := m.delay.sleep(ctx); err != nil {
		return "", err
	}
	h, ok := task.Node.DriverInfo[DriverInfoHealth].(string)
	if !ok {
		return "", errs.New(errs.ClassUnsupportedDriverExtension, map[string]any{"driver": task.Node.Driver, "extension": "get_node_health"})
	}
	return h, nil
}

// GetSupportedBootDevices answers PXE only.
func (m *Management) GetSupportedBootDevices(context.Context, *driver.Task) ([]string, error) {
	return []string{bootDevicePXE}, nil
}

// SetBootDevice accepts a supported device.
func (m *Management) SetBootDevice(ctx context.Context, task *driver.Task, device string, _ bool) error {
	if err := m.delay.sleep(ctx); err != nil {
		return err
	}
	if device != bootDevicePXE {
		return driver.InvalidParameterValue("Invalid boot device %s specified.", device)
	}
	return nil
}

// GetBootDevice answers PXE, not persistent.
func (m *Management) GetBootDevice(ctx context.Context, _ *driver.Task) (driver.BootDevice, error) {
	if err := m.delay.sleep(ctx); err != nil {
		return driver.BootDevice{}, err
	}
	persistent := false
	return driver.BootDevice{BootDevice: bootDevicePXE, Persistent: &persistent}, nil
}

// GetSensorsData answers no sensors.
func (m *Management) GetSensorsData(ctx context.Context, _ *driver.Task) (map[string]any, error) {
	if err := m.delay.sleep(ctx); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

// GetSupportedIndicators answers a read-only chassis LED and a settable
// system LED, filtered by component when one is given.
func (m *Management) GetSupportedIndicators(ctx context.Context, _ *driver.Task, component string) (map[string]map[string]driver.Indicator, error) {
	if err := m.delay.sleep(ctx); err != nil {
		return nil, err
	}
	all := map[string]map[string]driver.Indicator{
		componentChassis: {"led-0": {ReadOnly: true, States: []string{indicatorOff, indicatorOn}}},
		componentSystem:  {"led": {ReadOnly: false, States: []string{indicatorBlinking, indicatorOff, indicatorOn}}},
	}
	out := map[string]map[string]driver.Indicator{}
	for c, v := range all {
		if component == "" || component == c {
			out[c] = v
		}
	}
	return out, nil
}

// GetIndicatorState answers "on" for a known indicator.
func (m *Management) GetIndicatorState(ctx context.Context, task *driver.Task, component, indicator string) (string, error) {
	if err := m.delay.sleep(ctx); err != nil {
		return "", err
	}
	all, err := m.GetSupportedIndicators(ctx, task, "")
	if err != nil {
		return "", err
	}
	leds, ok := all[component]
	if !ok {
		return "", driver.InvalidParameterValue("Invalid component %s specified.", component)
	}
	if _, ok := leds[indicator]; !ok {
		return "", driver.InvalidParameterValue("Invalid indicator %s specified.", indicator)
	}
	return indicatorOn, nil
}
