// Package builtin assembles the hardware types and every interface
// implementation this build carries, so that the service and the tests
// enable drivers from one list.
package builtin

import (
	"fmt"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/driver/redfish"
)

// Options configure the implementations that take settings.
type Options struct {
	Fake    fake.Delays
	Redfish redfish.Options
}

// OptionsFromConfig reads the implementations' sections of ironic.conf.
func OptionsFromConfig(c *config.Config) Options {
	return Options{
		Fake: fake.Delays{
			BIOS: c.String("fake", "bios_delay"), Boot: c.String("fake", "boot_delay"),
			Deploy: c.String("fake", "deploy_delay"), Firmware: c.String("fake", "firmware_delay"),
			Inspect: c.String("fake", "inspect_delay"), Management: c.String("fake", "management_delay"),
			Power: c.String("fake", "power_delay"), RAID: c.String("fake", "raid_delay"),
			Rescue: c.String("fake", "rescue_delay"), Storage: c.String("fake", "storage_delay"),
			Vendor: c.String("fake", "vendor_delay"),
		},
		Redfish: redfish.OptionsFromConfig(c),
	}
}

// Registry returns the stock hardware types with every implementation
// registered.
func Registry(o Options) (*driver.Registry, error) {
	r := driver.NewRegistry()
	for _, h := range driver.StockHardwareTypes() {
		if err := r.AddHardwareType(h); err != nil {
			return nil, fmt.Errorf("hardware type %s: %w", h.Name, err)
		}
	}
	if err := fake.Register(r, o.Fake); err != nil {
		return nil, fmt.Errorf("fake interfaces: %w", err)
	}
	if err := noop.Register(r); err != nil {
		return nil, fmt.Errorf("no-op interfaces: %w", err)
	}
	if err := redfish.Register(r, o.Redfish); err != nil {
		return nil, fmt.Errorf("redfish interfaces: %w", err)
	}
	return r, nil
}

// Drivers builds the registry from c and enables what its enabled_* and
// default_* options say.
func Drivers(c *config.Config) (*driver.Drivers, error) {
	r, err := Registry(OptionsFromConfig(c))
	if err != nil {
		return nil, err
	}
	d, err := r.Build(driver.SettingsFromConfig(c))
	if err != nil {
		return nil, fmt.Errorf("enabled drivers: %w", err)
	}
	return d, nil
}
