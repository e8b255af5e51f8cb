package ipmi

import (
	"context"
	"reflect"
	"testing"
	"time"

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
	if _, err := parseSensorsData("n1", "Sensor ID : X\n Sensor Reading : 1\n"); !errs.Is(err, errs.ClassFailedToParseSensorData) {
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
	if _, err := v.VendorRoutes()["bmc_reset"].Func(ctx, task, "POST", nil); !errs.Is(err, errs.ClassExclusiveLockRequired) {
		t.Fatalf("shared lock: %v", err)
	}
}

// TestSetBootDeviceCommands covers the boot mode and vendor variants of
// the command SetBootDevice sends after disabling the boot flag timeout.
func TestSetBootDeviceCommands(t *testing.T) {
	cases := []struct {
		name       string
		props      map[string]any
		device     string
		persistent bool
		want       string
	}{
		{"uefi one time", map[string]any{}, "pxe", false, "raw 0x00 0x08 0x05 0xa0 0x04 0x00 0x00 0x00"},
		{"uefi persistent", map[string]any{}, "disk", true, "raw 0x00 0x08 0x05 0xe0 0x08 0x00 0x00 0x00"},
		{"uefi supermicro disk", map[string]any{"vendor": "SuperMicro"}, "disk", true, "raw 0x00 0x08 0x05 0xe0 0x24 0x00 0x00 0x00"},
		{"uefi supermicro pxe", map[string]any{"vendor": "supermicro"}, "pxe", false, "raw 0x00 0x08 0x05 0xa0 0x04 0x00 0x00 0x00"},
		{"bios supermicro disk", map[string]any{"vendor": "supermicro", "capabilities": "boot_mode:bios"}, "disk", false, "chassis bootdev disk"},
		{"bios persistent", map[string]any{"capabilities": "boot_mode:bios"}, "safe", true, "chassis bootdev safe options=persistent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, bmc, _, logs := testCore(t, nil)
			task := testTask(baseInfo(), logs)
			task.Node.Properties = tc.props
			must(t, (&Management{core: c}).SetBootDevice(context.Background(), task, tc.device, tc.persistent))
			if got := bmc.commands(); !reflect.DeepEqual(got, []string{"raw " + disableBootTimeoutRaw, tc.want}) {
				t.Fatalf("commands %q, want the timeout disable then %q", got, tc.want)
			}
		})
	}
	c, bmc, _, logs := testCore(t, func(o *Options) { o.DisableBootTimeout = false })
	task := testTask(baseInfo(), logs)
	must(t, (&Management{core: c}).SetBootDevice(context.Background(), task, "cdrom", false))
	if got := bmc.commands(); !reflect.DeepEqual(got, []string{"raw 0x00 0x08 0x05 0xa0 0x14 0x00 0x00 0x00"}) {
		t.Fatalf("[ipmi]disable_boot_timeout=false: commands %q", got)
	}
}

func TestSensorsAndNMI(t *testing.T) {
	c, bmc, _, logs := testCore(t, func(o *Options) { o.CommandRetryTimeout = 5 * time.Second })
	m := &Management{core: c}
	task := testTask(baseInfo(), logs)
	ctx := context.Background()
	bmc.answer("sdr -v", Result{Stdout: "Sensor ID : Fan1 (0x30)\n Sensor Type (Threshold) : Fan (0x04)\n Sensor Reading : 4800 (+/- 0) RPM\n"})
	got, err := m.GetSensorsData(ctx, task)
	must(t, err)
	if fan, _ := got["Fan"].(map[string]any)["Fan1 (0x30)"].(map[string]any); fan["Sensor Reading"] != "4800 (+/- 0) RPM" {
		t.Fatalf("sensors %v", got)
	}
	bmc.answer("sdr -v", Result{ExitCode: 1, Stderr: "Error: Unable to establish IPMI v2 / RMCP+ session"})
	if _, err := m.GetSensorsData(ctx, task); !errs.Is(err, errs.ClassFailedToGetSensorData) {
		t.Fatalf("sdr failure: %v", err)
	}
	must(t, m.InjectNMI(ctx, task))
	if cmds := bmc.commands(); cmds[len(cmds)-1] != "power diag" {
		t.Fatalf("commands %q", cmds)
	}
}
