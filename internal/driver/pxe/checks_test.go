package pxe

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
)

// Half a pair of agent images in driver_info is passed over for the
// configured pair with a warning, or refused under [conductor]/
// error_on_ramdisk_config_inconsistency, as upstream's
// get_agent_kernel_ramdisk; Validate answers it as the API's validation
// of the boot interface would.
func TestPXERamdiskConfigInconsistency(t *testing.T) {
	ctx := context.Background()
	for _, strict := range []bool{false, true} {
		e := newEnv(t, "bios")
		delete(e.node.DriverInfo, "deploy_ramdisk")
		o := e.opts
		o.DeployKernel, o.DeployRamdisk = "http://127.0.0.1:1/k", "http://127.0.0.1:1/r"
		o.ErrorOnRamdiskConfigInconsistency = strict
		err := NewPXE(o).Validate(ctx, e.task)
		want := "Node " + e.node.UUID + " driver_info has an override for deploy_kernel, but not for deploy_ramdisk. " +
			"This configuration is ambiguous. Node " + e.node.UUID + " cannot boot a ramdisk."
		if strict && (!errs.Is(err, errs.ClassMissingParameterValue) || err.Error() != want) {
			t.Fatalf("strict: %v", err)
		}
		if !strict && err != nil {
			t.Fatalf("lenient: %v", err)
		}
	}
}

// A node's kernel_append_params reaches the PXE configuration only when
// it parses as a kernel command line, unless [conductor]/
// disable_kernel_parameter_parsing; it is sanitized either way.
func TestPXEKernelAppendParamsParsing(t *testing.T) {
	ctx := context.Background()
	for _, disabled := range []bool{false, true} {
		e := newEnv(t, "bios")
		o := e.opts
		o.DisableKernelParameterParsing = disabled
		e.node.InstanceInfo = map[string]any{"kernel_append_params": "%default% console=\"ttyS0\nMENU x"}
		err := NewPXE(o).PrepareRamdisk(ctx, e.task, nil)
		if !disabled {
			if !errs.Is(err, errs.ClassInvalidParameterValue) ||
				err.Error() != "node's instance_info['kernel_append_params'] contains malformed kernel command line" {
				t.Fatalf("parsing on: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("parsing off: %v", err)
		}
		raw, _ := os.ReadFile(filepath.Join(e.tftp, e.node.UUID, "config"))
		cfg := string(raw)
		if !strings.Contains(cfg, "console=\"ttyS0MENU x") || strings.Contains(cfg, "ttyS0\nMENU") {
			t.Fatalf("config %q", cfg)
		}
	}
}
