package conductor_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// idracShipped enables the idrac hardware type with its iDRAC interfaces.
var idracShipped = map[string]string{
	"enabled_hardware_types":        "idrac",
	"enabled_power_interfaces":      "idrac-redfish",
	"enabled_management_interfaces": "idrac-redfish",
	"enabled_boot_interfaces":       "idrac-redfish-virtual-media",
	"enabled_deploy_interfaces":     "direct",
	"enabled_inspect_interfaces":    "idrac-redfish",
	"enabled_bios_interfaces":       "idrac-redfish",
	"enabled_raid_interfaces":       "idrac-redfish",
	"enabled_firmware_interfaces":   "no-firmware",
	"enabled_vendor_interfaces":     "idrac-redfish",
	"enabled_network_interfaces":    "noop",
	"enabled_storage_interfaces":    "noop",
	"enabled_rescue_interfaces":     "no-rescue",
	"enabled_console_interfaces":    "no-console",
}

// The idrac hardware type against the emulator's iDRAC: enrolled with the
// iDRAC interfaces as defaults, managed, inspected out of band, then
// given virtual media through the API (with the iDRAC's slow eject),
// cleaned without the ramdisk through its Dell steps (known_good_state),
// RAID creation with the conversion of non-RAID drives, RAID deletion and
// a BIOS setting applied at the reboot.
func TestHWIDRACEnrollManageInspectClean(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		drives := []redfishbmc.RAIDDrive{
			{ID: "Disk.Bay.0", CapacityBytes: 480 << 30, MediaType: "SSD", Protocol: "SATA"},
			{ID: "Disk.Bay.1", CapacityBytes: 480 << 30, MediaType: "SSD", Protocol: "SATA"},
		}
		bmc := redfishbmc.New(t).WithDellOEM().
			System("sys-1", append(sysWithHardware(redfishbmc.On), redfishbmc.RAIDController(drives...))...).
			WithBasicAuth(oobUser, oobPassword).WithSessions().
			DellNonRAIDDrives("sys-1", "Disk.Bay.0", "Disk.Bay.1")
		e, logs := newHWEnv(t, db, idracShipped, nil, firmwarePollsByHand)
		ctx := context.Background()

		n, err := e.api.CreateNode(ctx, "", &model.Node{
			UUID: newHWUUID(t), Driver: "idrac", ProvisionState: states.Enroll,
			DriverInfo: map[string]any{
				"redfish_address": bmc.URL(), "redfish_system_id": redfishbmc.SystemPath("sys-1"),
				"redfish_username": oobUser, "redfish_password": oobPassword,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		for kind, got := range map[string]string{
			"power": n.PowerInterface, "management": n.ManagementInterface, "inspect": n.InspectInterface,
			"bios": n.BIOSInterface, "raid": n.RAIDInterface, "vendor": n.VendorInterface,
		} {
			if got != "idrac-redfish" {
				t.Errorf("default %s interface %q, want idrac-redfish", kind, got)
			}
		}
		if n.BootInterface != "idrac-redfish-virtual-media" {
			t.Errorf("boot interface %q", n.BootInterface)
		}

		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")
		if err := e.api.InspectHardware(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if got.Properties["cpu_arch"] != "x86_64" || got.Properties["memory_mb"] != float64(16384) {
			t.Errorf("properties after inspection %v", got.Properties)
		}

		// Virtual media through the API: the second image goes in after
		// the iDRAC's slow eject of the first, whose refusals are retried.
		const insert = "/redfish/v1/Managers/iDRAC.Embedded.1/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia"
		for _, iso := range []string{"http://127.0.0.1:9/first.iso", "http://127.0.0.1:9/second.iso"} {
			if err := e.api.AttachVirtualMedia(ctx, "", rpc.AttachVirtualMediaArgs{
				NodeID: n.UUID, DeviceType: "cdrom", ImageURL: iso, ImageDownloadSource: "http",
			}); err != nil {
				t.Fatal(err)
			}
			e.waitUnlocked(n)
			if got := bmc.StartBoot("sys-1").Media; got != iso {
				t.Fatalf("media %q after attaching %s (last_error %q)", got, iso, deref(e.get(n).LastError))
			}
			bmc.DellStaleEject(2)
		}
		if got := bmc.Count(http.MethodPost, insert); got < 3 {
			t.Fatalf("%d inserts: the insert refused during the slow eject was not retried", got)
		}
		if err := e.api.DetachVirtualMedia(ctx, "", n.UUID, nil); err != nil {
			t.Fatal(err)
		}
		e.waitUnlocked(n)
		if got := bmc.StartBoot("sys-1").Media; got != "" {
			t.Fatalf("media %q after detaching", got)
		}
		bmc.DellStaleEject(0)

		clean := func(steps ...map[string]any) *model.Node {
			t.Helper()
			if err := e.api.DoNodeClean(ctx, "", n.UUID, steps, true); err != nil {
				t.Fatal(err)
			}
			cur := e.waitUnlocked(n)
			if cur.ProvisionState == states.CleanWait {
				e.pollUntil(cur, 5)
			}
			cur = e.waitState(n, states.Manageable)
			e.expect(cur, states.Manageable, "", "")
			return cur
		}

		bmc.DellQueueJob("Configure: BIOS.Setup.1-1")
		clean(map[string]any{"interface": "management", "step": "known_good_state"})
		if resets, jobs := bmc.DellResets(), bmc.DellJobs(); resets != 1 || len(jobs) != 0 {
			t.Fatalf("after known_good_state: %d iDRAC resets, jobs %+v", resets, jobs)
		}

		if err := e.api.SetTargetRAIDConfig(ctx, "", n.UUID, map[string]any{"logical_disks": []any{map[string]any{
			"size_gb": "MAX", "raid_level": "1", "is_root_volume": true, "controller": "1",
			"physical_disks": []any{"Disk.Bay.0", "Disk.Bay.1"}}}}); err != nil {
			t.Fatal(err)
		}
		got = clean(map[string]any{"interface": "raid", "step": "create_configuration"})
		if left := bmc.DellNonRAIDDrivesOf("sys-1"); len(left) != 0 {
			t.Fatalf("drives left in non-RAID mode: %v", left)
		}
		if vols := bmc.RAIDVolumesOf("sys-1"); len(vols) != 1 || vols[0].RAIDType != "RAID1" {
			t.Fatalf("volumes %+v", vols)
		}
		if lds, _ := got.RAIDConfig["logical_disks"].([]any); len(lds) != 1 {
			t.Fatalf("raid_config %v", got.RAIDConfig)
		}
		clean(map[string]any{"interface": "raid", "step": "delete_configuration"})
		if vols := bmc.RAIDVolumesOf("sys-1"); len(vols) != 0 {
			t.Fatalf("volumes after delete_configuration %+v", vols)
		}

		got = clean(map[string]any{"interface": "bios", "step": "apply_configuration",
			"args": map[string]any{"settings": []any{map[string]any{"name": "ProcTurboMode", "value": "Disabled"}}}})
		if v := bmc.BiosOf("sys-1").Attributes["ProcTurboMode"]; v != "Disabled" {
			t.Fatalf("BIOS setting %v", v)
		}
		if v := biosValues(biosRows(t, e, got)); v["ProcTurboMode"] != "Disabled" {
			t.Fatalf("cached BIOS settings %v", v)
		}
		e.secretFree(logs, oobPassword, n)
	})
}

// Verification runs the iDRAC steps an operator raises with
// [conductor]/verify_step_priority_override: known_good_state resets an
// iDRAC and clears its queue; on a BMC without the Dell OEM (an iDRAC too
// old for it) their failures are logged and the node still becomes
// manageable, as upstream tolerates them while verifying.
func TestHWIDRACVerifySteps(t *testing.T) {
	conf := map[string]string{"verify_step_priority_override": "management.known_good_state:20,management.clear_job_queue:10"}
	for _, dell := range []bool{true, false} {
		t.Run(fmt.Sprintf("dell OEM %v", dell), func(t *testing.T) {
			forEachDB(t, func(t *testing.T, db *sqldb.DB) {
				bmc := redfishbmc.New(t).System("sys-1", sysWithHardware(redfishbmc.On)...).WithBasicAuth(oobUser, oobPassword)
				if dell {
					bmc.WithDellOEM().DellQueueJob("Configure: BIOS.Setup.1-1")
				}
				e, logs := newHWEnv(t, db, idracShipped, conf, nil)
				ctx := context.Background()
				n, err := e.api.CreateNode(ctx, "", &model.Node{
					UUID: newHWUUID(t), Driver: "idrac", ProvisionState: states.Enroll,
					DriverInfo: map[string]any{"redfish_address": bmc.URL(), "redfish_system_id": redfishbmc.SystemPath("sys-1"),
						"redfish_username": oobUser, "redfish_password": oobPassword},
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
					t.Fatal(err)
				}
				e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")
				if dell {
					if resets, jobs := bmc.DellResets(), bmc.DellJobs(); resets != 1 || len(jobs) != 0 {
						t.Fatalf("after verification: %d resets, jobs %+v", resets, jobs)
					}
				} else if !strings.Contains(logs.String(), "ignoring the failure of an iDRAC step while verifying") {
					t.Fatalf("the failures were not logged:\n%s", logs.String())
				}
			})
		})
	}
}
