package conductor_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/builtin"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/fakeclock"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// hwLog collects everything the conductor and the drivers log, at debug
// level, so that a test can look for secrets in it.
type hwLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *hwLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *hwLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *hwLog) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newHWEnv runs a conductor whose drivers are built as the service builds
// them (builtin, from ironic.conf), with the [DEFAULT] options given and
// the redfish and ipmitool waits made instant where tune says. Everything
// logged goes to the returned hwLog.
func newHWEnv(t *testing.T, db *sqldb.DB, defaults, conductorConf map[string]string, tune func(*builtin.Options)) (*env, *hwLog) {
	t.Helper()
	logs := &hwLog{}
	cfg := testConfig(t, map[string]map[string]string{"DEFAULT": defaults, "conductor": conductorConf})
	e := newBuiltinEnv(t, db, cfg, logs.logger(), func(o *builtin.Options) {
		o.Redfish.Log = logs.logger()
		if o.IPMI != nil {
			o.IPMI.Log = logs.logger()
			o.IPMI.TempDir = t.TempDir()
		}
		if tune != nil {
			tune(o)
		}
	})
	return e, logs
}

// newBuiltinEnv runs a conductor on cfg whose drivers are built as the
// service builds them (builtin), logging to log, with the redfish waits
// made instant and then tune applied.
func newBuiltinEnv(t *testing.T, db *sqldb.DB, cfg *config.Config, log *slog.Logger, tune func(*builtin.Options)) *env {
	t.Helper()
	e := newStoreEnv(t, db, cfg)
	o, err := builtin.OptionsFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.Ports = e.st
	o.Redfish.Clock = fakeclock.NewWallInstant()
	if tune != nil {
		tune(&o)
	}
	r, err := builtin.Registry(o)
	if err != nil {
		t.Fatal(err)
	}
	if e.drivers, err = r.Build(driver.SettingsFromConfig(cfg)); err != nil {
		t.Fatal(err)
	}
	e.run(conductor.Options{Logger: log})
	return e
}

// redfishShipped is the configuration seed 001 says OpenKeel ships, with
// every redfish interface enabled.
var redfishShipped = map[string]string{
	"enabled_hardware_types":        "redfish",
	"enabled_power_interfaces":      "redfish",
	"enabled_management_interfaces": "redfish",
	"enabled_boot_interfaces":       "redfish-virtual-media",
	"enabled_deploy_interfaces":     "direct",
	"enabled_inspect_interfaces":    "redfish",
	"enabled_bios_interfaces":       "redfish",
	"enabled_raid_interfaces":       "redfish",
	"enabled_firmware_interfaces":   "redfish",
	"enabled_vendor_interfaces":     "redfish",
	"enabled_network_interfaces":    "noop",
	"enabled_storage_interfaces":    "noop",
	"enabled_rescue_interfaces":     "no-rescue",
	"enabled_console_interfaces":    "no-console",
}

func newRedfishHWEnv(t *testing.T, db *sqldb.DB, conductorConf map[string]string) (*env, *hwLog) {
	t.Helper()
	return newHWEnv(t, db, redfishShipped, conductorConf, nil)
}

// enrollRedfish creates a redfish node through the conductor, as the API's
// POST /v1/nodes does.
func (e *env) enrollRedfish(bmc *redfishbmc.BMC, password string) *model.Node {
	e.t.Helper()
	n, err := e.api.CreateNode(context.Background(), "", &model.Node{
		UUID: newHWUUID(e.t), Driver: "redfish", ProvisionState: states.Enroll,
		DriverInfo: map[string]any{
			"redfish_address": bmc.URL(), "redfish_system_id": redfishbmc.SystemPath("sys-1"),
			"redfish_username": oobUser, "redfish_password": password,
		},
	})
	if err != nil {
		e.t.Fatalf("create node: %v", err)
	}
	return n
}

var hwUUIDs = struct {
	sync.Mutex
	n int
}{}

func newHWUUID(t *testing.T) string {
	t.Helper()
	hwUUIDs.Lock()
	defer hwUUIDs.Unlock()
	hwUUIDs.n++
	return fmt.Sprintf("5e1f0a2b-9c3d-4e5f-8a6b-%012d", hwUUIDs.n)
}

