package redfish

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

func newBiosEnv(t *testing.T, opts ...redfishbmc.SystemOption) (*env, *BIOS) {
	t.Helper()
	base := []redfishbmc.SystemOption{
		redfishbmc.PowerState(redfishbmc.On),
		redfishbmc.Bios(map[string]any{"BootMode": "Uefi", "ProcTurboMode": "Enabled", "NumCores": float64(8), "SerialNumber": "SN1"}),
		redfishbmc.BiosRegistry(
			redfishbmc.RegistryAttribute{Name: "BootMode", Type: "Enumeration", ResetRequired: true, AllowableValues: []string{"Uefi", "Bios"}},
			redfishbmc.RegistryAttribute{Name: "SerialNumber", Type: "String", ReadOnly: true},
		),
	}
	e := newMgmtEnv(t, append(base, opts...)...)
	e.node.ProvisionState = states.Cleaning
	return e, &BIOS{core: e.core}
}

func TestBIOSSettingsWithRegistry(t *testing.T) {
	e, b := newBiosEnv(t)
	got, err := b.BIOSSettings(e.ctx, e.task)
	must(t, err)
	names := []string{}
	for _, s := range got {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"BootMode", "NumCores", "ProcTurboMode", "SerialNumber"}) {
		t.Fatalf("names %v", names)
	}
	bm := got[0]
	if *bm.Value != "Uefi" || *bm.AttributeType != "Enumeration" || !*bm.ResetRequired || *bm.ReadOnly ||
		!slices.Equal(bm.AllowableValues, []string{"Uefi", "Bios"}) {
		t.Fatalf("BootMode %+v", bm)
	}
	if *got[1].Value != "8" || got[1].AttributeType != nil {
		t.Fatalf("NumCores (no registry entry) %+v", got[1])
	}
	if !*got[3].ReadOnly {
		t.Fatalf("SerialNumber %+v", got[3])
	}
	must(t, b.CacheBIOSSettings(e.ctx, e.task))
}

func TestBIOSNotSupported(t *testing.T) {
	e := newMgmtEnv(t)
	b := &BIOS{core: e.core}
	_, err := b.BIOSSettings(e.ctx, e.task)
	wantClass(t, err, "UnsupportedDriverExtension", "Cannot fetch BIOS attributes for node "+testNode+", BIOS settings are not supported.")
	_, err = b.FactoryReset(e.ctx, e.task)
	wantClass(t, err, "RedfishError", "Redfish exception occurred. Error: Redfish BIOS factory reset failed for node "+testNode+
		", because BIOS settings are not supported.")
}

func TestBIOSApplyConfigurationRebootsAndVerifies(t *testing.T) {
	e, b := newBiosEnv(t)
	settings := []map[string]any{{"name": "BootMode", "value": "Bios"}, {"name": "ProcTurboMode", "value": "Disabled"}}
	next, err := b.ApplyConfiguration(e.ctx, e.task, settings)
	must(t, err)
	if next != states.CleanWait {
		t.Fatalf("next %q", next)
	}
	// The emulator applies pending settings only at a reset, so these
	// values prove both the PATCH and the reboot.
	st := e.bmc.BiosOf("sys-1")
	if st.Patches != 1 || len(st.Pending) != 0 {
		t.Fatalf("settings object %+v", st)
	}
	if st.Attributes["BootMode"] != "Bios" || st.Attributes["ProcTurboMode"] != "Disabled" {
		t.Fatalf("after reboot %+v", st.Attributes)
	}
	if snap := e.bmc.Snapshot("sys-1"); !slices.Equal(snap.Resets, []string{"ForceOff", "On"}) {
		t.Fatalf("no reboot: %v", snap.Resets)
	}
	dii := e.node.DriverInternalInfo
	state, _ := dii["redfish_bios_state"].(map[string]any)
	if state["reboot_requested"] != true || dii["cleaning_reboot"] != true || dii["skip_current_clean_step"] != false ||
		dii["cleaning_polling"] != false {
		t.Fatalf("driver_internal_info %v", dii)
	}
	if requested, _ := state["requested_bios_attrs"].(map[string]any); requested["BootMode"] != "Bios" {
		t.Fatalf("requested attributes %v", state)
	}
	if !b.AsyncStepPending(e.node) {
		t.Fatal("the periodic does not see the BIOS step waiting")
	}
	status, err := b.PollAsyncStep(e.ctx, e.task)
	must(t, err)
	if status != driver.AsyncStepDone {
		t.Fatalf("poll after the reboot applied the settings: %v", status)
	}
	next, err = b.ApplyConfiguration(e.ctx, e.task, settings)
	must(t, err)
	if next != "" || dii["redfish_bios_state"] != nil || b.AsyncStepPending(e.node) {
		t.Fatalf("second call: %q %v", next, dii)
	}
	resets := len(e.bmc.Snapshot("sys-1").Resets)
	next, err = b.ApplyConfiguration(e.ctx, e.task, settings)
	must(t, err)
	if next != "" || len(e.bmc.Snapshot("sys-1").Resets) != resets || e.bmc.BiosOf("sys-1").Patches != 1 {
		t.Fatalf("settings already in place were applied again: %q", next)
	}
}

