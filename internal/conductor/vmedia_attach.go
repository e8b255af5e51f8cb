package conductor

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/pyfmt"
	"github.com/openkeel/ironic/internal/rpc"
)

// vmediaDevices are upstream's boot_devices.VMEDIA_DEVICES.
var vmediaDevices = []string{"disk", "cdrom", "floppy"}

// vmediaFileName is upstream's _virtual_media_file_name: what an image
// attached to the device is published as.
func vmediaFileName(deviceType, nodeUUID string) string {
	ext := "img"
	if deviceType == "cdrom" {
		ext = "iso"
	}
	return fmt.Sprintf("%s-%s.%s", deviceType, nodeUUID, ext)
}

// unsupportedCall is the UnsupportedDriverExtension of upstream's base
// ManagementInterface methods, which name the call.
func unsupportedCall(dt *driver.Task, call string) error {
	return errs.New(errs.ClassUnsupportedDriverExtension, map[string]any{"driver": dt.Node.Driver, "extension": call})
}

// GetVirtualMedia lists the attached virtual devices (upstream
// get_virtual_media).
func (c *Conductor) GetVirtualMedia(ctx context.Context, _ string, nodeID string) (map[string]any, error) {
	out := map[string]any{}
	err := c.withManagement(ctx, nodeID, "get virtual media devices", true, func(t *task.Task, dt *driver.Task) error {
		vm, ok := t.Driver.Management.(driver.VirtualMediaManager)
		if !ok {
			return unsupportedCall(dt, "get_virtual_media")
		}
		list, err := vm.GetVirtualMedia(ctx, dt)
		if err != nil {
			return err
		}
		items := make([]any, len(list))
		for i, m := range list {
			items[i] = m
		}
		out["devices"] = items
		return nil
	})
	return out, err
}

// AttachVirtualMedia is upstream attach_virtual_media: the call answers
// once management is validated and the worker started; the worker's
// failure lands in last_error.
func (c *Conductor) AttachVirtualMedia(ctx context.Context, _ string, args rpc.AttachVirtualMediaArgs) error {
	return c.spawnVirtualMedia(ctx, args.NodeID, "attach", func(ctx context.Context, t *task.Task) error {
		c.doAttachVirtualMedia(ctx, t, args.DeviceType, args.ImageURL, args.ImageDownloadSource)
		return nil
	})
}

// DetachVirtualMedia is upstream detach_virtual_media: the devices (all
// when deviceTypes is nil) are detached in a worker, a failure recorded
// in last_error. Once ejected, the images published for those devices
// are withdrawn, as upstream's do_detach_virtual_media does: the URL the
// BMC was given stops serving them. An image the BMC may still hold (the
// eject failed) stays published.
func (c *Conductor) DetachVirtualMedia(ctx context.Context, _ string, nodeID string, deviceTypes []string) error {
	return c.spawnVirtualMedia(ctx, nodeID, "detach", func(ctx context.Context, t *task.Task) error {
		types := "None"
		if deviceTypes != nil {
			types = pyfmt.Repr(deviceTypes)
		}
		dt := t.DriverTask()
		var err error
		if vm, ok := t.Driver.Management.(driver.VirtualMediaManager); ok {
			err = vm.DetachVirtualMedia(ctx, dt, deviceTypes)
		} else {
			err = unsupportedCall(dt, "detach_virtual_media")
		}
		if err == nil {
			devices := deviceTypes
			if devices == nil {
				devices = vmediaDevices
			}
			err = unpublishVirtualMedia(ctx, dt, devices)
		}
		c.nodeActionResult(ctx, t, err, fmt.Sprintf("Could not detach device(s) %s from node %s", types, t.Node.UUID))
		return nil
	})
}

// unpublishVirtualMedia withdraws the images published for the devices
// (upstream cleanup_remote_image); a management interface that cannot
// publish has nothing to withdraw.
func unpublishVirtualMedia(ctx context.Context, dt *driver.Task, devices []string) error {
	pub, ok := dt.Driver.Management.(driver.ImagePublisher)
	if !ok {
		return nil
	}
	var failed []error
	for _, d := range devices {
		if err := pub.UnpublishImage(ctx, dt, vmediaFileName(d, dt.Node.UUID)); err != nil {
			failed = append(failed, err)
		}
	}
	return errors.Join(failed...)
}

// removePublishedImages withdraws everything published for the node
// before it is deleted: the images of attach_virtual_media and those the
// node's interfaces published under names of their own (boot ISOs,
// configuration images). A failure is logged and does not stop the
// deletion: the node would otherwise stay undeletable for a file.
func (c *Conductor) removePublishedImages(ctx context.Context, t *task.Task) {
	n := t.Node
	ifaces, err := c.drivers.ForNode(n)
	if err != nil {
		t.Log().WarnContext(ctx, "cannot load the node's driver to remove the images published for it", "error", err)
		return
	}
	dt := &driver.Task{Node: n, Driver: ifaces, Log: t.Log()}
	if err := unpublishVirtualMedia(ctx, dt, vmediaDevices); err != nil {
		t.Log().ErrorContext(ctx, "failed to remove the virtual media images published for the node", "error", err)
	}
	seen := map[driver.Interface]bool{}
	for _, kind := range append(append([]driver.Kind{}, driver.CoreKinds...), driver.OptionalKinds...) {
		impl := ifaces.Get(kind)
		r, ok := impl.(driver.PublishedImagesRemover)
		if !ok || seen[impl] {
			continue
		}
		seen[impl] = true
		if err := r.RemovePublishedImages(ctx, dt); err != nil {
			t.Log().ErrorContext(ctx, "failed to remove the images published for the node", "interface", kind, "error", err)
		}
	}
}

