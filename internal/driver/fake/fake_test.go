package fake

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

func task() *driver.Task {
	return &driver.Task{Node: &model.Node{UUID: "5e1c9c5a-3f3e-4d1b-a0f5-0e5b6c1d2e3f", Driver: "fake-hardware"}}
}

func TestPowerKeepsStateOnNode(t *testing.T) {
	ctx := context.Background()
	p := &Power{}
	tk := task()
	for _, s := range []string{states.PowerOn, states.SoftPowerOff, states.PowerOff, states.SoftReboot} {
		if err := p.SetPowerState(ctx, tk, s, 0); err != nil {
			t.Fatalf("set %s: %v", s, err)
		}
		if got, _ := p.GetPowerState(ctx, tk); got != s {
			t.Errorf("after set %q: power state %q", s, got)
		}
	}
	err := p.SetPowerState(ctx, tk, states.Reboot, 0)
	if !driver.IsClass(err, errs.ClassInvalidParameterValue) || err.Error() != "set_power_state called with an invalid power state: rebooting." {
		t.Errorf("set rebooting = %v", err)
	}
	if tk.Node.PowerState != states.SoftReboot {
		t.Errorf("a refused state changed the node: %q", tk.Node.PowerState)
	}
	if err := p.Reboot(ctx, tk, 0); err != nil || tk.Node.PowerState != states.SoftReboot {
		t.Errorf("reboot = %v, state %q", err, tk.Node.PowerState)
	}
}

func TestVendorPassthru(t *testing.T) {
	ctx := context.Background()
	v := &VendorB{}
	tk := task()
	for _, m := range []string{"second_method", "third_method_sync", "fourth_method_shared_lock"} {
		err := v.Validate(ctx, tk, m, map[string]any{})
		if !driver.IsClass(err, errs.ClassMissingParameterValue) || err.Error() != "Parameter 'bar' not passed to method '"+m+"'." {
			t.Errorf("validate %s = %v", m, err)
		}
	}
	if err := v.Validate(ctx, tk, "log_passthrough", nil); err != nil {
		t.Errorf("validate log_passthrough = %v", err)
	}
	routes := v.VendorRoutes()
	for name, want := range map[string]struct {
		bar    string
		async  bool
		excl   bool
		result bool
	}{
		"second_method":             {"kazoo", true, true, true},
		"third_method_sync":         {"meow", false, true, true},
		"fourth_method_shared_lock": {"woof", true, false, true},
	} {
		r, ok := routes[name]
		if !ok {
			t.Fatalf("no route %s", name)
		}
		if r.Async != want.async || r.RequireExclusiveLock != want.excl || len(r.HTTPMethods) != 1 || r.HTTPMethods[0] != "POST" {
			t.Errorf("%s metadata = %+v", name, r)
		}
		got, err := r.Func(ctx, tk, "POST", map[string]any{"bar": want.bar})
		if err != nil || got != true {
			t.Errorf("%s(bar=%s) = %v, %v", name, want.bar, got, err)
		}
		if got, _ := r.Func(ctx, tk, "POST", map[string]any{"bar": "other"}); got != false {
			t.Errorf("%s(bar=other) = %v", name, got)
		}
	}
	if len(routes) != 4 {
		t.Errorf("routes = %d, want 4", len(routes))
	}
	a := &VendorA{}
	if err := a.Validate(ctx, tk, "first_method", map[string]any{"bar": ""}); !driver.IsClass(err, errs.ClassMissingParameterValue) {
		t.Errorf("VendorA validate = %v", err)
	}
	if got, _ := a.VendorRoutes()["first_method"].Func(ctx, tk, "POST", map[string]any{"bar": "baz"}); got != true {
		t.Errorf("first_method(baz) = %v", got)
	}
}

func TestManagement(t *testing.T) {
	ctx := context.Background()
	m := &Management{}
	tk := task()
	if err := m.SetBootDevice(ctx, tk, "pxe", true); err != nil {
		t.Error(err)
	}
	if err := m.SetBootDevice(ctx, tk, "disk", false); err == nil || err.Error() != "Invalid boot device disk specified." {
		t.Errorf("set disk = %v", err)
	}
	bd, err := m.GetBootDevice(ctx, tk)
	if err != nil || bd.BootDevice != "pxe" || bd.Persistent == nil || *bd.Persistent {
		t.Errorf("boot device = %+v, %v", bd, err)
	}
	ind, _ := m.GetSupportedIndicators(ctx, tk, "system")
	if len(ind) != 1 || ind["system"]["led"].ReadOnly {
		t.Errorf("system indicators = %v", ind)
	}
	if s, err := m.GetIndicatorState(ctx, tk, "chassis", "led-0"); err != nil || s != "on" {
		t.Errorf("chassis led-0 = %q, %v", s, err)
	}
	if _, err := m.GetIndicatorState(ctx, tk, "chassis", "led"); err == nil || err.Error() != "Invalid indicator led specified." {
		t.Errorf("chassis led = %v", err)
	}
	if _, err := m.GetIndicatorState(ctx, tk, "disk", "led"); err == nil || err.Error() != "Invalid component disk specified." {
		t.Errorf("disk led = %v", err)
	}
}

