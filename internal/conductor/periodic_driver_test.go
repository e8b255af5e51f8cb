package conductor_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/redfish"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/fakeclock"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

const tib = int64(1) << 40

// newRedfishEnv builds a conductor whose fake-hardware nodes can use the
// redfish power, BIOS, RAID and firmware interfaces against the emulator.
// The conductor's own periodic loops are off; the redfish pollers run at
// the intervals tune leaves in the options (0 = only by hand).
func newRedfishEnv(t *testing.T, db *sqldb.DB, conf map[string]string, tune func(*redfish.Options)) *env {
	t.Helper()
	e := newStoreEnv(t, db, testConfig(t, map[string]map[string]string{"conductor": conf}))
	r := stockRegistry(t)
	opts := redfish.DefaultOptions()
	opts.Log = slog.New(slog.DiscardHandler)
	opts.ConnectionAttempts, opts.ServerSideRetries = 1, 0
	opts.RAIDConfigStatusInterval, opts.FirmwareUpdateStatusInterval = 0, 0
	opts.FirmwareUpdateRequiredSuccesses = 1
	opts.Clock = fakeclock.NewWallInstant()
	if tune != nil {
		tune(&opts)
	}
	if err := redfish.Register(r, opts); err != nil {
		t.Fatal(err)
	}
	e.drivers = buildFakeHardware(t, r, map[driver.Kind][]string{
		driver.KindBIOS: {"fake", "redfish", "no-bios"}, driver.KindFirmware: {"fake", "redfish"},
		driver.KindInspect: {"fake"}, driver.KindManagement: {"fake", "redfish"},
		driver.KindPower: {"fake", "redfish"}, driver.KindRAID: {"fake", "redfish"},
	})
	e.run(conductor.Options{})
	return e
}

// redfishAll points every redfish-capable interface of a node at bmc.
func redfishAll(bmc *redfishbmc.BMC) func(*model.Node) {
	return func(n *model.Node) {
		n.DriverInfo = map[string]any{
			"redfish_address": bmc.URL(), "redfish_system_id": redfishbmc.SystemPath("sys-1"),
			"redfish_username": oobUser, "redfish_password": oobPassword,
		}
		n.PowerInterface, n.BIOSInterface, n.RAIDInterface, n.FirmwareInterface = "redfish", "redfish", "redfish", "redfish"
		n.PowerState = states.PowerOn
	}
}

// cleanUntilWait starts a manual cleaning and waits for the node to wait
// on the BMC.
func (e *env) cleanUntilWait(n *model.Node, steps ...map[string]any) *model.Node {
	e.t.Helper()
	if err := e.api.DoNodeClean(context.Background(), "", n.UUID, steps, false); err != nil {
		e.t.Fatal(err)
	}
	return e.waitState(n, states.CleanWait)
}

// pollUntil runs passes of the driver pollers until the node leaves clean
// wait, at most max passes, and returns how many it took.
func (e *env) pollUntil(n *model.Node, max int) int {
	e.t.Helper()
	for i := 1; i <= max; i++ {
		e.c.PollAsyncSteps(context.Background())
		if cur := e.waitUnlocked(n); cur.ProvisionState != states.CleanWait {
			return i
		}
	}
	cur := e.get(n)
	e.t.Fatalf("node still in %s after %d polls (driver_internal_info %v)", cur.ProvisionState, max, cur.DriverInternalInfo)
	return 0
}

