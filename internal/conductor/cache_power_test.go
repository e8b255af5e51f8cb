package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// The power sync caches what manage could not, as upstream's
// do_sync_power_state does: a node with no vendor and a stale boot mode
// and secure boot state gets the BMC's, under a shared lock upgraded only
// when something changes, and leaves no reservation behind.
func TestPowerSyncCachesVendorAndBootMode(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).WithBasicAuth(oobUser, oobPassword).WithVendor("Contoso").
			System("sys-1", redfishbmc.PowerState(redfishbmc.On), redfishbmc.BootMode("Legacy"), redfishbmc.SecureBootEnabled(true))
		e := newRedfishEnv(t, db, nil, nil)
		ctx := context.Background()
		uefi, off := "uefi", false
		n := e.node(states.Manageable, redfishAll(bmc), func(n *model.Node) {
			n.ManagementInterface = "redfish"
			n.PowerState = states.PowerOn
			n.BootMode, n.SecureBoot = &uefi, &off
			n.Properties = map[string]any{"cpu_arch": "x86_64"}
		})
		e.c.SyncPowerStates(ctx)
		got := e.get(n)
		if got.Properties["vendor"] != "Contoso" || got.Properties["cpu_arch"] != "x86_64" {
			t.Errorf("properties %v, want the BMC's vendor added", got.Properties)
		}
		if deref(got.BootMode) != "bios" || got.SecureBoot == nil || !*got.SecureBoot {
			t.Errorf("boot_mode %q secure_boot %v, the BMC says Legacy with secure boot on", deref(got.BootMode), got.SecureBoot)
		}
		if got.PowerState != states.PowerOn || got.Reservation != nil {
			t.Errorf("power %q reservation %v after the sync", got.PowerState, got.Reservation)
		}
	})
}
