package redfishbmc

import (
	"slices"
	"strings"
	"time"
)

// System is the state of one emulated ComputerSystem. Tests read it through
// the BMC's accessors, which copy it under the lock.
type System struct {
	ID           string
	UUID         string
	Manufacturer string
	Model        string
	SerialNumber string
	BiosVersion  string
	PowerState   string
	// settleAfter is how many GETs of the system a power transition takes;
	// the old state is reported until then.
	settleAfter int
	// powerDelay is how long a power transition takes on the BMC's
	// clock; the old state is reported until then.
	powerDelay time.Duration
	pending    *transition

	BootTarget  string
	BootEnabled string
	BootMode    string
	// HTTPBootURI is Boot.HttpBootUri ("" when null).
	HTTPBootURI string
	// noBootMode leaves BootSourceOverrideMode out (BMCs that cannot
	// report or change it).
	noBootMode bool
	// bootModeAfterReboot applies a requested boot mode on the next reset
	// only, as BMCs that go through a BIOS job do.
	bootModeAfterReboot bool
	pendingBootMode     string
	// rejectContinuous refuses BootSourceOverrideEnabled=Continuous, as
	// BMCs that dropped persistent overrides do.
	rejectContinuous bool
	AllowedTargets   []string
	AllowedResets    []string

	IndicatorLED            string
	LocationIndicatorActive bool

	secureBoot *secureBoot

	NICs []NIC
	// Disks are the SimpleStorage devices.
	Disks []Disk

	// Resets lists every ResetType accepted, in order.
	Resets []string
	// NMIs counts Nmi resets.
	NMIs int

	hw hardware
}

// transition is a power change under way; it completes after polls GETs
// (when counted) or at due (when set), whichever comes first.
type transition struct {
	target string
	polls  int
	due    time.Time
}

type secureBoot struct {
	Enabled bool
	Mode    string
	// KeyResets lists the ResetKeysType values accepted.
	KeyResets []string
}

// Disk is a SimpleStorage device; a zero capacity stands for a backplane
// or enclosure.
type Disk struct {
	Name          string
	Model         string
	CapacityBytes int64
}

// NIC is an EthernetInterface of a system; a zero SpeedMbps is null.
type NIC struct {
	ID        string
	MAC       string
	State     string
	SpeedMbps int
}

type manager struct {
	ID string
	// DateTime is kept as the client sent it, as BMCs echo it back.
	DateTime            string
	DateTimeLocalOffset string
	FirmwareVersion     string
	VirtualMedia        map[string]*virtualMedia
}

type virtualMedia struct {
	ID         string
	MediaTypes []string
	Image      string
	Inserted   bool
	// TransferProtocolType, UserName and Password are what the last
	// InsertMedia sent (a share's protocol and credentials).
	TransferProtocolType, UserName, Password string
}

// InsertedMedia is what a manager's virtual media device holds: the image
// URL and the transfer protocol and credentials InsertMedia gave with it.
type InsertedMedia struct {
	Image, TransferProtocolType, UserName, Password string
}

// ManagerMedia returns what the manager's virtual media device id holds;
// ok is false when nothing is inserted.
func (b *BMC) ManagerMedia(id string) (InsertedMedia, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	vm, found := b.manager.VirtualMedia[id]
	if !found || !vm.Inserted {
		return InsertedMedia{}, false
	}
	return InsertedMedia{vm.Image, vm.TransferProtocolType, vm.UserName, vm.Password}, true
}

type chassis struct {
	ID           string
	UUID         string
	IndicatorLED string
}

func newSystem(id string) *System {
	return &System{
		ID: id, UUID: newUUID(), Manufacturer: "OpenKeel", Model: "Emulated",
		PowerState: Off, BootTarget: "None", BootEnabled: "Disabled", BootMode: "UEFI",
		AllowedTargets: slices.Clone(defaultBootTargets), AllowedResets: slices.Clone(defaultResetTypes),
		IndicatorLED: "Off",
		secureBoot:   &secureBoot{Mode: "DeployedMode"},
	}
}

// SystemOption configures a system added with BMC.System.
type SystemOption func(*System)

// PowerState sets the initial power state ("On" or "Off").
func PowerState(state string) SystemOption { return func(s *System) { s.PowerState = state } }

// SettleAfter makes power transitions take effect only after n GETs of the
// system, so clients have to wait for the state to settle.
func SettleAfter(n int) SystemOption { return func(s *System) { s.settleAfter = n } }

// PowerDelay makes power transitions take d, as a server does between
// the BMC's command and its power supply's: clients, and the machine
// behind the BMC, see the old state until then.
func PowerDelay(d time.Duration) SystemOption { return func(s *System) { s.powerDelay = d } }

// Manufacturer sets the system's Manufacturer.
func Manufacturer(m string) SystemOption { return func(s *System) { s.Manufacturer = m } }

// BootMode sets the BootSourceOverrideMode ("UEFI" or "Legacy").
func BootMode(mode string) SystemOption { return func(s *System) { s.BootMode = mode } }

// NoBootMode leaves BootSourceOverrideMode out of the system.
func NoBootMode() SystemOption { return func(s *System) { s.noBootMode = true; s.BootMode = "" } }

// BootModeAfterReboot applies a requested boot mode at the next reset.
func BootModeAfterReboot() SystemOption { return func(s *System) { s.bootModeAfterReboot = true } }

// RejectContinuousBoot refuses persistent boot overrides with a 400.
func RejectContinuousBoot() SystemOption { return func(s *System) { s.rejectContinuous = true } }

// AllowedResetTypes replaces the ResetType allowable values.
func AllowedResetTypes(types ...string) SystemOption {
	return func(s *System) { s.AllowedResets = types }
}

