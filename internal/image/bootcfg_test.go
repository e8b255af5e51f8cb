package image

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/config"
)

// Issue 23: [DEFAULT]/grub_config_template naming an operator's file
// shapes the UEFI boot ISO's grub.cfg, rendered as Jinja renders upstream's
// template; the default (upstream's file under $pybasedir) is the built-in
// text, and a template using more than variables is refused.
func TestOperatorGrubTemplate(t *testing.T) {
	needTool(t, "xorriso")
	needTool(t, "mkfs.vfat")
	needTool(t, "mcopy")
	dir, k, r := bootFiles(t)
	esp := filepath.Join(dir, "esp.img")
	if err := CreateVFATImage(t.Context(), esp, map[string]FileEntry{"EFI/BOOT/BOOTX64.EFI": {Data: []byte("efi")}}, nil, 1024); err != nil {
		t.Fatal(err)
	}
	tmpl := filepath.Join(dir, "grub.template")
	if err := os.WriteFile(tmpl, []byte("set timeout=1\nmenuentry \"fleet\" {\nlinux {{linux}} {{ kernel_params }} console=ttyS0 {{ undefined }}--\ninitrd {{ initrd }}\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.GrubConfigTemplate = tmpl
	out := filepath.Join(dir, "uefi.iso")
	if err := BuildBootISO(t.Context(), o, out, BootISOOptions{Kernel: k, Ramdisk: r, KernelParams: "p=1", UEFI: true, ESPImage: esp}); err != nil {
		t.Fatal(err)
	}
	grub, err := ReadISOFile(t.Context(), out, "/EFI/BOOT/grub.cfg")
	if want := "set timeout=1\nmenuentry \"fleet\" {\nlinux /vmlinuz p=1 console=ttyS0 --\ninitrd /initrd\n}"; err != nil || string(grub) != want {
		t.Fatalf("grub.cfg %q %v, want %q", grub, err, want)
	}
	if err := os.WriteFile(tmpl, []byte("{% if x %}linux {{ linux }}{% endif %}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := BuildBootISO(t.Context(), o, filepath.Join(dir, "bad.iso"), BootISOOptions{Kernel: k, Ramdisk: r, UEFI: true, ESPImage: esp}); err == nil || !strings.Contains(err.Error(), "only {{ variable }}") {
		t.Errorf("a Jinja statement: %v", err)
	}

	def, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o := OptionsFromConfig(def); o.GrubConfigTemplate != "" || o.IsolinuxConfigTemplate != "" {
		t.Errorf("upstream's default templates are not built in: %q %q", o.GrubConfigTemplate, o.IsolinuxConfigTemplate)
	}
}
