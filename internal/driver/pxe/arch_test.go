package pxe

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Issue 23 item 2: a node that names no agent images boots the pair of
// its cpu_arch ([conductor]/deploy_kernel_by_arch and
// deploy_ramdisk_by_arch) rather than the conductor-wide pair, with the
// PXE template of its architecture ([pxe]/pxe_config_template_by_arch);
// half a pair for the architecture falls back to the conductor-wide pair.
func TestAgentImagesAndTemplateByArch(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "bios")
	kernel, ramdisk := e.node.DriverInfo["deploy_kernel"].(string), e.node.DriverInfo["deploy_ramdisk"].(string)
	delete(e.node.DriverInfo, "deploy_kernel")
	delete(e.node.DriverInfo, "deploy_ramdisk")
	e.node.Properties = map[string]any{"cpu_arch": "aarch64"}
	tmpl := filepath.Join(t.TempDir(), "aarch64.template")
	if err := os.WriteFile(tmpl, []byte("ARM K={{ .pxe_options.deployment_aki_path }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := e.opts
	// The conductor-wide pair cannot be fetched: only the aarch64 pair can.
	o.DeployKernel, o.DeployRamdisk = "http://127.0.0.1:1/x86-kernel", "http://127.0.0.1:1/x86-ramdisk"
	o.DeployKernelByArch = map[string]string{"aarch64": kernel, "x86_64": "http://127.0.0.1:1/other"}
	o.DeployRamdiskByArch = map[string]string{"aarch64": ramdisk}
	o.ConfigTemplateByArch = map[string]string{"aarch64": tmpl}
	if err := NewPXE(o).PrepareRamdisk(ctx, e.task, nil); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(e.tftp, e.node.UUID, "deploy_kernel"))
	if err != nil || string(got) != "KERNEL" {
		t.Errorf("deploy_kernel = %q, %v; want the aarch64 kernel", got, err)
	}
	cfg, _ := os.ReadFile(filepath.Join(e.tftp, e.node.UUID, "config"))
	if string(cfg) != "ARM K="+e.node.UUID+"/deploy_kernel" {
		t.Errorf("config = %q, want the aarch64 template's", cfg)
	}

	// x86_64 has a kernel but no ramdisk: the conductor-wide pair applies.
	e.node.Properties["cpu_arch"] = "x86_64"
	k, r, err := NewPXE(o).kernelRamdisk(e.task, "deploy")
	if err != nil || k != o.DeployKernel || r != o.DeployRamdisk {
		t.Errorf("half pair for x86_64: %q %q %v; want the conductor-wide pair", k, r, err)
	}
	// The node's own pair still comes first.
	e.node.DriverInfo["deploy_kernel"], e.node.DriverInfo["deploy_ramdisk"] = "http://n/k", "http://n/r"
	if k, r, _ := NewPXE(o).kernelRamdisk(e.task, "deploy"); k != "http://n/k" || r != "http://n/r" {
		t.Errorf("node pair: %q %q", k, r)
	}
}
