package pxe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// instanceImage is one file a ramdisk instance boots from: its reference
// and the label it is stored under in the node's folder.
type instanceImage struct{ label, href string }

// validateInstanceImage checks what a ramdisk instance boots from.
func (b *Boot) validateInstanceImage(ctx context.Context, n *model.Node) error {
	var sources *image.Sources
	if b.opts.Fetcher != nil {
		sources = b.opts.Fetcher.Sources
	}
	return image.ValidateRamdiskInstance(ctx, sources, n.UUID, n.InstanceInfo)
}

func (b *Boot) imageProperties(ctx context.Context, href string) (map[string]any, error) {
	if b.opts.Fetcher == nil {
		return nil, fmt.Errorf("no image service configured to read the properties of %s", href)
	}
	info, err := b.opts.Fetcher.Sources.Show(ctx, href)
	if err != nil {
		return nil, err
	}
	return info.Properties, nil
}

// instanceImages is upstream get_instance_image_info for a ramdisk boot:
// the boot ISO, or the kernel and ramdisk, taken from the image's
// properties (and then kept in instance_info, as upstream) when
// instance_info does not name both.
func (b *Boot) instanceImages(ctx context.Context, n *model.Node) ([]instanceImage, error) {
	if err := b.validateInstanceImage(ctx, n); err != nil {
		return nil, err
	}
	if iso := strField(n.InstanceInfo, "boot_iso"); iso != "" {
		return []instanceImage{{"boot_iso", iso}}, nil
	}
	kernel, ramdisk := strField(n.InstanceInfo, "kernel"), strField(n.InstanceInfo, "ramdisk")
	if kernel == "" || ramdisk == "" {
		props, err := b.imageProperties(ctx, strField(n.InstanceInfo, "image_source"))
		if err != nil {
			return nil, err
		}
		if iso := strField(props, "boot_iso_id"); iso != "" && strField(props, "kernel_id") == "" {
			return []instanceImage{{"boot_iso", iso}}, nil
		}
		kernel, ramdisk = strField(props, "kernel_id"), strField(props, "ramdisk_id")
		n.InstanceInfo["kernel"], n.InstanceInfo["ramdisk"] = kernel, ramdisk
	}
	return []instanceImage{{"kernel", kernel}, {"ramdisk", ramdisk}}, nil
}