func TestBIOSPollWaitsForSettings(t *testing.T) {
	e, b := newBiosEnv(t, redfishbmc.BiosIgnores("ProcTurboMode"))
	_, err := b.ApplyConfiguration(e.ctx, e.task, []map[string]any{{"name": "ProcTurboMode", "value": "Disabled"}})
	must(t, err)
	status, err := b.PollAsyncStep(e.ctx, e.task)
	must(t, err)
	if status != driver.AsyncStepRunning {
		t.Fatalf("a setting the BIOS did not take resumed the step: %v", status)
	}
}

func TestBIOSApplyConfigurationNotApplied(t *testing.T) {
	e, b := newBiosEnv(t, redfishbmc.BiosIgnores("ProcTurboMode"))
	e.node.ProvisionState = states.Servicing
	settings := []map[string]any{{"name": "ProcTurboMode", "value": "Disabled"}}
	next, err := b.ApplyConfiguration(e.ctx, e.task, settings)
	must(t, err)
	if next != states.ServiceWait || e.node.DriverInternalInfo["servicing_reboot"] != true {
		t.Fatalf("next %q, %v", next, e.node.DriverInternalInfo)
	}
	_, err = b.ApplyConfiguration(e.ctx, e.task, settings)
	wantClass(t, err, "RedfishError", "Redfish exception occurred. Error: Redfish BIOS apply_configuration step failed. "+
		"Attributes {'ProcTurboMode': 'Disabled'} are not updated.")
}

func TestBIOSApplyConfigurationRejected(t *testing.T) {
	e, b := newBiosEnv(t)
	// The registry says read-only: refused before the BMC is asked.
	_, err := b.ApplyConfiguration(e.ctx, e.task, []map[string]any{{"name": "SerialNumber", "value": "x"},
		{"name": "BootMode", "value": "Floppy"}})
	wantClass(t, err, "InvalidParameterValue", "Redfish BIOS apply_configuration failed for node "+testNode+
		": invalid value for setting(s): BootMode, SerialNumber")
	// The BMC refuses what the registry let through.
	e.bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPatch, Path: "/Bios"}, 1, http.StatusBadRequest, "")
	_, err = b.ApplyConfiguration(e.ctx, e.task, []map[string]any{{"name": "ProcTurboMode", "value": "Disabled"}})
	wantClass(t, err, "RedfishError", "")
	if e.node.DriverInternalInfo["redfish_bios_state"] != nil || e.bmc.Count(http.MethodPost, sysPath+"/Actions/ComputerSystem.Reset") != 0 ||
		e.bmc.BiosOf("sys-1").Patches != 0 {
		t.Fatalf("a refused configuration rebooted the node")
	}
}

