package driver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// fakeSettings enables fake-hardware and manual-management with the fake and
// no-op implementations, leaving power and management computed.
func fakeSettings() driver.Settings {
	return driver.Settings{
		EnabledHardwareTypes: []string{"fake-hardware", "manual-management", "fake-hardware", ""},
		EnabledInterfaces: map[driver.Kind][]string{
			driver.KindBIOS:     {"fake", "no-bios"},
			driver.KindBoot:     {"fake"},
			driver.KindConsole:  {"fake", "no-console"},
			driver.KindDeploy:   {"fake", "noop"},
			driver.KindFirmware: {"fake", "no-firmware"},
			driver.KindInspect:  {"fake", "no-inspect"},
			driver.KindNetwork:  {"noop"},
			driver.KindRAID:     {"fake", "no-raid"},
			driver.KindRescue:   {"fake", "no-rescue"},
			driver.KindStorage:  {"fake", "noop"},
			driver.KindVendor:   {"fake", "no-vendor"},
		},
		DefaultInterfaces: map[driver.Kind]string{},
	}
}

func TestBuildComputesEnabledPowerAndManagement(t *testing.T) {
	r := fullRegistry(t)
	s := fakeSettings()
	s.EnabledInterfaces[driver.KindManagement] = nil
	// manual-management prefers agent power, which is not registered: the
	// computed list must include it and so fail to load, as upstream would.
	_, err := r.Build(s)
	if !driver.IsClass(err, errs.ClassDriverNotFoundInEntrypoint) || !strings.Contains(err.Error(),
		"Could not find the following items in the 'ironic.hardware.interfaces.power' entrypoint: agent.") {
		t.Fatalf("Build = %v", err)
	}
	s.EnabledHardwareTypes = []string{"fake-hardware"}
	d, err := r.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Enabled(driver.KindPower); len(got) != 1 || got[0] != "fake" {
		t.Errorf("power enabled = %v", got)
	}
	if got := d.Enabled(driver.KindManagement); len(got) != 1 || got[0] != "fake" {
		t.Errorf("management enabled = %v", got)
	}
}

func TestBuildRejectsUnknownNames(t *testing.T) {
	r := fullRegistry(t)
	s := fakeSettings()
	s.EnabledHardwareTypes = []string{"fake-hardware", "nope", "ilo"}
	_, err := r.Build(s)
	if want := "Could not find the following items in the 'ironic.hardware.types' entrypoint: nope, ilo."; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("Build = %v, want ...%s", err, want)
	}
	if !driver.IsClass(err, errs.ClassDriverNotFound) || !driver.IsClass(err, errs.ClassNotFound) {
		t.Errorf("error class: %v", err)
	}
	s = fakeSettings()
	s.EnabledHardwareTypes = []string{"fake-hardware"}
	s.EnabledInterfaces[driver.KindBoot] = []string{"fake", "ipxe"}
	if _, err := r.Build(s); err == nil || !strings.HasSuffix(err.Error(), "'ironic.hardware.interfaces.boot' entrypoint: ipxe.") {
		t.Errorf("Build = %v", err)
	}
}

func TestHardwareInterfacesAndDefaults(t *testing.T) {
	r := fullRegistry(t)
	s := fakeSettings()
	s.EnabledHardwareTypes = []string{"fake-hardware"}
	s.DefaultInterfaces[driver.KindDeploy] = "noop"
	d, err := r.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := d.HardwareInterfaces()
	if err != nil {
		t.Fatal(err)
	}
	defaults := map[driver.Kind]string{}
	names := map[driver.Kind][]string{}
	for _, row := range rows {
		if row.HardwareType != "fake-hardware" {
			t.Errorf("row for %s", row.HardwareType)
		}
		names[row.InterfaceType] = append(names[row.InterfaceType], row.InterfaceName)
		if row.Default {
			if defaults[row.InterfaceType] != "" {
				t.Errorf("%s: two defaults", row.InterfaceType)
			}
			defaults[row.InterfaceType] = row.InterfaceName
		}
	}
	// noop deploy is not in fake-hardware's supported list: it is enabled but
	// only usable by naming it, and the configured default is still
	// accepted because fake-hardware accepts anything.
	if defaults[driver.KindDeploy] != "" || strings.Join(names[driver.KindDeploy], ",") != "fake" {
		t.Errorf("deploy rows %v default %q", names[driver.KindDeploy], defaults[driver.KindDeploy])
	}
	if def, err := d.DefaultInterface(mustHW(t, d, "fake-hardware"), driver.KindDeploy, ""); err != nil || def != "noop" {
		t.Errorf("deploy default = %q, %v", def, err)
	}
	if defaults[driver.KindNetwork] != "noop" || defaults[driver.KindBIOS] != "fake" || defaults[driver.KindVendor] != "fake" {
		t.Errorf("defaults = %v", defaults)
	}
}

