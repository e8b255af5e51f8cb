package image

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func bootFiles(t *testing.T) (dir, kernel, ramdisk string) {
	dir = t.TempDir()
	kernel = writeFile(t, filepath.Join(dir, "k"), []byte("KERNEL"))
	ramdisk = writeFile(t, filepath.Join(dir, "r"), []byte("RAMDISK"))
	return
}

func TestBuildBootISOBIOS(t *testing.T) {
	needTool(t, "xorriso")
	dir, k, r := bootFiles(t)
	o := DefaultOptions()
	// isolinux.bin's content does not matter to the layout; the file
	// needs room for the boot info table xorriso writes into it.
	o.IsolinuxBin = writeFile(t, filepath.Join(dir, "isolinux.bin"), make([]byte, 2048))
	out := filepath.Join(dir, "boot.iso")
	err := BuildBootISO(t.Context(), o, out, BootISOOptions{Kernel: k, Ramdisk: r, KernelParams: "ipa-api-url=http://x:6385", PublisherID: "ironic"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ReadISOFile(t.Context(), out, "/isolinux/isolinux.cfg")
	if err != nil {
		t.Fatal(err)
	}
	if want := "default boot\n\nlabel boot\nkernel /vmlinuz\nappend initrd=/initrd text ipa-api-url=http://x:6385 --\n"; string(cfg) != want {
		t.Fatalf("isolinux.cfg %q", cfg)
	}
	if got, _ := ReadISOFile(t.Context(), out, "/vmlinuz"); string(got) != "KERNEL" {
		t.Fatalf("kernel %q", got)
	}
	if d, err := DetectFileFormat(out); err != nil || d.Name != "iso" {
		t.Fatalf("not an iso: %v", err)
	}
}

func TestBuildBootISOUEFI(t *testing.T) {
	needTool(t, "xorriso")
	needTool(t, "mkfs.vfat")
	needTool(t, "mcopy")
	dir, k, r := bootFiles(t)
	esp := filepath.Join(dir, "esp.img")
	if err := CreateVFATImage(t.Context(), esp, map[string]FileEntry{"EFI/BOOT/BOOTX64.EFI": {Data: []byte("efi")}}, map[string]string{"a": "b"}, 1024); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	out := filepath.Join(dir, "uefi.iso")
	err := BuildBootISO(t.Context(), o, out, BootISOOptions{Kernel: k, Ramdisk: r, KernelParams: "p=1", UEFI: true, ESPImage: esp,
		InjectFiles: map[string]FileEntry{"openstack/latest/meta_data.json": {Data: []byte("{}")}}})
	if err != nil {
		t.Fatal(err)
	}
	grub, err := ReadISOFile(t.Context(), out, "/EFI/BOOT/grub.cfg")
	if err != nil || !strings.Contains(string(grub), "linux /vmlinuz p=1 --\ninitrd /initrd\n") {
		t.Fatalf("grub.cfg %q %v", grub, err)
	}
	espBack, _ := ReadISOFile(t.Context(), out, "/boot/grub/efiboot.img")
	espOrig, _ := os.ReadFile(esp)
	if len(espBack) == 0 || string(espBack) != string(espOrig) {
		t.Fatal("ESP image not embedded")
	}
	// Injected OpenStack metadata makes it a config-2 volume.
	if label := isoVolumeID(t, out); label != "config-2" {
		t.Fatalf("label %q", label)
	}
	// From the UEFI ISO as deploy ISO: its efiboot.img and grub.cfg.
	out2 := filepath.Join(dir, "uefi2.iso")
	if err := BuildBootISO(t.Context(), o, out2, BootISOOptions{Kernel: k, Ramdisk: r, UEFI: true, DeployISO: out}); err != nil {
		t.Fatal(err)
	}
	if label := isoVolumeID(t, out2); label != "VMEDIA_BOOT_ISO" {
		t.Fatalf("label %q", label)
	}
	err = BuildBootISO(t.Context(), o, out2, BootISOOptions{Kernel: k, Ramdisk: r, UEFI: true})
	wantClass(t, err, "ImageCreationFailed", "Creating iso image failed: Neither deploy ISO nor ESP image configured or both of them configured")
}

// isoVolumeID reads the primary volume descriptor's volume identifier.
func isoVolumeID(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 32768+72 {
		t.Fatalf("read %s: %v", path, err)
	}
	return strings.TrimRight(string(b[32768+40:32768+72]), " ")
}
