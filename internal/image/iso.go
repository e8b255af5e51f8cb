package image

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
)

// ISO images are written by xorriso's mkisofs emulation with the options
// upstream passes to mkisofs, so the images match what upstream builds.

func imageCreationFailed(imageType string, err error) *errs.Error {
	return errs.New(errs.ClassImageCreationFailed, map[string]any{"image_type": imageType, "error": err.Error()})
}

// FileEntry is a file to put on an image: a local file or literal bytes.
type FileEntry struct {
	Source string
	Data   []byte
}

// populate copies files (destination path -> entry) under root.
func populate(root string, files map[string]FileEntry) error {
	for dest, e := range files {
		rel := filepath.Clean("/" + dest)[1:]
		if rel == "" {
			return fmt.Errorf("empty destination path %q", dest)
		}
		target := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if e.Source != "" {
			if err := copyFile(e.Source, target); err != nil {
				return err
			}
			continue
		}
		if err := os.WriteFile(target, e.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func runTool(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(out.String()))
	}
	return nil
}

func mkisofs(ctx context.Context, args ...string) error {
	return runTool(ctx, "xorriso", append([]string{"-as", "mkisofs"}, args...)...)
}

// BuildDataISO writes an ISO9660 image with Rock Ridge and Joliet names
// labelled label (the configdrive layout: openstacksdk's pack options).
func BuildDataISO(ctx context.Context, output, label, publisher string, files map[string]FileEntry) error {
	dir, err := os.MkdirTemp("", "iso")
	if err != nil {
		return imageCreationFailed("iso", err)
	}
	defer os.RemoveAll(dir)
	if err := populate(dir, files); err != nil {
		return imageCreationFailed("iso", err)
	}
	return BuildDataISOFromDir(ctx, output, label, publisher, dir)
}

// BuildDataISOFromDir is BuildDataISO of the tree under dir.
func BuildDataISOFromDir(ctx context.Context, output, label, publisher, dir string) error {
	err := mkisofs(ctx, "-o", output, "-ldots", "-allow-lowercase", "-allow-multidot", "-l",
		"-publisher", publisher, "-quiet", "-J", "-r", "-V", label, dir)
	if err != nil {
		return imageCreationFailed("iso", err)
	}
	return nil
}

// ExtractISO unpacks the whole of iso, by its Rock Ridge names, into dir
// and makes the tree writable (xorriso keeps the ISO's read-only modes).
func ExtractISO(ctx context.Context, iso, dir string) error {
	if err := runTool(ctx, "xorriso", "-osirrox", "on", "-indev", iso, "-extract", "/", dir); err != nil {
		return err
	}
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		} else if d.Type()&os.ModeSymlink != 0 {
			return nil
		}
		return os.Chmod(p, mode)
	})
}

// BootISOOptions describe a boot ISO (upstream's create_boot_iso
// arguments, with kernel and ramdisk already fetched to local files).
type BootISOOptions struct {
	Kernel, Ramdisk string
	// KernelParams is the kernel command line.
	KernelParams string
	// UEFI builds an El Torito EFI image; otherwise isolinux (BIOS).
	UEFI bool
	// ESPImage is a FAT image holding the EFI boot loader (grub); or
	// DeployISO, an ISO to take boot/grub/efiboot.img and grub.cfg's
	// location from. Exactly one is required for UEFI.
	ESPImage  string
	DeployISO string
	// InjectFiles are extra files: destination path on the ISO -> entry.
	InjectFiles map[string]FileEntry
	PublisherID string
}

// label is upstream's _label: config-2 when OpenStack metadata is
// injected.
func isoLabel(files map[string]FileEntry) string {
	for dest := range files {
		if strings.HasPrefix(strings.TrimPrefix(dest, "/"), "openstack/") {
			return "config-2"
		}
	}
	return "VMEDIA_BOOT_ISO"
}

const (
	isolinuxBinPath = "isolinux/isolinux.bin"
	isolinuxCfgPath = "isolinux/isolinux.cfg"
	ldlinuxPath     = "isolinux/ldlinux.c32"
	efibootPath     = "boot/grub/efiboot.img"
)