func TestRedfishBIOSApplyConfigurationResumesAfterReboot(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On),
			redfishbmc.Bios(map[string]any{"BootMode": "Uefi", "ProcTurboMode": "Enabled"}),
		).WithBasicAuth(oobUser, oobPassword)
		e := newRedfishEnv(t, db, nil, nil)
		n := e.node(states.Manageable, redfishAll(bmc))
		n = e.cleanUntilWait(n, map[string]any{"interface": "bios", "step": "apply_configuration",
			"args": map[string]any{"settings": []any{map[string]any{"name": "ProcTurboMode", "value": "Disabled"}}}})
		state, _ := n.DriverInternalInfo["redfish_bios_state"].(map[string]any)
		if state["reboot_requested"] != true || n.DriverInternalInfo["skip_current_clean_step"] != false {
			t.Fatalf("driver_internal_info after the apply: %v", n.DriverInternalInfo)
		}
		if got := bmc.BiosOf("sys-1").Attributes["ProcTurboMode"]; got != "Disabled" {
			t.Fatalf("the reboot did not apply the setting: %v", got)
		}
		if polls := e.pollUntil(n, 1); polls != 1 {
			t.Fatalf("polls %d", polls)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if got.DriverInternalInfo["redfish_bios_state"] != nil || got.DriverInternalInfo["cleaning_reboot"] != nil {
			t.Fatalf("BIOS step state left behind: %v", got.DriverInternalInfo)
		}
		if v := biosValues(biosRows(t, e, got)); v["ProcTurboMode"] != "Disabled" {
			t.Fatalf("cached settings after the step: %v", v)
		}
	})
}

func TestRedfishBIOSSettingNotTakenKeepsWaiting(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On),
			redfishbmc.Bios(map[string]any{"ProcTurboMode": "Enabled"}), redfishbmc.BiosIgnores("ProcTurboMode"),
		).WithBasicAuth(oobUser, oobPassword)
		e := newRedfishEnv(t, db, nil, nil)
		n := e.node(states.Manageable, redfishAll(bmc))
		n = e.cleanUntilWait(n, map[string]any{"interface": "bios", "step": "apply_configuration",
			"args": map[string]any{"settings": []any{map[string]any{"name": "ProcTurboMode", "value": "Disabled"}}}})
		// The BIOS never takes the setting: the periodic keeps waiting (the
		// clean wait timeout is what ends it), it does not resume early.
		for i := 0; i < 3; i++ {
			e.c.PollAsyncSteps(context.Background())
		}
		if got := e.waitUnlocked(n); got.ProvisionState != states.CleanWait {
			t.Fatalf("resumed although the setting is not applied: %s", got.ProvisionState)
		}
	})
}

func raidNode(bmc *redfishbmc.BMC) func(*model.Node) {
	return func(n *model.Node) {
		redfishAll(bmc)(n)
		n.TargetRAIDConfig = map[string]any{"logical_disks": []any{
			map[string]any{"raid_level": "1", "size_gb": float64(100), "is_root_volume": true, "physical_disks": []any{"d1", "d2"}},
			map[string]any{"raid_level": "0", "size_gb": float64(200), "physical_disks": []any{"d3", "d4"}},
		}}
	}
}

func raidBMC(t *testing.T) *redfishbmc.BMC {
	return redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On), redfishbmc.RAIDController(
		redfishbmc.RAIDDrive{ID: "d1", CapacityBytes: tib, MediaType: "HDD", Protocol: "SAS"},
		redfishbmc.RAIDDrive{ID: "d2", CapacityBytes: tib, MediaType: "HDD", Protocol: "SAS"},
		redfishbmc.RAIDDrive{ID: "d3", CapacityBytes: tib, MediaType: "SSD", Protocol: "SATA"},
		redfishbmc.RAIDDrive{ID: "d4", CapacityBytes: tib, MediaType: "SSD", Protocol: "SATA"},
	)).WithBasicAuth(oobUser, oobPassword).WithAsyncRAID().TaskPolls(2)
}

