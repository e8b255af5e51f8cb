// Package ipmi holds the interfaces of upstream's ipmi hardware type
// (ironic/drivers/modules/ipmitool.py): power, management, vendor passthru
// and the ipmitool-socat serial console, all driving the ipmitool binary as
// upstream does. Every command goes through one runner per process
// (command.go) that builds the argument list, hands the BMC password over in
// a 0600 file or the environment (never on the command line), keeps at most
// one command per [ipmi]min_command_interval in flight to each BMC and
// retries transient failures within [ipmi]command_retry_timeout.
package ipmi

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/config"
)

// Options are the ironic.conf settings the ipmitool interfaces read, plus
// the hooks tests replace (clock, process execution, option probing).
type Options struct {
	// [ipmi]
	CommandRetryTimeout           time.Duration
	MinCommandInterval            time.Duration
	UseIpmitoolRetries            bool
	KillOnTimeout                 bool
	DisableBootTimeout            bool
	AdditionalRetryableIPMIErrors []string
	Debug                         bool
	StoreCredInEnv                bool
	CipherSuiteVersions           []string
	// [conductor]
	PowerStateChangeTimeout time.Duration
	SoftPowerOffTimeout     time.Duration
	// [deploy]default_boot_mode decides between "chassis bootdev" and the
	// raw UEFI boot flags when the node does not say.
	DefaultBootMode string
	// [DEFAULT]tempdir holds the password files.
	TempDir string
	// [DEFAULT]host names this conductor when no console port is free.
	Host string
	// [console]
	SocatAddress               string
	PortRange                  []PortRange
	TerminalTimeout            time.Duration
	TerminalPIDDir             string
	SubprocessTimeout          time.Duration
	SubprocessCheckingInterval time.Duration
	KillTimeout                time.Duration

	// Binary is the ipmitool program; empty means "ipmitool" on PATH.
	Binary string
	// SocatBinary is the socat program; empty means "socat" on PATH.
	SocatBinary string
	// Support says which ipmitool options the local binary accepts; nil
	// means probe the binary at registration as upstream's constructors do.
	Support *Support
	// Exec runs one ipmitool process; nil means run it for real.
	Exec Executor
	// Clock is the time source of every wait in this package; nil means
	// the real clock.
	Clock clock.Clock
	// Log receives what happens below a task (retries, throttling); nil
	// means slog.Default(). The BMC password is never logged.
	Log *slog.Logger
	// Observe, when set, hears of every ipmitool run: its operation (see
	// operation), how long the process ran, and whether it failed (it
	// could not run, was killed, or exited with a code the command does
	// not accept). The conductor times BMC requests with it.
	Observe func(operation string, d time.Duration, failed bool)
}

// PortRange is one [console]port_range item, inclusive at both ends.
type PortRange struct{ Start, End int }

// DefaultOptions are upstream's defaults.
func DefaultOptions() Options {
	return Options{
		CommandRetryTimeout:        60 * time.Second,
		MinCommandInterval:         5 * time.Second,
		KillOnTimeout:              true,
		DisableBootTimeout:         true,
		PowerStateChangeTimeout:    60 * time.Second,
		SoftPowerOffTimeout:        600 * time.Second,
		DefaultBootMode:            "uefi",
		TempDir:                    os.TempDir(),
		Host:                       "localhost",
		SocatAddress:               "192.0.2.2",
		TerminalTimeout:            600 * time.Second,
		SubprocessTimeout:          10 * time.Second,
		SubprocessCheckingInterval: time.Second,
		KillTimeout:                time.Second,
	}
}

// OptionsFromConfig reads [ipmi], [conductor], [deploy], [console] and
// [DEFAULT]tempdir and host.
func OptionsFromConfig(c *config.Config) (Options, error) {
	o := DefaultOptions()
	o.CommandRetryTimeout = c.DurationOf(config.IPMICommandRetryTimeout)
	o.MinCommandInterval = c.DurationOf(config.IPMIMinCommandInterval)
	o.UseIpmitoolRetries = c.BoolOf(config.IPMIUseIpmitoolRetries)
	o.KillOnTimeout = c.BoolOf(config.IPMIKillOnTimeout)
	o.DisableBootTimeout = c.BoolOf(config.IPMIDisableBootTimeout)
	o.AdditionalRetryableIPMIErrors = c.ListOf(config.IPMIAdditionalRetryableIPMIErrors)
	o.Debug = c.BoolOf(config.IPMIDebug)
	o.StoreCredInEnv = c.BoolOf(config.IPMIStoreCredInEnv)
	o.CipherSuiteVersions = c.ListOf(config.IPMICipherSuiteVersions)
	o.PowerStateChangeTimeout = c.DurationOf(config.ConductorPowerStateChangeTimeout)
	o.SoftPowerOffTimeout = c.DurationOf(config.ConductorSoftPowerOffTimeout)
	o.DefaultBootMode = c.StringOf(config.DeployDefaultBootMode)
	o.Host = c.StringOf(config.DefaultHost)
	if dir := c.StringOf(config.DefaultTempdir); dir != "" {
		o.TempDir = dir
	}
	o.SocatAddress = c.StringOf(config.ConsoleSocatAddress)
	o.TerminalTimeout = c.DurationOf(config.ConsoleTerminalTimeout)
	o.TerminalPIDDir = c.StringOf(config.ConsoleTerminalPidDir)
	o.SubprocessTimeout = c.DurationOf(config.ConsoleSubprocessTimeout)
	o.SubprocessCheckingInterval = c.DurationOf(config.ConsoleSubprocessCheckingInterval)
	o.KillTimeout = c.DurationOf(config.ConsoleKillTimeout)
	for _, item := range c.ListOf(config.ConsolePortRange) {
		r, err := parsePortRange(item)
		if err != nil {
			return Options{}, fmt.Errorf("[console]port_range: %w", err)
		}
		o.PortRange = append(o.PortRange, r)
	}
	return o, nil
}

func parsePortRange(s string) (PortRange, error) {
	a, b, ok := strings.Cut(s, ":")
	start, err1 := strconv.Atoi(strings.TrimSpace(a))
	end, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || start > end {
		return PortRange{}, fmt.Errorf("invalid port range %q, expected start:end", s)
	}
	return PortRange{Start: start, End: end}, nil
}

func (o *Options) clock() clock.Clock {
	if o.Clock == nil {
		return clock.Real{}
	}
	return o.Clock
}

func (o *Options) log() *slog.Logger {
	if o.Log == nil {
		return slog.Default()
	}
	return o.Log
}

func (o *Options) binary() string {
	if o.Binary == "" {
		return "ipmitool"
	}
	return o.Binary
}
