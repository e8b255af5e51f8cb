package redfishbmc

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"time"
)

// Config describes an emulator that runs on its own. cmd/redfishbmc reads
// it from a JSON file, which keeps the password off its command line.
type Config struct {
	// Listen is the TCP address to serve on; "127.0.0.1:0" when empty.
	Listen string `json:"listen"`
	// Username and Password, when set, are required as basic
	// authentication (and by the SessionService when Sessions is set).
	Username string `json:"username"`
	Password string `json:"password"`
	Sessions bool   `json:"sessions"`
	// TLS serves HTTPS with a self-signed certificate.
	TLS    bool   `json:"tls"`
	Vendor string `json:"vendor"`
	// Control serves the control API (BMC.WithControl), through which a
	// test injects faults into the process.
	Control bool           `json:"control"`
	Systems []SystemConfig `json:"systems"`
	// Ramdisk is how the machines behind the BMC run the ramdisk they
	// boot; only a Main given a RamdiskStarter boots them (machines.go).
	Ramdisk RamdiskConfig `json:"ramdisk"`
}

// RamdiskConfig tunes the ramdisk a machine boots; zero values leave the
// starter's defaults.
type RamdiskConfig struct {
	// BootDelay is how long the ramdisk takes from power-on to its first
	// call to the API (a real one takes minutes).
	BootDelay Duration `json:"boot_delay"`
	// HeartbeatInterval is the time between the agent's heartbeats.
	HeartbeatInterval Duration `json:"heartbeat_interval"`
	// PowerOffDelay is how long the agent takes from standby.power_off
	// to the machine being off (it syncs and flushes the disks).
	PowerOffDelay Duration `json:"power_off_delay"`
}

// Duration is a time.Duration written as Go writes it in JSON ("1.5s").
type Duration time.Duration

// UnmarshalJSON reads "1.5s".
func (d *Duration) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"2s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// SystemConfig is one system of a Config.
type SystemConfig struct {
	ID string `json:"id"`
	// Power is "On" or "Off" (the default).
	Power        string         `json:"power"`
	Manufacturer string         `json:"manufacturer"`
	Model        string         `json:"model"`
	SerialNumber string         `json:"serial_number"`
	CPU          *CPU           `json:"cpu"`
	MemoryGiB    int            `json:"memory_gib"`
	DisksGiB     []int64        `json:"disks_gib"`
	NICs         []NICConfig    `json:"nics"`
	Bios         map[string]any `json:"bios"`
	RAIDDrives   []RAIDDrive    `json:"raid_drives"`
	// PowerDelay is how long a power transition takes (PowerDelay).
	PowerDelay Duration `json:"power_delay"`
}

// NICConfig is one EthernetInterface; State defaults to "Enabled", a
// zero SpeedMbps is null.
type NICConfig struct {
	ID        string `json:"id"`
	MAC       string `json:"mac"`
	State     string `json:"state"`
	SpeedMbps int    `json:"speed_mbps"`
}

// Build returns the emulator c describes, not yet listening; requests are
// logged to l.
func Build(c Config, l *log.Logger) (*BMC, error) {
	if len(c.Systems) == 0 {
		return nil, errors.New("redfishbmc: the configuration has no system")
	}
	b := Standalone(l)
	if c.Username != "" || c.Password != "" {
		b.WithBasicAuth(c.Username, c.Password)
	}
	if c.Sessions {
		b.WithSessions()
	}
	if c.TLS {
		b.WithTLS()
	}
	if c.Vendor != "" {
		b.WithVendor(c.Vendor)
	}
	if c.Control {
		b.WithControl()
	}
	b.ramdisk = c.Ramdisk
	seen := map[string]bool{}
	for i, s := range c.Systems {
		if s.ID == "" {
			return nil, fmt.Errorf("redfishbmc: system %d has no id", i)
		}
		if seen[s.ID] {
			return nil, fmt.Errorf("redfishbmc: system %q twice", s.ID)
		}
		seen[s.ID] = true
		opts, err := s.options()
		if err != nil {
			return nil, fmt.Errorf("redfishbmc: system %q: %w", s.ID, err)
		}
		b.System(s.ID, opts...)
	}
	return b, nil
}

func (s SystemConfig) options() ([]SystemOption, error) {
	var opts []SystemOption
	switch s.Power {
	case "", Off:
	case On:
		opts = append(opts, PowerState(On))
	default:
		return nil, fmt.Errorf("power %q is neither On nor Off", s.Power)
	}
	if s.Manufacturer != "" {
		opts = append(opts, Manufacturer(s.Manufacturer))
	}
	if s.Model != "" {
		opts = append(opts, Model(s.Model))
	}
	if s.SerialNumber != "" {
		opts = append(opts, SerialNumber(s.SerialNumber))
	}
	if s.CPU != nil {
		opts = append(opts, Processor(*s.CPU))
	}
	if s.MemoryGiB > 0 {
		opts = append(opts, MemoryGiB(s.MemoryGiB))
	}
	for _, d := range s.DisksGiB {
		opts = append(opts, StorageDrive(d<<30))
	}
	for i, n := range s.NICs {
		if _, err := net.ParseMAC(n.MAC); err != nil {
			return nil, fmt.Errorf("nic %d: %w", i, err)
		}
		id, state := n.ID, n.State
		if id == "" {
			id = fmt.Sprint(i + 1)
		}
		if state == "" {
			state = "Enabled"
		}
		opts = append(opts, EthernetInterface(id, n.MAC, state), NICSpeed(id, n.SpeedMbps))
	}
	if s.PowerDelay < 0 {
		return nil, fmt.Errorf("power_delay %s is negative", time.Duration(s.PowerDelay))
	}
	if s.PowerDelay > 0 {
		opts = append(opts, PowerDelay(time.Duration(s.PowerDelay)))
	}
	if s.Bios != nil {
		opts = append(opts, Bios(s.Bios))
	}
	if len(s.RAIDDrives) > 0 {
		opts = append(opts, RAIDController(s.RAIDDrives...))
	}
	return opts, nil
}

// Serve starts b on addr ("127.0.0.1:0" when empty) and returns its base
// URL; Close stops it.
func (b *BMC) Serve(addr string) (string, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("redfishbmc: listen: %w", err)
	}
	b.mu.Lock()
	if b.srv != nil {
		b.mu.Unlock()
		_ = l.Close()
		return "", errors.New("redfishbmc: already serving")
	}
	b.listener = l
	b.mu.Unlock()
	return b.URL(), nil
}
