package redfish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/stmcginnis/gofish/redfish"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
	"github.com/openkeel/ironic/internal/states"
)

// Boot devices (ironic.common.boot_devices) and their Redfish
// BootSourceOverrideTarget, upstream BOOT_DEVICE_MAP.
var bootDeviceMap = []struct{ redfish, ironic string }{
	{"Pxe", "pxe"}, {"Hdd", "disk"}, {"Cd", "cdrom"}, {"BiosSetup", "bios"}, {"UefiHttp", "uefihttp"},
}

func bootDeviceFromRedfish(target string) string {
	for _, m := range bootDeviceMap {
		if m.redfish == target {
			return m.ironic
		}
	}
	return ""
}

// redfishBootTarget maps an Ironic device to its target; old nodes may
// carry sushy's lower-case constants in driver_internal_info, which
// upstream still accepts (BOOT_DEVICE_MAP_REV_COMPAT).
func redfishBootTarget(device string) (string, bool) {
	for _, m := range bootDeviceMap {
		if m.ironic == device {
			return m.redfish, true
		}
	}
	switch device {
	case "hdd":
		return "Hdd", true
	case "cd":
		return "Cd", true
	case "bios setup":
		return "BiosSetup", true
	}
	return "", false
}

// Boot modes (ironic.common.boot_modes), upstream BOOT_MODE_MAP.
var bootModeMap = map[string]string{"UEFI": "uefi", "Legacy": "bios"}

var bootModeMapRev = map[string]string{"uefi": "UEFI", "bios": "Legacy"}

// Override frequencies, upstream BOOT_DEVICE_PERSISTENT_MAP.
const (
	enabledContinuous = "Continuous"
	enabledOnce       = "Once"
)

// vendorsRequiringFullBootRequest are matched as substrings of the node's
// vendor property: their BMCs want mode, enabled and target in every
// boot override PATCH.
var vendorsRequiringFullBootRequest = []string{"american megatrends international", "ami", "asrockrack", "redfish_compatible"}

// Indicator states and components (ironic.common.indicator_states,
// components) and upstream INDICATOR_MAP.
const (
	indicatorOn       = "on"
	indicatorOff      = "off"
	indicatorBlinking = "blinking"
	indicatorUnknown  = "unknown"

	componentSystem  = "system"
	componentChassis = "chassis"
	componentDisk    = "disk"
)

var indicatorMap = map[string]string{"Lit": indicatorOn, "Off": indicatorOff, "Blinking": indicatorBlinking, "Unknown": indicatorUnknown}

var indicatorMapRev = map[string]string{indicatorOn: "Lit", indicatorOff: "Off", indicatorBlinking: "Blinking", indicatorUnknown: "Unknown"}

// bootModeConfigInterval is upstream BOOT_MODE_CONFIG_INTERVAL: the poll
// interval while a boot mode or secure boot change is applied.
const bootModeConfigInterval = 15 * time.Second

// Management is upstream RedfishManagement.
type Management struct {
	core *core
	// images are the options attach_virtual_media publishes images with,
	// the boot interfaces' own.
	images BootOptions
}

var (
	_ driver.ManagementInterface = (*Management)(nil)
	_ driver.BootModeManager     = (*Management)(nil)
	_ driver.SecureBootManager   = (*Management)(nil)
	_ driver.NMIInjector         = (*Management)(nil)
	_ driver.IndicatorLister     = (*Management)(nil)
	_ driver.IndicatorGetter     = (*Management)(nil)
	_ driver.IndicatorSetter     = (*Management)(nil)
	_ driver.VendorDetector      = (*Management)(nil)
	_ driver.MACAddressLister    = (*Management)(nil)
	_ driver.NodeHealthGetter    = (*Management)(nil)
	_ driver.StepRunner          = (*Management)(nil)
	_ driver.VirtualMediaManager = (*Management)(nil)
)

// Properties returns the redfish driver_info properties.
func (m *Management) Properties() map[string]string { return Properties() }

// Validate checks driver_info.
func (m *Management) Validate(_ context.Context, task *driver.Task) error {
	_, err := ParseDriverInfo(task.Node, &m.core.opts)
	return err
}

// GetSupportedBootDevices lists the devices of the boot device map.
func (m *Management) GetSupportedBootDevices(context.Context, *driver.Task) ([]string, error) {
	out := make([]string, len(bootDeviceMap))
	for i, d := range bootDeviceMap {
		out[i] = d.ironic
	}
	return out, nil
}