// secretFree fails the test when the BMC password appears in the logs or
// in what the API shows of the node unmasked (last_error, maintenance
// reason, driver_internal_info, history).
func (e *env) secretFree(logs *hwLog, password string, nodes ...*model.Node) {
	e.t.Helper()
	if strings.Contains(logs.String(), password) {
		e.t.Errorf("the BMC password is in the logs")
	}
	for _, n := range nodes {
		// The sink must have heard of the node for its absence of
		// secrets to mean anything.
		if !strings.Contains(logs.String(), n.UUID) {
			e.t.Errorf("nothing was logged about node %s", n.UUID)
		}
		cur := e.get(n)
		shown := fmt.Sprint(deref(cur.LastError), deref(cur.MaintenanceReason), cur.DriverInternalInfo, cur.Properties, e.history(n))
		if strings.Contains(shown, password) {
			e.t.Errorf("node %s shows the BMC password: %s", n.UUID, shown)
		}
	}
}

func sysWithHardware(state string) []redfishbmc.SystemOption {
	return []redfishbmc.SystemOption{
		redfishbmc.PowerState(state),
		redfishbmc.Processor(redfishbmc.CPU{Arch: "x86", Cores: 4, Threads: 8, Model: "Xeon"}),
		redfishbmc.MemoryGiB(16),
		redfishbmc.StorageDrive(100 << 30),
		redfishbmc.EthernetInterface("1", "52:54:00:12:34:01", "Enabled"),
		redfishbmc.EthernetInterface("2", "52:54:00:12:34:02", "Enabled"),
		redfishbmc.Bios(map[string]any{"BootMode": "Uefi", "ProcTurboMode": "Enabled"}),
	}
}

// Seed 001 scenario 1 with the redfish hardware type: enrolled with the
// interfaces the shipped configuration defaults to, a wrong password sends
// "manage" back to enroll with the BMC's refusal, the right one reaches
// manageable with the power state the BMC reports, and out-of-band
// inspection fills properties and creates the ports.
func TestHWRedfishEnrollManageInspect(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", sysWithHardware(redfishbmc.On)...).
			WithBasicAuth(oobUser, oobPassword).WithSessions()
		e, logs := newRedfishHWEnv(t, db, nil)
		ctx := context.Background()

		const wrong = "Wr0ng-S3cret-pw"
		bad := e.enrollRedfish(bmc, wrong)
		if err := e.api.DoProvisioningAction(ctx, "", bad.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(bad, states.Enroll)
		prefix := "Failed to get power state for node " + bad.UUID + ". Error: Redfish exception occurred. Error: "
		if msg := deref(got.LastError); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, "401") {
			t.Fatalf("last_error after a refused login: %q", msg)
		}
		if got.TargetProvisionState != "" || got.PowerState != "" {
			t.Fatalf("refused node: target %q power %q", got.TargetProvisionState, got.PowerState)
		}

		n := e.enrollRedfish(bmc, oobPassword)
		for kind, want := range map[string]string{
			"power": n.PowerInterface, "management": n.ManagementInterface, "inspect": n.InspectInterface,
			"bios": n.BIOSInterface, "raid": n.RAIDInterface, "firmware": n.FirmwareInterface, "vendor": n.VendorInterface,
		} {
			if want != "redfish" {
				t.Errorf("default %s interface %q, want redfish", kind, want)
			}
		}
		if n.BootInterface != "redfish-virtual-media" || n.DeployInterface != "direct" {
			t.Errorf("boot %q deploy %q", n.BootInterface, n.DeployInterface)
		}
		before := bmc.Count(http.MethodGet, "/redfish/v1/Systems/sys-1")
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if got.PowerState != states.PowerOn {
			t.Fatalf("power state after verification %q, want the BMC's power on", got.PowerState)
		}
		if bmc.Count(http.MethodGet, "/redfish/v1/Systems/sys-1") == before || bmc.SessionsCreated() == 0 {
			t.Fatal("verification did not read the system through a BMC session")
		}
		if v := biosValues(biosRows(t, e, got)); v["ProcTurboMode"] != "Enabled" {
			t.Errorf("BIOS settings cached by manage: %v", v)
		}

		checks, err := e.api.ValidateDriverInterfaces(ctx, "", n.UUID)
		if err != nil {
			t.Fatal(err)
		}
		for _, iface := range []string{"power", "management", "inspect", "bios", "raid", "firmware"} {
			if r := checks[iface]; r.Result == nil || !*r.Result {
				t.Errorf("validate %s: %+v", iface, r)
			}
		}

		if err := e.api.InspectHardware(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		got = e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		for k, want := range map[string]any{"cpu_arch": "x86_64", "memory_mb": float64(16384), "local_gb": float64(99)} {
			if got.Properties[k] != want {
				t.Errorf("property %s = %#v, want %#v", k, got.Properties[k], want)
			}
		}
		if _, has := got.Properties["cpus"]; has {
			t.Errorf("cpus set by out-of-band inspection: %v", got.Properties)
		}
		if caps, _ := got.Properties["capabilities"].(string); !strings.Contains(caps, "boot_mode:uefi") {
			t.Errorf("capabilities %q lack the boot mode", caps)
		}
		id := got.ID
		ports, err := e.st.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var macs []string
		for _, p := range ports {
			macs = append(macs, *p.Address)
		}
		sort.Strings(macs)
		if !slices.Equal(macs, []string{"52:54:00:12:34:01", "52:54:00:12:34:02"}) {
			t.Fatalf("ports after inspection %v", macs)
		}
		if _, err := e.st.GetNodeInventory(ctx, id); err != nil {
			t.Errorf("inventory after inspection: %v", err)
		}

		e.secretFree(logs, wrong, bad, n)
		e.secretFree(logs, oobPassword, bad, n)
	})
}