func TestRedfishRAIDCreateAndDeleteThroughTaskMonitors(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := raidBMC(t)
		e := newRedfishEnv(t, db, nil, nil)
		n := e.node(states.Manageable, raidNode(bmc))
		resets := len(bmc.Snapshot("sys-1").Resets)
		n = e.cleanUntilWait(n, map[string]any{"interface": "raid", "step": "create_configuration"})
		cfg, _ := n.DriverInternalInfo["raid_configs"].(map[string]any)
		monitors, _ := cfg["task_monitor_uri"].([]any)
		pending, _ := cfg["pending"].(map[string]any)
		if cfg["operation"] != "create" || len(monitors) != 1 || len(pending["1"].([]any)) != 1 {
			t.Fatalf("raid_configs %v", cfg)
		}
		if n.DriverInternalInfo["cleaning_polling"] != true || n.DriverInternalInfo["cleaning_reboot"] != true {
			t.Fatalf("async flags %v", n.DriverInternalInfo)
		}
		if len(bmc.RAIDVolumesOf("sys-1")) != 0 || len(bmc.Snapshot("sys-1").Resets) == resets {
			t.Fatalf("volume created before its task ran, or no reboot to run it")
		}
		// Two polls per task: the first volume's, then the held-back one's.
		if polls := e.pollUntil(n, 6); polls != 4 {
			t.Fatalf("cleaning ended after %d polls, want 4", polls)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		vols := bmc.RAIDVolumesOf("sys-1")
		if len(vols) != 2 || vols[0].RAIDType != "RAID1" || vols[1].RAIDType != "RAID0" {
			t.Fatalf("volumes %+v", vols)
		}
		if lds, _ := got.RAIDConfig["logical_disks"].([]any); len(lds) != 2 {
			t.Fatalf("raid_config %v", got.RAIDConfig)
		}
		if got.DriverInternalInfo["raid_configs"] != nil {
			t.Fatalf("raid_configs left behind: %v", got.DriverInternalInfo)
		}
		if tasks := bmc.Tasks(); len(tasks) != 2 || tasks[1].State != "Completed" {
			t.Fatalf("tasks %+v", tasks)
		}

		n = e.cleanUntilWait(got, map[string]any{"interface": "raid", "step": "delete_configuration"})
		if cfg, _ := n.DriverInternalInfo["raid_configs"].(map[string]any); cfg["operation"] != "delete" {
			t.Fatalf("raid_configs %v", n.DriverInternalInfo)
		}
		e.pollUntil(n, 3)
		got = e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if vols := bmc.RAIDVolumesOf("sys-1"); len(vols) != 0 {
			t.Fatalf("volumes left %+v", vols)
		}
		if lds, _ := got.RAIDConfig["logical_disks"].([]any); len(lds) != 0 {
			t.Fatalf("raid_config %v", got.RAIDConfig)
		}
	})
}

func TestRedfishRAIDPeriodicLoopResumesCleaning(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := raidBMC(t)
		e := newRedfishEnv(t, db, nil, func(o *redfish.Options) { o.RAIDConfigStatusInterval = 20 * time.Millisecond })
		n := e.node(states.Manageable, raidNode(bmc))
		if err := e.api.DoNodeClean(context.Background(), "", n.UUID,
			[]map[string]any{{"interface": "raid", "step": "create_configuration"}}, false); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if len(bmc.RAIDVolumesOf("sys-1")) != 2 {
			t.Fatalf("volumes %+v", bmc.RAIDVolumesOf("sys-1"))
		}
	})
}

// firmwareComponents are the node's firmware_information rows by name.
func firmwareComponents(t *testing.T, e *env, n *model.Node) map[string]*model.FirmwareComponent {
	t.Helper()
	rows, err := e.st.ListFirmwareComponents(context.Background(), n.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*model.FirmwareComponent{}
	for _, r := range rows {
		out[r.Component] = r
	}
	return out
}

const (
	biosImage = "http://127.0.0.1:9/firmware/bios-2.0.bin"
	bmcImage  = "http://127.0.0.1:9/firmware/bmc-5.1.bin"
)

func firmwareBMC(t *testing.T) *redfishbmc.BMC {
	return redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On), redfishbmc.BiosVersion("1.0")).
		WithBasicAuth(oobUser, oobPassword).WithBMCFirmwareVersion("5.0").TaskPolls(2).
		FirmwareImage(biosImage, "bios", "2.0").FirmwareImage(bmcImage, "bmc", "5.1")
}

