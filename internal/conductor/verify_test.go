package conductor_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

func TestManageVerifiesAndRecordsPowerState(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Enroll, func(n *model.Node) { n.PowerInterface = "flaky"; n.VendorInterface = "scripted" })
		e.power.reading(states.PowerOn, nil)
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if got.PowerState != states.PowerOn {
			t.Fatalf("power state %q, want the one read during verification", got.PowerState)
		}
		// Enabled verify steps run; the scripted one has priority 0.
		for _, s := range e.steps.Ran() {
			if s == "verify_check" {
				t.Fatal("disabled verify step ran")
			}
		}
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); class(err) != "InvalidStateRequested" {
			t.Fatalf("manage from manageable: %v", err)
		}
	})
}

func TestManageFailsBackToEnrollWhenPowerUnreadable(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(states.Enroll, func(n *model.Node) { n.PowerInterface = "flaky" })
		e.power.reading("", errors.New("BMC unreachable"))
		if err := e.api.DoProvisioningAction(context.Background(), "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Enroll)
		want := "Failed to get power state for node " + n.UUID + ". Error: BMC unreachable"
		e.expect(got, states.Enroll, "", want)
		h := e.history(got)
		if len(h) != 1 || !strings.HasPrefix(h[0], "ERROR|verify|"+want+"|verifying") {
			t.Fatalf("history %v", h)
		}
	})
}

// Verification ends with upstream's node_update_cache: what the BMC says
// of vendor, boot mode and secure boot replaces the node's, and the
// firmware components are cached.
func TestManageRefreshesCachedHardwareData(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).WithBasicAuth(oobUser, oobPassword).WithVendor("Contoso").WithBMCFirmwareVersion("2.10").
			System("sys-1", redfishbmc.BiosVersion("U30 v1.40"), redfishbmc.BootMode("Legacy"), redfishbmc.SecureBootEnabled(true))
		e := newRedfishEnv(t, db, nil, nil)
		ctx := context.Background()
		uefi, off := "uefi", false
		n := e.node(states.Enroll, redfishAll(bmc), func(n *model.Node) {
			n.ManagementInterface = "redfish"
			n.BootMode, n.SecureBoot = &uefi, &off
			n.Properties = map[string]any{"cpu_arch": "x86_64"}
		})
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		e.expect(got, states.Manageable, "", "")
		if got.Properties["vendor"] != "Contoso" || got.Properties["cpu_arch"] != "x86_64" {
			t.Errorf("properties %v, want the BMC's vendor added", got.Properties)
		}
		if deref(got.BootMode) != "bios" || got.SecureBoot == nil || !*got.SecureBoot {
			t.Errorf("boot_mode %q secure_boot %v, the BMC says Legacy with secure boot on", deref(got.BootMode), got.SecureBoot)
		}
		fw, err := e.st.ListFirmwareComponents(ctx, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		versions := map[string]string{}
		for _, c := range fw {
			versions[c.Component] = deref(c.CurrentVersion)
		}
		if len(fw) != 2 || versions["bios"] != "U30 v1.40" || versions["bmc"] != "2.10" {
			t.Errorf("firmware components %v", versions)
		}
	})
}

// Fake management reads neither boot mode nor secure boot: as upstream,
// the cached ones are cleared, and no vendor is detected.
func TestManageClearsBootModeTheInterfaceCannotRead(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		uefi, on := "uefi", true
		n := e.node(states.Enroll, func(n *model.Node) { n.BootMode, n.SecureBoot = &uefi, &on })
		if err := e.api.DoProvisioningAction(context.Background(), "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Manageable)
		if got.BootMode != nil || got.SecureBoot != nil || got.Properties["vendor"] != nil {
			t.Errorf("boot_mode %v secure_boot %v properties %v", got.BootMode, got.SecureBoot, got.Properties)
		}
	})
}

// A failing verify step fails the verification, as upstream's error
// variable does, with the step's message.
func TestManageFailsBackToEnrollWhenAVerifyStepFails(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "verify_step_priority_override", "vendor.verify_check:10"))
		e.steps.set("verify_check", "", errors.New("BMC firmware too old"))
		n := e.node(states.Enroll, func(n *model.Node) { n.VendorInterface = "scripted" })
		if err := e.api.DoProvisioningAction(context.Background(), "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.Enroll)
		want := "Node " + n.UUID + " failed verify step verify_check with unexpected error: BMC firmware too old"
		e.expect(got, states.Enroll, "", want)
		h := e.history(got)
		if len(h) != 2 || !strings.HasPrefix(h[0], "ERROR|verifying|Failed to verify: BMC firmware too old|") ||
			!strings.HasPrefix(h[1], "ERROR|verify|"+want+"|") {
			t.Fatalf("history %v", h)
		}
	})
}
