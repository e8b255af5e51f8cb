package redfish

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

const (
	fwBIOSImage = "http://127.0.0.1:9/fw/bios.bin"
	fwBMCImage  = "http://127.0.0.1:9/fw/bmc.bin"
)

func newFirmwareEnv(t *testing.T, bmc *redfishbmc.BMC, tune func(*Options)) (*env, *Firmware) {
	t.Helper()
	e := newEnv(t, bmc.WithBasicAuth(testUser, testPassword), func(o *Options) {
		o.FirmwareUpdateRequiredSuccesses = 1
		if tune != nil {
			tune(o)
		}
	})
	e.node.DriverInfo["redfish_system_id"] = redfishbmc.SystemPath("sys-1")
	e.node.ProvisionState = states.Cleaning
	return e, &Firmware{core: e.core}
}

func TestFirmwareSettingsValidation(t *testing.T) {
	e, f := newFirmwareEnv(t, redfishbmc.New(t).System("sys-1"), nil)
	for _, tc := range []struct {
		settings []map[string]any
		want     string
	}{
		{nil, "[] should be non-empty"},
		{[]map[string]any{{"component": "disk", "url": fwBIOSImage}}, "'disk' is not valid under any of the given schemas"},
		{[]map[string]any{{"component": "bios"}}, "'url' is a required property"},
		{[]map[string]any{{"component": "bios", "url": ""}}, "'' is too short"},
		{[]map[string]any{{"component": "bmc", "url": fwBMCImage, "wait": float64(0)}}, "0 is less than the minimum of 1"},
		{[]map[string]any{{"component": "nic:abc", "url": fwBMCImage, "checksum": "x"}}, "Additional properties are not allowed ('checksum' was unexpected)"},
	} {
		_, err := f.Update(e.ctx, e.task, tc.settings)
		wantClass(t, err, "InvalidParameterValue", "")
		if !strings.HasPrefix(err.Error(), "Invalid firmware update ") || !strings.HasSuffix(err.Error(), "Errors: "+tc.want) {
			t.Errorf("settings %v: %q", tc.settings, err)
		}
	}
	if e.bmc.Count(http.MethodPost, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate") != 0 {
		t.Fatal("invalid settings reached the BMC")
	}
}

func TestFirmwareBMCUpdateWithoutVersionChangeNeedsNoReboot(t *testing.T) {
	// The image carries the version already running: a no-op update.
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On)).WithBMCFirmwareVersion("5.0").
		TaskPolls(2).FirmwareImage(fwBMCImage, "bmc", "5.0")
	e, f := newFirmwareEnv(t, bmc, nil)
	next, err := f.Update(e.ctx, e.task, []map[string]any{{"component": "bmc", "url": fwBMCImage}})
	must(t, err)
	dii := e.node.DriverInternalInfo
	if next != states.CleanWait || dii["bmc_fw_version_before_update"] != "5.0" || dii["cleaning_reboot"] != false ||
		dii["cleaning_polling"] != true {
		t.Fatalf("next %q, driver_internal_info %v", next, dii)
	}
	upd := fwUpdates(e.node)[0]
	if upd["wait"] != 300 || upd["component_type"] != "bmc" || upd["task_monitor"] == nil {
		t.Fatalf("update %v", upd)
	}
	poll := func() driver.AsyncStepStatus {
		t.Helper()
		status, err := f.PollAsyncStep(e.ctx, e.task)
		must(t, err)
		return status
	}
	if poll() != driver.AsyncStepRunning || len(e.bmc.Tasks()) != 1 || e.bmc.Tasks()[0].State != "New" {
		t.Fatal("the task monitor was read before the reboot delay passed")
	}
	must(t, e.clock.Sleep(e.ctx, 300*time.Second))
	if poll() != driver.AsyncStepRunning {
		t.Fatal("done while the task still runs")
	}
	if poll() != driver.AsyncStepDone {
		t.Fatalf("not done after the task completed: %v", e.node.DriverInternalInfo)
	}
	if resets := e.bmc.Snapshot("sys-1").Resets; len(resets) != 0 {
		t.Fatalf("a no-op BMC update rebooted the node: %v", resets)
	}
	if f.AsyncStepPending(e.node) || e.node.DriverInternalInfo["redfish_fw_update_start_time"] != nil {
		t.Fatalf("update state left behind: %v", e.node.DriverInternalInfo)
	}
}

func TestFirmwareOverallTimeout(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.BiosVersion("1.0")).TaskPolls(100).FirmwareImage(fwBIOSImage, "bios", "2.0")
	e, f := newFirmwareEnv(t, bmc, nil)
	_, err := f.Update(e.ctx, e.task, []map[string]any{{"component": "bios", "url": fwBIOSImage}})
	must(t, err)
	must(t, e.clock.Sleep(e.ctx, 7200*time.Second))
	_, err = f.PollAsyncStep(e.ctx, e.task)
	want := "Firmware update on node " + testNode + " has exceeded the overall timeout of 7200 seconds. Elapsed time: 7200 seconds."
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if f.AsyncStepPending(e.node) {
		t.Fatal("timed-out updates are still pending")
	}
}

func TestFirmwareComponents(t *testing.T) {
	bmc := redfishbmc.New(t).System("sys-1", redfishbmc.BiosVersion("U46 v2.1")).WithBMCFirmwareVersion("iLO 5 v2.72")
	e, f := newFirmwareEnv(t, bmc, nil)
	comps, err := f.FirmwareComponents(e.ctx, e.task)
	must(t, err)
	if len(comps) != 2 || comps[0].Component != "bios" || *comps[0].CurrentVersion != "U46 v2.1" ||
		comps[1].Component != "bmc" || *comps[1].CurrentVersion != "iLO 5 v2.72" {
		t.Fatalf("components %+v", comps)
	}

	e2, f2 := newFirmwareEnv(t, redfishbmc.New(t).System("sys-1"), nil)
	_, err = f2.FirmwareComponents(e2.ctx, e2.task)
	wantClass(t, err, "UnsupportedDriverExtension", "Cannot retrieve firmware for node "+testNode+": no supported components")
}

func TestRAIDFailedTaskOnlyLogged(t *testing.T) {
	// Upstream logs a failed RAID task and ends the step: the raid_config
	// read back shows what the BMC did (here: nothing).
	e, r := newRAIDEnv(t)
	e.bmc.WithAsyncRAID().TaskPolls(1).FailNextTask("Controller busy")
	e.node.TargetRAIDConfig = map[string]any{"logical_disks": []any{
		map[string]any{"raid_level": "1", "size_gb": float64(100), "is_root_volume": true, "physical_disks": []any{"d1", "d2"}},
	}}
	next, err := r.CreateConfiguration(e.ctx, e.task, true, true, false)
	must(t, err)
	if next != states.CleanWait || !r.AsyncStepPending(e.node) {
		t.Fatalf("next %q, %v", next, e.node.DriverInternalInfo)
	}
	status, err := r.PollAsyncStep(e.ctx, e.task)
	must(t, err)
	if status != driver.AsyncStepDone || r.AsyncStepPending(e.node) {
		t.Fatalf("status %v, %v", status, e.node.DriverInternalInfo)
	}
	if lds, _ := e.node.RAIDConfig["logical_disks"].([]any); len(lds) != 0 || len(e.bmc.RAIDVolumesOf("sys-1")) != 0 {
		t.Fatalf("raid_config %v", e.node.RAIDConfig)
	}
	if !strings.Contains(e.logs.String(), "Controller busy") {
		t.Fatal("the BMC's message was not logged")
	}
}
