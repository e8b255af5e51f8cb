package config

//go:generate go run ./cmd/genconfdoc

// MachineDefault reports whether the option's default is computed from the
// running machine (host name, addresses, folders) rather than fixed, so
// that documentation can describe it instead of printing one machine's
// value.
func MachineDefault(section, name string) bool {
	_, ok := machineDefaults[Name{section, name}]
	return ok
}

// FormatValue writes a value of an option's Go form as ironic.conf text.
func FormatValue(v any) string { return formatValue(v) }