func TestRedfishFirmwareUpdateCleanStep(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := firmwareBMC(t)
		// A zero reboot delay lets the BMC update be checked at once.
		e := newRedfishEnv(t, db, nil, func(o *redfish.Options) { o.FirmwareUpdateRebootDelay = 0 })
		n := e.node(states.Manageable, redfishAll(bmc))
		old := "1.0"
		if _, err := e.st.CreateFirmwareComponent(context.Background(), &model.FirmwareComponent{
			NodeID: n.ID, Component: "bios", InitialVersion: old, CurrentVersion: &old}); err != nil {
			t.Fatal(err)
		}
		n = e.cleanUntilWait(n, map[string]any{"interface": "firmware", "step": "update", "args": map[string]any{
			"settings": []any{map[string]any{"component": "bmc", "url": bmcImage}, map[string]any{"component": "bios", "url": biosImage}}}})
		updates, _ := n.DriverInternalInfo["redfish_fw_updates"].([]any)
		if len(updates) != 2 || updates[0].(map[string]any)["task_monitor"] == nil ||
			n.DriverInternalInfo["bmc_fw_version_before_update"] != "5.0" || n.DriverInternalInfo["cleaning_polling"] != true {
			t.Fatalf("driver_internal_info after SimpleUpdate: %v", n.DriverInternalInfo)
		}
		if bmc.Count(http.MethodPost, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate") != 1 {
			t.Fatal("the first image was not sent to SimpleUpdate")
		}
		// BMC task (2 polls), reboot, next image, BIOS task (2 polls).
		if polls := e.pollUntil(n, 10); polls < 4 {
			t.Fatalf("cleaning ended after %d polls", polls)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if bios, bmcV := bmc.FirmwareVersions("sys-1"); bios != "2.0" || bmcV != "5.1" {
			t.Fatalf("firmware on the BMC: bios %q bmc %q", bios, bmcV)
		}
		for _, k := range []string{"redfish_fw_updates", "redfish_fw_update_start_time", "bmc_fw_version_before_update"} {
			if _, ok := got.DriverInternalInfo[k]; ok {
				t.Errorf("%s left in driver_internal_info", k)
			}
		}
		comps := firmwareComponents(t, e, got)
		if b := comps["bios"]; b == nil || deref(b.CurrentVersion) != "2.0" || deref(b.LastVersionFlashed) != "2.0" || b.InitialVersion != "1.0" {
			t.Fatalf("bios component %+v", b)
		}
		// Cleaning cached the BMC's version when it started, and again at
		// its end.
		if m := comps["bmc"]; m == nil || deref(m.CurrentVersion) != "5.1" || m.InitialVersion != "5.0" ||
			deref(m.LastVersionFlashed) != "5.1" {
			t.Fatalf("bmc component %+v", m)
		}
	})
}

func TestRedfishFirmwareTaskFailureFailsCleaning(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := firmwareBMC(t)
		e := newRedfishEnv(t, db, nil, nil)
		n := e.node(states.Manageable, redfishAll(bmc))
		bmc.FailNextTask("Image signature verification failed")
		n = e.cleanUntilWait(n, map[string]any{"interface": "firmware", "step": "update", "args": map[string]any{
			"settings": []any{map[string]any{"component": "bios", "url": biosImage}}}})
		e.pollUntil(n, 3)
		got := e.waitState(n, states.CleanFail)
		want := "Firmware update failed for node " + n.UUID + ", firmware " + biosImage + ". Error: Image signature verification failed"
		e.expect(got, states.CleanFail, states.Manageable, want)
		if !got.Maintenance || deref(got.Fault) != "clean failure" {
			t.Fatalf("maintenance %v fault %q", got.Maintenance, deref(got.Fault))
		}
		if _, ok := got.DriverInternalInfo["redfish_fw_updates"]; ok {
			t.Fatalf("failed updates left for the next cleaning: %v", got.DriverInternalInfo)
		}
		if bios, _ := bmc.FirmwareVersions("sys-1"); bios != "1.0" {
			t.Fatalf("bios version %q after a failed update", bios)
		}
	})
}

