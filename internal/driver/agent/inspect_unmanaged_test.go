package agent

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
)

// unmanagedBoot is a boot interface that cannot boot the inspection
// ramdisk (as pxe without deploy_kernel/deploy_ramdisk): its
// validate_inspection says UnsupportedDriverExtension.
type unmanagedBoot struct {
	paramsBoot
}

func (b *unmanagedBoot) ValidateInspection(context.Context, *driver.Task) error {
	return errs.NewMessage(errs.ClassUnsupportedDriverExtension, "Insufficient information provided for managed inspection")
}

// Upstream's unmanaged inspection ([inspector]/require_managed_boot =
// False): a node whose boot interface cannot boot the inspection ramdisk
// is power cycled into a one-time network boot, the operator's (i)PXE
// environment serving the ramdisk; nothing is prepared for it (no ramdisk,
// no inspection network) and nothing of that is torn down when the data
// arrives, after which the node is powered off and inspection finishes.
func TestInspectUnmanaged(t *testing.T) {
	ctx := context.Background()
	for _, disablePowerOff := range []bool{false, true} {
		j := &journal{}
		task := newTask(j, &journalNetwork{j: j}, disablePowerOff)
		boot := &unmanagedBoot{paramsBoot{j: j}}
		mgmt := &bootRecorder{}
		task.Driver.Boot, task.Driver.Management = boot, mgmt
		task.Node.ProvisionState = states.Inspecting
		i := NewInspect(InspectOptions{PowerOff: true, AllowUnmanagedBoot: true, CallbackURL: "http://127.0.0.1:6385/v1/continue_inspection"})
		if err := i.Validate(ctx, task); err != nil {
			t.Fatalf("validate: %v", err)
		}
		st, err := i.InspectHardware(ctx, task)
		if err != nil || st != "inspect wait" {
			t.Fatalf("inspect_hardware = %q, %v; want inspect wait", st, err)
		}
		wantStart, wantEnd := "power off,power on", "power off"
		if disablePowerOff {
			wantStart, wantEnd = "reboot", "reboot"
		}
		if got := j.String(); got != wantStart {
			t.Errorf("disable_power_off %v: start calls %q, want %q (no ramdisk, no inspection network)", disablePowerOff, got, wantStart)
		}
		if mgmt.calls != 1 || mgmt.device != "pxe" || mgmt.persistent {
			t.Errorf("boot device %q persistent %v (%d calls), want one-time pxe", mgmt.device, mgmt.persistent, mgmt.calls)
		}
		if managed, ok := task.Node.InternalInfo().Bool(manageBootKey); !ok || managed {
			t.Errorf("driver_internal_info %s = %v (set %v), want false", manageBootKey, managed, ok)
		}
		j.calls = nil
		task.Node.ProvisionState = states.InspectWait
		if st, err := i.ContinueInspection(ctx, task, map[string]any{}, map[string]any{}); err != nil || st != "" {
			t.Fatalf("continue_inspection = %q, %v; want finished", st, err)
		}
		if got := j.String(); got != wantEnd {
			t.Errorf("disable_power_off %v: end calls %q, want %q", disablePowerOff, got, wantEnd)
		}
		if _, ok := task.Node.InternalInfo().Bool(manageBootKey); ok {
			t.Errorf("%s left in driver_internal_info after inspection", manageBootKey)
		}
	}
}

// With require_managed_boot (the default) such a node is refused, at
// validation and at the start, before anything is done to it; a boot
// interface that can manage the inspection is used as before.
func TestInspectRequiresManagedBoot(t *testing.T) {
	ctx := context.Background()
	j := &journal{}
	task := newTask(j, &journalNetwork{j: j}, false)
	mgmt := &bootRecorder{}
	task.Driver.Boot, task.Driver.Management = &unmanagedBoot{paramsBoot{j: j}}, mgmt
	i := NewInspect(InspectOptions{PowerOff: true})
	if err := i.Validate(ctx, task); !errs.Is(err, errs.ClassUnsupportedDriverExtension) {
		t.Errorf("validate: %v, want UnsupportedDriverExtension", err)
	}
	if _, err := i.InspectHardware(ctx, task); !errs.Is(err, errs.ClassUnsupportedDriverExtension) {
		t.Errorf("inspect_hardware: %v, want UnsupportedDriverExtension", err)
	}
	if got := j.String(); got != "" || mgmt.calls != 0 {
		t.Errorf("calls %q and %d boot device changes on a refused inspection, want none", got, mgmt.calls)
	}
	task.Driver.Boot = &paramsBoot{j: j}
	if _, err := i.InspectHardware(ctx, task); err != nil {
		t.Fatal(err)
	}
	if got := j.String(); got != "power off,prepare_ramdisk,power on" || mgmt.calls != 0 {
		t.Errorf("managed inspection: calls %q, %d boot device changes", got, mgmt.calls)
	}
}
