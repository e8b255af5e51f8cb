package redfish

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

func newMgmtEnv(t *testing.T, opts ...redfishbmc.SystemOption) *env {
	t.Helper()
	bmc := redfishbmc.New(t).System("sys-1", opts...).WithBasicAuth(testUser, testPassword)
	return newEnv(t, bmc, nil)
}

func TestBootDevice(t *testing.T) {
	for _, tc := range []struct {
		device, target string
		persistent     bool
		enabled        string
	}{
		{"pxe", "Pxe", false, "Once"},
		{"disk", "Hdd", true, "Continuous"},
		{"cdrom", "Cd", false, "Once"},
		{"bios", "BiosSetup", true, "Continuous"},
		{"uefihttp", "UefiHttp", false, "Once"},
	} {
		t.Run(tc.device, func(t *testing.T) {
			e := newMgmtEnv(t)
			must(t, e.mgmt.SetBootDevice(e.ctx, e.task, tc.device, tc.persistent))
			snap := e.bmc.Snapshot("sys-1")
			if snap.BootTarget != tc.target || snap.BootEnabled != tc.enabled {
				t.Fatalf("BMC boot %s/%s, want %s/%s", snap.BootTarget, snap.BootEnabled, tc.target, tc.enabled)
			}
			got, err := e.mgmt.GetBootDevice(e.ctx, e.task)
			must(t, err)
			if got.BootDevice != tc.device || got.Persistent == nil || *got.Persistent != tc.persistent {
				t.Fatalf("get boot device %+v", got)
			}
		})
	}
}

func TestBootDeviceUnknownAndDisallowed(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.AllowedBootTargets("Pxe", "Hdd"))
	wantClass(t, e.mgmt.SetBootDevice(e.ctx, e.task, "floppy", false), "InvalidParameterValue", "Invalid boot device floppy specified.")
	err := e.mgmt.SetBootDevice(e.ctx, e.task, "cdrom", false)
	wantClass(t, err, "RedfishError", "Redfish exception occurred. Error: Redfish set boot device failed for node "+testNode+
		`. Error: The parameter "target" value "Cd" is invalid. Valid values are: ['Pxe', 'Hdd']`)
	got, err := e.mgmt.GetBootDevice(e.ctx, e.task)
	must(t, err)
	if got.BootDevice != "" || got.Persistent != nil {
		t.Fatalf("boot device of a system without override: %+v", got)
	}
	supported, err := e.mgmt.GetSupportedBootDevices(e.ctx, e.task)
	must(t, err)
	if !slices.Equal(supported, []string{"pxe", "disk", "cdrom", "bios", "uefihttp"}) {
		t.Fatalf("supported %v", supported)
	}
}

// TestPersistentBootFallsBackToOneTime covers BMCs that dropped
// Continuous: the device is set once and restored on every power on.
func TestPersistentBootFallsBackToOneTime(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.RejectContinuousBoot())
	must(t, e.mgmt.SetBootDevice(e.ctx, e.task, "disk", true))
	if snap := e.bmc.Snapshot("sys-1"); snap.BootTarget != "Hdd" || snap.BootEnabled != "Once" {
		t.Fatalf("BMC boot %s/%s", snap.BootTarget, snap.BootEnabled)
	}
	if got := e.node.DriverInternalInfo["redfish_boot_device"]; got != "disk" {
		t.Fatalf("redfish_boot_device = %v", got)
	}
	// The node boots once from disk; the BMC forgets the override.
	e.bmc.SetPower("sys-1", redfishbmc.Off)
	patches := e.bmc.Count(http.MethodPatch, sysPath)
	must(t, e.power.SetPowerState(e.ctx, e.task, states.PowerOn, 0))
	if n := e.bmc.Count(http.MethodPatch, sysPath); n != patches+1 {
		t.Fatalf("power on did not restore the boot device (%d PATCHes)", n-patches)
	}
	// Setting a device again clears the flag.
	must(t, e.mgmt.SetBootDevice(e.ctx, e.task, "pxe", false))
	if _, ok := e.node.DriverInternalInfo["redfish_boot_device"]; ok {
		t.Fatal("redfish_boot_device kept after an explicit boot device")
	}
}

