package redfish

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/model"
)

// Staging of firmware images, upstream's firmware_utils and the
// _stage_firmware_file of the firmware and management interfaces.

// firmwareSubdir is where staged images go under http_root and its URL
// (upstream's _FIRMWARE_SUBDIR).
const firmwareSubdir = "firmware"

// What firmware_cleanup lists: the places a node's images were staged.
const (
	fwStagedHTTP  = "http"
	fwStagedSwift = "swift"
)

func (f *Firmware) staging() *FirmwareStaging { return &f.core.opts.FirmwareStaging }

// stageFirmware is upstream _stage_firmware_file: the URL the BMC is to
// fetch imageURL from and where it was staged ("" when the BMC gets the
// image at its own place). An http(s) image with firmware_source http
// goes as it is, a swift:// one with firmware_source swift under a
// temporary URL; any other is downloaded and staged in http_root (http,
// local) or Swift (swift). checksum, when given (update_firmware), is
// checked on the download. On failure the node's staging is cleaned up.
func (f *Firmware) stageFirmware(ctx context.Context, task *driver.Task, imageURL, checksum string, verify bool) (string, string, error) {
	staged, kind, err := f.stageFirmwareFile(ctx, task, imageURL, checksum, verify)
	if err != nil {
		f.cleanupFirmware(ctx, task)
		return "", "", err
	}
	return staged, kind, nil
}

func (f *Firmware) stageFirmwareFile(ctx context.Context, task *driver.Task, imageURL, checksum string, verify bool) (string, string, error) {
	n := task.Node
	u, err := url.Parse(imageURL)
	if err != nil {
		return "", "", driver.InvalidParameterValue("%s is not a valid firmware URL: %s", imageURL, err)
	}
	scheme := strings.ToLower(u.Scheme)
	source := strings.ToLower(f.core.opts.FirmwareSource)
	// TLS makes no difference to what is done with the image.
	if scheme == "https" {
		scheme = "http"
	}
	switch {
	case scheme == "http" && source == "http":
		task.Logger().Debug("serving firmware from its original location", "node", n.UUID, "url", imageURL)
		return imageURL, "", nil
	case scheme == "swift" && source == "swift":
		temp, err := f.swiftTempURL(ctx, u)
		if err != nil {
			return "", "", err
		}
		task.Logger().Debug("serving the original firmware through a Swift temporary URL", "node", n.UUID, "url", imageURL)
		return temp, "", nil
	}
	tmp, err := f.downloadToTemp(ctx, task, u, imageURL)
	if err != nil {
		return "", "", err
	}
	if verify {
		if err := verifyFirmwareChecksum(n, checksum, tmp); err != nil {
			return "", "", err
		}
	}
	return f.stage(ctx, task, source, tmp)
}

// swiftTempURL is upstream get_swift_temp_url of
// swift://<container>/<object path>.
func (f *Firmware) swiftTempURL(ctx context.Context, u *url.URL) (string, error) {
	st := f.staging()
	if st.Swift == nil {
		return "", fmt.Errorf("firmware %s: no Swift client configured", u)
	}
	return st.Swift.TempURL(ctx, u.Host, strings.TrimLeft(u.Path, "/"), st.SwiftObjectExpiry)
}

// nodeTempDir is where a node's images are downloaded to (upstream's
// <gettempdir()>/<node uuid>).
func (f *Firmware) nodeTempDir(n *model.Node) string {
	dir := f.staging().Image.TempDir
	if dir == "" {
		dir = os.TempDir()
	}
	return filepath.Join(dir, n.UUID)
}