// IsolinuxConfig renders upstream's isolinux_config.template.
func IsolinuxConfig(kernel, ramdisk, params string) string {
	return "default boot\n\nlabel boot\nkernel " + kernel + "\nappend initrd=" + ramdisk + " text " + params + " --\n"
}

// GrubConfig renders upstream's grub_conf.template.
func GrubConfig(linux, initrd, params string) string {
	return "set default=0\nset timeout=5\nset hidden_timeout_quiet=false\n\nmenuentry \"boot_partition\" {\nlinux " +
		linux + " " + params + " --\ninitrd " + initrd + "\n}\n"
}

// BuildBootISO writes a bootable ISO as upstream's create_boot_iso does:
// isolinux for BIOS, or an EFI system partition image and grub.cfg for
// UEFI.
func BuildBootISO(ctx context.Context, opts Options, output string, b BootISOOptions) error {
	if b.UEFI {
		return buildUEFIISO(ctx, opts, output, b)
	}
	return buildBIOSISO(ctx, opts, output, b)
}

func buildBIOSISO(ctx context.Context, opts Options, output string, b BootISOOptions) error {
	files := map[string]FileEntry{
		"vmlinuz":       {Source: b.Kernel},
		"initrd":        {Source: b.Ramdisk},
		isolinuxBinPath: {Source: opts.IsolinuxBin},
	}
	for k, v := range b.InjectFiles {
		files[k] = v
	}
	ldlinux := opts.LdlinuxC32
	if ldlinux == "" {
		for _, d := range []string{"/usr/lib/syslinux/modules/bios", "/usr/share/syslinux"} {
			if st, err := os.Stat(filepath.Join(d, "ldlinux.c32")); err == nil && st.Mode().IsRegular() {
				ldlinux = filepath.Join(d, "ldlinux.c32")
				break
			}
		}
	}
	if ldlinux != "" {
		files[ldlinuxPath] = FileEntry{Source: ldlinux}
	}
	isolinuxCfg, err := bootConfig(opts.IsolinuxConfigTemplate,
		map[string]string{"kernel": "/vmlinuz", "ramdisk": "/initrd", "kernel_params": b.KernelParams},
		IsolinuxConfig("/vmlinuz", "/initrd", b.KernelParams))
	if err != nil {
		return imageCreationFailed("iso", err)
	}
	files[isolinuxCfgPath] = FileEntry{Data: isolinuxCfg}
	dir, err := os.MkdirTemp(opts.TempDir, "bootiso")
	if err != nil {
		return imageCreationFailed("iso", err)
	}
	defer os.RemoveAll(dir)
	if err := populate(dir, files); err != nil {
		return imageCreationFailed("iso", err)
	}
	err = mkisofs(ctx, "-r", "-V", isoLabel(files), "-J", "-l", "-publisher", b.PublisherID,
		"-no-emul-boot", "-boot-load-size", "4", "-boot-info-table", "-b", isolinuxBinPath, "-o", output, dir)
	if err != nil {
		return imageCreationFailed("iso", err)
	}
	return nil
}

func buildUEFIISO(ctx context.Context, opts Options, output string, b BootISOOptions) error {
	esp := b.ESPImage
	if esp == "" && b.DeployISO == "" {
		esp = opts.ESPImage
	}
	if (esp == "") == (b.DeployISO == "") {
		return errs.New(errs.ClassImageCreationFailed, map[string]any{"image_type": "iso", "error": "Neither deploy ISO nor ESP image configured or both of them configured"})
	}
	dir, err := os.MkdirTemp(opts.TempDir, "bootiso")
	if err != nil {
		return imageCreationFailed("iso", err)
	}
	defer os.RemoveAll(dir)
	files := map[string]FileEntry{
		"vmlinuz": {Source: b.Kernel},
		"initrd":  {Source: b.Ramdisk},
	}
	for k, v := range b.InjectFiles {
		files[k] = v
	}
	espRel := efibootPath
	grubRel := strings.TrimLeft(opts.GrubConfigPath, " /")
	if grubRel == "" {
		grubRel = "EFI/BOOT/grub.cfg"
	}
	if b.DeployISO != "" {
		espRel, grubRel, err = deployISOFiles(ctx, b.DeployISO, dir)
		if err != nil {
			return err
		}
	} else {
		files[espRel] = FileEntry{Source: esp}
	}
	grubCfg, err := bootConfig(opts.GrubConfigTemplate,
		map[string]string{"linux": "/vmlinuz", "initrd": "/initrd", "kernel_params": b.KernelParams},
		GrubConfig("/vmlinuz", "/initrd", b.KernelParams))
	if err != nil {
		return imageCreationFailed("iso", err)
	}
	files[grubRel] = FileEntry{Data: grubCfg}
	if err := populate(dir, files); err != nil {
		return imageCreationFailed("iso", err)
	}
	args := []string{"-r", "-V", isoLabel(files), "-l"}
	if b.PublisherID != "" {
		args = append(args, "-publisher", b.PublisherID)
	}
	args = append(args, "-e", espRel, "-no-emul-boot", "-o", output, dir)
	if err := mkisofs(ctx, args...); err != nil {
		return imageCreationFailed("iso", err)
	}
	return nil
}

