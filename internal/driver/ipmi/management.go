package ipmi

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// bootDevices is upstream BOOT_DEVICE_HEXA_MAP in its order: the devices
// ipmitool can select and their boot flag selector values.
var bootDevices = []struct{ name, hex string }{
	{"pxe", "0x04"}, {"disk", "0x08"}, {"cdrom", "0x14"}, {"bios", "0x18"}, {"safe", "0x0c"},
}

// disableBootTimeoutRaw clears the IPMI 60 s boot flag timeout (set system
// boot options, parameter 3), so the device survives a slow reboot.
const disableBootTimeoutRaw = "0x00 0x08 0x03 0x08"

// Management is upstream IPMIManagement.
type Management struct {
	driver.NoSteps
	core *core
}

var (
	_ driver.ManagementInterface = (*Management)(nil)
	_ driver.NMIInjector         = (*Management)(nil)
	_ driver.VendorDetector      = (*Management)(nil)
)

// Properties returns the ipmitool driver_info keys.
func (m *Management) Properties() map[string]string { return Properties() }

// Validate checks driver_info.
func (m *Management) Validate(_ context.Context, task *driver.Task) error {
	_, err := m.core.parse(task)
	return err
}

// GetSupportedBootDevices lists the devices SetBootDevice accepts.
func (m *Management) GetSupportedBootDevices(context.Context, *driver.Task) ([]string, error) {
	out := make([]string, len(bootDevices))
	for i, b := range bootDevices {
		out[i] = b.name
	}
	return out, nil
}

// bootDeviceMap is upstream _vendor_aware_boot_device_map: Supermicro
// boards in UEFI mode boot the disk with selector 0x24.
func bootDeviceMap(vendor any, bootMode string) map[string]string {
	out := map[string]string{}
	for _, b := range bootDevices {
		out[b.name] = b.hex
	}
	if vendor != nil && strings.ToLower(pyfmt.StrJSON(vendor)) == "supermicro" && bootMode == "uefi" {
		out["disk"] = "0x24"
	}
	return out
}

// SetBootDevice sets the next (or every, when persistent) boot device.
// In UEFI mode the boot flags are sent raw, since "chassis bootdev" cannot
// say UEFI and persistent together on every ipmitool and BMC.
func (m *Management) SetBootDevice(ctx context.Context, task *driver.Task, device string, persistent bool) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	devMap := bootDeviceMap(nil, "")
	if _, ok := devMap[device]; !ok {
		return driver.InvalidParameterValue("Invalid boot device %s specified.", device)
	}
	d, err := m.core.parse(task)
	if err != nil {
		return err
	}
	info := task.Node.DriverInfo
	idt := info["ipmi_disable_boot_timeout"]
	if idt == nil {
		idt = m.core.opts.DisableBootTimeout
	}
	if boolFromString(idt) {
		if _, _, err := m.core.sendRaw(ctx, task, d, disableBootTimeoutRaw); err != nil {
			return err
		}
	} else {
		task.Logger().Info("driver_info ipmi_disable_boot_timeout is false, not sending the boot timeout disable", "node", task.Node.UUID)
	}
	if boolFromString(info["ipmi_force_boot_device"]) {
		forcePersistentBoot(task, device, persistent)
		// The BMC may not keep a persistent device (or we may lack the
		// rights): Ironic re-sends it before each power on instead.
		persistent = false
	}
	bootMode, err := getBootMode(task.Node, m.core.opts.DefaultBootMode)
	if err != nil {
		return err
	}
	if bootMode == "uefi" {
		flags := "0xa0" // valid, UEFI, next boot only
		if persistent {
			flags = "0xe0" // valid, UEFI, persistent
		}
		raw := fmt.Sprintf("0x00 0x08 0x05 %s %s 0x00 0x00 0x00", flags, bootDeviceMap(task.Node.Properties["vendor"], bootMode)[device])
		_, _, err := m.core.sendRaw(ctx, task, d, raw)
		return err
	}
	cmd := "chassis bootdev " + device
	if persistent {
		cmd += " options=persistent"
	}
	if _, _, err := m.core.exec(ctx, d, cmd, execOptions{}); err != nil {
		if ctx.Err() != nil {
			return err
		}
		task.Logger().Warn("IPMI set boot device failed", "node", d.UUID, "command", cmd, "error", err)
		return ipmiFailure(cmd)
	}
	return nil
}

