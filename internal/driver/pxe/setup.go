package pxe

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/openkeel/ironic/internal/errs"
)

// setup is what upstream's interface constructors do once per conductor:
// the iPXE boot script (ipxe interfaces), the initial GRUB configuration
// (pxe and http) and the boot loaders of [pxe]/loader_file_paths. Here it
// happens at the first network boot an interface prepares, so that merely
// registering the interfaces writes nothing.
type setup struct {
	once sync.Once
	err  error
}

func (b *Boot) setUp() error {
	b.setupState.once.Do(func() { b.setupState.err = b.doSetUp() })
	return b.setupState.err
}

func (b *Boot) doSetUp() error {
	if b.ipxe {
		if err := b.writeBootScript(); err != nil {
			return err
		}
	} else if err := b.placeInitialGrub(); err != nil {
		return err
	}
	roots := []string{b.opts.HTTPRoot}
	if !b.httpBoot {
		// iPXE and GRUB binaries are fetched over TFTP too.
		roots = append(roots, b.opts.TFTPRoot)
	}
	for _, root := range roots {
		if err := b.placeLoaders(root); err != nil {
			return err
		}
	}
	return nil
}

// placeInitialGrub is upstream place_common_config: grub/grub.cfg under
// both roots, which has GRUB read the configuration its MAC address links
// to under tftp_root.
func (b *Boot) placeInitialGrub() error {
	if b.opts.InitialGrubDisabled {
		return nil
	}
	data, err := render("initial_grub.tmpl", b.opts.InitialGrubTemplate, map[string]any{"tftp_root": b.opts.TFTPRoot})
	if err != nil {
		return err
	}
	for _, root := range []string{b.opts.TFTPRoot, b.opts.HTTPRoot} {
		if root == "" {
			continue
		}
		dir := filepath.Join(root, "grub")
		if err := os.MkdirAll(dir, b.opts.DirPermission); err != nil {
			return fmt.Errorf("initial grub configuration: %w", err)
		}
		if err := writeFile(filepath.Join(dir, "grub.cfg"), data, b.opts.FilePermission); err != nil {
			return err
		}
	}
	return nil
}

// placeLoaders is upstream place_loaders_for_boot: each configured boot
// loader copied from the host into root under its file name.
func (b *Boot) placeLoaders(root string) error {
	if len(b.opts.LoaderFilePaths) == 0 || root == "" {
		return nil
	}
	if err := os.MkdirAll(root, b.opts.DirPermission); err != nil {
		return errs.NewMessage(errs.ClassIncorrectConfiguration, "Failed to create bootloader destination path. Error: "+err.Error())
	}
	for dest, src := range b.opts.LoaderFilePaths {
		if filepath.Base(dest) != dest || dest == "." || dest == ".." {
			return errs.NewMessage(errs.ClassIncorrectConfiguration, "File paths configured for [pxe]loader_file_paths must be a base path. Entry: "+dest)
		}
		if err := copyFile(src, filepath.Join(root, dest), b.opts.FilePermission); err != nil {
			return errs.NewMessage(errs.ClassIncorrectConfiguration, "Error encountered while attempting to copy a configured bootloader into the requested destination. "+err.Error())
		}
	}
	return nil
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, perm); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}