// Seed 001 scenario 4 with the redfish hardware type: the power state
// changed behind the conductor's back is forced back with the default
// force_power_state_during_sync, recorded without it.
func TestHWRedfishPowerDrift(t *testing.T) {
	for _, force := range []bool{true, false} {
		t.Run(fmt.Sprintf("force=%v", force), func(t *testing.T) {
			forEachDB(t, func(t *testing.T, db *sqldb.DB) {
				bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On)).WithBasicAuth(oobUser, oobPassword)
				conf := map[string]string{}
				if !force {
					conf["force_power_state_during_sync"] = "false"
				}
				e, logs := newRedfishHWEnv(t, db, conf)
				ctx := context.Background()
				n := e.enrollRedfish(bmc, oobPassword)
				if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
					t.Fatal(err)
				}
				e.waitState(n, states.Manageable)
				e.c.SyncPowerStates(ctx)
				if got := e.get(n); got.PowerState != states.PowerOn || bmc.Power("sys-1") != redfishbmc.On {
					t.Fatalf("without drift: node %q, BMC %q", got.PowerState, bmc.Power("sys-1"))
				}

				bmc.SetPower("sys-1", redfishbmc.Off)
				e.c.SyncPowerStates(ctx)
				got := e.get(n)
				if force {
					if bmc.Power("sys-1") != redfishbmc.On || got.PowerState != states.PowerOn {
						t.Fatalf("forced back: BMC %q node %q", bmc.Power("sys-1"), got.PowerState)
					}
				} else if bmc.Power("sys-1") != redfishbmc.Off || got.PowerState != states.PowerOff {
					t.Fatalf("recorded: BMC %q node %q", bmc.Power("sys-1"), got.PowerState)
				}
				if got.Maintenance {
					t.Fatalf("drift put the node in maintenance: %q", deref(got.MaintenanceReason))
				}
				e.secretFree(logs, oobPassword, n)
			})
		})
	}
}

