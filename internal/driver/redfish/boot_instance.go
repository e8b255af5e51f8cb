package redfish

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/image/configdrive"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// configdriveImageName is upstream's object name of a ramdisk instance's
// config drive image (prepare_disk_image with prefix "configdrive").
func configdriveImageName(n *model.Node) string { return "configdrive-" + n.UUID }

// instanceISO is upstream prepare_boot_iso for a ramdisk instance: a boot
// ISO named in instance_info, or one built from the instance's kernel and
// ramdisk (from instance_info, else from the image's kernel_id and
// ramdisk_id properties), published like the deploy ISO.
func (b *VirtualMediaBoot) instanceISO(ctx context.Context, task *driver.Task) (string, error) {
	n := task.Node
	ii := n.InstanceInfo
	kernel, ramdisk, iso := strField(ii, "kernel"), strField(ii, "ramdisk"), strField(ii, "boot_iso")
	if iso == "" && (kernel == "" || ramdisk == "") {
		props, err := b.imageProperties(ctx, strField(ii, "image_source"))
		if err != nil {
			return "", err
		}
		if kernel == "" {
			kernel = strField(props, "kernel_id")
		}
		if ramdisk == "" {
			ramdisk = strField(props, "ramdisk_id")
		}
		if kernel == "" || ramdisk == "" {
			return "", driver.InvalidParameterValue("Unable to find kernel or ramdisk for to generate boot ISO for %s", n.UUID)
		}
	}
	d := deployInfo{kernel: kernel, ramdisk: ramdisk, bootloader: strField(n.DriverInfo, "bootloader"),
		externalHTTPURLNode: strField(n.DriverInfo, "external_http_url")}
	if d.bootloader == "" {
		d.bootloader = b.opts.Bootloader
	}
	if iso != "" {
		source := b.opts.DownloadSource
		if s := strField(ii, "ramdisk_image_download_source"); s != "" && n.ProvisionState == states.Deploying {
			source = s
		}
		return b.prepareRemoteISO(ctx, task, d, iso, source)
	}
	// A ramdisk instance boots its own ramdisk as root, with its own
	// arguments and no agent parameters.
	params := "root=/dev/ram0 text"
	if args := strField(ii, "ramdisk_kernel_arguments"); args != "" {
		params += " " + args
	}
	return b.buildAndPublish(ctx, task, d, params, nil)
}

func (b *VirtualMediaBoot) imageProperties(ctx context.Context, href string) (map[string]any, error) {
	if href == "" || b.opts.Fetcher == nil {
		return nil, nil
	}
	info, err := b.opts.Fetcher.Sources.Show(ctx, href)
	if err != nil {
		return nil, err
	}
	return info.Properties, nil
}

// prepareRamdiskInstance is upstream prepare_instance for the ramdisk
// boot option: the instance's ISO goes into the virtual CD, its config
// drive into a virtual USB stick, and the node boots from the CD for good.
func (b *VirtualMediaBoot) prepareRamdiskInstance(ctx context.Context, task *driver.Task) error {
	n := task.Node
	n.InternalInfo().Set(model.DIIVmediaTransportProtocol, "HTTP")
	url, err := b.instanceISO(ctx, task)
	if err != nil {
		return err
	}
	if err := b.mgmt.AttachVirtualMedia(ctx, task, "cdrom", url); err != nil {
		return err
	}
	if err := b.attachConfigdrive(ctx, task); err != nil {
		return err
	}
	if err := b.setBootDevice(ctx, task, "cdrom", true); err != nil {
		return err
	}
	task.Logger().Debug("node set to permanently boot from cdrom", "node", n.UUID)
	return nil
}

// attachConfigdrive is upstream _attach_configdrive: the instance's config
// drive, decoded, is published and inserted as a virtual USB stick.
func (b *VirtualMediaBoot) attachConfigdrive(ctx context.Context, task *driver.Task) error {
	n := task.Node
	data, err := b.configdriveImage(ctx, n)
	if err != nil || data == nil {
		return err
	}
	dir, err := b.tempDir()
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "configdrive.img")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("config drive image of node %s: %w", n.UUID, err)
	}
	url, err := b.opts.publish(ctx, tmp, configdriveImageName(n), strField(n.DriverInfo, "external_http_url"))
	if err != nil {
		return err
	}
	if err := b.mgmt.DetachVirtualMedia(ctx, task, []string{"disk"}); err != nil {
		return err
	}
	if err := b.mgmt.AttachVirtualMedia(ctx, task, "disk", url); err != nil {
		if driver.IsClass(err, errs.ClassInvalidParameterValue) {
			return errs.New(errs.ClassInstanceDeployFailure, map[string]any{
				"reason": fmt.Sprintf("Cannot attach configdrive for node %s: no suitable virtual USB slot has been found", n.UUID)})
		}
		return err
	}
	return nil
}

// configdriveImage is upstream get_configdrive_image: the config drive of
// instance_info as image bytes, built when it is a dict, fetched when it
// is a URL (a text answer being the base64 form); nil when there is none.
func (b *VirtualMediaBoot) configdriveImage(ctx context.Context, n *model.Node) ([]byte, error) {
	switch cd := n.InstanceInfo["configdrive"].(type) {
	case map[string]any:
		name := ""
		if n.Name != nil {
			name = *n.Name
		}
		s, err := configdrive.Build(ctx, n.UUID, name, cd)
		if err != nil {
			return nil, err
		}
		return configdrive.Decode(s, 0)
	case string:
		if cd == "" {
			return nil, nil
		}
		if !strings.Contains(cd, "://") {
			return configdrive.Decode(cd, 0)
		}
		dir, err := b.tempDir()
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		tmp := filepath.Join(dir, "configdrive")
		if b.opts.Fetcher == nil {
			return nil, fmt.Errorf("no image fetcher configured to download %s", cd)
		}
		if err := b.opts.Fetcher.Download(ctx, cd, tmp, image.FetchOptions{DisableValidation: true}); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(tmp)
		if err != nil {
			return nil, fmt.Errorf("config drive of node %s: %w", n.UUID, err)
		}
		if utf8.Valid(data) && !bytes.ContainsRune(data, 0) {
			return configdrive.Decode(string(data), 0)
		}
		return data, nil
	}
	return nil, nil
}
