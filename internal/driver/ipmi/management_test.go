package ipmi

import (
	"context"
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
)

func TestParseBootParam(t *testing.T) {
	cases := map[string]struct {
		out        string
		device     string
		persistent bool
	}{
		"pxe once":        {" - Options apply to only next boot\n - Boot Device Selector : Force PXE\n", "pxe", false},
		"disk persistent": {" - Options apply to all future boots\n - Boot Device Selector : Force Boot from default Hard-Drive\n", "disk", true},
		"safe mode":       {" - Boot Device Selector : Force Boot from default Hard-Drive, request Safe-Mode\n", "safe", false},
		"bios":            {" - Boot Device Selector : Force Boot into BIOS Setup\n", "bios", false},
		"cdrom":           {" - Boot Device Selector : Force Boot from CD/DVD\n", "cdrom", false},
		"no override":     {" - Boot Device Selector : No override\n", "", false},
	}
	for name, tc := range cases {
		got := parseBootParam(tc.out)
		if got.BootDevice != tc.device || got.Persistent == nil || *got.Persistent != tc.persistent {
			t.Errorf("%s: %+v", name, got)
		}
	}
}

func TestParseSensorsData(t *testing.T) {
	out := "Sensor ID              : Temp (0x1)\n Entity ID             : 3.1 (Processor)\n" +
		" Sensor Type (Threshold)  : Temperature (0x01)\n Sensor Reading        : 42 (+/- 0) degrees C\n\n" +
		"Sensor ID              : PS1 (0x2)\n Sensor Type (Discrete): Power Supply (0x08)\n States Asserted       : Presence detected\n"
	got, err := parseSensorsData("n1", out)
	must(t, err)
	want := map[string]any{"Temperature": map[string]any{"Temp (0x1)": map[string]any{
		"Sensor ID": "Temp (0x1)", "Entity ID": "3.1 (Processor)",
		"Sensor Type (Threshold)": "Temperature (0x01)", "Sensor Reading": "42 (+/- 0) degrees C",
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v", got)
	}
	if _, err := parseSensorsData("n1", "Sensor ID : X\n Sensor Reading : 1\n"); !errs.Is(err, "FailedToParseSensorData") {
		t.Fatalf("unknown type: %v", err)
	}
	if _, err := parseSensorsData("n1", "Sensor ID : X\n Sensor Type (Analog) : Fan\n"); err == nil ||
		err.Error() != "Failed to parse sensor data for node n1. Error: parse ipmi sensor data failed, get nothing with input data: Sensor ID : X\n Sensor Type (Analog) : Fan\n" {
		t.Fatalf("no readings: %v", err)
	}
}

func TestForcedBootDeviceIsRemembered(t *testing.T) {
	c, bmc, _, logs := testCore(t, nil)
	m := &Management{core: c}
	info := baseInfo()
	info["ipmi_force_boot_device"] = "True"
	info["ipmi_disable_boot_timeout"] = false
	task := testTask(info, logs)
	task.Node.Properties["capabilities"] = "boot_mode:bios"
	must(t, m.SetBootDevice(context.Background(), task, "pxe", true))
	if got := bmc.commands(); !reflect.DeepEqual(got, []string{"chassis bootdev pxe"}) {
		t.Fatalf("commands %q: persistence is Ironic's job with ipmi_force_boot_device", got)
	}
	if task.Node.DriverInternalInfo["persistent_boot_device"] != "pxe" {
		t.Fatalf("driver_internal_info %v", task.Node.DriverInternalInfo)
	}
	got, err := m.GetBootDevice(context.Background(), task)
	must(t, err)
	if got.BootDevice != "pxe" || !*got.Persistent || len(bmc.calls) != 1 {
		t.Fatalf("boot device %+v after %d calls", got, len(bmc.calls))
	}
}

func TestBootModeConflict(t *testing.T) {
	c, _, _, logs := testCore(t, nil)
	task := testTask(baseInfo(), logs)
	task.Node.Properties["capabilities"] = "boot_mode:bios"
	task.Node.InstanceInfo["capabilities"] = map[string]any{"boot_mode": "uefi"}
	err := (&Management{core: c}).SetBootDevice(context.Background(), task, "pxe", false)
	want := "Node " + task.Node.UUID + " boot mode uefi violates node properties/capabilities bios"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v", err)
	}
}

func TestVendorPassthru(t *testing.T) {
	c, bmc, _, logs := testCore(t, nil)
	v := &Vendor{core: c}
	task := testTask(baseInfo(), logs)
	ctx := context.Background()
	if err := v.Validate(ctx, task, "send_raw", map[string]any{}); err == nil ||
		err.Error() != "Parameter raw_bytes (string of bytes) was not specified." {
		t.Fatalf("validate: %v", err)
	}
	_, err := v.VendorRoutes()["send_raw"].Func(ctx, task, "POST", map[string]any{"raw_bytes": "0x06 0x01"})
	must(t, err)
	_, err = v.VendorRoutes()["bmc_reset"].Func(ctx, task, "POST", map[string]any{"warm": "false"})
	must(t, err)
	_, err = v.StepHandlers()["send_raw"](ctx, task, map[string]any{"raw_bytes": "0x00 0x01"})
	must(t, err)
	if got := bmc.commands(); !reflect.DeepEqual(got, []string{"raw 0x06 0x01", "bmc reset cold", "raw 0x00 0x01"}) {
		t.Fatalf("commands %q", got)
	}
	task.Shared = true
	if _, err := v.VendorRoutes()["bmc_reset"].Func(ctx, task, "POST", nil); !errs.Is(err, "ExclusiveLockRequired") {
		t.Fatalf("shared lock: %v", err)
	}
}