func vendorOf(task *driver.Task) string {
	v, _ := task.Node.Properties["vendor"].(string)
	return v
}

func requiresFullBootRequest(vendor string) bool {
	if vendor == "" {
		return false
	}
	lower := strings.ToLower(vendor)
	for _, v := range vendorsRequiringFullBootRequest {
		if strings.Contains(lower, v) {
			return true
		}
	}
	return false
}

// setBootOptions is sushy's set_system_boot_options: a PATCH of Boot with
// the given fields, refusing a target the system does not allow.
func setBootOptions(sys *system, target, enabled, mode string, httpBootURI *string) error {
	boot := map[string]any{}
	if target != "" {
		if allowed := sys.allowedBootTargets(); len(allowed) > 0 && !slices.Contains(allowed, target) {
			return fmt.Errorf(`The parameter "target" value "%s" is invalid. Valid values are: %s`, target, pyfmt.Repr(allowed))
		}
		boot["BootSourceOverrideTarget"] = target
		if target == "UefiHttp" {
			if httpBootURI != nil && *httpBootURI != "" {
				boot["HttpBootUri"] = *httpBootURI
			} else {
				boot["HttpBootUri"] = nil
			}
		} else if sys.bootField("HttpBootUri") != "" {
			// A stale URI would make the next HTTP boot go elsewhere.
			boot["HttpBootUri"] = nil
		}
	}
	if enabled != "" {
		boot["BootSourceOverrideEnabled"] = enabled
	}
	if mode != "" {
		boot["BootSourceOverrideMode"] = mode
	}
	return sys.Patch(sys.ODataID, map[string]any{"Boot": boot})
}

// isDuringPOST reports the HPE iLO refusal of boot changes during POST.
func isDuringPOST(err error) bool {
	var herr *HTTPError
	return errors.As(err, &herr) && herr.Status == http.StatusBadRequest &&
		strings.Contains(herr.Error(), "UnableToModifyDuringSystemPOST")
}

// setBootDevice is upstream _set_boot_device with its vendor quirks: only
// send BootSourceOverrideEnabled when it changes (Supermicro: always), send
// every field to BMCs that want it, retry while the system is in POST, and
// fall back to a one-time override (restored on every power on) when a
// persistent one is refused.
func (m *Management) setBootDevice(ctx context.Context, task *driver.Task, sys *system, target string, persistent bool, httpBootURL *string) error {
	vendor := vendorOf(task)
	full := requiresFullBootRequest(vendor)
	desired := enabledOnce
	if persistent {
		desired = enabledContinuous
	}
	enabled := desired
	if !strings.EqualFold(vendor, "supermicro") && sys.Boot.BootSourceOverrideEnabled == redfish.BootSourceOverrideEnabled(desired) {
		enabled = ""
	}
	attempt := func() error {
		if full {
			mode := string(sys.Boot.BootSourceOverrideMode)
			if mode == "" {
				mode = "UEFI"
			}
			return setBootOptions(sys, target, desired, mode, httpBootURL)
		}
		return setBootOptions(sys, target, enabled, "", httpBootURL)
	}
	err := m.retryDuringPOST(ctx, task, attempt)
	if err == nil {
		return nil
	}
	if enabled != enabledContinuous {
		return err
	}
	task.Logger().Debug("persistent boot device refused, falling back to one-time boot", "node", task.Node.UUID, "error", err)
	if err := setBootOptions(sys, target, enabledOnce, "", httpBootURL); err != nil {
		return err
	}
	task.Logger().Warn("could not set persistent boot device, using one-time boot device instead",
		"node", task.Node.UUID, "device", target)
	task.Node.InternalInfo().Set(model.DIIRedfishBootDevice, bootDeviceFromRedfish(target))
	return nil
}

// retryDuringPOST retries fn while the BMC says the system is in POST, with
// an exponential wait between [redfish]post_boot_retry_delay and six times
// that.
func (m *Management) retryDuringPOST(ctx context.Context, task *driver.Task, fn func() error) error {
	attempts := max(m.core.opts.PostBootRetryAttempts, 1)
	minDelay := m.core.opts.PostBootRetryDelay
	for n := 1; ; n++ {
		err := fn()
		if err == nil || !isDuringPOST(err) || n >= attempts {
			return err
		}
		wait := min(max(time.Duration(1<<(n-1))*time.Second, minDelay), 6*minDelay)
		task.Logger().Warn("BMC is in POST, unable to modify boot device; retrying",
			"node", task.Node.UUID, "delay", wait, "attempt", n, "total", attempts)
		if serr := m.core.opts.clock().Sleep(ctx, wait); serr != nil {
			return serr
		}
	}
}