// A BMC that keeps failing puts the node in maintenance with fault "power
// failure" once power_state_sync_max_retries is exceeded; the recovery
// periodic takes it out when the BMC answers again.
func TestHWRedfishPowerFailureMaintenanceAndRecovery(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", redfishbmc.PowerState(redfishbmc.On)).WithBasicAuth(oobUser, oobPassword)
		e, logs := newRedfishHWEnv(t, db, nil)
		ctx := context.Background()
		n := e.enrollRedfish(bmc, oobPassword)
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.Manageable)

		bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodGet, Path: "/Systems/sys-1"}, 100000, http.StatusInternalServerError, "")
		retries := e.cfg.Int("conductor", "power_state_sync_max_retries")
		for i := 1; i <= retries; i++ {
			e.c.SyncPowerStates(ctx)
			if got := e.get(n); got.Maintenance {
				t.Fatalf("maintenance after %d failed syncs, max retries %d", i, retries)
			}
		}
		e.c.SyncPowerStates(ctx)
		got := e.get(n)
		if !got.Maintenance || deref(got.Fault) != "power failure" ||
			!strings.HasPrefix(deref(got.MaintenanceReason), "During sync_power_state, max retries exceeded for node "+n.UUID) {
			t.Fatalf("after %d failed syncs: maintenance %v fault %q reason %q", retries+1, got.Maintenance, deref(got.Fault), deref(got.MaintenanceReason))
		}
		e.c.PowerFailureRecovery(ctx)
		if got := e.get(n); !got.Maintenance {
			t.Fatal("recovered while the BMC still fails")
		}
		bmc.ClearFaults()
		e.c.PowerFailureRecovery(ctx)
		got = e.get(n)
		if got.Maintenance || got.Fault != nil || got.MaintenanceReason != nil || got.PowerState != states.PowerOn {
			t.Fatalf("after recovery: maintenance %v fault %q reason %q power %q",
				got.Maintenance, deref(got.Fault), deref(got.MaintenanceReason), got.PowerState)
		}
		e.secretFree(logs, oobPassword, n)
	})
}

// BIOS apply_configuration does not need the ramdisk: on the redfish
// hardware type, a manual cleaning without it sets the pending settings,
// reboots, and the driver periodic finishes the step once the BMC applied
// them.
func TestHWRedfishBIOSCleaningWithoutRamdisk(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", sysWithHardware(redfishbmc.Off)...).WithBasicAuth(oobUser, oobPassword)
		e, logs := newRedfishHWEnv(t, db, nil)
		ctx := context.Background()
		n := e.enrollRedfish(bmc, oobPassword)
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		e.waitState(n, states.Manageable)
		resets := len(bmc.Snapshot("sys-1").Resets)
		if err := e.api.DoNodeClean(ctx, "", n.UUID, []map[string]any{{"interface": "bios", "step": "apply_configuration",
			"args": map[string]any{"settings": []any{map[string]any{"name": "ProcTurboMode", "value": "Disabled"}}}}}, true); err != nil {
			t.Fatal(err)
		}
		waiting := e.waitState(n, states.CleanWait)
		if len(bmc.Snapshot("sys-1").Resets) == resets {
			t.Fatal("the BIOS step did not reboot the system to apply its settings")
		}
		if got := bmc.BiosOf("sys-1").Attributes["ProcTurboMode"]; got != "Disabled" {
			t.Fatalf("setting after the reboot: %v", got)
		}
		e.pollUntil(waiting, 3)
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if v := biosValues(biosRows(t, e, got)); v["ProcTurboMode"] != "Disabled" {
			t.Fatalf("cached settings after the step: %v", v)
		}
		if m := bmc.StartBoot("sys-1"); m.Media != "" {
			t.Fatalf("a ramdisk was inserted for a cleaning without it: %s", m.Media)
		}
		e.secretFree(logs, oobPassword, n)
	})
}

