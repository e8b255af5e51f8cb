package networking

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
)

// SwitchDriver configures the ports of the switches it manages (master's
// SwitchDriverBase, LAG operations aside).
type SwitchDriver interface {
	// Name is the driver's name in enabled_switch_drivers.
	Name() string
	// Manages tells whether the driver is configured for switchID.
	Manages(switchID string) bool
	// AllowedVLANs is the switch's own allowed_vlans specification
	// ("" when it has none, the global option then applies).
	AllowedVLANs(switchID string) string
	// UpdatePort puts the port in mode on nativeVLAN (and allowed
	// VLANs for a trunk), leaving defaultVLAN (the idle network's) when
	// set.
	UpdatePort(ctx context.Context, switchID, portName, description, mode string, nativeVLAN int, allowedVLANs []int, defaultVLAN int) error
	// ResetPort takes nativeVLAN and allowedVLANs off the port and puts
	// it back on defaultVLAN when set.
	ResetPort(ctx context.Context, switchID, portName string, nativeVLAN int, allowedVLANs []int, defaultVLAN int) error
}

// DriverFactory builds a switch driver from the switches configured for
// it (those whose driver_type names it).
type DriverFactory func(switches []*SwitchConfig, log *slog.Logger) (SwitchDriver, error)

// Options are the [ironic_networking] options the service reads.
type Options struct {
	// EnabledSwitchDrivers is enabled_switch_drivers, in order.
	EnabledSwitchDrivers []string
	// SwitchConfigFile is switch_config_file.
	SwitchConfigFile string
	// AllowedVLANs is allowed_vlans; nil when unset (every VLAN allowed).
	AllowedVLANs []string
	// Factories are the switch drivers that can be enabled, by name
	// (master's ironic.networking.switch_drivers entry points).
	Factories map[string]DriverFactory
	Log       *slog.Logger
}

// Service is master's NetworkingManager: it picks the driver that manages
// a switch, checks the VLANs against the allowed ones and has the driver
// configure the port.
type Service struct {
	drivers []SwitchDriver
	allowed []string
	log     *slog.Logger
}

// switchDriverEntrypoint is master's entry point namespace, named in the
// error for an unknown driver.
const switchDriverEntrypoint = "ironic.networking.switch_drivers"

