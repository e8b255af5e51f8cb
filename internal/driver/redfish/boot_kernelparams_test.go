package redfish

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/states"
)

// A node's kernel_append_params goes through upstream's kernel command
// line grammar before it is written into the ISO's boot loader
// configuration: a malformed one fails the preparation with
// InvalidParameterValue and nothing is inserted; with [conductor]/
// disable_kernel_parameter_parsing it is only sanitized (new lines,
// carriage returns and NULs dropped).
func TestVirtualMediaKernelParameterParsing(t *testing.T) {
	needTool(t, "xorriso")
	needTool(t, "mkfs.vfat")
	needTool(t, "mcopy")
	const malformed = "console=ttyS0 quiet=\"x\nset root=(hd0)"
	for _, disabled := range []bool{false, true} {
		e := newBootEnv(t, func(o *BootOptions) { o.DisableKernelParameterParsing = disabled })
		esp := filepath.Join(e.dir, "esp.img")
		must(t, image.CreateVFATImage(e.ctx, esp, map[string]image.FileEntry{"EFI/BOOT/BOOTX64.EFI": {Data: []byte("efi")}}, nil, 1024))
		e.node.ProvisionState = states.Rescuing
		e.node.Properties["capabilities"] = "boot_mode:uefi"
		e.node.DriverInfo["rescue_kernel"] = "file://" + e.kernel
		e.node.DriverInfo["rescue_ramdisk"] = "file://" + e.ramdisk
		e.node.DriverInfo["bootloader"] = "file://" + esp
		e.node.InstanceInfo = map[string]any{"kernel_append_params": malformed}
		err := e.boot.PrepareRamdisk(e.ctx, e.task, nil)
		if !disabled {
			if !errs.Is(err, errs.ClassInvalidParameterValue) ||
				err.Error() != "node's instance_info['kernel_append_params'] contains malformed kernel command line" {
				t.Fatalf("parsing on: %v", err)
			}
			if got := e.insertedCD(); got != "" {
				t.Fatalf("inserted %q after a malformed command line", got)
			}
			continue
		}
		must(t, err)
		status, iso := httpGet(t, strings.TrimSuffix(e.srvURL, "/")+"/redfish/boot-"+testNode+".iso")
		if status != http.StatusOK {
			t.Fatalf("GET: %d", status)
		}
		isoPath := filepath.Join(t.TempDir(), "r.iso")
		must(t, os.WriteFile(isoPath, iso, 0o644))
		grub, err := image.ReadISOFile(e.ctx, isoPath, "/EFI/BOOT/grub.cfg")
		must(t, err)
		if !strings.Contains(string(grub), "linux /vmlinuz console=ttyS0 quiet=\"xset root=(hd0) ir_pub_id=") {
			t.Fatalf("grub.cfg %q", grub)
		}
	}
}