// activeRedfish stores a deployed node of the redfish hardware type.
func (e *env) activeRedfish(bmc *redfishbmc.BMC) *model.Node {
	e.t.Helper()
	n := &model.Node{
		UUID: newHWUUID(e.t), Driver: "redfish", ProvisionState: states.Active, PowerState: states.PowerOn,
		DriverInfo: map[string]any{
			"redfish_address": bmc.URL(), "redfish_system_id": redfishbmc.SystemPath("sys-1"),
			"redfish_username": oobUser, "redfish_password": oobPassword,
		},
	}
	if _, err := e.drivers.CheckAndUpdateNodeInterfaces(n); err != nil {
		e.t.Fatal(err)
	}
	out, err := e.st.CreateNode(context.Background(), n)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// firmwarePollsByHand leaves the redfish pollers to the test and needs
// one good reading of an updated firmware.
func firmwarePollsByHand(o *builtin.Options) {
	o.Redfish.RAIDConfigStatusInterval, o.Redfish.FirmwareUpdateStatusInterval = 0, 0
	o.Redfish.FirmwareUpdateRequiredSuccesses = 1
}

// BIOS apply_configuration and a firmware update through UpdateService
// and its task monitor, as service steps of a deployed redfish node
// without the ramdisk; a task the BMC fails ends servicing with the BMC's
// message.
func TestHWRedfishServiceStepsThroughTaskMonitors(t *testing.T) {
	steps := []map[string]any{
		{"interface": "bios", "step": "apply_configuration",
			"args": map[string]any{"settings": []any{map[string]any{"name": "ProcTurboMode", "value": "Disabled"}}}},
		{"interface": "firmware", "step": "update",
			"args": map[string]any{"settings": []any{map[string]any{"component": "bios", "url": biosImage}}}},
	}
	hwBMC := func(t *testing.T) *redfishbmc.BMC {
		return redfishbmc.New(t).System("sys-1", append(sysWithHardware(redfishbmc.On), redfishbmc.BiosVersion("1.0"))...).
			WithBasicAuth(oobUser, oobPassword).TaskPolls(2).FirmwareImage(biosImage, "bios", "2.0")
	}
	service := func(e *env, n *model.Node) *model.Node {
		t.Helper()
		if err := e.api.DoNodeService(context.Background(), "", n.UUID, steps, true); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			cur := e.waitUnlocked(n)
			if cur.ProvisionState != states.Servicing && cur.ProvisionState != states.ServiceWait {
				return cur
			}
			e.c.PollAsyncSteps(context.Background())
		}
		t.Fatalf("still servicing: %+v", e.get(n).DriverInternalInfo)
		return nil
	}
	t.Run("success", func(t *testing.T) {
		forEachDB(t, func(t *testing.T, db *sqldb.DB) {
			bmc := hwBMC(t)
			e, logs := newHWEnv(t, db, redfishShipped, nil, firmwarePollsByHand)
			n := e.activeRedfish(bmc)
			got := service(e, n)
			e.expect(got, states.Active, "", "")
			if v := bmc.BiosOf("sys-1").Attributes["ProcTurboMode"]; v != "Disabled" {
				t.Fatalf("BIOS setting %v", v)
			}
			if bios, _ := bmc.FirmwareVersions("sys-1"); bios != "2.0" {
				t.Fatalf("BIOS firmware %q", bios)
			}
			if tasks := bmc.Tasks(); len(tasks) != 1 || tasks[0].State != "Completed" {
				t.Fatalf("tasks %+v", tasks)
			}
			if c := firmwareComponents(t, e, got)["bios"]; c == nil || deref(c.CurrentVersion) != "2.0" {
				t.Fatalf("bios component %+v", c)
			}
			e.secretFree(logs, oobPassword, n)
		})
	})
	t.Run("failed task", func(t *testing.T) {
		forEachDB(t, func(t *testing.T, db *sqldb.DB) {
			bmc := hwBMC(t)
			bmc.FailNextTask("Image signature verification failed")
			e, logs := newHWEnv(t, db, redfishShipped, nil, firmwarePollsByHand)
			n := e.activeRedfish(bmc)
			got := service(e, n)
			want := "Firmware update failed for node " + n.UUID + ", firmware " + biosImage + ". Error: Image signature verification failed"
			e.expect(got, states.ServiceFail, states.Active, want)
			if bios, _ := bmc.FirmwareVersions("sys-1"); bios != "1.0" {
				t.Fatalf("BIOS firmware %q after a failed update", bios)
			}
			e.secretFree(logs, oobPassword, n)
		})
	})
}