// AllowedBootTargets replaces the BootSourceOverrideTarget allowable values.
func AllowedBootTargets(targets ...string) SystemOption {
	return func(s *System) { s.AllowedTargets = targets }
}

// NoSecureBoot leaves the SecureBoot resource out.
func NoSecureBoot() SystemOption { return func(s *System) { s.secureBoot = nil } }

// SecureBootEnabled sets SecureBootEnable.
func SecureBootEnabled(v bool) SystemOption {
	return func(s *System) {
		if s.secureBoot != nil {
			s.secureBoot.Enabled = v
		}
	}
}

// EthernetInterface adds a NIC; state is a Status.State ("Enabled",
// "Disabled"...).
func EthernetInterface(id, mac, state string) SystemOption {
	return func(s *System) { s.NICs = append(s.NICs, NIC{ID: id, MAC: mac, State: state}) }
}

// SimpleStorageDevice adds a device to the system's SimpleStorage.
func SimpleStorageDevice(name, model string, capacityBytes int64) SystemOption {
	return func(s *System) {
		s.Disks = append(s.Disks, Disk{Name: name, Model: model, CapacityBytes: capacityBytes})
	}
}

// reset applies a ResetType; it reports false for one the system does not
// allow.
func (s *System) reset(resetType string) bool {
	if !slices.Contains(s.AllowedResets, resetType) {
		return false
	}
	s.Resets = append(s.Resets, resetType)
	current := s.effectivePower()
	target := current
	switch resetType {
	case "On", "ForceOn":
		target = On
	case "ForceOff", "GracefulShutdown":
		target = Off
	case "PushPowerButton":
		if current == On {
			target = Off
		} else {
			target = On
		}
	case "ForceRestart", "GracefulRestart", "PowerCycle":
		// A restart passes through off; with settling the client sees
		// it off for a while before it comes back.
		target = On
		if s.settleAfter > 0 || s.powerDelay > 0 {
			s.PowerState = Off
		}
	case "Nmi":
		s.NMIs++
		return true
	}
	if target == On {
		s.hw.applyOnReset()
	}
	if s.bootModeAfterReboot && s.pendingBootMode != "" && target == On {
		s.BootMode, s.pendingBootMode = s.pendingBootMode, ""
	}
	if (s.settleAfter > 0 || s.powerDelay > 0) && target != s.PowerState {
		s.pending = &transition{target: target, polls: s.settleAfter}
		if s.powerDelay > 0 {
			s.pending.due = time.Now().Add(s.powerDelay)
		}
		return true
	}
	s.pending = nil
	s.PowerState = target
	return true
}

// effectivePower is where the system is heading.
func (s *System) effectivePower() string {
	if s.pending != nil {
		return s.pending.target
	}
	return s.PowerState
}

// poll counts one GET of the system towards the pending transition.
func (s *System) poll() {
	if s.pending == nil {
		return
	}
	if s.settleAfter > 0 {
		s.pending.polls--
	}
	s.settle()
}

// settle completes the pending transition once its GETs are counted or
// its time has come.
func (s *System) settle() {
	p := s.pending
	if p == nil {
		return
	}
	counted := s.settleAfter > 0 && p.polls <= 0
	timed := !p.due.IsZero() && !time.Now().Before(p.due)
	if counted || timed {
		s.PowerState = p.target
		s.pending = nil
	}
}

func (s *System) copy() System {
	c := *s
	c.Resets = slices.Clone(s.Resets)
	c.NICs = slices.Clone(s.NICs)
	c.Disks = slices.Clone(s.Disks)
	c.AllowedResets = slices.Clone(s.AllowedResets)
	c.AllowedTargets = slices.Clone(s.AllowedTargets)
	if s.secureBoot != nil {
		sb := *s.secureBoot
		sb.KeyResets = slices.Clone(s.secureBoot.KeyResets)
		c.secureBoot = &sb
	}
	c.pending = nil
	return c
}

// Snapshot returns a copy of a system's state.
func (b *BMC) Snapshot(id string) System {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.mustSystem(id)
	s.settle()
	return s.copy()
}

// Power returns the system's current power state as Redfish reports it.
func (b *BMC) Power(id string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.mustSystem(id)
	s.settle()
	return s.PowerState
}

// SetPower changes the power state behind the client's back.
func (b *BMC) SetPower(id, state string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.mustSystem(id)
	s.PowerState, s.pending = state, nil
	b.powerEvent(id, state)
}

// SecureBoot returns SecureBootEnable and the key resets received.
func (b *BMC) SecureBoot(id string) (enabled bool, keyResets []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sb := b.mustSystem(id).secureBoot
	if sb == nil {
		return false, nil
	}
	return sb.Enabled, slices.Clone(sb.KeyResets)
}

// ChassisIndicator returns the chassis IndicatorLED.
func (b *BMC) ChassisIndicator() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.chassis.IndicatorLED
}

// ChassisUUID returns the chassis UUID.
func (b *BMC) ChassisUUID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.chassis.UUID
}

// ManagerDateTime returns the BMC clock as it reports it.
func (b *BMC) ManagerDateTime() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.manager.DateTime
}

// SetManagerDateTime sets the BMC clock.
func (b *BMC) SetManagerDateTime(t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.manager.DateTime = t.UTC().Format(time.RFC3339)
}

func (b *BMC) mustSystem(id string) *System {
	s, ok := b.systems[id]
	if !ok {
		b.t.Fatalf("redfishbmc: no system %q", id)
	}
	return s
}

func (b *BMC) systemByPath(path string) (*System, string, bool) {
	rest, ok := strings.CutPrefix(path, "/redfish/v1/Systems/")
	if !ok {
		return nil, "", false
	}
	id, sub, _ := strings.Cut(rest, "/")
	s, ok := b.systems[id]
	return s, sub, ok
}