func TestConfiguredDefaultErrors(t *testing.T) {
	r := fullRegistry(t)
	s := fakeSettings()
	s.EnabledHardwareTypes = []string{"fake-hardware", "manual-management"}
	s.EnabledInterfaces[driver.KindPower] = []string{"fake"}
	s.EnabledInterfaces[driver.KindManagement] = []string{"fake", "noop"}
	s.DefaultInterfaces[driver.KindRescue] = "agent"
	d, err := r.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.HardwareInterfaces()
	want := "Could not find the following interface in the 'ironic.hardware.interfaces.rescue' entrypoint: agent. Valid interfaces are ['fake', 'no-rescue']."
	if !driver.IsClass(err, errs.ClassInterfaceNotFoundInEntrypoint) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("default not enabled: %v", err)
	}
	// fake BIOS is enabled but manual-management does not support it.
	s.DefaultInterfaces[driver.KindRescue] = ""
	s.DefaultInterfaces[driver.KindBIOS] = "fake"
	if d, err = r.Build(s); err != nil {
		t.Fatal(err)
	}
	_, err = d.HardwareInterfaces()
	want = "For hardware type 'manual-management', no default value found for bios interface could be determined. Please ensure the interfaces are enabled."
	if !driver.IsClass(err, errs.ClassNoValidDefaultForInterface) || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("default not supported: %v", err)
	}
}