// spawnVirtualMedia takes the node's exclusive lock, validates management,
// refuses a node in maintenance for a power failure, clears last_error
// and starts fn in a worker.
func (c *Conductor) spawnVirtualMedia(ctx context.Context, nodeID, action string, fn task.WorkFunc) error {
	purpose := action + "ing virtual media"
	t, err := c.acquire(ctx, nodeID, purpose, false)
	if err != nil {
		return err
	}
	defer t.Release()
	if err := t.Driver.Management.Validate(ctx, t.DriverTask()); err != nil {
		return err
	}
	n := t.Node
	if n.Maintenance && n.Fault != nil && *n.Fault == faultPowerFailure {
		return errs.NewMessage(errs.ClassTemporaryFailure,
			fmt.Sprintf("Unable to %s virtual media for node %s due to power failure state", action, n.UUID))
	}
	n.LastError = nil
	if err := t.Save(ctx); err != nil {
		return err
	}
	t.SetSpawnErrorHook(task.SpawnErrorHandler(purpose))
	t.SpawnAfter(c.spawner(), task.Work{Name: purpose, Fn: fn})
	return t.End()
}

// doAttachVirtualMedia is upstream do_attach_virtual_media: an image
// published for the device before is withdrawn, the new one is published
// when it must be served locally, then the management interface inserts
// it. Whatever fails is recorded in last_error.
func (c *Conductor) doAttachVirtualMedia(ctx context.Context, t *task.Task, deviceType, imageURL, source string) {
	n := t.Node
	prefix := fmt.Sprintf("Could not attach device %s to node %s", deviceType, n.UUID)
	dt := t.DriverTask()
	url, err := c.publishVirtualMedia(ctx, dt, deviceType, imageURL, source)
	if err != nil {
		c.nodeActionResult(ctx, t, err, prefix)
		return
	}
	if vm, ok := t.Driver.Management.(driver.VirtualMediaManager); ok {
		err = vm.AttachVirtualMedia(ctx, dt, deviceType, url)
	} else {
		err = unsupportedCall(dt, "attach_virtual_media")
	}
	c.nodeActionResult(ctx, t, err, prefix)
}

// nodeActionResult is the end of upstream run_node_action: a failure is
// recorded as "<prefix>: <error>", and the node saved either way.
func (c *Conductor) nodeActionResult(ctx context.Context, t *task.Task, err error, prefix string) {
	if err != nil {
		msg := fmt.Sprintf("%s: %s", prefix, err)
		t.Log().ErrorContext(ctx, msg)
		record(ctx, t, msg, "", true)
	}
	save(ctx, t)
}

// publishVirtualMedia is the image half of upstream
// do_attach_virtual_media (image_utils cleanup_remote_image and
// prepare_remote_image): it answers the URL to give the BMC.
func (c *Conductor) publishVirtualMedia(ctx context.Context, dt *driver.Task, deviceType, imageURL, source string) (string, error) {
	if !slices.Contains(vmediaDevices, deviceType) {
		// Upstream asserts the type; the AssertionError has no text.
		return "", errors.New("")
	}
	n := dt.Node
	pub, ok := dt.Driver.Management.(driver.ImagePublisher)
	if !ok {
		return "", errs.NewMessage(errs.ClassUnsupportedDriverExtension, "Publishing images is not supported for driver "+n.Driver)
	}
	name := vmediaFileName(deviceType, n.UUID)
	if err := pub.UnpublishImage(ctx, dt, name); err != nil {
		c.log.WarnContext(ctx, "removing the image published before", "node", n.UUID, "file", name, "error", err)
	}
	scheme := ""
	if u, err := url.Parse(imageURL); err == nil {
		scheme = strings.ToLower(u.Scheme)
	}
	remote := slices.Contains([]string{"http", "https", "nfs", "cifs", "smb"}, scheme)
	if source == "local" && slices.Contains([]string{"nfs", "cifs", "smb"}, scheme) {
		return "", driver.InvalidParameterValue("image_download_source is set to 'local' but the image URL %s uses the %s protocol "+
			"which cannot be downloaded by the conductor. Set image_download_source to 'http' or remove it to use the default.", imageURL, scheme)
	}
	if source != "local" && remote {
		return imageURL, nil
	}
	return c.publishLocally(ctx, dt, pub, imageURL, name)
}

// publishLocally downloads the image and has the hardware type publish it
// (http_root or Swift), as upstream's prepare_remote_image does.
func (c *Conductor) publishLocally(ctx context.Context, dt *driver.Task, pub driver.ImagePublisher, imageURL, name string) (string, error) {
	opts := image.OptionsFromConfig(c.cfg)
	sources, err := image.NewSources(opts, nil)
	if err != nil {
		return "", fmt.Errorf("image sources: %w", err)
	}
	tmp, err := os.MkdirTemp(opts.TempDir, "vmedia")
	if err != nil {
		return "", fmt.Errorf("temporary directory for %s: %w", name, err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, name)
	if err := image.NewFetcher(sources, opts).Download(ctx, imageURL, src, image.FetchOptions{DisableValidation: true}); err != nil {
		return "", err
	}
	return pub.PublishImage(ctx, dt, src, name)
}