func TestBIOSSettingsConvertedToRegistryTypes(t *testing.T) {
	low, high := int64(1), int64(64)
	e, b := newBiosEnv(t, redfishbmc.BiosRegistry(
		redfishbmc.RegistryAttribute{Name: "NumCores", Type: "Integer", LowerBound: &low, UpperBound: &high},
		redfishbmc.RegistryAttribute{Name: "ProcTurboMode", Type: "Boolean"},
	))
	_, err := b.ApplyConfiguration(e.ctx, e.task, []map[string]any{{"name": "NumCores", "value": "65"}})
	wantClass(t, err, "InvalidParameterValue", "Redfish BIOS apply_configuration failed for node "+testNode+
		": invalid value for setting(s): NumCores")
	_, err = b.ApplyConfiguration(e.ctx, e.task, []map[string]any{{"name": "NumCores", "value": "16"},
		{"name": "ProcTurboMode", "value": "False"}})
	must(t, err)
	attrs := e.bmc.BiosOf("sys-1").Attributes
	if attrs["NumCores"] != float64(16) || attrs["ProcTurboMode"] != false {
		t.Fatalf("attributes sent with their registry types: %#v", attrs)
	}
}

func TestBIOSFactoryReset(t *testing.T) {
	e, b := newBiosEnv(t)
	e.bmc.SetBiosAttribute("sys-1", "BootMode", "Bios")
	next, err := b.FactoryReset(e.ctx, e.task)
	must(t, err)
	if next != states.CleanWait {
		t.Fatalf("next %q", next)
	}
	st := e.bmc.BiosOf("sys-1")
	if st.ResetBios != 1 || st.Attributes["BootMode"] != "Uefi" {
		t.Fatalf("after factory reset and reboot %+v", st)
	}
	next, err = b.FactoryReset(e.ctx, e.task)
	must(t, err)
	if next != "" || e.node.DriverInternalInfo["redfish_bios_state"] != nil {
		t.Fatalf("second call %q %v", next, e.node.DriverInternalInfo)
	}
	if e.bmc.BiosOf("sys-1").ResetBios != 1 {
		t.Fatalf("ResetBios called again after the reboot")
	}
}

func TestBIOSStepHandlers(t *testing.T) {
	e, b := newBiosEnv(t)
	step := driver.Step{Interface: driver.KindBIOS, Name: "apply_configuration",
		Args: map[string]any{"settings": []any{map[string]any{"name": "BootMode", "value": "Bios"}}}}
	next, err := driver.ExecuteStep(context.Background(), e.task, b, step)
	must(t, err)
	if next != states.CleanWait || e.bmc.BiosOf("sys-1").Attributes["BootMode"] != "Bios" {
		t.Fatalf("next %q, %v", next, e.bmc.BiosOf("sys-1").Attributes)
	}
}

// ramdiskBoot counts the ramdisk preparations a step asks for; the steps
// use nothing else of the boot interface.
type ramdiskBoot struct {
	driver.BootInterface
	prepared int
}

func (b *ramdiskBoot) PrepareRamdisk(context.Context, *driver.Task, map[string]any) error {
	b.prepared++
	return nil
}

// A step that reboots prepares the ramdisk again, unless the flow runs
// without it: cleaning_disable_ramdisk when cleaning,
// service_disable_ramdisk (the key do_node_service writes) when servicing.
func TestBIOSRebootPreparesRamdiskUnlessDisabled(t *testing.T) {
	for _, tc := range []struct {
		state, key string
		disabled   bool
		wait       string
		prepares   int
	}{
		{states.Cleaning, "cleaning_disable_ramdisk", false, states.CleanWait, 1},
		{states.Cleaning, "cleaning_disable_ramdisk", true, states.CleanWait, 0},
		{states.Servicing, "service_disable_ramdisk", false, states.ServiceWait, 1},
		{states.Servicing, "service_disable_ramdisk", true, states.ServiceWait, 0},
	} {
		t.Run(fmt.Sprintf("%s/%s=%v", tc.state, tc.key, tc.disabled), func(t *testing.T) {
			e, b := newBiosEnv(t)
			boot := &ramdiskBoot{}
			e.drvIfs.Boot = boot
			e.node.ProvisionState = tc.state
			e.node.DriverInternalInfo[tc.key] = tc.disabled
			next, err := b.ApplyConfiguration(e.ctx, e.task, []map[string]any{{"name": "ProcTurboMode", "value": "Disabled"}})
			must(t, err)
			if next != tc.wait || boot.prepared != tc.prepares {
				t.Fatalf("next %q, ramdisk prepared %d times, want %q and %d", next, boot.prepared, tc.wait, tc.prepares)
			}
		})
	}
}