func mustHW(t *testing.T, d *driver.Drivers, name string) *driver.HardwareType {
	t.Helper()
	h, err := d.HardwareType(name)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// strictHW is a hardware type without fake-hardware's licence to use any
// enabled implementation, built only from what this build registers.
var strictHW = driver.HardwareType{
	Name: "strict", ClassName: "StrictHardware",
	Supported: map[driver.Kind][]string{
		driver.KindBIOS: {"no-bios"}, driver.KindBoot: {"fake"}, driver.KindConsole: {"no-console"},
		driver.KindDeploy: {"fake"}, driver.KindFirmware: {"no-firmware"}, driver.KindInspect: {"no-inspect"},
		driver.KindManagement: {"noop", "fake"}, driver.KindNetwork: {"flat", "noop"},
		driver.KindPower: {"agent", "fake"}, driver.KindRAID: {"agent", "no-raid"},
		driver.KindRescue: {"no-rescue"}, driver.KindStorage: {"noop"}, driver.KindVendor: {"no-vendor"},
	},
}

// TestUnknownInterfaceListsValidSorted: upstream names the valid
// implementations in entry-point order (sorted), not the configured one
// (observed from upstream 21.4 with enabled_deploy_interfaces =
// fake,direct,ramdisk).
func TestUnknownInterfaceListsValidSorted(t *testing.T) {
	ht, _ := fullRegistry(t).HardwareType("fake-hardware")
	err := driver.GetInterfaceName(ht, driver.KindDeploy, "bogus", []string{"fake", "direct", "ramdisk"})
	want := "Could not find the following interface in the 'ironic.hardware.interfaces.deploy' entrypoint: bogus. Valid interfaces are ['direct', 'fake', 'ramdisk']."
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestNodeInterfaces(t *testing.T) {
	r := fullRegistry(t)
	if err := r.AddHardwareType(strictHW); err != nil {
		t.Fatal(err)
	}
	s := fakeSettings()
	s.EnabledHardwareTypes = []string{"fake-hardware", "strict"}
	s.EnabledInterfaces[driver.KindPower] = []string{"fake"}
	s.EnabledInterfaces[driver.KindManagement] = []string{"fake", "noop"}
	d, err := r.Build(s)
	if err != nil {
		t.Fatal(err)
	}

	node := &model.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", Driver: "strict", RAIDInterface: "no-raid"}
	changed, err := d.CheckAndUpdateNodeInterfaces(node)
	if err != nil || !changed {
		t.Fatalf("CheckAndUpdateNodeInterfaces = %v, %v", changed, err)
	}
	want := map[driver.Kind]string{
		driver.KindPower: "fake", driver.KindManagement: "noop", driver.KindRAID: "no-raid",
		driver.KindBIOS: "no-bios", driver.KindVendor: "no-vendor", driver.KindNetwork: "noop",
	}
	for k, v := range want {
		if got := driver.NodeInterface(node, k); got != v {
			t.Errorf("%s_interface = %q, want %q", k, got, v)
		}
	}
	if _, err := d.CheckAndUpdateNodeInterfaces(node); err != nil {
		t.Fatal(err)
	}

	// A non-fake hardware type refuses an enabled but unsupported name.
	node.BIOSInterface = "fake"
	_, err = d.ForNode(node)
	if msg := "bios interface implementation 'fake' is not supported by hardware type StrictHardware."; !driver.IsClass(err, errs.ClassIncompatibleInterface) || err.Error() != msg {
		t.Errorf("ForNode = %v", err)
	}
	node.BIOSInterface = "no-bios"

	// instance_info overrides the node field for the deployment.
	node.InstanceInfo = map[string]any{"deploy_interface": "noop"}
	drv, err := d.ForNode(node)
	if err == nil {
		t.Fatal("noop deploy is not supported by strict, want error")
	}
	node.Driver = "fake-hardware"
	if drv, err = d.ForNode(node); err != nil {
		t.Fatal(err)
	}
	if drv.Names[driver.KindDeploy] != "noop" || node.DeployInterface != "fake" {
		t.Errorf("deploy = %q (node field %q)", drv.Names[driver.KindDeploy], node.DeployInterface)
	}
	for _, k := range driver.AllKinds {
		if drv.Get(k) == nil {
			t.Errorf("%s interface not attached", k)
		}
	}

	task := &driver.Task{Node: node, Driver: drv}
	ctx := context.Background()
	if err := drv.Management.SetBootDevice(ctx, task, "cdrom", false); !driver.IsClass(err, errs.ClassInvalidParameterValue) {
		t.Errorf("noop management accepts cdrom: %v", err)
	}
	if err := drv.BIOS.Validate(ctx, task); err == nil || err.Error() != "Driver fake-hardware does not support bios (disabled or not implemented)." {
		t.Errorf("no-bios validate = %v", err)
	}

	node.Driver = "ipmi"
	if _, err := d.ForNode(node); err == nil || err.Error() != "Could not find the following driver(s) or hardware type(s): ipmi." {
		t.Errorf("ForNode(ipmi) = %v", err)
	}
}

func TestRegisterChecksContracts(t *testing.T) {
	r := driver.NewRegistry()
	if err := r.Register(driver.KindPower, "fake", &fake.Boot{}); err == nil {
		t.Error("a boot implementation registered as power")
	}
	if err := r.Register(driver.KindPower, "fake", &fake.Power{}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(driver.KindPower, "fake", &fake.Power{}); err == nil {
		t.Error("duplicate registration accepted")
	}
	if err := r.Register(driver.KindVendor, "broken", &brokenVendor{}); err == nil || !strings.Contains(err.Error(), "no handler") {
		t.Errorf("step without handler: %v", err)
	}
	if err := r.Register("bogus", "x", &fake.Power{}); err == nil {
		t.Error("unknown kind accepted")
	}
}

// brokenVendor declares a step it cannot run.
type brokenVendor struct{ fake.VendorB }

func (brokenVendor) Steps() []driver.StepSpec {
	return []driver.StepSpec{driver.CleanStep("missing", 5)}
}
