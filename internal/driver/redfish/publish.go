package redfish

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
)

// publish is upstream ImageHandler.publish_image: to Swift when
// configured, else as LocalPublisher.publish does, a hard link (or a
// copy) in http_root/redfish and its URL under the node's
// external_http_url, [deploy]/external_http_url or http_url.
func (o *BootOptions) publish(ctx context.Context, src, name, nodeURL string) (string, error) {
	if o.Swift != nil {
		return o.publishSwift(ctx, src, name)
	}
	root := nodeURL
	if root == "" {
		root = o.ExternalHTTPURL
	}
	if root == "" {
		root = o.HTTPURL
	}
	if root == "" {
		return "", driver.InvalidParameterValue("[deploy]/http_url is not set: cannot publish %s", name)
	}
	dir := filepath.Join(o.HTTPRoot, imageSubdir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("publish %s: %w", name, err)
	}
	dest := filepath.Join(dir, name)
	perm := o.FilePermission
	if perm == 0 {
		perm = 0o644
	}
	if err := os.Remove(dest); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("publish %s: %w", name, err)
	}
	if err := image.HardLinkOrCopy(src, dest); err != nil {
		return "", fmt.Errorf("publish %s: %w", name, err)
	}
	if err := os.Chmod(dest, perm); err != nil {
		return "", fmt.Errorf("publish %s: %w", name, err)
	}
	return strings.TrimRight(root, "/") + "/" + imageSubdir + "/" + name, nil
}

// publishSwift is upstream SwiftPublisher.publish: the object expires
// with its temporary URL, which gets a filename parameter naming the
// source file because some BMCs want the URL to look like an ISO file's.
func (o *BootOptions) publishSwift(ctx context.Context, src, name string) (string, error) {
	expire := map[string]string{"X-Delete-After": strconv.Itoa(int(o.SwiftObjectExpiry / time.Second))}
	if err := o.Swift.CreateObjectFromFile(ctx, o.SwiftContainer, name, src, expire); err != nil {
		return "", err
	}
	u, err := o.Swift.TempURL(ctx, o.SwiftContainer, name, o.SwiftObjectExpiry)
	if err != nil {
		return "", err
	}
	return appendFilenameParam(u, filepath.Base(src)), nil
}

// unpublish removes a published image; a missing file is no error. In
// Swift, as upstream's SwiftPublisher.unpublish, a failure to delete is
// only logged.
func (o *BootOptions) unpublish(ctx context.Context, task *driver.Task, name string) error {
	if o.Swift != nil {
		task.Logger().DebugContext(ctx, fmt.Sprintf("Cleaning up image %s from Swift container %s", name, o.SwiftContainer), "node", task.Node.UUID)
		err := o.Swift.DeleteObject(ctx, o.SwiftContainer, name)
		switch {
		case err == nil:
		case errs.Is(err, errs.ClassSwiftObjectNotFoundError):
			// Withdrawing what may never have been published (node
			// deletion tries every name) is routine, not a failure.
			task.Logger().DebugContext(ctx, fmt.Sprintf("Image %s is not in Swift container %s", name, o.SwiftContainer), "node", task.Node.UUID)
		case errs.Is(err, errs.ClassSwiftOperationError):
			task.Logger().WarnContext(ctx, fmt.Sprintf("Failed to clean up image %s. Error: %s.", name, err), "node", task.Node.UUID)
		default:
			return err
		}
		return nil
	}
	err := os.Remove(filepath.Join(o.HTTPRoot, imageSubdir, name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove published image %s: %w", name, err)
	}
	return nil
}

// PublishImage is upstream ImageHandler.publish_image for the redfish
// hardware type: attach_virtual_media publishes with the same options, in
// the same place, as the virtual media boot interface.
func (m *Management) PublishImage(ctx context.Context, task *driver.Task, path, name string) (string, error) {
	return m.images.publish(ctx, path, name, strField(task.Node.DriverInfo, "external_http_url"))
}

// UnpublishImage is upstream ImageHandler.unpublish_image.
func (m *Management) UnpublishImage(ctx context.Context, task *driver.Task, name string) error {
	return m.images.unpublish(ctx, task, name)
}

// RemovePublishedImages withdraws every image the interface publishes for
// the node: the deploy, rescue or instance ISO, the configuration image of
// config_via_removable and the config drive image of a ramdisk instance.
func (b *VirtualMediaBoot) RemovePublishedImages(ctx context.Context, task *driver.Task) error {
	n := task.Node
	var failed []error
	for _, name := range []string{isoName(n), configImageName(n), configdriveImageName(n)} {
		if err := b.opts.unpublish(ctx, task, name); err != nil {
			failed = append(failed, err)
		}
	}
	return errors.Join(failed...)
}

// RemovePublishedImages withdraws the images published for the node, as
// the virtual media boot interface publishes them.
func (b *HTTPSBoot) RemovePublishedImages(ctx context.Context, task *driver.Task) error {
	return b.vm.RemovePublishedImages(ctx, task)
}

var (
	_ driver.ImagePublisher         = (*Management)(nil)
	_ driver.PublishedImagesRemover = (*VirtualMediaBoot)(nil)
	_ driver.PublishedImagesRemover = (*HTTPSBoot)(nil)
)