// restoreBootDevice re-applies the one-time boot device kept in
// driver_internal_info; the power interface calls it before powering on.
// A failure only warns: the pre-configured boot order still applies.
func (m *Management) restoreBootDevice(ctx context.Context, task *driver.Task, sys *system) {
	device, _ := task.Node.InternalInfo().Get(model.DIIRedfishBootDevice).(string)
	if device == "" {
		return
	}
	target, ok := redfishBootTarget(strings.ToLower(device))
	if !ok {
		task.Logger().Error("BUG: unexpected redfish_boot_device", "node", task.Node.UUID, "device", device)
		return
	}
	task.Logger().Debug("restoring boot device", "node", task.Node.UUID, "device", device)
	if err := m.setBootDevice(ctx, task, sys, target, false, nil); err != nil {
		task.Logger().Warn("unable to recover boot device, relying on the pre-configured boot order",
			"node", task.Node.UUID, "device", device, "error", err)
	}
}

// SetBootDevice sets the boot override target, once or persistently.
func (m *Management) SetBootDevice(ctx context.Context, task *driver.Task, device string, persistent bool) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	target, ok := redfishBootTarget(device)
	if !ok || bootDeviceFromRedfish(target) != device {
		return driver.InvalidParameterValue("Invalid boot device %s specified.", device)
	}
	var httpBootURL *string
	ii := task.Node.InternalInfo()
	ii.Delete(model.DIIRedfishBootDevice)
	if u, present := ii.Lookup(model.DIIRedfishUEFIHTTPURL); present {
		s, _ := u.(string)
		httpBootURL = &s
		ii.Delete(model.DIIRedfishUEFIHTTPURL)
	}
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	if err := m.setBootDevice(ctx, task, sys, target, persistent, httpBootURL); err != nil {
		msg := fmt.Sprintf("Redfish set boot device failed for node %s. Error: %s", task.Node.UUID, err)
		task.Logger().Error(msg)
		return redfishError(msg)
	}
	return nil
}

// GetBootDevice reads the boot override.
func (m *Management) GetBootDevice(ctx context.Context, task *driver.Task) (driver.BootDevice, error) {
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return driver.BootDevice{}, err
	}
	out := driver.BootDevice{BootDevice: bootDeviceFromRedfish(string(sys.Boot.BootSourceOverrideTarget))}
	switch string(sys.Boot.BootSourceOverrideEnabled) {
	case enabledContinuous:
		t := true
		out.Persistent = &t
	case enabledOnce:
		f := false
		out.Persistent = &f
	}
	return out, nil
}

// GetSupportedBootModes lists uefi and bios.
func (m *Management) GetSupportedBootModes(context.Context, *driver.Task) ([]string, error) {
	return []string{"uefi", "bios"}, nil
}

// GetBootMode reads BootSourceOverrideMode ("" when unknown).
func (m *Management) GetBootMode(ctx context.Context, task *driver.Task) (string, error) {
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return "", err
	}
	return bootModeMap[string(sys.Boot.BootSourceOverrideMode)], nil
}

// SetBootMode sets BootSourceOverrideMode and, when the BMC applies it only
// at the next boot, reboots the node and waits for it.
func (m *Management) SetBootMode(ctx context.Context, task *driver.Task, mode string) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	desired, ok := bootModeMapRev[mode]
	if !ok {
		return driver.InvalidParameterValue("Invalid boot mode %s specified.", mode)
	}
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	// Whether the mode can be read at all is decided before the change:
	// it may read empty transiently afterwards.
	modeUnsupported := sys.Boot.BootSourceOverrideMode == ""
	if requiresFullBootRequest(vendorOf(task)) {
		enabled := string(sys.Boot.BootSourceOverrideEnabled)
		if enabled == "" {
			enabled = enabledOnce
		}
		target := string(sys.Boot.BootSourceOverrideTarget)
		if target == "" {
			target = "Pxe"
		}
		err = setBootOptions(sys, target, enabled, desired, nil)
	} else {
		err = setBootOptions(sys, "", "", desired, nil)
	}
	if err != nil {
		msg := fmt.Sprintf("Setting boot mode to %s failed for node %s. Error: %s", mode, task.Node.UUID, err)
		task.Logger().Error(msg)
		if modeUnsupported {
			return driver.ErrUnsupportedDriverExtension(task.Node.Driver, "set_boot_mode")
		}
		return redfishError(msg)
	}
	if modeUnsupported {
		task.Logger().Warn("boot mode set, but the current mode is not known; assuming success",
			"node", task.Node.UUID, "value", mode)
		return nil
	}
	if err := sys.refresh(); err != nil {
		return redfishError(err.Error())
	}
	done := func() (bool, string, error) {
		return string(sys.Boot.BootSourceOverrideMode) == desired, pyOptional(string(sys.Boot.BootSourceOverrideMode)), nil
	}
	refresh := func() error { return sys.refresh() }
	return m.applyWithReboot(ctx, task, done, refresh, func(current string) string {
		return fmt.Sprintf("Timeout reached while waiting for boot mode of node %s to become %s, current is %s",
			task.Node.UUID, desired, current)
	})
}