func TestBootDeviceEnabledSentOnlyWhenChanged(t *testing.T) {
	e := newMgmtEnv(t)
	must(t, e.mgmt.SetBootDevice(e.ctx, e.task, "pxe", true))
	must(t, e.mgmt.SetBootDevice(e.ctx, e.task, "disk", true))
	if snap := e.bmc.Snapshot("sys-1"); snap.BootEnabled != "Continuous" || snap.BootTarget != "Hdd" {
		t.Fatalf("BMC boot %s/%s", snap.BootTarget, snap.BootEnabled)
	}
}

func TestBootDeviceRetriedDuringPOST(t *testing.T) {
	e := newMgmtEnv(t)
	e.bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPatch}, 2, http.StatusBadRequest, "iLO.2.15.UnableToModifyDuringSystemPOST")
	must(t, e.mgmt.SetBootDevice(e.ctx, e.task, "pxe", false))
	if !slices.Equal(e.clock.Sleeps(), []time.Duration{5 * time.Second, 5 * time.Second}) {
		t.Fatalf("sleeps %v, want two post_boot_retry_delay waits", e.clock.Sleeps())
	}
}

func TestBootMode(t *testing.T) {
	e := newMgmtEnv(t)
	got, err := e.mgmt.GetBootMode(e.ctx, e.task)
	must(t, err)
	if got != "uefi" {
		t.Fatalf("boot mode %q", got)
	}
	must(t, e.mgmt.SetBootMode(e.ctx, e.task, "bios"))
	if snap := e.bmc.Snapshot("sys-1"); snap.BootMode != "Legacy" || len(snap.Resets) != 0 {
		t.Fatalf("mode %s, resets %v", snap.BootMode, snap.Resets)
	}
	wantClass(t, e.mgmt.SetBootMode(e.ctx, e.task, "dos"), "InvalidParameterValue", "")
}

func TestBootModeAppliedAtRebootRestoresPower(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.BootModeAfterReboot(), redfishbmc.PowerState(redfishbmc.Off))
	must(t, e.mgmt.SetBootMode(e.ctx, e.task, "bios"))
	snap := e.bmc.Snapshot("sys-1")
	if snap.BootMode != "Legacy" {
		t.Fatalf("mode %s", snap.BootMode)
	}
	// Reboot of an off node powers it on, then the old state comes back.
	if !slices.Equal(snap.Resets, []string{"On", "ForceOff"}) || snap.PowerState != redfishbmc.Off {
		t.Fatalf("resets %v, power %s", snap.Resets, snap.PowerState)
	}
}

func TestBootModeUnsupported(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.NoBootMode())
	got, err := e.mgmt.GetBootMode(e.ctx, e.task)
	must(t, err)
	if got != "" {
		t.Fatalf("boot mode %q of a system without one", got)
	}
	wantClass(t, e.mgmt.SetBootMode(e.ctx, e.task, "uefi"), "UnsupportedDriverExtension",
		"Driver redfish does not support set_boot_mode (disabled or not implemented).")
}

func TestSecureBoot(t *testing.T) {
	e := newMgmtEnv(t)
	on, err := e.mgmt.GetSecureBootState(e.ctx, e.task)
	must(t, err)
	if on {
		t.Fatal("secure boot reported on")
	}
	must(t, e.mgmt.SetSecureBootState(e.ctx, e.task, true))
	if on, _ := e.bmc.SecureBoot("sys-1"); !on {
		t.Fatal("secure boot not enabled at the BMC")
	}
	on, err = e.mgmt.GetSecureBootState(e.ctx, e.task)
	must(t, err)
	if !on {
		t.Fatal("secure boot reported off after enabling")
	}
	must(t, e.mgmt.SetBootMode(e.ctx, e.task, "bios"))
	wantClass(t, e.mgmt.SetSecureBootState(e.ctx, e.task, false), "RedfishError",
		"Redfish exception occurred. Error: Configuring secure boot requires UEFI for node "+testNode)
}