func TestOutcomes(t *testing.T) {
	ctx := context.Background()
	tk := task()
	if s, err := (&Deploy{}).TearDown(ctx, tk); err != nil || s != states.Deleted {
		t.Errorf("tear down = %q, %v", s, err)
	}
	if s, err := (&Deploy{}).Deploy(ctx, tk); err != nil || s != "" {
		t.Errorf("deploy = %q, %v", s, err)
	}
	if s, err := (&Inspect{}).InspectHardware(ctx, tk); err != nil || s != states.Manageable {
		t.Errorf("inspect = %q, %v", s, err)
	}
	if s, _ := (&Rescue{}).Rescue(ctx, tk); s != states.Rescue {
		t.Errorf("rescue = %q", s)
	}
	if s, _ := (&Rescue{}).Unrescue(ctx, tk); s != states.Active {
		t.Errorf("unrescue = %q", s)
	}
}

func TestDelays(t *testing.T) {
	for in, want := range map[string]delay{"": {}, "0": {}, "3": {3, 3}, "1,4": {1, 4}, " 2 , 5 ": {2, 5}} {
		got, err := parseDelay("power_delay", in)
		if err != nil || got != want {
			t.Errorf("parse %q = %v, %v", in, got, err)
		}
	}
	if _, err := parseDelay("power_delay", "x"); err == nil {
		t.Error("bad delay accepted")
	}
	if err := Register(driver.NewRegistry(), Delays{Boot: "1,x"}); err == nil {
		t.Error("Register accepted a bad delay")
	}
	for range 1000 {
		if v := triangular(1, 4, 1); v < 1 || v > 4 {
			t.Fatalf("triangular out of range: %v", v)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	err := (&Power{delay: delay{30, 30}}).Reboot(ctx, task(), 0)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Errorf("cancelled delay = %v after %v", err, time.Since(start))
	}
}

func TestBIOSSettingsAfterStep(t *testing.T) {
	b := &BIOS{}
	args := map[string]any{"settings": []any{
		map[string]any{"name": "ProcVirtualization", "value": "Enabled"},
		map[string]any{"name": "NumCores", "value": 8.0},
		map[string]any{"name": "Unset", "value": nil},
	}}
	got, ok, err := b.SettingsAfterStep("apply_configuration", args)
	if err != nil || !ok || len(got) != 3 {
		t.Fatalf("apply_configuration = %+v, %v, %v", got, ok, err)
	}
	if got[0].Name != "ProcVirtualization" || *got[0].Value != "Enabled" || *got[1].Value != "8" || got[2].Value != nil {
		t.Errorf("settings %+v", got)
	}
	if got, ok, err := b.SettingsAfterStep("factory_reset", nil); err != nil || !ok || got == nil || len(got) != 0 {
		t.Errorf("factory_reset = %+v, %v, %v: every row goes", got, ok, err)
	}
	if _, ok, err := b.SettingsAfterStep("cache_bios_settings", nil); ok || err != nil {
		t.Errorf("cache_bios_settings writes rows: %v, %v", ok, err)
	}
	for key, setting := range map[string]map[string]any{"name": {"value": "1"}, "value": {"name": "A"}} {
		_, _, err := b.SettingsAfterStep("apply_configuration", map[string]any{"settings": []any{setting}})
		if !driver.IsClass(err, errs.ClassInvalidParameterValue) || err.Error() != "'"+key+"'" {
			t.Errorf("setting without %s: %v", key, err)
		}
	}
	if _, _, err := b.SettingsAfterStep("apply_configuration", map[string]any{}); !driver.IsClass(err, errs.ClassMissingParameterValue) {
		t.Errorf("no settings: %v", err)
	}
}

func TestRAIDValidatesWithTheSchema(t *testing.T) {
	ctx := context.Background()
	r := &RAID{}
	tk := task()
	if err := r.Validate(ctx, tk); err != nil {
		t.Errorf("no target_raid_config: %v", err)
	}
	bad := map[string]any{"logical_disks": []any{map[string]any{"size_gb": 100.0, "raid_level": "7"}}}
	want := "RAID config validation error: '7' is not one of ['JBOD', '0', '1', '2', '5', '6', '1+0', '5+0', '6+0']"
	if err := r.ValidateRAIDConfig(ctx, tk, bad); !driver.IsClass(err, errs.ClassInvalidParameterValue) || err.Error() != want {
		t.Errorf("level 7 = %v", err)
	}
	tk.Node.TargetRAIDConfig = bad
	if err := r.Validate(ctx, tk); err == nil || err.Error() != want {
		t.Errorf("validate with level 7 stored = %v", err)
	}
	good := map[string]any{"logical_disks": []any{map[string]any{"size_gb": "MAX", "raid_level": "1", "is_root_volume": true}}}
	if err := r.ValidateRAIDConfig(ctx, tk, good); err != nil {
		t.Errorf("valid config = %v", err)
	}
}