// forcePersistentBoot is upstream driver_utils.force_persistent_boot.
func forcePersistentBoot(task *driver.Task, device string, persistent bool) {
	ii := task.Node.InternalInfo()
	if persistent {
		ii.Delete(model.DIIIsNextBootPersistent)
		ii.Set(model.DIIPersistentBootDevice, device)
	} else {
		ii.Set(model.DIIIsNextBootPersistent, false)
	}
}

var bootSelectorRe = regexp.MustCompile(`Boot Device Selector : (.+)?\n`)

// GetBootDevice reads boot parameter 5. With ipmi_force_boot_device the
// remembered persistent device is the answer, as the BMC may have lost it.
func (m *Management) GetBootDevice(ctx context.Context, task *driver.Task) (driver.BootDevice, error) {
	d, err := m.core.parse(task)
	if err != nil {
		return driver.BootDevice{}, err
	}
	ii := task.Node.InternalInfo()
	if dev := ii.Get(model.DIIPersistentBootDevice); d.ForceBootDevice && pyfmt.Truthy(dev) {
		next, ok := ii.Lookup(model.DIIIsNextBootPersistent)
		if !ok || pyfmt.Truthy(next) {
			t := true
			return driver.BootDevice{BootDevice: pyfmt.StrJSON(dev), Persistent: &t}, nil
		}
	}
	const cmd = "chassis bootparam get 5"
	out, _, err := m.core.exec(ctx, d, cmd, execOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return driver.BootDevice{}, err
		}
		task.Logger().Warn("IPMI get boot device failed", "node", d.UUID, "command", cmd, "error", err)
		return driver.BootDevice{}, ipmiFailure(cmd)
	}
	return parseBootParam(out), nil
}

// parseBootParam reads "chassis bootparam get 5" output as upstream does;
// an unknown selector gives an empty device.
func parseBootParam(out string) driver.BootDevice {
	var res driver.BootDevice
	if m := bootSelectorRe.FindStringSubmatch(out); m != nil {
		sel := m[1]
		switch {
		case strings.Contains(sel, "PXE"):
			res.BootDevice = "pxe"
		case strings.Contains(sel, "Hard-Drive"):
			res.BootDevice = "disk"
			if strings.Contains(sel, "Safe-Mode") {
				res.BootDevice = "safe"
			}
		case strings.Contains(sel, "BIOS"):
			res.BootDevice = "bios"
		case strings.Contains(sel, "CD/DVD"):
			res.BootDevice = "cdrom"
		}
	}
	persistent := strings.Contains(out, "Options apply to all future boots")
	res.Persistent = &persistent
	return res
}

var manufacturerRe = regexp.MustCompile(`Manufacturer Name *: (.+)`)

// DetectVendor reads the manufacturer from "mc info" ("" when absent).
func (m *Management) DetectVendor(ctx context.Context, task *driver.Task) (string, error) {
	d, err := m.core.parse(task)
	if err != nil {
		return "", err
	}
	out, _, err := m.core.exec(ctx, d, "mc info", execOptions{})
	if err != nil {
		return "", fmt.Errorf("detect vendor of node %s: %w", d.UUID, err)
	}
	if match := manufacturerRe.FindStringSubmatch(out); match != nil {
		return strings.ToLower(match[1]), nil
	}
	return "", nil
}