func TestRedfishFirmwareInvalidSettingsFailStep(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := firmwareBMC(t)
		e := newRedfishEnv(t, db, nil, nil)
		n := e.node(states.Manageable, redfishAll(bmc))
		if err := e.api.DoNodeClean(context.Background(), "", n.UUID, []map[string]any{{"interface": "firmware", "step": "update",
			"args": map[string]any{"settings": []any{map[string]any{"component": "disk", "url": biosImage}}}}}, false); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.CleanFail)
		if !strings.Contains(deref(got.LastError), "Invalid firmware update") || bmc.Count(http.MethodPost,
			"/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate") != 0 {
			t.Fatalf("last_error %q", deref(got.LastError))
		}
	})
}

// Seed 001 scenario 4 (power state drift) against the redfish emulator:
// a drift is forced back with force_power_state_during_sync, recorded
// without it; a BMC that keeps failing puts the node in maintenance with
// fault "power failure" and the recovery periodic takes it out.
func TestRedfishPowerSyncForcesDriftBack(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.Off)).WithBasicAuth(oobUser, oobPassword)
		e := newRedfishEnv(t, db, map[string]string{"force_power_state_during_sync": "true"}, nil)
		n := e.node(states.Available, redfishAll(bmc))
		e.c.SyncPowerStates(context.Background())
		if got := bmc.Snapshot("sys-1").PowerState; got != redfishbmc.On {
			t.Fatalf("BMC power %q, want forced back on", got)
		}
		if got := e.get(n); got.PowerState != states.PowerOn || got.Maintenance {
			t.Fatalf("node power %q maintenance %v", got.PowerState, got.Maintenance)
		}
	})
}

func TestRedfishPowerSyncRecordsDrift(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.Off)).WithBasicAuth(oobUser, oobPassword)
		e := newRedfishEnv(t, db, map[string]string{"force_power_state_during_sync": "false"}, nil)
		n := e.node(states.Available, redfishAll(bmc))
		e.c.SyncPowerStates(context.Background())
		if got := bmc.Snapshot("sys-1").PowerState; got != redfishbmc.Off {
			t.Fatalf("BMC power changed to %q without force", got)
		}
		if got := e.get(n); got.PowerState != states.PowerOff {
			t.Fatalf("node power %q, want the observed power off", got.PowerState)
		}
	})
}

func TestRedfishPowerSyncFailuresMaintenanceAndRecovery(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On)).WithBasicAuth(oobUser, oobPassword)
		e := newRedfishEnv(t, db, nil, nil)
		ctx := context.Background()
		n := e.node(states.Available, redfishAll(bmc))
		bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodGet, Path: "/Systems/sys-1"}, 1000, http.StatusInternalServerError, "")
		retries := e.cfg.Int("conductor", "power_state_sync_max_retries")
		for i := 0; i < retries; i++ {
			e.c.SyncPowerStates(ctx)
			if got := e.get(n); got.Maintenance {
				t.Fatalf("maintenance after %d failures", i+1)
			}
		}
		e.c.SyncPowerStates(ctx)
		got := e.get(n)
		if !got.Maintenance || deref(got.Fault) != "power failure" ||
			!strings.HasPrefix(deref(got.MaintenanceReason), "During sync_power_state, max retries exceeded for node "+n.UUID) {
			t.Fatalf("after %d failures: maintenance %v fault %q reason %q", retries+1, got.Maintenance, deref(got.Fault), deref(got.MaintenanceReason))
		}
		// Recovery leaves it alone while the BMC still fails...
		e.c.PowerFailureRecovery(ctx)
		if got := e.get(n); !got.Maintenance {
			t.Fatal("recovered while the BMC still fails")
		}
		// ...and takes it out once the BMC answers.
		bmc.ClearFaults()
		e.c.PowerFailureRecovery(ctx)
		got = e.get(n)
		if got.Maintenance || got.Fault != nil || got.MaintenanceReason != nil || got.PowerState != states.PowerOn {
			t.Fatalf("after recovery: maintenance %v fault %v power %q", got.Maintenance, deref(got.Fault), got.PowerState)
		}
	})
}