// applyWithReboot is the tail of upstream's boot mode and secure boot
// changes: when the setting is not in effect yet, reboot the node, poll
// every 15 s up to [redfish]boot_mode_config_timeout, then put the power
// state back as it was.
func (m *Management) applyWithReboot(ctx context.Context, task *driver.Task, done func() (bool, string, error),
	refresh func() error, timeoutMsg func(current string) string) error {
	ok, _, err := done()
	if err != nil || ok {
		return err
	}
	power := task.Driver.Get(driver.KindPower)
	p, isPower := power.(driver.PowerInterface)
	if !isPower {
		return redfishError(fmt.Sprintf("node %s has no power interface to reboot it", task.Node.UUID))
	}
	oldPower, err := p.GetPowerState(ctx, task)
	if err != nil {
		return err
	}
	task.Logger().Info("rebooting node to apply a firmware setting", "node", task.Node.UUID)
	if err := p.Reboot(ctx, task, 0); err != nil {
		return err
	}
	if timeout := m.core.opts.BootModeConfigTimeout; timeout > 0 {
		clock := m.core.opts.clock()
		threshold := clock.Now().Add(timeout)
		for {
			ok, current, err := done()
			if err != nil {
				return err
			}
			if ok {
				break
			}
			if clock.Now().After(threshold) {
				msg := timeoutMsg(current)
				task.Logger().Error(msg)
				return redfishError(msg)
			}
			if err := clock.Sleep(ctx, bootModeConfigInterval); err != nil {
				return err
			}
			if err := refresh(); err != nil {
				task.Logger().Debug("refresh failed while waiting", "node", task.Node.UUID, "error", err)
			}
		}
	}
	if oldPower == states.PowerOn || oldPower == states.PowerOff {
		return p.SetPowerState(ctx, task, oldPower, 0)
	}
	return nil
}

// pyOptional renders "" as Python's None.
func pyOptional(s string) string {
	if s == "" {
		return "None"
	}
	return s
}

// GetSecureBootState reads SecureBootEnable.
func (m *Management) GetSecureBootState(ctx context.Context, task *driver.Task) (bool, error) {
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return false, err
	}
	sb, err := sys.SecureBoot()
	if err != nil {
		var herr *HTTPError
		if errors.As(err, &herr) && herr.isAccess() && strings.Contains(herr.Error(), "OemLicenseNotPassed") {
			// Supermicro reports secure boot only with a license: the
			// state is unknown, which reads as disabled here.
			task.Logger().Info("secure boot status request failed", "node", task.Node.UUID, "error", err)
			return false, nil
		}
		return false, redfishError(err.Error())
	}
	if sb == nil {
		return false, driver.ErrUnsupportedDriverExtension(task.Node.Driver, "get_secure_boot_state")
	}
	return sb.SecureBootEnable, nil
}

