package conductor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
	"github.com/openkeel/ironic/internal/rpc"
)

// vmediaDevices are upstream's boot_devices.VMEDIA_DEVICES.
var vmediaDevices = []string{"disk", "cdrom", "floppy"}

// vmediaPublishers are the hardware types upstream's ImageHandler can
// publish images for, and the directory of http_root they use.
var vmediaPublishers = map[string]string{"redfish": "redfish", "idrac": "redfish"}

// unsupportedCall is the UnsupportedDriverExtension of upstream's base
// ManagementInterface methods, which name the call.
func unsupportedCall(dt *driver.Task, call string) error {
	return errs.New("UnsupportedDriverExtension", map[string]any{"driver": dt.Node.Driver, "extension": call})
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
// in last_error.
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
		c.nodeActionResult(ctx, t, err, fmt.Sprintf("Could not detach device(s) %s from node %s", types, t.Node.UUID))
		return nil
	})
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
		return errs.NewMessage("TemporaryFailure",
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
	url, err := c.publishVirtualMedia(ctx, n, deviceType, imageURL, source)
	if err != nil {
		c.nodeActionResult(ctx, t, err, prefix)
		return
	}
	dt := t.DriverTask()
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
func (c *Conductor) publishVirtualMedia(ctx context.Context, n *model.Node, deviceType, imageURL, source string) (string, error) {
	if !slices.Contains(vmediaDevices, deviceType) {
		// Upstream asserts the type; the AssertionError has no text.
		return "", errors.New("")
	}
	subdir, ok := vmediaPublishers[n.Driver]
	if !ok {
		return "", errs.NewMessage("UnsupportedDriverExtension", "Publishing images is not supported for driver "+n.Driver)
	}
	ext := "img"
	if deviceType == "cdrom" {
		ext = "iso"
	}
	name := fmt.Sprintf("%s-%s.%s", deviceType, n.UUID, ext)
	dir := filepath.Join(c.cfg.String("deploy", "http_root"), subdir)
	if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
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
	return c.publishLocally(ctx, n, imageURL, dir, subdir, name)
}

// publishLocally downloads the image and serves it from http_root, as
// upstream's LocalPublisher does; the URL is under the node's
// external_http_url, else [deploy]/external_http_url, else http_url.
func (c *Conductor) publishLocally(ctx context.Context, n *model.Node, imageURL, dir, subdir, name string) (string, error) {
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("publish %s: %w", name, err)
	}
	dest := filepath.Join(dir, name)
	perm := fs.FileMode(c.cfg.Int("redfish", "file_permission"))
	if err := image.HardLinkOrCopy(src, dest); err != nil {
		return "", fmt.Errorf("publish %s: %w", name, err)
	}
	if err := os.Chmod(dest, perm); err != nil {
		return "", fmt.Errorf("publish %s: %w", name, err)
	}
	root, _ := n.DriverInfo["external_http_url"].(string)
	if root == "" {
		root = c.cfg.String("deploy", "external_http_url")
	}
	if root == "" {
		root = c.cfg.String("deploy", "http_url")
	}
	return strings.TrimRight(root, "/") + "/" + subdir + "/" + name, nil
}
