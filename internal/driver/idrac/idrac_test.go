package idrac

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/redfish"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/fakeclock"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

const (
	user     = "root"
	password = "calvin-S3cret"
	sysID    = "System.Embedded.1"
)

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fixture is an emulated iDRAC with the idrac interfaces pointed at it,
// every wait instant.
type fixture struct {
	bmc  *redfishbmc.BMC
	mgmt *Management
	raid *RAID
	d    *dell
	task *driver.Task
	ctx  context.Context
}

func newFixture(t *testing.T, bmc *redfishbmc.BMC) *fixture {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ro := redfish.DefaultOptions()
	ro.Clock, ro.Log = fakeclock.NewWallInstant(), log
	bo := redfish.DefaultBootOptions()
	// The BMC reads the deploy ISO from its URL.
	bo.DownloadSource = "http"
	r := driver.NewRegistry()
	if err := Register(r, ro, bo, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	impl := func(k driver.Kind, name string) driver.Interface {
		i, ok := r.Implementation(k, name)
		if !ok {
			t.Fatalf("%s/%s not registered", k, name)
		}
		return i
	}
	f := &fixture{bmc: bmc, ctx: context.Background(),
		mgmt: impl(driver.KindManagement, "idrac-redfish").(*Management),
		raid: impl(driver.KindRAID, "idrac-redfish").(*RAID)}
	f.d = f.mgmt.dell
	n := &model.Node{UUID: "0d5c3a8e-55d1-4c62-9f0e-5b1f3f7c2a10", Driver: "idrac", ProvisionState: states.Cleaning,
		DriverInfo: map[string]any{"redfish_address": bmc.URL(), "redfish_system_id": redfishbmc.SystemPath(sysID),
			"redfish_username": user, "redfish_password": password},
		DriverInternalInfo: map[string]any{}, Properties: map[string]any{}}
	f.task = &driver.Task{Node: n, Log: log, Driver: &driver.Interfaces{HardwareType: "idrac",
		Power: impl(driver.KindPower, "idrac-redfish").(driver.PowerInterface), Management: f.mgmt}}
	t.Cleanup(func() {
		if strings.Contains(logs.String(), password) {
			t.Errorf("the BMC password is in the log")
		}
	})
	return f
}

func idracBMC(t *testing.T, opts ...redfishbmc.SystemOption) *redfishbmc.BMC {
	return redfishbmc.New(t).WithDellOEM().WithSessions().WithBasicAuth(user, password).System(sysID, opts...)
}

func (f *fixture) step(t *testing.T, iface driver.StepRunner, name string, args map[string]any) string {
	t.Helper()
	state, err := iface.StepHandlers()[name](f.ctx, f.task, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return state
}

// The job queue is cleared through DellJobService, the iDRAC reset waits
// for the iDRAC to go away, come back and report its Lifecycle Controller
// ready, and known_good_state does both.
func TestJobQueueAndReset(t *testing.T) {
	bmc := idracBMC(t, redfishbmc.PowerState(redfishbmc.On))
	f := newFixture(t, bmc)
	bmc.DellQueueJob("Configure: BIOS.Setup.1-1")
	f.step(t, f.mgmt, "clear_job_queue", nil)
	if jobs := bmc.DellJobs(); len(jobs) != 0 {
		t.Fatalf("jobs after clear_job_queue: %+v", jobs)
	}
	f.step(t, f.mgmt, "reset_idrac", nil)
	if n := bmc.DellResets(); n != 1 {
		t.Fatalf("%d resets", n)
	}
	bmc.DellQueueJob("Configure: BIOS.Setup.1-1")
	f.step(t, f.mgmt, "known_good_state", nil)
	if n, jobs := bmc.DellResets(), bmc.DellJobs(); n != 2 || len(jobs) != 0 {
		t.Fatalf("after known_good_state: %d resets, jobs %+v", n, jobs)
	}
}

// A BMC without the Dell OEM fails the steps with upstream's message while
// cleaning; while verifying the failure is only logged.
func TestStepsWithoutDellOEM(t *testing.T) {
	bmc := redfishbmc.New(t).WithBasicAuth(user, password).System(sysID)
	f := newFixture(t, bmc)
	_, err := f.mgmt.StepHandlers()["clear_job_queue"](f.ctx, f.task, nil)
	if !errs.Is(err, errs.ClassRedfishError) || !strings.Contains(err.Error(), "Search for Sushy OEM extension in 'sushy' package failed") {
		t.Fatalf("error %v", err)
	}
	f.task.Node.ProvisionState = states.Verifying
	for _, step := range []string{"clear_job_queue", "reset_idrac", "known_good_state"} {
		if _, err := f.mgmt.StepHandlers()[step](f.ctx, f.task, nil); err != nil {
			t.Fatalf("%s while verifying: %v", step, err)
		}
	}
}

// The boot from the virtual CD is a configuration import whose job sets
// a one-time boot from the CD; a refusal for a pending configuration
// power cycles the system once, one for a running job is retried.
func TestVirtualBootDeviceByImport(t *testing.T) {
	for _, tc := range []struct {
		name, fault string
		cycles      int
	}{
		{name: "accepted"},
		{name: "configuration pending", fault: "LC068", cycles: 1},
		{name: "job running", fault: "RAC0679"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bmc := idracBMC(t, redfishbmc.PowerState(redfishbmc.On))
			f := newFixture(t, bmc)
			if tc.fault != "" {
				bmc.DellFailNextImport(tc.fault)
			}
			resets := len(bmc.Snapshot(sysID).Resets)
			err := f.d.set.WithSession(f.ctx, f.task, func(s *redfish.Session) error {
				return f.d.setVirtualBootDevice(f.ctx, f.task, s, "cdrom", false)
			})
			if err != nil {
				t.Fatal(err)
			}
			s := bmc.Snapshot(sysID)
			if s.BootTarget != "Cd" || s.BootEnabled != "Once" {
				t.Fatalf("boot %s %s", s.BootTarget, s.BootEnabled)
			}
			if got := len(s.Resets) - resets; got != tc.cycles*2 {
				t.Fatalf("%d resets (%v), want a power cycle %d times", got, s.Resets, tc.cycles)
			}
			if jobs := bmc.DellJobs(); len(jobs) != 1 || jobs[0].JobState != "Completed" {
				t.Fatalf("jobs %+v", jobs)
			}
		})
	}
}

// An iDRAC that keeps showing ejected media for a while and refuses
// inserts meanwhile gets the image after the eject and retries.
func TestVirtualMediaInsertAfterSlowEject(t *testing.T) {
	bmc := idracBMC(t, redfishbmc.PowerState(redfishbmc.On))
	f := newFixture(t, bmc)
	if err := f.mgmt.AttachVirtualMedia(f.ctx, f.task, "cdrom", "http://127.0.0.1:1/old.iso"); err != nil {
		t.Fatal(err)
	}
	bmc.DellStaleEject(2)
	if err := f.mgmt.AttachVirtualMedia(f.ctx, f.task, "cdrom", "http://127.0.0.1:1/new.iso"); err != nil {
		t.Fatal(err)
	}
	if got := bmc.StartBoot(sysID).Media; got != "http://127.0.0.1:1/new.iso" {
		t.Fatalf("media %q", got)
	}
	if err := f.mgmt.DetachVirtualMedia(f.ctx, f.task, nil); err != nil {
		t.Fatal(err)
	}
}

func TestIDRACVersion(t *testing.T) {
	for model, want := range map[string]int{"17G Monolithic": 10, "16G Monolithic": 9, "14G Monolithic": 9,
		"13G Modular": 8, "12G": 8, "11G": 0, "": 0, "iDRAC": 0} {
		if got := idracVersion(model); got != want {
			t.Errorf("idracVersion(%q) = %d, want %d", model, got, want)
		}
	}
}

// create_configuration converts the non-RAID drives of the new volume to
// RAID mode through DellRaidService first, then creates the volume;
// delete_configuration removes it.
func TestRAIDConvertsDrivesBeforeCreate(t *testing.T) {
	drives := []redfishbmc.RAIDDrive{
		{ID: "Disk.Bay.0", CapacityBytes: 480 << 30, MediaType: "SSD", Protocol: "SATA"},
		{ID: "Disk.Bay.1", CapacityBytes: 480 << 30, MediaType: "SSD", Protocol: "SATA"},
	}
	bmc := idracBMC(t, redfishbmc.PowerState(redfishbmc.On), redfishbmc.RAIDController(drives...)).
		DellNonRAIDDrives(sysID, "Disk.Bay.0", "Disk.Bay.1")
	bmc.DellRealtimeNotReady(2)
	f := newFixture(t, bmc)
	f.task.Node.TargetRAIDConfig = map[string]any{"logical_disks": []any{map[string]any{
		"size_gb": "MAX", "raid_level": "1", "is_root_volume": true, "physical_disks": []any{"Disk.Bay.0", "Disk.Bay.1"}}}}
	if state := f.step(t, f.raid, "create_configuration", map[string]any{}); state != "" {
		t.Fatalf("state %q", state)
	}
	if left := bmc.DellNonRAIDDrivesOf(sysID); len(left) != 0 {
		t.Fatalf("drives still in non-RAID mode: %v", left)
	}
	vols := bmc.RAIDVolumesOf(sysID)
	if len(vols) != 1 || vols[0].RAIDType != "RAID1" {
		t.Fatalf("volumes %+v", vols)
	}
	if jobs := bmc.DellJobs(); len(jobs) != 1 || jobs[0].JobType != "RealTimeNoRebootConfiguration" || jobs[0].JobState != "Completed" {
		t.Fatalf("jobs %+v", jobs)
	}
	if lds, _ := f.task.Node.RAIDConfig["logical_disks"].([]any); len(lds) != 1 {
		t.Fatalf("raid_config %v", f.task.Node.RAIDConfig)
	}
	f.step(t, f.raid, "delete_configuration", map[string]any{})
	if vols := bmc.RAIDVolumesOf(sysID); len(vols) != 0 {
		t.Fatalf("volumes after delete %+v", vols)
	}
}

// The deploy ISO goes into the virtual CD after the slow eject of what was
// there, the next boot is set from the CD by a configuration import (with
// a pending configuration cleared by a power cycle), and cleaning up
// ejects it.
func TestVirtualMediaBootRamdisk(t *testing.T) {
	bmc := idracBMC(t, redfishbmc.PowerState(redfishbmc.On))
	f := newFixture(t, bmc)
	boot := &VirtualMediaBoot{VirtualMediaBoot: f.d.set.VirtualMedia}
	f.task.Driver.Boot = boot
	const iso = "http://127.0.0.1:1/deploy.iso"
	f.task.Node.DriverInfo["deploy_iso"] = iso
	if err := f.mgmt.AttachVirtualMedia(f.ctx, f.task, "cdrom", "http://127.0.0.1:1/stale.iso"); err != nil {
		t.Fatal(err)
	}
	bmc.DellStaleEject(2)
	bmc.DellFailNextImport("LC068")
	const insert = "/redfish/v1/Managers/iDRAC.Embedded.1/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia"
	inserts := bmc.Count(http.MethodPost, insert)
	if err := boot.PrepareRamdisk(f.ctx, f.task, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	if n := bmc.Count(http.MethodPost, insert) - inserts; n < 2 {
		t.Fatalf("%d inserts: the insert refused during the slow eject was not retried", n)
	}
	s := bmc.Snapshot(sysID)
	if s.BootTarget != "Cd" || s.BootEnabled != "Once" {
		t.Fatalf("boot %s %s", s.BootTarget, s.BootEnabled)
	}
	if got := bmc.StartBoot(sysID); got.Target != "Cd" || got.Media != iso {
		t.Fatalf("the system boots %+v", got)
	}
	if err := boot.CleanUpRamdisk(f.ctx, f.task); err != nil {
		t.Fatal(err)
	}
	if got := bmc.StartBoot(sysID).Media; got != "" {
		t.Fatalf("media after clean up %q", got)
	}
}

// After a RAID deletion the foreign configuration is cleared by a job that
// needs a reboot, polled until done, then the PERC in HBA mode is switched
// to RAID mode by another job after a reboot, and the step is done.
func TestRAIDDeleteClearsForeignConfigAndConvertsController(t *testing.T) {
	bmc := idracBMC(t, redfishbmc.PowerState(redfishbmc.On),
		redfishbmc.RAIDController(redfishbmc.RAIDDrive{ID: "Disk.Bay.0", CapacityBytes: 480 << 30, MediaType: "SSD", Protocol: "SATA"})).
		DellForeignConfig(sysID).DellControllerMode(sysID, "HBA")
	f := newFixture(t, bmc)
	n := f.task.Node
	n.DriverInternalInfo[model.DIICleaningDisableRamdisk] = true
	resets := len(bmc.Snapshot(sysID).Resets)
	if state := f.step(t, f.raid, "delete_configuration", map[string]any{}); state != states.CleanWait {
		t.Fatalf("state %q", state)
	}
	if n.DriverInternalInfo[raidConfigSubstep] != substepClearForeign || len(taskMonitorURIs(n)) != 1 {
		t.Fatalf("driver_internal_info %v", n.DriverInternalInfo)
	}
	if !f.raid.AsyncStepPending(n) {
		t.Fatal("the iDRAC jobs are not pending")
	}
	for i := 0; ; i++ {
		if i == 10 {
			t.Fatalf("still polling: %v", n.DriverInternalInfo)
		}
		status, err := f.raid.PollAsyncStep(f.ctx, f.task)
		if err != nil {
			t.Fatal(err)
		}
		if status == driver.AsyncStepDone {
			break
		}
	}
	if bmc.DellForeignConfigOf(sysID) || bmc.DellControllerModeOf(sysID) != "RAID" {
		t.Fatalf("foreign %v, mode %s", bmc.DellForeignConfigOf(sysID), bmc.DellControllerModeOf(sysID))
	}
	if got := len(bmc.Snapshot(sysID).Resets) - resets; got == 0 {
		t.Fatal("the controller conversion did not reboot the node")
	}
	if f.raid.AsyncStepPending(n) {
		t.Fatalf("still pending: %v", n.DriverInternalInfo)
	}
}

// A failed controller conversion job fails the step with upstream's
// message and forgets the jobs.
func TestRAIDControllerConversionJobFails(t *testing.T) {
	bmc := idracBMC(t, redfishbmc.PowerState(redfishbmc.On),
		redfishbmc.RAIDController(redfishbmc.RAIDDrive{ID: "Disk.Bay.0", CapacityBytes: 480 << 30, MediaType: "SSD", Protocol: "SATA"})).
		DellControllerMode(sysID, "HBA")
	f := newFixture(t, bmc)
	n := f.task.Node
	n.DriverInternalInfo[model.DIICleaningDisableRamdisk] = true
	bmc.DellFailNextJob("Unable to change the controller mode.")
	if state := f.step(t, f.raid, "delete_configuration", map[string]any{}); state != states.CleanWait {
		t.Fatalf("state %q", state)
	}
	uris := taskMonitorURIs(n)
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		_, err = f.raid.PollAsyncStep(f.ctx, f.task)
	}
	want := "Failed RAID configuration tasks: Task " + uris[0] + ". Message: 'Unable to change the controller mode.'."
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	if f.raid.AsyncStepPending(n) || bmc.DellControllerModeOf(sysID) != "HBA" {
		t.Fatalf("after the failure: %v, mode %s", n.DriverInternalInfo, bmc.DellControllerModeOf(sysID))
	}
}

// Out-of-band inspection of a Dell system: the service tag is the serial
// number, the PXE interface comes from the UEFI PxeDev settings or, in
// legacy BIOS mode, from the exported NIC configuration, and LLDP from the
// iDRAC's switch connections.
func TestInspectDellInventory(t *testing.T) {
	const nic1, nic2 = "NIC.Integrated.1-1-1", "NIC.Integrated.1-2-1"
	const mac1, mac2 = "b0:7b:25:00:00:01", "b0:7b:25:00:00:02"
	for _, tc := range []struct{ mode, pxe string }{{"UEFI", mac2}, {"Legacy", mac1}} {
		t.Run(tc.mode, func(t *testing.T) {
			bmc := idracBMC(t, redfishbmc.PowerState(redfishbmc.On), redfishbmc.BootMode(tc.mode),
				redfishbmc.SerialNumber("CN7016300A0042"),
				redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Cores: 4, Threads: 8, Model: "Xeon"}),
				redfishbmc.MemoryGiB(16), redfishbmc.StorageDrive(100<<30),
				redfishbmc.EthernetInterface(nic1, mac1, "Enabled"), redfishbmc.EthernetInterface(nic2, mac2, "Enabled"),
				redfishbmc.Bios(map[string]any{"PxeDev1EnDis": "Enabled", "PxeDev1Interface": nic2,
					"PxeDev2EnDis": "Disabled", "PxeDev2Interface": nic1})).
				DellServiceTag(sysID, "7XK4Q53").DellLegacyPXE(sysID, nic1).
				DellSwitchConnections(sysID,
					redfishbmc.DellSwitchConnection{FQDD: nic1, SwitchConnectionID: "f4:8e:38:aa:bb:cc", SwitchPortConnectionID: "ethernet1/1/7"},
					redfishbmc.DellSwitchConnection{FQDD: nic2, SwitchConnectionID: "No Link", SwitchPortConnectionID: "No Link"})
			f := newFixture(t, bmc)
			inspect := &Inspect{Inspect: f.d.set.Inspect}
			var inventory, plugin map[string]any
			_, err := inspect.InspectOutOfBand(f.ctx, f.task, func(_ context.Context, inv, pd map[string]any) error {
				inventory, plugin = inv, pd
				f.task.Node.Properties["cpu_arch"] = "x86_64"
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if v := inventory["system_vendor"].(map[string]any)["serial_number"]; v != "7XK4Q53" {
				t.Errorf("serial number %v", v)
			}
			if v := inventory["boot"].(map[string]any)["pxe_interface"]; v != tc.pxe {
				t.Errorf("pxe_interface %v, want %s", v, tc.pxe)
			}
			want := map[string]any{nic1: map[string]any{"switch_chassis_id": "f4:8e:38:aa:bb:cc", "switch_port_id": "ethernet1/1/7"}}
			if got := plugin["parsed_lldp"]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("parsed_lldp %v", got)
			}
		})
	}
}

// An iDRAC10 boots remote images from slot 1 of the system's virtual
// media only: the insert goes there, though slot 2 is listed first and
// would take it.
func TestIDRAC10VirtualMediaSlot(t *testing.T) {
	bmc := idracBMC(t, redfishbmc.PowerState(redfishbmc.On)).DellIDRAC10()
	f := newFixture(t, bmc)
	const iso = "http://127.0.0.1:1/deploy.iso"
	if err := f.mgmt.AttachVirtualMedia(f.ctx, f.task, "cdrom", iso); err != nil {
		t.Fatal(err)
	}
	if got := bmc.DellSystemMedia("1"); got != iso {
		t.Fatalf("slot 1 holds %q", got)
	}
	if got := bmc.DellSystemMedia("2"); got != "" {
		t.Fatalf("slot 2 holds %q", got)
	}
}