// SetSecureBootState sets SecureBootEnable and waits for it to apply,
// rebooting the node when the BMC needs a boot for that.
func (m *Management) SetSecureBootState(ctx context.Context, task *driver.Task, enabled bool) error {
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	sb, err := sys.SecureBoot()
	if err != nil {
		return redfishError(err.Error())
	}
	if sb == nil {
		task.Logger().Error("secure boot requested but the BMC has no SecureBoot resource", "node", task.Node.UUID)
		return driver.ErrUnsupportedDriverExtension(task.Node.Driver, "set_secure_boot_state")
	}
	if sb.SecureBootEnable == enabled {
		task.Logger().Info("secure boot state already as requested", "node", task.Node.UUID, "value", enabled)
		return nil
	}
	if sys.Boot.BootSourceOverrideMode == "Legacy" {
		msg := fmt.Sprintf("Configuring secure boot requires UEFI for node %s", task.Node.UUID)
		task.Logger().Error(msg)
		return redfishError(msg)
	}
	if err := sb.Patch(sb.ODataID, map[string]any{"SecureBootEnable": enabled}); err != nil {
		msg := fmt.Sprintf("Failed to set secure boot state on node %s to %s: %s", task.Node.UUID, pyfmt.Repr(enabled), err)
		task.Logger().Error(msg)
		return redfishError(msg)
	}
	refreshOK := true
	refresh := func() error {
		fresh, err := redfish.GetSecureBoot(sys.cl, sb.ODataID)
		if err != nil {
			var herr *HTTPError
			if errors.As(err, &herr) && herr.Status >= 500 {
				refreshOK = false
				return nil
			}
			return err
		}
		refreshOK = true
		sb = fresh
		return nil
	}
	if err := refresh(); err != nil {
		return redfishError(err.Error())
	}
	done := func() (bool, string, error) {
		return refreshOK && sb.SecureBootEnable == enabled, pyfmt.Repr(sb.SecureBootEnable), nil
	}
	return m.applyWithReboot(ctx, task, done, refresh, func(current string) string {
		return fmt.Sprintf("Timeout reached while waiting for secure boot state of node %s to become %s, current is %s",
			task.Node.UUID, pyfmt.Repr(enabled), current)
	})
}

func (m *Management) resetKeys(ctx context.Context, task *driver.Task, resetType redfish.ResetKeysType) error {
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	sb, err := sys.SecureBoot()
	if err != nil {
		return redfishError(err.Error())
	}
	if sb == nil {
		task.Logger().Error("resetting secure boot keys requested but the BMC has no SecureBoot resource", "node", task.Node.UUID)
		return driver.ErrUnsupportedDriverExtension(task.Node.Driver, "reset_keys")
	}
	if err := sb.ResetKeys(resetType); err != nil {
		msg := fmt.Sprintf("Failed to reset secure boot keys on node %s: %s", task.Node.UUID, err)
		task.Logger().Error(msg)
		return redfishError(msg)
	}
	return nil
}

// InjectNMI sends the Nmi reset.
func (m *Management) InjectNMI(ctx context.Context, task *driver.Task) error {
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	if err := resetSystem(sys, redfish.NmiResetType); err != nil {
		msg := fmt.Sprintf("Redfish inject NMI failed for node %s. Error: %s", task.Node.UUID, err)
		task.Logger().Error(msg)
		return redfishError(msg)
	}
	return nil
}

// GetNodeHealth reads Status.Health ("" when the BMC does not say).
func (m *Management) GetNodeHealth(ctx context.Context, task *driver.Task) (string, error) {
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return "", err
	}
	switch h := string(sys.Status.Health); h {
	case "OK", "Warning", "Critical":
		return h, nil
	}
	return "", nil
}

// DetectVendor answers the service root's Vendor, else the system's
// Manufacturer.
func (m *Management) DetectVendor(ctx context.Context, task *driver.Task) (string, error) {
	var vendor string
	err := m.core.withConnection(ctx, task, func(cl *client, info DriverInfo) error {
		var root struct{ Vendor string }
		if err := cl.getJSON(info.RootPrefix, &root); err != nil {
			return err
		}
		vendor = root.Vendor
		return nil
	})
	if err != nil {
		task.Logger().Debug("failed to get vendor from the redfish service root", "node", task.Node.UUID, "error", err)
	}
	if vendor != "" {
		return vendor, nil
	}
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return "", err
	}
	return sys.Manufacturer, nil
}