func TestSecureBootUnsupported(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.NoSecureBoot())
	_, err := e.mgmt.GetSecureBootState(e.ctx, e.task)
	wantClass(t, err, "UnsupportedDriverExtension", "Driver redfish does not support get_secure_boot_state (disabled or not implemented).")
	wantClass(t, e.mgmt.SetSecureBootState(e.ctx, e.task, true), "UnsupportedDriverExtension", "")
	_, err = e.mgmt.StepHandlers()["clear_secure_boot_keys"](e.ctx, e.task, nil)
	wantClass(t, err, "UnsupportedDriverExtension", "Driver redfish does not support reset_keys (disabled or not implemented).")
}

func TestSecureBootKeySteps(t *testing.T) {
	e := newMgmtEnv(t)
	for _, step := range []string{"clear_secure_boot_keys", "reset_secure_boot_keys_to_default"} {
		_, err := e.mgmt.StepHandlers()[step](e.ctx, e.task, nil)
		must(t, err)
	}
	if _, resets := e.bmc.SecureBoot("sys-1"); !slices.Equal(resets, []string{"DeleteAllKeys", "ResetAllKeysToDefault"}) {
		t.Fatalf("key resets %v", resets)
	}
}

func TestInjectNMI(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.PowerState(redfishbmc.On))
	must(t, e.mgmt.InjectNMI(e.ctx, e.task))
	if snap := e.bmc.Snapshot("sys-1"); snap.NMIs != 1 || snap.PowerState != redfishbmc.On {
		t.Fatalf("NMIs %d, power %s", snap.NMIs, snap.PowerState)
	}
	e.bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPost}, 1, http.StatusInternalServerError, "")
	err := e.mgmt.InjectNMI(e.ctx, e.task)
	wantClass(t, err, "RedfishError", "")
	if !strings.HasPrefix(err.Error(), "Redfish exception occurred. Error: Redfish inject NMI failed for node "+testNode+". Error: HTTP POST") {
		t.Fatalf("message %q", err)
	}
}

func TestIndicators(t *testing.T) {
	e := newMgmtEnv(t)
	sysUUID := e.bmc.Snapshot("sys-1").UUID
	chassisUUID := e.bmc.ChassisUUID()
	all, err := e.mgmt.GetSupportedIndicators(e.ctx, e.task, "")
	must(t, err)
	if _, ok := all["system"][sysUUID]; !ok {
		t.Fatalf("system LED missing: %v", all)
	}
	if ind, ok := all["chassis"][chassisUUID]; !ok || ind.ReadOnly || !slices.Equal(ind.States, []string{"blinking", "off", "on"}) {
		t.Fatalf("chassis LED: %v", all)
	}
	only, err := e.mgmt.GetSupportedIndicators(e.ctx, e.task, "system")
	must(t, err)
	if len(only) != 1 {
		t.Fatalf("component filter ignored: %v", only)
	}

	must(t, e.mgmt.SetIndicatorState(e.ctx, e.task, "system", sysUUID, "on"))
	if got := e.bmc.Snapshot("sys-1").IndicatorLED; got != "Lit" {
		t.Fatalf("system LED %s", got)
	}
	state, err := e.mgmt.GetIndicatorState(e.ctx, e.task, "system", sysUUID)
	must(t, err)
	if state != "on" {
		t.Fatalf("state %s", state)
	}
	must(t, e.mgmt.SetIndicatorState(e.ctx, e.task, "chassis", chassisUUID, "blinking"))
	if got := e.bmc.ChassisIndicator(); got != "Blinking" {
		t.Fatalf("chassis LED %s", got)
	}
	state, err = e.mgmt.GetIndicatorState(e.ctx, e.task, "chassis", chassisUUID)
	must(t, err)
	if state != "blinking" {
		t.Fatalf("chassis state %s", state)
	}
	_, err = e.mgmt.GetIndicatorState(e.ctx, e.task, "chassis", "nope")
	wantClass(t, err, "MissingParameterValue", "Unknown indicator nope for component chassis of node "+testNode)
	wantClass(t, e.mgmt.SetIndicatorState(e.ctx, e.task, "system", "nope", "off"), "MissingParameterValue", "")
}