func TestRedfishFailedStepsDiscarded(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := raidBMC(t)
		e := newRedfishEnv(t, db, nil, nil)
		leftovers := func(maintenance bool) func(*model.Node) {
			return func(n *model.Node) {
				raidNode(bmc)(n)
				n.Maintenance = maintenance
				n.DriverInternalInfo = map[string]any{
					"raid_configs":       map[string]any{"operation": "create", "pending": map[string]any{}, "task_monitor_uri": []any{"/gone"}},
					"redfish_fw_updates": []any{map[string]any{"component": "bios", "url": biosImage, "task_monitor": "/gone"}},
					"firmware_updates":   []any{map[string]any{"url": biosImage, "checksum": "x", "task_monitor": "/gone"}},
				}
				n.ManagementInterface = "redfish"
			}
		}
		failed := e.node(states.CleanFail, leftovers(true))
		operating := e.node(states.CleanFail, leftovers(false))
		e.c.DiscardFailedAsyncSteps(context.Background())
		got := e.get(failed)
		for _, k := range []string{"raid_configs", "redfish_fw_updates", "firmware_updates"} {
			if _, ok := got.DriverInternalInfo[k]; ok {
				t.Errorf("%s kept on a failed node in maintenance: %v", k, got.DriverInternalInfo)
			}
		}
		if lds, ok := got.RAIDConfig["logical_disks"].([]any); !ok || len(lds) != 0 {
			t.Errorf("raid_config not read back: %v", got.RAIDConfig)
		}
		if got := e.get(operating); len(got.DriverInternalInfo) != 3 {
			t.Errorf("a node out of maintenance lost its jobs: %v", got.DriverInternalInfo)
		}
	})
}

func TestRedfishFirmwareUpdateServiceStep(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := firmwareBMC(t)
		e := newRedfishEnv(t, db, nil, nil)
		n := e.node(states.Active, redfishAll(bmc))
		if err := e.api.DoNodeService(context.Background(), "", n.UUID, []map[string]any{{"interface": "firmware", "step": "update",
			"args": map[string]any{"settings": []any{map[string]any{"component": "bios", "url": biosImage}}}}}, false); err != nil {
			t.Fatal(err)
		}
		n = e.waitState(n, states.ServiceWait)
		if n.DriverInternalInfo["servicing_polling"] != true {
			t.Fatalf("flags %v", n.DriverInternalInfo)
		}
		for i := 0; i < 5 && e.waitUnlocked(n).ProvisionState == states.ServiceWait; i++ {
			e.c.PollAsyncSteps(context.Background())
		}
		got := e.waitState(n, states.Active)
		e.expect(got, states.Active, "", "")
		if bios, _ := bmc.FirmwareVersions("sys-1"); bios != "2.0" {
			t.Fatalf("bios %s", bios)
		}
		if c := firmwareComponents(t, e, got)["bios"]; c == nil || deref(c.CurrentVersion) != "2.0" {
			t.Fatalf("bios component %+v", c)
		}
	})
}

