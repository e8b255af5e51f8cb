package redfish

import (
	"context"
	"os"
	"path/filepath"
	"slices"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// configImageName is upstream's object name of the configuration image
// (prepare_floppy_image: prefix "image", suffix ".img").
func configImageName(n *model.Node) string { return "image-" + n.UUID + ".img" }

// removableDevice is upstream _has_vmedia_device for a virtual USB stick
// or floppy, in that order: the Ironic device type to insert into, or ""
// when the BMC has neither.
func (b *VirtualMediaBoot) removableDevice(ctx context.Context, task *driver.Task) (string, error) {
	devices, err := b.mgmt.GetVirtualMedia(ctx, task)
	if err != nil {
		return "", err
	}
	for _, want := range []struct{ media, device string }{{mediaUSBStick, "disk"}, {mediaFloppy, "floppy"}} {
		for _, d := range devices {
			if types, _ := d["media_types"].([]string); slices.Contains(types, want.media) {
				return want.device, nil
			}
		}
	}
	return "", nil
}

// insertConfig is the config_via_removable half of upstream's
// prepare_ramdisk: the ramdisk parameters (agent token included) go on a
// small FAT image in a virtual USB stick or floppy, for a pre-built ISO
// whose command line cannot carry them.
func (b *VirtualMediaBoot) insertConfig(ctx context.Context, task *driver.Task, d deployInfo, params map[string]any) error {
	n := task.Node
	device, err := b.removableDevice(ctx, task)
	if err != nil {
		return err
	}
	if device == "" {
		task.Logger().Warn("config via a removable device is requested, but virtual USB and floppy devices are not available", "node", n.UUID)
		return nil
	}
	b.overrideAPIURL(params)
	// Upstream writes each value as Python's str() renders it.
	values := make(map[string]string, len(params))
	for k, v := range params {
		values[k] = pyfmt.Str(v)
	}
	dir, err := b.tempDir()
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	img := filepath.Join(dir, "config.img")
	if err := image.CreateVFATImage(ctx, img, nil, values, 1440); err != nil {
		return err
	}
	url, err := b.opts.publish(ctx, img, configImageName(n), d.externalHTTPURLNode)
	if err != nil {
		return err
	}
	if err := b.mgmt.AttachVirtualMedia(ctx, task, device, url); err != nil {
		return err
	}
	task.Logger().Info("inserted virtual removable device with configuration", "node", n.UUID, "device", device)
	return nil
}
