package conductor_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor/workers"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
)

func fmtInt(i int64) string { return strconv.FormatInt(i, 10) }

// waitPower polls until the node has no target power state.
func (e *env) waitPower(n *model.Node) *model.Node {
	e.t.Helper()
	var cur *model.Node
	await.UntilReason(e.t, 15*time.Second, "the power action to finish", func() (bool, string) {
		cur = e.get(n)
		return cur.TargetPowerState == "" && cur.Reservation == nil,
			fmt.Sprintf("power action on %s did not finish (target %q, reservation %v)", n.UUID, cur.TargetPowerState, deref(cur.Reservation))
	})
	return cur
}

func TestChangePowerState(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		old := "old failure"
		n := e.node(states.Manageable, func(n *model.Node) { n.LastError = &old })
		for _, c := range []struct{ action, want string }{
			{states.PowerOn, states.PowerOn},
			{states.Reboot, states.PowerOn},
			{states.SoftPowerOff, states.PowerOff},
			{states.SoftReboot, states.PowerOn},
			{states.PowerOff, states.PowerOff},
		} {
			if err := e.api.ChangeNodePowerState(ctx, "", n.UUID, c.action, 0); err != nil {
				t.Fatalf("%s: %v", c.action, err)
			}
			got := e.waitPower(n)
			if got.PowerState != c.want || got.LastError != nil {
				t.Fatalf("%s: power %q last_error %q", c.action, got.PowerState, deref(got.LastError))
			}
		}
		err := e.api.ChangeNodePowerState(ctx, "", n.UUID, "sideways", 0)
		if class(err) != "InvalidParameterValue" || err.Error() != "The driver fake-hardware does not support the power state, sideways" {
			t.Fatalf("unsupported state: %v", err)
		}
	})
}

func TestPowerActionFailureRecorded(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(states.Manageable, func(n *model.Node) { n.PowerInterface = "flaky" })
		e.power.reading(states.PowerOff, nil)
		e.power.setErr = errors.New("BMC said no")
		if err := e.api.ChangeNodePowerState(context.Background(), "", n.UUID, states.PowerOn, 0); err != nil {
			t.Fatal(err)
		}
		got := e.waitPower(n)
		want := "Failed to change power state to 'power on' by 'power on': BMC said no"
		if got.PowerState != states.PowerOff || deref(got.LastError) != want {
			t.Fatalf("power %q last_error %q", got.PowerState, deref(got.LastError))
		}
		if h := e.history(got); len(h) != 1 || h[0] != "ERROR|UNKNOWN|"+want+"|manageable" {
			t.Fatalf("history %v", h)
		}
	})
}

func TestNoFreeWorkerRollsBack(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		pool, err := workers.New(workers.Settings{Size: 1})
		if err != nil {
			t.Fatal(err)
		}
		e := newEnv(t, db, withPool(pool))
		ctx := context.Background()
		g := gate(e)
		busy := e.node(states.Manageable, scriptedNode)
		if err := e.api.DoProvisioningAction(ctx, "", busy.UUID, "provide"); err != nil {
			t.Fatal(err)
		}
		defer close(g)
		n := e.node(states.Manageable)
		err = e.api.DoProvisioningAction(ctx, "", n.UUID, "provide")
		if class(err) != "NoFreeConductorWorker" {
			t.Fatalf("provide with a full pool: %v", err)
		}
		got := e.get(n)
		e.expect(got, states.Manageable, "", "No free conductor workers available")
		if got.Reservation != nil {
			t.Fatal("lock kept")
		}
		if h := e.history(got); len(h) != 1 || h[0] != "ERROR|provisioning|No free conductor workers available|manageable" {
			t.Fatalf("history %v", h)
		}
		err = e.api.ChangeNodePowerState(ctx, "", n.UUID, states.PowerOn, 0)
		if class(err) != "NoFreeConductorWorker" {
			t.Fatalf("power with a full pool: %v", err)
		}
		if got := e.get(n); got.PowerState != states.PowerOff || got.TargetPowerState != "" {
			t.Fatalf("power %q target %q", got.PowerState, got.TargetPowerState)
		}
	})
}

func TestManagementCalls(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable)
		if err := e.api.SetBootDevice(ctx, "", n.UUID, "pxe", true); err != nil {
			t.Fatal(err)
		}
		bd, err := e.api.GetBootDevice(ctx, "", n.UUID)
		// The fake management interface remembers nothing, as upstream's.
		if err != nil || bd.BootDevice != "pxe" || bd.Persistent == nil || *bd.Persistent {
			t.Fatalf("boot device %+v %v", bd, err)
		}
		devs, err := e.api.GetSupportedBootDevices(ctx, "", n.UUID)
		if err != nil || len(devs) == 0 {
			t.Fatalf("supported boot devices %v %v", devs, err)
		}
		if err := e.api.SetBootDevice(ctx, "", n.UUID, "floppy", false); class(err) != "InvalidParameterValue" {
			t.Fatalf("unsupported boot device: %v", err)
		}
		if err := e.api.ChangeNodeBootMode(ctx, "", n.UUID, "uefi"); err != nil {
			t.Fatal(err)
		}
		// Fake management has no boot mode, secure boot or NMI support:
		// the worker records the failure, the NMI call refuses.
		unsupported := func(call string) string {
			return "Driver fake-hardware does not support " + call + " (disabled or not implemented)."
		}
		got := e.waitUnlocked(n)
		if got.BootMode != nil || deref(got.LastError) != "Failed to change boot mode to 'uefi: "+unsupported("set_boot_mode") {
			t.Fatalf("boot mode %v last_error %q", got.BootMode, deref(got.LastError))
		}
		if err := e.api.ChangeNodeSecureBoot(ctx, "", n.UUID, true); err != nil {
			t.Fatal(err)
		}
		got = e.waitUnlocked(n)
		if got.SecureBoot != nil || deref(got.LastError) != "Failed to change secure_boot state to 'True': "+unsupported("set_secure_boot_state") {
			t.Fatalf("secure boot %v last_error %q", got.SecureBoot, deref(got.LastError))
		}
		if err := e.api.InjectNMI(ctx, "", n.UUID); class(err) != "UnsupportedDriverExtension" || err.Error() != unsupported("inject_nmi") {
			t.Fatalf("inject NMI: %v", err)
		}
		if err := e.api.SetConsoleMode(ctx, "", n.UUID, true); err != nil {
			t.Fatal(err)
		}
		await.Until(t, 10*time.Second, "console_enabled", func() bool { return e.get(n).ConsoleEnabled })
		e.waitUnlocked(n)
		info, err := e.api.GetConsoleInformation(ctx, "", n.UUID)
		if err != nil || info == nil {
			t.Fatalf("console information %v %v", info, err)
		}
		if err := e.api.VifAttach(ctx, "", n.UUID, map[string]any{"id": "vif-1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.api.VifList(ctx, "", n.UUID); err != nil {
			t.Fatal(err)
		}
		if err := e.api.VifDetach(ctx, "", n.UUID, "vif-1"); err != nil {
			t.Fatal(err)
		}
		off := e.node(states.Manageable, func(n *model.Node) { n.ConsoleInterface = "no-console" })
		if _, err := e.api.GetConsoleInformation(ctx, "", off.UUID); class(err) != "NodeConsoleNotEnabled" {
			t.Fatalf("console not enabled: %v", err)
		}
	})
}