func TestRedfishNICFirmwareRebootsToStart(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		const nicImage = "http://127.0.0.1:9/firmware/nic-22.1.bin"
		bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On), redfishbmc.BiosVersion("1.0")).
			WithBasicAuth(oobUser, oobPassword).TaskPolls(1).TasksStartOnReset().
			WithNetworkAdapter(redfishbmc.NetworkAdapter{ID: "NIC.Slot.1", SerialNumber: "SN123", Manufacturer: "Contoso",
				Model: "X710", FirmwarePackageVersion: "21.5"}).
			FirmwareImage(nicImage, "nic:SN123", "22.1")
		e := newRedfishEnv(t, db, nil, func(o *redfish.Options) { o.FirmwareUpdateNICStartingWait = 0 })
		n := e.node(states.Manageable, redfishAll(bmc))
		resets := len(bmc.Snapshot("sys-1").Resets)
		n = e.cleanUntilWait(n, map[string]any{"interface": "firmware", "step": "update", "args": map[string]any{
			"settings": []any{map[string]any{"component": "nic:SN123", "url": nicImage}}}})
		if got := len(bmc.Snapshot("sys-1").Resets); got != resets || n.DriverInternalInfo["cleaning_reboot"] != false {
			t.Fatalf("a NIC update rebooted before its task was seen starting (%d resets, %v)", got, n.DriverInternalInfo)
		}
		// Starting seen, then still Starting after the wait: reboot; the
		// task then runs and completes.
		e.pollUntil(n, 5)
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if v := bmc.NetworkAdapterFirmware("NIC.Slot.1"); v != "22.1" {
			t.Fatalf("NIC firmware %q", v)
		}
		if len(bmc.Snapshot("sys-1").Resets) <= resets {
			t.Fatal("the NIC update never rebooted the node to start")
		}
		c := firmwareComponents(t, e, got)["nic:SN123"]
		if c == nil || deref(c.CurrentVersion) != "22.1" || c.InitialVersion != "21.5" || deref(c.Vendor) != "Contoso" ||
			deref(c.Model) != "X710" || deref(c.SerialNumber) != "SN123" {
			t.Fatalf("NIC component %+v", c)
		}
	})
}

func TestRedfishRAIDDeployStepThroughTaskMonitors(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := raidBMC(t)
		e := newRedfishEnv(t, db, nil, nil)
		ctx := context.Background()
		n := e.node(states.Available, raidNode(bmc))
		steps := []map[string]any{{"interface": "raid", "step": "delete_configuration", "args": map[string]any{}, "priority": 95},
			{"interface": "raid", "step": "apply_configuration", "priority": 90, "args": map[string]any{
				"raid_config": map[string]any{"logical_disks": []any{
					map[string]any{"raid_level": "1", "size_gb": float64(100), "is_root_volume": true}}}}}}
		if err := e.api.DoNodeDeploy(ctx, "", n.UUID, false, nil, steps); err != nil {
			t.Fatal(err)
		}
		// Nothing to delete: done at once; the creation waits on its task.
		n = e.waitState(n, states.DeployWait)
		if cfg, _ := n.DriverInternalInfo["raid_configs"].(map[string]any); cfg["operation"] != "create" ||
			n.DriverInternalInfo["deployment_polling"] != true {
			t.Fatalf("driver_internal_info %v", n.DriverInternalInfo)
		}
		for i := 0; i < 5 && e.waitUnlocked(n).ProvisionState == states.DeployWait; i++ {
			e.c.PollAsyncSteps(ctx)
		}
		got := e.waitState(n, states.Active)
		e.expect(got, states.Active, "", "")
		if vols := bmc.RAIDVolumesOf("sys-1"); len(vols) != 1 || vols[0].RAIDType != "RAID1" {
			t.Fatalf("volumes %+v", vols)
		}
		if lds, _ := got.RAIDConfig["logical_disks"].([]any); len(lds) != 1 {
			t.Fatalf("raid_config %v", got.RAIDConfig)
		}
	})
}
