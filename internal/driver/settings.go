package driver

import "github.com/openkeel/ironic/internal/config"

// SettingsFromConfig reads [DEFAULT]enabled_hardware_types,
// enabled_<kind>_interfaces and default_<kind>_interface.
func SettingsFromConfig(c *config.Config) Settings {
	s := Settings{
		EnabledHardwareTypes: c.ListOf(config.DefaultEnabledHardwareTypes),
		EnabledInterfaces:    map[Kind][]string{},
		DefaultInterfaces:    map[Kind]string{},
	}
	for _, k := range AllKinds {
		s.EnabledInterfaces[k] = c.List("DEFAULT", "enabled_"+string(k)+"_interfaces")
		s.DefaultInterfaces[k] = c.String("DEFAULT", "default_"+string(k)+"_interface")
	}
	return s
}