func TestDetectVendor(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.Manufacturer("Contoso")).WithBasicAuth(testUser, testPassword).WithVendor("Dell")
	e := newEnv(t, bmc, nil)
	got, err := e.mgmt.DetectVendor(e.ctx, e.task)
	must(t, err)
	if got != "Dell" {
		t.Fatalf("vendor %q", got)
	}
	bmc.WithVendor("")
	got, err = e.mgmt.DetectVendor(e.ctx, e.task)
	must(t, err)
	if got != "Contoso" {
		t.Fatalf("vendor %q, want the manufacturer", got)
	}
}

func TestGetMACAddresses(t *testing.T) {
	e := newMgmtEnv(t,
		redfishbmc.EthernetInterface("nic1", "52:54:00:AA:BB:01", "Enabled"),
		redfishbmc.EthernetInterface("nic2", "52:54:00:aa:bb:02", "Disabled"),
		redfishbmc.EthernetInterface("nic3", "", "Enabled"),
		redfishbmc.EthernetInterface("nic4", "52:54:00:aa:bb:04", "Enabled"))
	got, err := e.mgmt.GetMACAddresses(e.ctx, e.task)
	must(t, err)
	if !slices.Equal(got, []string{"52:54:00:aa:bb:01", "52:54:00:aa:bb:04"}) {
		t.Fatalf("MACs %v", got)
	}
}

func TestBMCClockSteps(t *testing.T) {
	e := newMgmtEnv(t)
	_, err := e.mgmt.StepHandlers()["set_bmc_clock"](e.ctx, e.task, map[string]any{
		"target_datetime": "2030-01-02T03:04:05+00:00", "datetime_local_offset": "+00:00",
	})
	must(t, err)
	if got := e.bmc.ManagerDateTime(); got != "2030-01-02T03:04:05+00:00" {
		t.Fatalf("BMC clock %s", got)
	}
	// Without a target the conductor's clock is used.
	_, err = e.mgmt.StepHandlers()["set_bmc_clock"](e.ctx, e.task, nil)
	must(t, err)
	if got := e.bmc.ManagerDateTime(); got != "2026-03-01T12:00:00+00:00" {
		t.Fatalf("BMC clock %s", got)
	}

	// verify_bmc_clock does nothing unless enabled.
	e.bmc.SetManagerDateTime(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
	_, err = e.mgmt.StepHandlers()["verify_bmc_clock"](e.ctx, e.task, nil)
	must(t, err)
	if got := e.bmc.ManagerDateTime(); !strings.HasPrefix(got, "2001-") {
		t.Fatalf("disabled verify step changed the clock: %s", got)
	}
	e.core.opts.EnableVerifyBMCClock = true
	_, err = e.mgmt.StepHandlers()["verify_bmc_clock"](e.ctx, e.task, nil)
	must(t, err)
	if got := e.bmc.ManagerDateTime(); got != "2026-03-01T12:00:00+00:00" {
		t.Fatalf("verify step left the clock at %s", got)
	}
	e.bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPatch, Path: "/Managers/"}, 1, http.StatusBadRequest, "")
	e.bmc.SetManagerDateTime(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC))
	_, err = e.mgmt.StepHandlers()["verify_bmc_clock"](e.ctx, e.task, nil)
	wantClass(t, err, "NodeVerifyFailure", "")
	if !strings.HasPrefix(err.Error(), "Failed to verify node "+testNode+": BMC clock verify step failed: HTTP PATCH") {
		t.Fatalf("message %q", err)
	}
}

