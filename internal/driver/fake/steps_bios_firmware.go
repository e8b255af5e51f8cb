package fake

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// BIOS is upstream FakeBIOS with its three manual clean steps. Upstream's
// apply_configuration and factory_reset rewrite the node's bios_settings
// rows: the driver layer has no store, so the steps check their arguments
// and SettingsAfterStep tells the conductor which rows they leave.
type BIOS struct {
	noProperties
	accept
	delay delay
}

var (
	_ driver.BIOSInterface = (*BIOS)(nil)
	_ driver.StepRunner    = (*BIOS)(nil)
)

// Steps declares apply_configuration, cache_bios_settings and factory_reset
// (clean, priority 0).
func (b *BIOS) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.CleanStep("apply_configuration", 0).WithArgs(map[string]driver.ArgInfo{
			"settings": driver.Required("List of BIOS settings, each item needs to contain a dictionary with name/value pairs"),
		}),
		driver.CleanStep("cache_bios_settings", 0),
		driver.CleanStep("factory_reset", 0),
	}
}

// StepHandlers maps the declared steps.
func (b *BIOS) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"apply_configuration": func(ctx context.Context, t *driver.Task, args map[string]any) (string, error) {
			settings, err := settingsArg(args)
			if err != nil {
				return "", err
			}
			return b.ApplyConfiguration(ctx, t, settings)
		},
		"cache_bios_settings": func(ctx context.Context, t *driver.Task, _ map[string]any) (string, error) {
			return "", b.CacheBIOSSettings(ctx, t)
		},
		"factory_reset": func(ctx context.Context, t *driver.Task, _ map[string]any) (string, error) {
			return b.FactoryReset(ctx, t)
		},
	}
}

// ApplyConfiguration accepts the settings.
func (b *BIOS) ApplyConfiguration(ctx context.Context, _ *driver.Task, _ []map[string]any) (string, error) {
	return "", b.delay.sleep(ctx)
}

// FactoryReset does nothing.
func (b *BIOS) FactoryReset(ctx context.Context, _ *driver.Task) (string, error) {
	return "", b.delay.sleep(ctx)
}

// CacheBIOSSettings does nothing.
func (b *BIOS) CacheBIOSSettings(ctx context.Context, _ *driver.Task) error {
	return b.delay.sleep(ctx)
}

// SettingsAfterStep gives the bios_settings rows a successful step leaves,
// the fake BIOS having no other memory of them: after apply_configuration
// exactly the settings applied (upstream syncs the rows to them, so those
// not given are deleted), after factory_reset none. ok is false for steps
// that leave the rows alone.
func (b *BIOS) SettingsAfterStep(step string, args map[string]any) (settings []model.BIOSSetting, ok bool, err error) {
	switch step {
	case "factory_reset":
		return []model.BIOSSetting{}, true, nil
	case "apply_configuration":
	default:
		return nil, false, nil
	}
	given, err := settingsArg(args)
	if err != nil {
		return nil, false, err
	}
	for _, g := range given {
		// Upstream indexes setting['name'] and setting['value'] and fails
		// with the KeyError, whose text is the quoted key.
		for _, k := range []string{"name", "value"} {
			if _, ok := g[k]; !ok {
				return nil, false, driver.InvalidParameterValue("%s", pyfmt.Quote(k))
			}
		}
		name := pyfmt.StrJSON(g["name"])
		var value *string
		if v := g["value"]; v != nil {
			s := pyfmt.StrJSON(v)
			value = &s
		}
		settings = append(settings, model.BIOSSetting{Name: name, Value: value})
	}
	return settings, true, nil
}

// Firmware is upstream FakeFirmware with its update clean step.
type Firmware struct {
	noProperties
	accept
	delay delay
}

var (
	_ driver.FirmwareInterface = (*Firmware)(nil)
	_ driver.StepRunner        = (*Firmware)(nil)
)

// Steps declares update (clean, priority 0).
func (f *Firmware) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.CleanStep("update", 0).WithArgs(map[string]driver.ArgInfo{
			"settings": driver.Required("List of Firmware components, each item needs to contain a dictionary with name/value pairs"),
		}),
	}
}

// StepHandlers maps the update step.
func (f *Firmware) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"update": func(ctx context.Context, t *driver.Task, args map[string]any) (string, error) {
			settings, err := settingsArg(args)
			if err != nil {
				return "", err
			}
			return f.Update(ctx, t, settings)
		},
	}
}

// Update logs the settings and succeeds.
func (f *Firmware) Update(ctx context.Context, t *driver.Task, settings []map[string]any) (string, error) {
	t.Logger().Debug("fake firmware update", "node", nodeUUID(t), "components", len(settings))
	return "", f.delay.sleep(ctx)
}

// CacheFirmwareComponents does nothing.
func (f *Firmware) CacheFirmwareComponents(ctx context.Context, _ *driver.Task) error {
	return f.delay.sleep(ctx)
}

// settingsArg reads the required "settings" list of dicts.
func settingsArg(args map[string]any) ([]map[string]any, error) {
	raw, ok := args["settings"]
	if !ok {
		return nil, driver.MissingParameterValue("Missing required argument 'settings'")
	}
	switch v := raw.(type) {
	case []map[string]any:
		return v, nil
	case []any:
		out := make([]map[string]any, 0, len(v))
		for _, item := range v {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, driver.InvalidParameterValue("Each item of 'settings' must be a dictionary, got %T", item)
			}
			out = append(out, m)
		}
		return out, nil
	}
	return nil, driver.InvalidParameterValue("'settings' must be a list of dictionaries, got %T", raw)
}