// deployISOFiles extracts the EFI boot image and grub.cfg of a deploy
// ISO into dir (upstream's _get_deploy_iso_files) and returns their
// paths relative to dir.
func deployISOFiles(ctx context.Context, iso, dir string) (espRel, grubRel string, err error) {
	if err := ExtractISO(ctx, iso, dir); err != nil {
		return "", "", imageCreationFailed("iso", err)
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, werr error) error {
		if werr != nil || d.IsDir() {
			return werr
		}
		rel, _ := filepath.Rel(dir, p)
		switch d.Name() {
		case "efiboot.img":
			espRel = rel
		case "grub.cfg":
			grubRel = rel
		}
		return nil
	})
	if err != nil {
		return "", "", imageCreationFailed("iso", err)
	}
	if espRel == "" || grubRel == "" {
		return "", "", errs.New(errs.ClassImageCreationFailed, map[string]any{"image_type": "iso", "error": "Deploy iso didn't contain efiboot.img or grub.cfg"})
	}
	return espRel, grubRel, nil
}

// CreateVFATImage is upstream's create_vfat_image: a FAT file system
// labelled ir-vfd-dev of sizeKiB holding files and a parameters file.
func CreateVFATImage(ctx context.Context, output string, files map[string]FileEntry, parameters map[string]string, sizeKiB int) error {
	if sizeKiB <= 0 {
		sizeKiB = 100
	}
	f, err := os.Create(output)
	if err != nil {
		return imageCreationFailed("vfat", err)
	}
	if err := f.Truncate(int64(sizeKiB) * 1024); err != nil {
		f.Close()
		return imageCreationFailed("vfat", err)
	}
	if err := f.Close(); err != nil {
		return imageCreationFailed("vfat", err)
	}
	if err := runTool(ctx, "mkfs.vfat", "-n", "ir-vfd-dev", output); err != nil {
		return imageCreationFailed("vfat", err)
	}
	dir, err := os.MkdirTemp("", "vfat")
	if err != nil {
		return imageCreationFailed("vfat", err)
	}
	defer os.RemoveAll(dir)
	all := map[string]FileEntry{}
	for k, v := range files {
		all[k] = v
	}
	if len(parameters) > 0 {
		var lines []string
		for k, v := range parameters {
			lines = append(lines, k+"="+v)
		}
		all["parameters.txt"] = FileEntry{Data: []byte(strings.Join(lines, "\n"))}
	}
	if len(all) == 0 {
		return nil
	}
	if err := populate(dir, all); err != nil {
		return imageCreationFailed("vfat", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return imageCreationFailed("vfat", err)
	}
	args := []string{"-s"}
	for _, e := range entries {
		args = append(args, filepath.Join(dir, e.Name()))
	}
	args = append(args, "-i", output, "::")
	if err := runTool(ctx, "mcopy", args...); err != nil {
		return imageCreationFailed("vfat", err)
	}
	return nil
}

// ReadISOFile returns one file of an ISO image (read back with xorriso).
func ReadISOFile(ctx context.Context, iso, path string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "isoread")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "f")
	if err := runTool(ctx, "xorriso", "-osirrox", "on", "-indev", iso, "-extract", path, out); err != nil {
		return nil, fmt.Errorf("read %s from %s: %w", path, iso, err)
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