// GetMACAddresses lists the MACs of enabled EthernetInterfaces, lower
// case; a system without EthernetInterfaces answers none.
func (m *Management) GetMACAddresses(ctx context.Context, task *driver.Task) ([]string, error) {
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return nil, err
	}
	if _, has := sys.raw["EthernetInterfaces"]; !has {
		task.Logger().Warn("cannot get MAC addresses: the system has no EthernetInterfaces", "node", task.Node.UUID)
		return nil, nil
	}
	nics, err := sys.EthernetInterfaces()
	if err != nil {
		msg := fmt.Sprintf("Failed to get network interface information on node %s: %s", task.Node.UUID, err)
		task.Logger().Error(msg)
		return nil, redfishError(msg)
	}
	// gofish fetches members concurrently; the collection's order is
	// the stable one.
	slices.SortFunc(nics, func(a, b *redfish.EthernetInterface) int { return strings.Compare(a.ODataID, b.ODataID) })
	var out []string
	for _, n := range nics {
		if n.Status.State != "Enabled" {
			continue
		}
		if n.MACAddress == "" {
			task.Logger().Warn("ignoring device with no MAC reported", "node", task.Node.UUID)
			continue
		}
		mac := strings.ToLower(n.MACAddress)
		if !slices.Contains(out, mac) {
			out = append(out, mac)
		}
	}
	if len(out) == 0 {
		task.Logger().Debug("no ethernet interface information available", "node", task.Node.UUID)
	}
	return out, nil
}

func indicatorProperties() driver.Indicator {
	return driver.Indicator{ReadOnly: false, States: []string{indicatorBlinking, indicatorOff, indicatorOn}}
}

// GetSupportedIndicators lists the system's and its chassis' LEDs, keyed
// by their UUIDs. Drive LEDs need the Storage resources, which this
// implementation does not read yet.
func (m *Management) GetSupportedIndicators(ctx context.Context, task *driver.Task, component string) (map[string]map[string]driver.Indicator, error) {
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]driver.Indicator{}
	if component == "" || component == componentChassis {
		chassis, err := sys.chassis()
		if err != nil {
			task.Logger().Debug("chassis indicator not available", "node", task.Node.UUID, "error", err)
		} else if len(chassis) > 0 {
			leds := map[string]driver.Indicator{}
			for _, c := range chassis {
				if c.IndicatorLED != "" {
					leds[c.UUID] = indicatorProperties()
				}
			}
			out[componentChassis] = leds
		}
	}
	if (component == "" || component == componentSystem) && sys.IndicatorLED != "" {
		out[componentSystem] = map[string]driver.Indicator{sys.UUID: indicatorProperties()}
	}
	return out, nil
}

func unknownIndicator(task *driver.Task, component, indicator string) error {
	return driver.MissingParameterValue("Unknown indicator %s for component %s of node %s", indicator, component, task.Node.UUID)
}

// GetIndicatorState reads an LED.
func (m *Management) GetIndicatorState(ctx context.Context, task *driver.Task, component, indicator string) (string, error) {
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return "", err
	}
	led := func(v string) string {
		if s, ok := indicatorMap[v]; ok {
			return s
		}
		return indicatorUnknown
	}
	switch component {
	case componentSystem:
		if indicator == sys.UUID {
			return led(string(sys.IndicatorLED)), nil
		}
	case componentChassis:
		chassis, err := sys.chassis()
		if err != nil {
			msg := fmt.Sprintf("Redfish get %s indicator %s state failed for node %s. Error: %s", component, indicator, task.Node.UUID, err)
			task.Logger().Error(msg)
			return "", redfishError(msg)
		}
		for _, c := range chassis {
			if c.UUID == indicator {
				return led(string(c.IndicatorLED)), nil
			}
		}
	}
	return "", unknownIndicator(task, component, indicator)
}

// SetIndicatorState sets an LED.
func (m *Management) SetIndicatorState(ctx context.Context, task *driver.Task, component, indicator, state string) error {
	value, ok := indicatorMapRev[state]
	if !ok {
		return driver.InvalidParameterValue("Invalid indicator state %s specified.", state)
	}
	sys, err := m.core.getSystem(ctx, task)
	if err != nil {
		return err
	}
	failed := func(err error) error {
		msg := fmt.Sprintf("Redfish set %s indicator %s state %s failed for node %s. Error: %s",
			component, indicator, state, task.Node.UUID, err)
		task.Logger().Error(msg)
		return redfishError(msg)
	}
	switch component {
	case componentSystem:
		if indicator == sys.UUID {
			if err := sys.Patch(sys.ODataID, map[string]any{"IndicatorLED": value}); err != nil {
				return failed(err)
			}
			return nil
		}
	case componentChassis:
		chassis, err := sys.chassis()
		if err != nil {
			return failed(err)
		}
		for _, c := range chassis {
			if c.UUID == indicator {
				if err := c.Patch(c.ODataID, map[string]any{"IndicatorLED": value}); err != nil {
					return failed(err)
				}
				return nil
			}
		}
	}
	return unknownIndicator(task, component, indicator)
}