func TestManagementUpdateFirmware(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.PowerState(redfishbmc.On), redfishbmc.BiosVersion("1.0"))
	e.bmc.TaskPolls(1).FirmwareImage(fwBIOSImage, "bios", "2.0").FirmwareImage(fwBMCImage, "bmc", "7.0")
	e.node.ProvisionState = states.Cleaning
	_, err := e.mgmt.StepHandlers()["update_firmware"](e.ctx, e.task, map[string]any{"firmware_images": []any{}})
	wantClass(t, err, "InvalidParameterValue", "")
	_, err = e.mgmt.StepHandlers()["update_firmware"](e.ctx, e.task, map[string]any{"firmware_images": []any{
		map[string]any{"url": fwBIOSImage}}})
	wantClass(t, err, "InvalidParameterValue", "Invalid firmware update [{'url': '"+fwBIOSImage+"'}]. Errors: 'checksum' is a required property")

	next, err := e.mgmt.StepHandlers()["update_firmware"](e.ctx, e.task, map[string]any{"firmware_images": []any{
		map[string]any{"url": fwBIOSImage, "checksum": "abc"}, map[string]any{"url": fwBMCImage, "checksum": "def", "wait": float64(30)}}})
	must(t, err)
	if next != states.CleanWait || !e.mgmt.AsyncStepPending(e.node) || len(e.bmc.Snapshot("sys-1").Resets) == 0 {
		t.Fatalf("next %q, %v", next, e.node.DriverInternalInfo)
	}
	poll := func(want driver.AsyncStepStatus) {
		t.Helper()
		got, err := e.mgmt.PollAsyncStep(e.ctx, e.task)
		must(t, err)
		if got != want {
			t.Fatalf("poll %v, want %v (%v)", got, want, e.node.DriverInternalInfo)
		}
	}
	poll(driver.AsyncStepRunning) // BIOS task done, BMC image sent
	if bios, _ := e.bmc.FirmwareVersions("sys-1"); bios != "2.0" {
		t.Fatalf("bios %s", bios)
	}
	poll(driver.AsyncStepRunning) // BMC task done, waiting 30 s
	if _, bmcV := e.bmc.FirmwareVersions("sys-1"); bmcV != "7.0" {
		t.Fatalf("bmc %s", bmcV)
	}
	poll(driver.AsyncStepRunning)
	must(t, e.clock.Sleep(e.ctx, 30*time.Second))
	poll(driver.AsyncStepDone)
	if e.mgmt.AsyncStepPending(e.node) {
		t.Fatalf("updates left %v", e.node.DriverInternalInfo)
	}
}

func TestGetSensorsData(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.Manufacturer("Contoso"),
		redfishbmc.SimpleStorageDevice("SSD 0", "Fast", 480103981056),
		redfishbmc.SimpleStorageDevice("Backplane", "BP", 0))
	got, err := e.mgmt.GetSensorsData(e.ctx, e.task)
	must(t, err)
	data, err := json.Marshal(got)
	must(t, err)
	var doc map[string]map[string]any
	must(t, json.Unmarshal(data, &doc))
	if doc["Extra"]["Manufacturer"] != "Contoso" {
		t.Fatalf("Extra %v", doc["Extra"])
	}
	fan, _ := doc["Fan"]["Fan1@1U"].(map[string]any)
	if fan["reading"] != 2400.0 || fan["reading_units"] != "RPM" || fan["health"] != "OK" || fan["serial_number"] != nil {
		t.Fatalf("fan %v", doc["Fan"])
	}
	temp, _ := doc["Temperature"]["CPU1@1U"].(map[string]any)
	if temp["reading_celsius"] != 45.0 || temp["sensor_number"] != 5.0 {
		t.Fatalf("temperature %v", doc["Temperature"])
	}
	psu, _ := doc["Power"]["0:Power@1U"].(map[string]any)
	if psu["power_capacity_watts"] != 800.0 || psu["state"] != "Enabled" {
		t.Fatalf("power %v", doc["Power"])
	}
	if len(doc["Drive"]) != 1 {
		t.Fatalf("drives %v, want the backplane left out", doc["Drive"])
	}
	drive, _ := doc["Drive"]["SSD 0:1@sys-1"].(map[string]any)
	if drive["capacity_bytes"] != 480103981056.0 || drive["model"] != "Fast" {
		t.Fatalf("drive %v", doc["Drive"])
	}
}