// downloadToTemp is upstream download_to_temp: http, swift (through its
// temporary URL) and file URLs only; the file keeps the URL's name.
func (f *Firmware) downloadToTemp(ctx context.Context, task *driver.Task, u *url.URL, imageURL string) (string, error) {
	n := task.Node
	scheme := strings.ToLower(u.Scheme)
	if !slices.Contains([]string{"http", "swift", "file"}, scheme) {
		return "", driver.InvalidParameterValue("%s is not supported for %s.", scheme, imageURL)
	}
	name := path.Base(u.Path)
	if name == "." || name == "/" {
		return "", driver.InvalidParameterValue("The firmware URL %s names no file.", imageURL)
	}
	dir := f.nodeTempDir(n)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("temporary directory for firmware %s: %w", imageURL, err)
	}
	tmp := filepath.Join(dir, name)
	task.Logger().Debug("downloading firmware to a temporary location", "node", n.UUID, "url", imageURL, "temp_file", tmp)
	href := imageURL
	if scheme == "swift" {
		temp, err := f.swiftTempURL(ctx, u)
		if err != nil {
			return "", err
		}
		href = temp
	}
	opts := f.staging().Image
	sources, err := image.NewSources(opts, nil)
	if err != nil {
		return "", fmt.Errorf("download firmware %s: %w", imageURL, err)
	}
	if err := image.NewFetcher(sources, opts).Download(ctx, href, tmp, image.FetchOptions{DisableValidation: true}); err != nil {
		return "", err
	}
	return tmp, nil
}

// verifyFirmwareChecksum is upstream verify_checksum: the algorithm is
// told by the checksum's length (sha1, sha256, sha512).
func verifyFirmwareChecksum(n *model.Node, checksum, file string) error {
	var algo string
	switch l := len(checksum); {
	case l <= 41:
		algo = "sha1"
	case l <= 64:
		algo = "sha256"
	case l <= 128:
		algo = "sha512"
	default:
		return errs.NewMessage(errs.ClassRedfishError, fmt.Sprintf(
			"Unable to identify checksum to perform firmware file checksum calculation. Please validate your input in and try again. Received: %s",
			checksum))
	}
	got, err := image.FileChecksum(file, algo)
	if err != nil {
		return err
	}
	if got != checksum {
		return errs.NewMessage(errs.ClassRedfishError, fmt.Sprintf(
			"For node %s firmware file %s checksums do not match. Expected: %s, calculated: %s.", n.UUID, file, checksum, got))
	}
	return nil
}

// stage is upstream firmware_utils.stage: the downloaded file goes to the
// HTTP server (source http or local) or to Swift (swift).
func (f *Firmware) stage(ctx context.Context, task *driver.Task, source, tmp string) (string, string, error) {
	switch source {
	case "http", "local":
		u, err := f.stageHTTP(task, tmp)
		return u, fwStagedHTTP, err
	case "swift":
		u, err := f.stageSwift(ctx, task, tmp)
		return u, fwStagedSwift, err
	}
	return "", "", driver.InvalidParameterValue("Unknown firmware_source %s: it is one of http, local and swift.", source)
}

// stageHTTP puts the file in http_root/firmware/<node uuid>/, a hard link
// when the file systems allow, else a copy.
func (f *Firmware) stageHTTP(task *driver.Task, tmp string) (string, error) {
	n, st := task.Node, f.staging()
	root := st.ExternalHTTPURL
	if root == "" {
		root = st.HTTPURL
	}
	if root == "" {
		return "", driver.InvalidParameterValue("[deploy]/http_url is not set: cannot stage firmware %s", filepath.Base(tmp))
	}
	base, err := url.Parse(root)
	if err != nil {
		return "", driver.InvalidParameterValue("[deploy]/http_url %s is not a valid URL: %s", root, err)
	}
	name := filepath.Base(tmp)
	staged := base.ResolveReference(&url.URL{Path: firmwareSubdir + "/" + n.UUID + "/" + name}).String()
	dir := filepath.Join(st.HTTPRoot, firmwareSubdir, n.UUID)
	dest := filepath.Join(dir, name)
	task.Logger().Debug("staging firmware on the HTTP server", "node", n.UUID, "temp_file", tmp, "staged_path", dest, "staged_url", staged)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("firmware directory of node %s: %w", n.UUID, err)
	}
	copyFailed := func(err error) error {
		return errs.NewMessage(errs.ClassRedfishError, fmt.Sprintf(
			"For %s failed to copy firmware file %s to HTTP server root. Error %s", n.UUID, tmp, err))
	}
	// A file staged before may share the temporary file's inode: copying
	// onto it would truncate the source.
	if err := os.Remove(dest); err != nil && !os.IsNotExist(err) {
		return "", copyFailed(err)
	}
	if err := image.HardLinkOrCopy(tmp, dest); err != nil {
		return "", copyFailed(err)
	}
	perm := st.FilePermission
	if perm == 0 {
		perm = 0o644
	}
	if err := os.Chmod(dest, perm); err != nil {
		return "", copyFailed(err)
	}
	return staged, nil
}