// prepareRamdiskInstance is upstream prepare_instance for the "ramdisk"
// boot option: the instance's kernel and ramdisk (or boot ISO) go to the
// node's folder, the configuration (written in service mode unless one is
// there already) is switched to its boot_ramdisk entry, and the node boots
// from the network persistently.
func (b *Boot) prepareRamdiskInstance(ctx context.Context, task *driver.Task) error {
	n := task.Node
	imgs, err := b.instanceImages(ctx, n)
	if err != nil {
		return err
	}
	dir := b.nodeDir(n)
	if err := os.MkdirAll(dir, b.opts.DirPermission); err != nil {
		return fmt.Errorf("instance image directory of node %s: %w", n.UUID, err)
	}
	for _, img := range imgs {
		if err := b.fetch(ctx, img.href, filepath.Join(dir, img.label)); err != nil {
			return err
		}
	}
	if err := b.updateDHCP(ctx, task); err != nil {
		return err
	}
	cfg := b.configPath(n)
	if _, err := os.Stat(cfg); errors.Is(err, fs.ErrNotExist) {
		opts, err := b.instanceOptions(n, imgs)
		if err != nil {
			return err
		}
		if err := b.writeConfig(ctx, task, opts); err != nil {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("boot configuration of node %s: %w", n.UUID, err)
	}
	if err := b.switchConfig(n, "boot_ramdisk"); err != nil {
		return err
	}
	if n.ProvisionState == states.Active || n.ProvisionState == states.Adopting {
		return nil
	}
	return b.setNetworkBoot(ctx, task, true)
}

// instanceOptions is upstream build_pxe_config_options in service mode:
// no agent ramdisk, the instance's images and the kernel command line.
func (b *Boot) instanceOptions(n *model.Node, imgs []instanceImage) (map[string]any, error) {
	o := map[string]any{"deployment_aki_path": "", "deployment_ari_path": ""}
	paths := map[string]string{"kernel": "aki_path", "ramdisk": "ari_path"}
	for _, img := range imgs {
		opt, ok := paths[img.label]
		if !ok {
			continue
		}
		if b.ipxe {
			o[opt] = strings.TrimRight(b.opts.HTTPURL, "/") + "/" + n.UUID + "/" + img.label
			continue
		}
		rel, err := filepath.Rel(b.opts.TFTPRoot, filepath.Join(b.nodeDir(n), img.label))
		if err != nil {
			return nil, fmt.Errorf("path of %s relative to the TFTP root: %w", img.label, err)
		}
		o[opt] = filepath.ToSlash(rel)
	}
	if _, ok := o["aki_path"]; !ok {
		o["aki_path"] = "no_kernel"
	}
	if _, ok := o["ari_path"]; !ok {
		o["ari_path"] = "no_ramdisk"
	}
	if v, ok := n.InstanceInfo["ramdisk_kernel_arguments"]; ok {
		o["ramdisk_opts"] = v
	}
	if len(imgs) > 0 && imgs[0].label == "boot_iso" {
		o["boot_iso_url"] = strings.TrimRight(b.opts.HTTPURL, "/") + "/" + n.UUID + "/boot_iso"
	}
	appendParams, err := b.kernelAppendParams(n)
	if err != nil {
		return nil, err
	}
	if b.opts.Debug && !strings.Contains(appendParams, "ipa-debug") {
		appendParams += " ipa-debug=1"
	}
	o["pxe_append_params"] = appendParams
	o["tftp_server"] = b.opts.TFTPServer
	o["ipxe_timeout"] = b.opts.IPXETimeoutSeconds * 1000
	return o, nil
}

var (
	grubDefault  = regexp.MustCompile(`(?m)^((set )?default)=.*$`)
	ipxeGoto     = regexp.MustCompile(`(?m)^goto .*$`)
	pxelinuxDflt = regexp.MustCompile(`(?m)^default .*$`)
)

// switchConfig is upstream switch_pxe_config's boot line replacement: the
// entry the loader starts becomes entry.
func (b *Boot) switchConfig(n *model.Node, entry string) error {
	path := b.configPath(n)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("switch boot configuration of node %s: %w", n.UUID, err)
	}
	var out string
	switch {
	case b.grub(n):
		out = grubDefault.ReplaceAllString(string(data), "${1}="+entry)
	case b.ipxe:
		out = ipxeGoto.ReplaceAllLiteralString(string(data), "goto "+entry)
	default:
		out = pxelinuxDflt.ReplaceAllLiteralString(string(data), "default "+entry)
	}
	return writeFile(path, []byte(out), b.opts.FilePermission)
}

// netbootFallback is upstream build_service_pxe_config for a local boot:
// the node's configuration (written in service mode when there is none,
// in the states that boot the instance) is switched to its
// boot_whole_disk entry, chaining to the disk the image went to.
func (b *Boot) netbootFallback(ctx context.Context, task *driver.Task) error {
	n := task.Node
	cfg := b.configPath(n)
	_, err := os.Stat(cfg)
	switch {
	case errors.Is(err, fs.ErrNotExist) && slices.Contains([]string{states.Active, states.Unrescuing, states.Deploying, states.Adopting, states.Servicing}, n.ProvisionState):
		opts, err := b.instanceOptions(n, nil)
		if err != nil {
			return err
		}
		if err := b.writeConfig(ctx, task, opts); err != nil {
			return err
		}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("boot configuration of node %s: %w", n.UUID, err)
	}
	if id, _ := n.InternalInfo().Get(model.DIIRootUUIDOrDiskID).(string); id != "" {
		if err := b.replaceDiskIdentifier(n, id); err != nil {
			return err
		}
	}
	return b.switchConfig(n, "boot_whole_disk")
}

var diskIdentifier = regexp.MustCompile(`(\(\(|\{\{) DISK_IDENTIFIER (\)\)|\}\})`)

// replaceDiskIdentifier is upstream _replace_disk_identifier.
func (b *Boot) replaceDiskIdentifier(n *model.Node, id string) error {
	path := b.configPath(n)
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("boot configuration of node %s: %w", n.UUID, err)
	}
	return writeFile(path, diskIdentifier.ReplaceAllLiteral(data, []byte(id)), b.opts.FilePermission)
}
