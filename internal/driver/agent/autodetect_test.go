package agent

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

func autodetectRegistry(t *testing.T, o AutodetectOptions) *driver.Registry {
	t.Helper()
	r := driver.NewRegistry()
	for _, h := range driver.StockHardwareTypes() {
		if err := r.AddHardwareType(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := Register(r, Options{Autodetect: o}); err != nil {
		t.Fatal(err)
	}
	return r
}

func autodetectTask(r *driver.Registry, ii map[string]any) *driver.Task {
	impl, _ := r.Implementation(driver.KindDeploy, "autodetect")
	n := &model.Node{UUID: "0b0c3c4e-7d0f-4a53-9b1a-6a6c1f9f1e01", Driver: "fake-hardware", DeployInterface: "autodetect", InstanceInfo: ii}
	return &driver.Task{Node: n, Driver: &driver.Interfaces{
		HardwareType: "fake-hardware", Names: map[driver.Kind]string{driver.KindDeploy: "autodetect"},
		Deploy: impl.(driver.DeployInterface),
	}}
}

func TestAutodetectSwitchesToFirstSupporting(t *testing.T) {
	o := AutodetectOptions{Candidates: []string{"ramdisk", "direct"}, Enabled: []string{"autodetect", "direct", "ramdisk"}}
	r := autodetectRegistry(t, o)
	ctx := context.Background()

	task := autodetectTask(r, map[string]any{"boot_iso": "http://127.0.0.1/boot.iso", "ironic_ramdisk_deploy": true})
	if err := task.Driver.Deploy.(driver.InterfaceSwitcher).SwitchInterface(ctx, task); err != nil {
		t.Fatal(err)
	}
	if _, ok := task.Driver.Deploy.(*Ramdisk); !ok || task.Node.DeployInterface != "ramdisk" || task.Driver.Names[driver.KindDeploy] != "ramdisk" {
		t.Fatalf("switched to %T, node %q", task.Driver.Deploy, task.Node.DeployInterface)
	}
	if task.Node.DriverInternalInfo["original_deploy_interface"] != "autodetect" {
		t.Errorf("driver_internal_info %v", task.Node.DriverInternalInfo)
	}
	if err := task.Driver.Deploy.(driver.InterfaceRestorer).RestoreInterface(ctx, task); err != nil {
		t.Fatal(err)
	}
	if task.Node.DeployInterface != "autodetect" || task.Node.DriverInternalInfo["original_deploy_interface"] != nil {
		t.Errorf("after restore: %q, %v", task.Node.DeployInterface, task.Node.DriverInternalInfo)
	}

	// A disk image: ramdisk declines, the last candidate is the fallback.
	task = autodetectTask(r, map[string]any{"image_source": "http://127.0.0.1/disk.img"})
	if err := task.Driver.Deploy.(driver.InterfaceSwitcher).SwitchInterface(ctx, task); err != nil {
		t.Fatal(err)
	}
	if _, ok := task.Driver.Deploy.(*Direct); !ok || task.Node.DeployInterface != "direct" {
		t.Fatalf("fallback switched to %T, node %q", task.Driver.Deploy, task.Node.DeployInterface)
	}
	// The ramdisk flag alone is not enough.
	if NewRamdisk(Options{}).SupportsDeploy(ctx, &driver.Task{Node: &model.Node{InstanceInfo: map[string]any{"ironic_ramdisk_deploy": true}}}) {
		t.Error("ramdisk supports a deployment without boot_iso or kernel/ramdisk")
	}
}

func TestAutodetectRefusesDisabledCandidate(t *testing.T) {
	r := autodetectRegistry(t, AutodetectOptions{Candidates: []string{"ramdisk", "bootc", "direct"}, Enabled: []string{"autodetect", "direct", "ramdisk"}})
	task := autodetectTask(r, map[string]any{"image_source": "http://127.0.0.1/disk.img"})
	a := task.Driver.Deploy.(*Autodetect)
	want := "Deploy interface 'bootc' is configured in autodetect_deploy_interfaces but is not in enabled_deploy_interfaces. " +
		"Please add 'bootc' to enabled_deploy_interfaces or remove it from autodetect_deploy_interfaces."
	for name, err := range map[string]error{
		"switch":   a.SwitchInterface(context.Background(), task),
		"validate": a.Validate(context.Background(), task),
		"config":   a.CheckConfig(),
	} {
		if err == nil || err.Error() != want || !driver.IsClass(err, errs.ClassInvalidParameterValue) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if task.Node.DeployInterface != "autodetect" {
		t.Errorf("refused switch changed the node: %q", task.Node.DeployInterface)
	}
	if _, err := a.Deploy(context.Background(), task); !driver.IsClass(err, errs.ClassInstanceDeployFailure) {
		t.Errorf("deploy without a switch: %v", err)
	}
	if err := a.Prepare(context.Background(), task); !driver.IsClass(err, errs.ClassInstanceDeployFailure) {
		t.Errorf("prepare without a switch: %v", err)
	}
}