// stageSwift uploads the file as <node uuid>/<file>, expiring with its
// temporary URL.
func (f *Firmware) stageSwift(ctx context.Context, task *driver.Task, tmp string) (string, error) {
	n, st := task.Node, f.staging()
	if st.Swift == nil {
		return "", fmt.Errorf("stage firmware %s: no Swift client configured", tmp)
	}
	obj := n.UUID + "/" + filepath.Base(tmp)
	expire := map[string]string{"X-Delete-After": strconv.Itoa(int(st.SwiftObjectExpiry / time.Second))}
	if err := st.Swift.CreateObjectFromFile(ctx, st.SwiftContainer, obj, tmp, expire); err != nil {
		return "", err
	}
	staged, err := st.Swift.TempURL(ctx, st.SwiftContainer, obj, st.SwiftObjectExpiry)
	if err != nil {
		return "", err
	}
	task.Logger().Debug("serving firmware from a Swift temporary URL", "node", n.UUID, "temp_file", tmp, "container", st.SwiftContainer, "object", obj)
	return staged, nil
}

// recordStaging adds where an image was staged to firmware_cleanup.
func recordStaging(n *model.Node, kind string) {
	if kind == "" {
		return
	}
	kinds := stagedKinds(n)
	if slices.Contains(kinds, kind) {
		return
	}
	list := make([]any, 0, len(kinds)+1)
	for _, k := range append(kinds, kind) {
		list = append(list, k)
	}
	n.InternalInfo().Set(fwCleanupKey, list)
}

func stagedKinds(n *model.Node) []string {
	var out []string
	switch v := n.InternalInfo().Get(fwCleanupKey).(type) {
	case []any:
		for _, k := range v {
			if s, ok := k.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, v...)
	}
	return out
}

// cleanupFirmware is upstream firmware_utils.cleanup: the node's
// temporary downloads always, then what firmware_cleanup lists — its
// http_root directory, its objects in Swift (a failure to delete one is
// only logged, as is one to list them). firmware_cleanup itself is the
// caller's to drop.
func (f *Firmware) cleanupFirmware(ctx context.Context, task *driver.Task) {
	n, st := task.Node, f.staging()
	log := task.Logger()
	tmp := f.nodeTempDir(n)
	log.Debug("cleaning up temporary firmware files", "node", n.UUID, "temp_dir", tmp)
	if err := os.RemoveAll(tmp); err != nil {
		log.Debug("could not remove temporary firmware files", "node", n.UUID, "temp_dir", tmp, "error", err)
	}
	kinds := stagedKinds(n)
	if slices.Contains(kinds, fwStagedHTTP) {
		dir := filepath.Join(st.HTTPRoot, firmwareSubdir, n.UUID)
		log.Debug("cleaning up staged firmware files", "node", n.UUID, "http_dir", dir)
		if err := os.RemoveAll(dir); err != nil {
			log.Debug("could not remove staged firmware files", "node", n.UUID, "http_dir", dir, "error", err)
		}
	}
	if !slices.Contains(kinds, fwStagedSwift) {
		return
	}
	log.Debug("cleaning up staged firmware files from Swift", "node", n.UUID, "container", st.SwiftContainer)
	if st.Swift == nil {
		log.Warn("no Swift client configured to clean up staged firmware", "node", n.UUID, "container", st.SwiftContainer)
		return
	}
	// Upstream lets a failed listing fail the caller, which at this point
	// has given the update up already; the objects expire anyway.
	names, err := st.Swift.ListObjects(ctx, st.SwiftContainer)
	if err != nil {
		log.Warn(fmt.Sprintf("For node %s failed to list the objects of Swift container %s. Error: %s", n.UUID, st.SwiftContainer, err))
		return
	}
	for _, name := range names {
		if name == "" || !strings.HasPrefix(name, n.UUID) {
			continue
		}
		if err := st.Swift.DeleteObject(ctx, st.SwiftContainer, name); err != nil {
			log.Warn(fmt.Sprintf("For node %s failed to clean up %s. Error: %s", n.UUID, name, err))
		}
	}
}
