package noop

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

func TestNoInterfacesRefuse(t *testing.T) {
	ctx := context.Background()
	tk := &driver.Task{Node: &model.Node{Driver: "ipmi"}}
	calls := map[string]func() error{
		"bios validate":      func() error { return NoBIOS{}.Validate(ctx, tk) },
		"bios apply":         func() error { _, err := NoBIOS{}.ApplyConfiguration(ctx, tk, nil); return err },
		"bios factory_reset": func() error { _, err := NoBIOS{}.FactoryReset(ctx, tk); return err },
		"console validate":   func() error { return NoConsole{}.Validate(ctx, tk) },
		"console start":      func() error { return NoConsole{}.StartConsole(ctx, tk) },
		"console stop":       func() error { return NoConsole{}.StopConsole(ctx, tk) },
		"console get":        func() error { _, err := NoConsole{}.GetConsole(ctx, tk); return err },
		"firmware validate":  func() error { return NoFirmware{}.Validate(ctx, tk) },
		"firmware update":    func() error { _, err := NoFirmware{}.Update(ctx, tk, nil); return err },
		"inspect validate":   func() error { return NoInspect{}.Validate(ctx, tk) },
		"inspect hardware":   func() error { _, err := NoInspect{}.InspectHardware(ctx, tk); return err },
		"raid validate":      func() error { return NoRAID{}.Validate(ctx, tk) },
		"raid create":        func() error { _, err := NoRAID{}.CreateConfiguration(ctx, tk, true, true, false); return err },
		"raid delete":        func() error { _, err := NoRAID{}.DeleteConfiguration(ctx, tk); return err },
		"raid validate_raid": func() error { return NoRAID{}.ValidateRAIDConfig(ctx, tk, nil) },
		"rescue validate":    func() error { return NoRescue{}.Validate(ctx, tk) },
		"rescue rescue":      func() error { _, err := NoRescue{}.Rescue(ctx, tk); return err },
		"rescue unrescue":    func() error { _, err := NoRescue{}.Unrescue(ctx, tk); return err },
		"vendor validate":    func() error { return NoVendor{}.Validate(ctx, tk, "any", nil) },
	}
	for name, call := range calls {
		err := call()
		if !driver.IsClass(err, errs.ClassUnsupportedDriverExtension) {
			t.Errorf("%s = %v, want UnsupportedDriverExtension", name, err)
			continue
		}
		kind, _, _ := strings.Cut(name, " ")
		if want := "Driver ipmi does not support " + kind + " (disabled or not implemented)."; err.Error() != want {
			t.Errorf("%s = %q, want %q", name, err, want)
		}
	}
	if err := (NoVendor{}).DriverValidate(ctx, "m", nil); err == nil || err.Error() != "Driver NoVendor does not support vendor (disabled or not implemented)." {
		t.Errorf("driver_validate = %v", err)
	}
	if err := (NoBIOS{}).CacheBIOSSettings(ctx, tk); err != nil {
		t.Errorf("cache_bios_settings = %v", err)
	}
	if err := (NoFirmware{}).CacheFirmwareComponents(ctx, tk); err != nil {
		t.Errorf("cache_firmware_components = %v", err)
	}
}

func TestNoopInterfacesSucceed(t *testing.T) {
	ctx := context.Background()
	tk := &driver.Task{Node: &model.Node{Driver: "ipmi"}}
	m := Management{}
	if err := m.SetBootDevice(ctx, tk, "disk", true); err != nil {
		t.Error(err)
	}
	if err := m.SetBootDevice(ctx, tk, "cdrom", true); err == nil || err.Error() != "Invalid boot device cdrom specified, supported are pxe, disk." {
		t.Errorf("set cdrom = %v", err)
	}
	if bd, _ := m.GetBootDevice(ctx, tk); bd.BootDevice != "pxe" || bd.Persistent == nil || !*bd.Persistent {
		t.Errorf("boot device = %+v", bd)
	}
	if _, err := m.GetSensorsData(ctx, tk); !errors.Is(err, driver.ErrNotImplemented) {
		t.Errorf("sensors = %v", err)
	}
	if s, err := (NoDeploy{}).TearDown(ctx, tk); err != nil || s != "deleted" {
		t.Errorf("noop tear down = %q, %v", s, err)
	}
	if vifs, err := (Network{}).VifList(ctx, tk); err != nil || len(vifs) != 0 {
		t.Errorf("vif list = %v, %v", vifs, err)
	}
	if !(Storage{}).ShouldWriteImage(ctx, tk) {
		t.Error("noop storage should write the image")
	}
	r := driver.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	if err := Register(r); err == nil {
		t.Error("second registration accepted")
	}
}