// Without SimpleStorage the drives come from Storage, one read per
// drive, as upstream's fallback.
func TestGetSensorsDataStorageDrives(t *testing.T) {
	e := newMgmtEnv(t, redfishbmc.StorageDrive(960197124096))
	e.bmc.WithoutSimpleStorage("sys-1")
	got, err := e.mgmt.GetSensorsData(e.ctx, e.task)
	must(t, err)
	drives, _ := got["Drive"].(map[string]any)
	drive, _ := drives["Drive 1:1@sys-1"].(map[string]any)
	if drive["capacity_bytes"] != int64(960197124096) || drive["model"] != "Emulated Disk" || drive["state"] != "Enabled" || drive["health"] != "OK" {
		t.Fatalf("drives %v", drives)
	}
}

func TestVirtualMedia(t *testing.T) {
	e := newMgmtEnv(t)
	must(t, e.mgmt.AttachVirtualMedia(e.ctx, e.task, "cdrom", "http://10.0.0.1/deploy.iso"))
	must(t, e.mgmt.AttachVirtualMedia(e.ctx, e.task, "disk", "http://10.0.0.1/configdrive.img"))
	list, err := e.mgmt.GetVirtualMedia(e.ctx, e.task)
	must(t, err)
	images := map[string]bool{}
	for _, v := range list {
		if img, _ := v["image"].(*string); v["inserted"] == true && img != nil {
			images[*img] = true
		}
	}
	if !images["http://10.0.0.1/deploy.iso"] || !images["http://10.0.0.1/configdrive.img"] {
		t.Fatalf("virtual media %v", list)
	}
	// Re-attaching ejects the stale media first instead of failing.
	must(t, e.mgmt.AttachVirtualMedia(e.ctx, e.task, "cdrom", "http://10.0.0.1/other.iso"))
	must(t, e.mgmt.DetachVirtualMedia(e.ctx, e.task, []string{"cdrom"}))
	list, err = e.mgmt.GetVirtualMedia(e.ctx, e.task)
	must(t, err)
	inserted := 0
	for _, v := range list {
		if v["inserted"] == true {
			inserted++
		}
	}
	if inserted != 1 {
		t.Fatalf("after detaching the CD: %v", list)
	}
	must(t, e.mgmt.DetachVirtualMedia(e.ctx, e.task, nil))
	wantClass(t, e.mgmt.AttachVirtualMedia(e.ctx, e.task, "tape", "http://x"), "InvalidParameterValue", "")
}

func TestVirtualMediaInsertRetriedOnServerError(t *testing.T) {
	e := newMgmtEnv(t)
	e.bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPost, Path: "InsertMedia"}, 1, http.StatusInternalServerError, "")
	must(t, e.mgmt.AttachVirtualMedia(e.ctx, e.task, "cdrom", "http://10.0.0.1/deploy.iso"))
	if !slices.Contains(e.clock.Sleeps(), 3*time.Second) {
		t.Fatalf("no retry wait: %v", e.clock.Sleeps())
	}
	e.bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPost, Path: "InsertMedia"}, 1, http.StatusBadRequest, "")
	err := e.mgmt.AttachVirtualMedia(e.ctx, e.task, "cdrom", "http://10.0.0.1/deploy.iso")
	wantClass(t, err, "InvalidParameterValue", "")
	if !strings.HasPrefix(err.Error(), "Virtual media mount failed for node "+testNode+" with image http://10.0.0.1/deploy.iso. Error: Inserting virtual media into CD failed") {
		t.Fatalf("message %q", err)
	}
}