// InjectNMI runs "power diag".
func (m *Management) InjectNMI(ctx context.Context, task *driver.Task) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	d, err := m.core.parse(task)
	if err != nil {
		return err
	}
	const cmd = "power diag"
	if _, _, err := m.core.exec(ctx, d, cmd, execOptions{}); err != nil {
		if ctx.Err() != nil {
			return err
		}
		task.Logger().Error("inject NMI failed", "node", d.UUID, "error", err)
		return ipmiFailure(cmd)
	}
	return nil
}

// GetSensorsData runs "sdr -v" and groups the readings by sensor type.
func (m *Management) GetSensorsData(ctx context.Context, task *driver.Task) (map[string]any, error) {
	d, err := m.core.parse(task)
	if err != nil {
		return nil, err
	}
	out, _, err := m.core.exec(ctx, d, "sdr -v", execOptions{killOnTimeout: m.core.opts.KillOnTimeout})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, errs.New(errs.ClassFailedToGetSensorData, map[string]any{"node": task.Node.UUID, "error": err.Error()})
	}
	return parseSensorsData(task.Node.UUID, out)
}

// sendRaw is upstream's module-level send_raw: "raw <bytes>".
func (c *core) sendRaw(ctx context.Context, task *driver.Task, d DriverInfo, raw string) (string, string, error) {
	cmd := "raw " + raw
	task.Logger().Debug("sending raw bytes", "node", d.UUID, "bytes", raw)
	out, stderr, err := c.exec(ctx, d, cmd, execOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return "", "", err
		}
		task.Logger().Error(`IPMI "raw bytes" failed`, "node", d.UUID, "error", err)
		return "", "", ipmiFailure(cmd)
	}
	task.Logger().Debug("send raw bytes returned", "node", d.UUID, "stdout", out, "stderr", stderr)
	return out, stderr, nil
}

// getBootMode is upstream boot_mode_utils.get_boot_mode: secure boot
// means UEFI; then instance_info capabilities, the deprecated
// instance_info deploy_boot_mode, properties capabilities and the cached
// deploy_boot_mode; then [deploy]default_boot_mode. A mode that disagrees
// with properties/capabilities is refused.
func getBootMode(n *model.Node, defaultMode string) (string, error) {
	instCaps := instanceCapabilities(n.InstanceInfo)
	if strings.ToLower(instCaps["secure_boot"]) == "true" {
		return "uefi", nil
	}
	capMode := propertyCapability(n.Properties, "boot_mode")
	mode := firstNonEmpty(instCaps["boot_mode"], strOf(n.InstanceInfo["deploy_boot_mode"]), capMode,
		strOf(n.InternalInfo().Get(model.DIIDeployBootMode)))
	if mode == "" {
		return defaultMode, nil
	}
	mode = strings.ToLower(mode)
	if capMode != "" && strings.ToLower(capMode) != mode {
		return "", driver.InvalidParameterValue("Node %s boot mode %s violates node properties/capabilities %s",
			n.UUID, mode, strings.ToLower(capMode))
	}
	return mode, nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

func strOf(v any) string {
	if !pyfmt.Truthy(v) {
		return ""
	}
	return pyfmt.StrJSON(v)
}

// instanceCapabilities is upstream parse_instance_info_capabilities: a
// dict, or a JSON string of one.
func instanceCapabilities(ii map[string]any) map[string]string {
	out := map[string]string{}
	raw := ii["capabilities"]
	if s, ok := raw.(string); ok {
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) != nil {
			return out
		}
		raw = m
	}
	if m, ok := raw.(map[string]any); ok {
		for k, v := range m {
			out[k] = pyfmt.StrJSON(v)
		}
	}
	return out
}

// propertyCapability reads key from properties/capabilities, the
// "k1:v1,k2:v2" string.
func propertyCapability(props map[string]any, key string) string {
	s, _ := props["capabilities"].(string)
	for _, item := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(item, ":"); ok && k == key {
			return v
		}
	}
	return ""
}
