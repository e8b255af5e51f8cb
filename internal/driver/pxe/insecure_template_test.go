package pxe

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
)

// Issue 23: a node's driver_info/pxe_template is refused with master's
// CVE-2026-44917 message unless [pxe]/enable_insecure_template_override,
// which makes it the node's configuration template; nothing is written
// when refused.
func TestNodeTemplateOverride(t *testing.T) {
	e := newEnv(t, "bios")
	nodeTemplate := filepath.Join(t.TempDir(), "node.template")
	if err := os.WriteFile(nodeTemplate, []byte("NODE K={{ .pxe_options.deployment_aki_path }}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.node.DriverInfo["pxe_template"] = nodeTemplate
	cfgPath := filepath.Join(e.tftp, e.node.UUID, "config")

	err := NewPXE(e.opts).PrepareRamdisk(context.Background(), e.task, nil)
	if !errs.Is(err, errs.ClassInvalidParameterValue) || !strings.Contains(err.Error(), "insecure (CVE-2026-44917)") ||
		!strings.Contains(err.Error(), "[pxe]pxe_template_by_arch") {
		t.Fatalf("refused override: %v", err)
	}
	if _, err := os.Stat(cfgPath); !os.IsNotExist(err) {
		t.Errorf("configuration written despite the refusal: %v", err)
	}

	o := e.opts
	o.EnableInsecureTemplateOverride = true
	if err := NewPXE(o).PrepareRamdisk(context.Background(), e.task, nil); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := os.ReadFile(cfgPath); string(cfg) != "NODE K="+e.node.UUID+"/deploy_kernel" {
		t.Errorf("config = %q", cfg)
	}
}
