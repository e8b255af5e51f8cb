package redfish

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
)

// Issue 23 item 2: with no agent images on the node, virtual media takes
// the pair and the boot loader of the node's cpu_arch
// ([conductor]/*_by_arch, bootloader_by_arch) before the conductor-wide
// ones; half a pair for the architecture is not used.
func TestVirtualMediaImagesByArch(t *testing.T) {
	e := newBootEnv(t, func(o *BootOptions) {
		o.DeployKernel, o.DeployRamdisk, o.Bootloader = "http://x/k", "http://x/r", "http://x/esp.img"
		o.DeployKernelByArch = map[string]string{"aarch64": "http://arm/k", "x86_64": "http://x86/k"}
		o.DeployRamdiskByArch = map[string]string{"aarch64": "http://arm/r"}
		o.RescueKernelByArch = map[string]string{"aarch64": "http://arm/rk"}
		o.RescueRamdiskByArch = map[string]string{"aarch64": "http://arm/rr"}
		o.BootloaderByArch = map[string]string{"aarch64": "http://arm/esp.img"}
	})
	delete(e.node.DriverInfo, "deploy_kernel")
	delete(e.node.DriverInfo, "deploy_ramdisk")
	e.node.Properties = map[string]any{"cpu_arch": "aarch64"}
	for _, tc := range []struct {
		arch, state, kernel, ramdisk, bootloader string
	}{
		{"aarch64", "deploying", "http://arm/k", "http://arm/r", "http://arm/esp.img"},
		{"aarch64", "rescuing", "http://arm/rk", "http://arm/rr", "http://arm/esp.img"},
		{"x86_64", "deploying", "http://x/k", "http://x/r", "http://x/esp.img"},
		{"", "deploying", "http://x/k", "http://x/r", "http://x/esp.img"},
	} {
		e.node.Properties["cpu_arch"] = tc.arch
		e.node.ProvisionState = tc.state
		d, err := e.boot.parseDriverInfo(&driver.Task{Node: e.node})
		if err != nil {
			t.Fatalf("%s %s: %v", tc.arch, tc.state, err)
		}
		if d.kernel != tc.kernel || d.ramdisk != tc.ramdisk || d.bootloader != tc.bootloader {
			t.Errorf("%s %s: %q %q %q, want %q %q %q", tc.arch, tc.state, d.kernel, d.ramdisk, d.bootloader, tc.kernel, tc.ramdisk, tc.bootloader)
		}
	}
	// The node's own boot loader and pair come first.
	e.node.Properties["cpu_arch"] = "aarch64"
	e.node.ProvisionState = "deploying"
	e.node.DriverInfo["bootloader"] = "http://n/esp.img"
	e.node.DriverInfo["deploy_kernel"], e.node.DriverInfo["deploy_ramdisk"] = "http://n/k", "http://n/r"
	if d, _ := e.boot.parseDriverInfo(&driver.Task{Node: e.node}); d.kernel != "http://n/k" || d.bootloader != "http://n/esp.img" {
		t.Errorf("node's own: %q %q", d.kernel, d.bootloader)
	}
}

// A half pair of agent images, on the node or for its cpu_arch, is
// ambiguous: upstream passes over it with a warning and takes the next
// whole pair, or, with [conductor]/error_on_ramdisk_config_inconsistency,
// refuses it with MissingParameterValue. Validate answers as the boot
// interface's validation through the API would.
func TestVirtualMediaRamdiskConfigInconsistency(t *testing.T) {
	for _, strict := range []bool{false, true} {
		e := newBootEnv(t, func(o *BootOptions) {
			o.DeployKernel, o.DeployRamdisk = "http://x/k", "http://x/r"
			o.DeployKernelByArch = map[string]string{"aarch64": "http://arm/k"}
			o.ErrorOnRamdiskConfigInconsistency = strict
		})
		task := &driver.Task{Node: e.node}
		e.node.ProvisionState = "deploying"
		delete(e.node.DriverInfo, "deploy_ramdisk")
		e.node.DriverInfo["deploy_kernel"] = "http://n/k"
		nodeMsg := "Node " + e.node.UUID + " driver_info has an override for deploy_kernel, but not for deploy_ramdisk. " +
			"This configuration is ambiguous. Node " + e.node.UUID + " cannot boot a ramdisk."
		err := e.boot.Validate(context.Background(), task)
		d, _ := e.boot.parseDriverInfo(task)
		switch {
		case strict && (!errs.Is(err, errs.ClassMissingParameterValue) || err.Error() != nodeMsg):
			t.Fatalf("strict, half pair on the node: %v", err)
		case !strict && (err != nil || d.kernel != "http://x/k" || d.ramdisk != "http://x/r"):
			t.Fatalf("lenient, half pair on the node: %v, %q %q", err, d.kernel, d.ramdisk)
		}

		delete(e.node.DriverInfo, "deploy_kernel")
		e.node.Properties = map[string]any{"cpu_arch": "aarch64"}
		archMsg := "CONF.conductor.deploy_kernel_by_arch has a value for aarch64 servers, but doesn't have one in " +
			"CONF.conductor.deploy_ramdisk_by_arch. This configuration is ambiguous. Node " + e.node.UUID + " cannot boot a ramdisk."
		err = e.boot.Validate(context.Background(), task)
		d, _ = e.boot.parseDriverInfo(task)
		switch {
		case strict && (!errs.Is(err, errs.ClassMissingParameterValue) || err.Error() != archMsg):
			t.Fatalf("strict, half pair for the arch: %v", err)
		case !strict && (err != nil || d.kernel != "http://x/k" || d.ramdisk != "http://x/r"):
			t.Fatalf("lenient, half pair for the arch: %v, %q %q", err, d.kernel, d.ramdisk)
		}
	}
}