// New starts the service as master's init_host: the enabled drivers,
// each given the switch sections that name it. No driver is ConfigInvalid,
// as master refuses to start.
func New(o Options) (*Service, error) {
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	seen := map[string]int{}
	var dup []string
	for _, name := range o.EnabledSwitchDrivers {
		if name == "" {
			return nil, errs.NewMessage(errs.ClassConfigInvalid, `Invalid configuration file. An empty switch driver was specified in the "enabled_switch_drivers" configuration option. Please fix your ironic.conf file.`)
		}
		if seen[name]++; seen[name] == 2 {
			dup = append(dup, name)
		}
	}
	if len(dup) > 0 {
		return nil, errs.NewMessage(errs.ClassConfigInvalid, fmt.Sprintf(`Invalid configuration file. The switch driver(s) "%s" is/are duplicated in the list of enabled drivers. Please check your configuration file.`, strings.Join(dup, ", ")))
	}
	if len(o.EnabledSwitchDrivers) == 0 {
		return nil, errs.NewMessage(errs.ClassConfigInvalid, "Invalid configuration file. No switch drivers loaded")
	}
	var unknown []string
	for _, name := range o.EnabledSwitchDrivers {
		if o.Factories[name] == nil {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		return nil, errs.New(errs.ClassDriverNotFoundInEntrypoint, map[string]any{"names": pyList(unknown), "entrypoint": switchDriverEntrypoint})
	}
	var switches []*SwitchConfig
	if o.SwitchConfigFile != "" {
		var err error
		if switches, err = LoadSwitchConfig(o.SwitchConfigFile); err != nil {
			return nil, err
		}
	}
	for _, s := range switches {
		if !slices.Contains(o.EnabledSwitchDrivers, s.Get("driver_type")) {
			return nil, errs.NewMessage(errs.ClassNetworkError, fmt.Sprintf(
				"Configuration preprocessing failed: Invalid configuration file. No driver translator registered for switch: %s, with driver type: %s",
				s.Name, s.Get("driver_type")))
		}
	}
	if o.AllowedVLANs != nil {
		if _, err := ParseVLANRanges(o.AllowedVLANs...); err != nil {
			return nil, err
		}
	}
	svc := &Service{allowed: o.AllowedVLANs, log: log}
	for _, name := range o.EnabledSwitchDrivers {
		var mine []*SwitchConfig
		for _, s := range switches {
			if s.Get("driver_type") == name {
				mine = append(mine, s)
			}
		}
		d, err := o.Factories[name](mine, log)
		if err != nil {
			return nil, fmt.Errorf("switch driver %s: %w", name, err)
		}
		svc.drivers = append(svc.drivers, d)
	}
	return svc, nil
}

// driverFor is master's _get_switch_driver: the first enabled driver
// configured for the switch.
func (s *Service) driverFor(switchID string) (SwitchDriver, error) {
	for _, d := range s.drivers {
		if d.Manages(switchID) {
			return d, nil
		}
	}
	return nil, errs.New(errs.ClassSwitchNotFound, map[string]any{"switch_id": switchID})
}

// checkVLANs is master's validate_vlan_configuration: the VLANs must be
// within the switch's allowed_vlans, or the global option's.
func (s *Service) checkVLANs(d SwitchDriver, switchID, operation string, vlans []int) error {
	var allowed map[int]bool
	if spec := d.AllowedVLANs(switchID); spec != "" {
		set, err := ParseVLANRanges(spec)
		if err != nil {
			return err
		}
		allowed = set
	}
	if len(allowed) == 0 && len(s.allowed) > 0 {
		set, err := ParseVLANRanges(s.allowed...)
		if err != nil {
			return err
		}
		allowed = set
	}
	if len(allowed) == 0 {
		return nil
	}
	bad := map[int]bool{}
	for _, v := range vlans {
		if !allowed[v] {
			bad[v] = true
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf(
		"VLANs %s are not allowed for %s on switch %s. Allowed VLANs: %s",
		pyInts(sortedVLANs(bad)), operation, switchID, pyInts(sortedVLANs(allowed))))
}

// UpdatePort is master's NetworkingManager.update_port.
func (s *Service) UpdatePort(ctx context.Context, switchID, portName, description, mode string, nativeVLAN int, allowedVLANs []int, defaultVLAN int) error {
	if switchID != "" && nativeVLAN != 0 {
		d, err := s.driverFor(switchID)
		if err != nil {
			return err
		}
		if err := s.checkVLANs(d, switchID, "update_port", append([]int{nativeVLAN}, allowedVLANs...)); err != nil {
			return err
		}
	}
	if mode != ModeAccess && mode != ModeTrunk {
		return errs.NewMessage(errs.ClassInvalidParameterValue, "mode must be one of: access, trunk")
	}
	if nativeVLAN < 1 || nativeVLAN > 4094 {
		return errs.NewMessage(errs.ClassInvalidParameterValue, "native_vlan must be an integer between 1 and 4094")
	}
	for _, v := range allowedVLANs {
		if v < 1 || v > 4094 {
			return errs.NewMessage(errs.ClassInvalidParameterValue, "Each VLAN in allowed_vlans must be an integer between 1 and 4094")
		}
	}
	d, err := s.driverFor(switchID)
	if err != nil {
		return err
	}
	if err := d.UpdatePort(ctx, switchID, portName, description, mode, nativeVLAN, allowedVLANs, defaultVLAN); err != nil {
		if errs.Is(err, errs.ClassInvalidParameterValue) || errs.Is(err, errs.ClassNetworkError) {
			return err
		}
		return errs.NewMessage(errs.ClassNetworkError, "Failed to configure network port: "+err.Error())
	}
	s.log.InfoContext(ctx, "configured switch port", "switch", switchID, "port", portName, "mode", mode, "native_vlan", nativeVLAN)
	return nil
}

// ResetPort is master's NetworkingManager.reset_port.
func (s *Service) ResetPort(ctx context.Context, switchID, portName string, nativeVLAN int, allowedVLANs []int, defaultVLAN int) error {
	d, err := s.driverFor(switchID)
	if err != nil {
		return err
	}
	if err := d.ResetPort(ctx, switchID, portName, nativeVLAN, allowedVLANs, defaultVLAN); err != nil {
		if errs.Is(err, errs.ClassInvalidParameterValue) || errs.Is(err, errs.ClassNetworkError) || errs.Is(err, errs.ClassSwitchNotFound) {
			return err
		}
		return errs.NewMessage(errs.ClassNetworkError, "Failed to reset network port: "+err.Error())
	}
	s.log.InfoContext(ctx, "reset switch port", "switch", switchID, "port", portName)
	return nil
}

// pyInts prints VLAN IDs as Python prints a list of ints.
func pyInts(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = fmt.Sprint(n)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pyList prints names as Python prints a list of str.
func pyList(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = "'" + n + "'"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// NoopDriver is master's NoOpSwitchDriver: it manages every switch and
// changes nothing, for trying the interface without switches.
type NoopDriver struct{ log *slog.Logger }

// NewNoop is the noop driver's factory.
func NewNoop(_ []*SwitchConfig, log *slog.Logger) (SwitchDriver, error) {
	return &NoopDriver{log: log}, nil
}

// Name is "noop".
func (*NoopDriver) Name() string { return "noop" }

// Manages is true for any switch, as master's.
func (*NoopDriver) Manages(string) bool { return true }

// AllowedVLANs is none of its own.
func (*NoopDriver) AllowedVLANs(string) string { return "" }

// UpdatePort logs the change it does not make.
func (d *NoopDriver) UpdatePort(ctx context.Context, switchID, portName, _, mode string, nativeVLAN int, allowedVLANs []int, defaultVLAN int) error {
	d.log.InfoContext(ctx, "noop switch driver: update port", "switch", switchID, "port", portName, "mode", mode,
		"native_vlan", nativeVLAN, "allowed_vlans", allowedVLANs, "default_vlan", defaultVLAN)
	return nil
}

// ResetPort logs the reset it does not make.
func (d *NoopDriver) ResetPort(ctx context.Context, switchID, portName string, _ int, _ []int, _ int) error {
	d.log.InfoContext(ctx, "noop switch driver: reset port", "switch", switchID, "port", portName)
	return nil
}
