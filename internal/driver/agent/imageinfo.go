package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/image/configdrive"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
	"github.com/openkeel/ironic/internal/states"
)

// Image download sources ([agent]/image_download_source and the
// image_download_source of instance_info or driver_info).
const (
	DownloadHTTP  = "http"
	DownloadLocal = "local"
	DownloadSwift = "swift"
)

// maxConfigDriveMiB is the agent's limit on a configdrive (its partition
// is 64 MiB); refusing a larger one here fails the deploy before the
// image is written rather than after.
const maxConfigDriveMiB = 64

// Images configures how the direct deploy interface turns image_source
// into what the agent downloads: the URL as it is, or a copy the
// conductor caches, checks, converts and serves from its own HTTP server
// (upstream's build_instance_info_for_deploy and InstanceImageCache).
type Images struct {
	// Sources resolves http(s)://, file:// and Glance references; nil
	// hands http(s) URLs to the agent unchecked and refuses the others.
	Sources *image.Sources
	// Checksums resolves instance_info's checksum (checksum URLs,
	// file:// sha256); nil builds one from Sources and Opts.
	Checksums *image.Checksums
	// Fetcher downloads into the instance image cache.
	Fetcher *image.Fetcher
	// MasterPath, CacheSize and CacheTTL are [pxe]/instance_master_path,
	// image_cache_size (bytes) and image_cache_ttl.
	MasterPath string
	CacheSize  int64
	CacheTTL   time.Duration
	// ImagesPath is [pxe]/images_path: <node uuid>/disk links to the
	// master copy there.
	ImagesPath string
	// DownloadSource is [agent]/image_download_source.
	DownloadSource string
	// HTTPURL, HTTPRoot and HTTPImageSubdir are [deploy]/http_url,
	// http_root and http_image_subdir: a local image is published as
	// HTTPRoot/HTTPImageSubdir/<node uuid>.
	HTTPURL         string
	HTTPRoot        string
	HTTPImageSubdir string
	// ForceRaw is [DEFAULT]/force_raw_images, StreamRaw
	// [agent]/stream_raw_images; the conductor converts only with both.
	ForceRaw  bool
	StreamRaw bool
	// AlwaysValidateImages is [conductor]/conductor_always_validates_images
	// and DisableDeepInspection [conductor]/disable_deep_image_inspection.
	AlwaysValidateImages  bool
	DisableDeepInspection bool
	// MemoryConsumedByAgent is [agent]/memory_consumed_by_agent (MiB).
	MemoryConsumedByAgent int
	// ImageServerAuthStrategy, ImageServerUser and ImageServerPassword
	// are [deploy]/image_server_*, handed to the agent unless noauth.
	ImageServerAuthStrategy string
	ImageServerUser         string
	ImageServerPassword     string
	// DefaultEphemeralFormat is [pxe]/default_ephemeral_format.
	DefaultEphemeralFormat string
	// AllowMD5 is [agent]/allow_md5_checksum.
	AllowMD5 bool
	// Swift signs temporary URLs of Glance images for the swift
	// download source; nil refuses that source.
	Swift *image.SwiftTempURLs

	mu    sync.Mutex
	cache *image.Cache
}

// ImagesFromConfig reads the direct deploy's image options; sources and
// fetcher are the conductor's shared ones.
func ImagesFromConfig(c *config.Config, sources *image.Sources, fetcher *image.Fetcher, opts image.Options) *Images {
	return &Images{
		Sources:                 sources,
		Checksums:               &image.Checksums{Opts: opts, HTTP: sources.HTTP},
		Fetcher:                 fetcher,
		MasterPath:              c.StringOf(config.PXEInstanceMasterPath),
		CacheSize:               int64(c.IntOf(config.PXEImageCacheSize)) << 20,
		CacheTTL:                time.Duration(c.IntOf(config.PXEImageCacheTTL)) * time.Minute,
		ImagesPath:              c.StringOf(config.PXEImagesPath),
		DownloadSource:          c.StringOf(config.AgentImageDownloadSource),
		HTTPURL:                 c.StringOf(config.DeployHTTPURL),
		HTTPRoot:                c.StringOf(config.DeployHTTPRoot),
		HTTPImageSubdir:         c.StringOf(config.DeployHTTPImageSubdir),
		ForceRaw:                c.BoolOf(config.DefaultForceRawImages),
		StreamRaw:               c.BoolOf(config.AgentStreamRawImages),
		AlwaysValidateImages:    c.BoolOf(config.ConductorConductorAlwaysValidatesImages),
		DisableDeepInspection:   c.BoolOf(config.ConductorDisableDeepImageInspection),
		MemoryConsumedByAgent:   c.IntOf(config.AgentMemoryConsumedByAgent),
		ImageServerAuthStrategy: c.StringOf(config.DeployImageServerAuthStrategy),
		ImageServerUser:         c.StringOf(config.DeployImageServerUser),
		ImageServerPassword:     c.StringOf(config.DeployImageServerPassword),
		DefaultEphemeralFormat:  c.StringOf(config.PXEDefaultEphemeralFormat),
		AllowMD5:                c.BoolOf(config.AgentAllowMd5Checksum),
		Swift:                   image.SwiftTempURLsFromConfig(c),
	}
}

// ConfigureDirectImages hands im to the direct deploy interface
// registered in r.
func ConfigureDirectImages(r *driver.Registry, im *Images) error {
	impl, ok := r.Implementation(driver.KindDeploy, "direct")
	if !ok {
		return errors.New("direct deploy interface is not registered")
	}
	d, ok := impl.(*Direct)
	if !ok {
		return fmt.Errorf("direct deploy interface is a %T", impl)
	}
	d.images = im
	return nil
}

// imgs is the configured Images, or, for a Direct built without image
// options (unit tests of other flows), upstream's defaults without image
// services.
func (d *Direct) imgs() *Images {
	if d.images != nil {
		return d.images
	}
	return &Images{DownloadSource: DownloadHTTP, HTTPImageSubdir: "agent_images", StreamRaw: true, AllowMD5: true, DefaultEphemeralFormat: "ext4"}
}

// instanceCache is upstream's InstanceImageCache, created on first use so
// that a conductor that never caches instance images makes no directory.
func (im *Images) instanceCache() (*image.Cache, error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.cache != nil {
		return im.cache, nil
	}
	if im.Fetcher == nil || im.MasterPath == "" {
		return nil, errs.NewMessage(errs.ClassInstanceDeployFailure, "Failed to deploy instance: the conductor has no instance image cache configured")
	}
	c, err := image.NewCache(im.MasterPath, im.CacheSize, im.CacheTTL, im.ForceRaw, im.Fetcher)
	if err != nil {
		return nil, err
	}
	im.cache = c
	return c, nil
}

func (im *Images) checksums() *image.Checksums {
	if im.Checksums != nil {
		return im.Checksums
	}
	opts := image.DefaultOptions()
	opts.AllowMD5 = im.AllowMD5
	c := &image.Checksums{Opts: opts}
	if im.Sources != nil {
		c.HTTP = im.Sources.HTTP
	}
	return c
}

func (im *Images) symlinkDir() string { return filepath.Join(im.HTTPRoot, im.HTTPImageSubdir) }

func (im *Images) nodeImageDir(uuid string) string { return filepath.Join(im.ImagesPath, uuid) }

func (im *Images) nodeImagePath(uuid string) string {
	return filepath.Join(im.nodeImageDir(uuid), "disk")
}

// imageDownloadSource is upstream's get_image_download_source.
func (d *Direct) imageDownloadSource(n *model.Node) string {
	if s, ok := n.InstanceInfo["image_download_source"].(string); ok && s != "" {
		return s
	}
	if s, ok := n.DriverInfo["image_download_source"].(string); ok && s != "" {
		return s
	}
	return d.imgs().DownloadSource
}

func iiString(n *model.Node, key string) string {
	s, _ := n.InstanceInfo[key].(string)
	return s
}

func isFileURL(s string) bool { return strings.HasPrefix(s, "file://") }

// validateHTTPProvisioning is upstream's
// validate_http_provisioning_configuration.
func (d *Direct) validateHTTPProvisioning(n *model.Node) error {
	src := iiString(n, "image_source")
	ds := d.imageDownloadSource(n)
	if ds != DownloadSwift && ds != DownloadHTTP && ds != DownloadLocal {
		return driver.InvalidParameterValue("Invalid value for image_download_source: \"%s\". Valid values are swift, http or local.", ds)
	}
	if !isFileURL(src) && ds != DownloadLocal && (!image.IsGlanceImage(src) || ds == DownloadSwift) {
		return nil
	}
	im := d.imgs()
	params := []struct{ name, value string }{
		{"[deploy]http_url", im.HTTPURL}, {"[deploy]http_root", im.HTTPRoot}, {"[deploy]http_image_subdir", im.HTTPImageSubdir},
	}
	var missing []string
	for _, p := range params {
		if p.value == "" {
			missing = append(missing, p.name)
		}
	}
	if len(missing) > 0 {
		return driver.MissingParameterValue("Node %s failed to validate http provisioning. Some configuration options were missing. Missing are: %s", n.UUID, pyfmt.Repr(toAnySlice(missing)))
	}
	return nil
}

func toAnySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// validateImageProxies is upstream's validate_image_proxies.
func validateImageProxies(n *model.Node) error {
	invalid := map[string]any{}
	for _, scheme := range []string{"http", "https"} {
		param := "image_" + scheme + "_proxy"
		proxy, _ := n.DriverInfo[param].(string)
		if proxy == "" {
			continue
		}
		u, err := url.Parse(proxy)
		s := ""
		if err == nil {
			s = strings.ToLower(u.Scheme)
		}
		if err != nil || (s != "" && s != "http" && s != "https") {
			invalid[param] = proxy
		}
	}
	msg := ""
	if len(invalid) > 0 {
		msg += "Proxy URL should either have HTTP(S) scheme or no scheme at all, the following URLs are invalid: " + pyfmt.Repr(invalid) + "."
	}
	if v, ok := n.DriverInfo["image_no_proxy"]; ok && v != nil {
		s, isStr := v.(string)
		if !isStr || !validNoProxy(s) {
			msg += "image_no_proxy should be a list of host names, IP addresses or domain names to exclude from proxying, the specified list " + pyfmt.Str(v) + " is incorrect. To denote a domain name, prefix it with a dot (instead of e.g. '.*')."
		}
	}
	if msg != "" {
		return driver.InvalidParameterValue("%s", msg)
	}
	return nil
}

// validNoProxy is upstream's is_valid_no_proxy: comma-separated host
// names, addresses or ".domain" suffixes, 255 characters at most.
func validNoProxy(s string) bool {
	if len(s) > 255 {
		return false
	}
	for _, h := range strings.Split(s, ",") {
		h = strings.Split(strings.TrimSpace(h), ":")[0]
		if h == "" {
			continue
		}
		limit := 253
		if strings.HasPrefix(h, ".") {
			h, limit = h[1:], 251
		}
		if len(h) > limit {
			return false
		}
		for _, part := range strings.Split(h, ".") {
			if !hostnameLabel(part) {
				return false
			}
		}
	}
	return true
}

func hostnameLabel(p string) bool {
	if p == "" || len(p) > 63 || p[0] == '-' || p[len(p)-1] == '-' {
		return false
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// instanceCapabilities is upstream's parse_instance_info_capabilities.
func instanceCapabilities(n *model.Node) (map[string]any, error) {
	bad := driver.InvalidParameterValue("Error parsing capabilities from Instance Info")
	switch c := n.InstanceInfo["capabilities"].(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return c, nil
	case string:
		if c == "" {
			return map[string]any{}, nil
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(c), &m); err != nil || m == nil {
			return nil, bad
		}
		return m, nil
	}
	return nil, bad
}

// diskLabel is upstream's get_disk_label: the capability, else gpt for
// UEFI; "" for none.
func (d *Direct) diskLabel(n *model.Node) (string, error) {
	caps, err := instanceCapabilities(n)
	if err != nil {
		return "", err
	}
	if l, ok := caps["disk_label"].(string); ok {
		return l, nil
	}
	if d.bootMode(n) == "uefi" {
		return "gpt", nil
	}
	return "", nil
}

// isWholeDiskImage is upstream's images.is_whole_disk_image: image_type
// wins, then the Glance image's img_type or kernel/ramdisk properties,
// then instance_info's kernel/ramdisk. ok is false when it cannot tell.
func (d *Direct) isWholeDiskImage(ctx context.Context, n *model.Node) (whole, ok bool) {
	src := iiString(n, "image_source")
	if src == "" {
		return false, false
	}
	if t := iiString(n, "image_type"); t != "" {
		return t != imageTypePartition, true
	}
	if image.IsGlanceImage(src) {
		im := d.imgs()
		if im.Sources == nil {
			return false, false
		}
		info, err := im.Sources.Show(ctx, src)
		if err != nil {
			return false, false
		}
		if t, _ := info.Properties["img_type"].(string); t != "" {
			return t != imageTypePartition, true
		}
		return !pyfmt.Truthy(info.Properties["kernel_id"]) && !pyfmt.Truthy(info.Properties["ramdisk_id"]), true
	}
	if strings.HasSuffix(src, "/") {
		// A path (anaconda's), not an image.
		return false, false
	}
	return !pyfmt.Truthy(n.InstanceInfo["kernel"]) && !pyfmt.Truthy(n.InstanceInfo["ramdisk"]), true
}

const (
	imageTypePartition = "partition"
	imageTypeWholeDisk = "whole-disk"
)

// BuildInstanceInfo is build_instance_info_for_deploy for the deploy
// interfaces that install an image without an agent (anaconda's): the
// image resolved into image_url, as for the direct deploy.
func (d *Direct) BuildInstanceInfo(ctx context.Context, task *driver.Task) error {
	return d.updateInstanceInfo(ctx, task)
}

// updateInstanceInfo is upstream's AgentDeploy._update_instance_info:
// build_instance_info_for_deploy, recorded in the node's instance_info.
func (d *Direct) updateInstanceInfo(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if n.InstanceInfo == nil {
		n.InstanceInfo = map[string]any{}
	}
	if _, known := n.InternalInfo().Bool(model.DIIIsWholeDiskImage); !known {
		if whole, ok := d.isWholeDiskImage(ctx, n); ok {
			n.InternalInfo().Set(model.DIIIsWholeDiskImage, whole)
		}
	}
	iwdi, _ := n.InternalInfo().Bool(model.DIIIsWholeDiskImage)
	n.InternalInfo().Delete(model.DIIImageSource)
	ii := n.InstanceInfo
	src := iiString(n, "image_source")
	ds := d.imageDownloadSource(n)
	im := d.imgs()
	ii["image_url"] = nil

	switch {
	case strings.HasPrefix(src, "oci://"):
		if err := d.ociInstanceInfo(ctx, task, ds, src); err != nil {
			return err
		}
	case image.IsGlanceImage(src):
		info, err := d.glanceInstanceInfo(ctx, task, ds, src)
		if err != nil {
			return err
		}
		if err := checkImageSize(n, info, im); err != nil {
			return err
		}
	case isFileURL(src) || ds == DownloadLocal:
		if isFileURL(src) {
			if im.Sources == nil {
				return unsupportedRef(src, "file")
			}
			if _, err := im.Sources.File.Path(src); err != nil {
				return err
			}
		}
		if err := d.cacheAndConvert(ctx, task, nil); err != nil {
			return err
		}
	default:
		if err := d.validateRemoteImage(ctx, task, src); err != nil {
			return err
		}
	}

	if iwdi {
		ii["image_type"] = imageTypeWholeDisk
		return nil
	}
	ii["image_type"] = imageTypePartition
	return d.parseInstanceInfo(n)
}

// ociInstanceInfo is build_instance_info_for_deploy's container registry
// branch: the artifact identify_specific_image chooses for the node's
// cpu_arch and download source goes into instance_info (image_url the blob,
// oci_image_manifest_url its manifest), the manifest becomes
// driver_internal_info's image_source for the cache, and the image is then
// cached and served by the conductor ("local") or checked at the registry.
func (d *Direct) ociInstanceInfo(ctx context.Context, task *driver.Task, ds, src string) error {
	n := task.Node
	im := d.imgs()
	if im.Sources == nil || im.Sources.OCI == nil {
		return unsupportedRef(src, "oci")
	}
	auth := image.OCIAuthFor(n.InstanceInfo, n.DriverInfo, im.ImageServerUser, im.ImageServerPassword)
	arch, _ := n.Properties["cpu_arch"].(string)
	chosen, err := im.Sources.OCI.Identify(ctx, src, auth, ds, arch)
	if err != nil {
		return err
	}
	if chosen == nil {
		return errs.New(errs.ClassInvalidImageRef, map[string]any{"image_href": src})
	}
	info := chosen.InstanceInfo()
	ii := n.InstanceInfo
	if info["image_disk_format"] == "unknown" && ii["image_disk_format"] == "raw" {
		// A manifest given by digest says nothing of its format: the
		// agent detects it, as upstream leaves it.
		delete(info, "image_disk_format")
		delete(ii, "image_disk_format")
	}
	for k, v := range info {
		ii[k] = v
	}
	manifest, _ := ii["oci_image_manifest_url"].(string)
	n.InternalInfo().Set(model.DIIImageSource, manifest)
	n.InternalInfo().Set(model.DIIContainerImageType, "oci_artifact")
	if size, ok := ii["image_size"].(int64); ok {
		if err := checkImageSize(n, &image.Info{Size: size}, im); err != nil {
			return err
		}
	}
	if ds == DownloadLocal {
		return d.cacheAndConvert(ctx, task, nil)
	}
	_, err = im.Sources.OCI.ShowWithAuth(ctx, manifest, auth)
	return err
}

// glanceInstanceInfo is upstream's _instance_info_for_glance.
func (d *Direct) glanceInstanceInfo(ctx context.Context, task *driver.Task, ds, src string) (*image.Info, error) {
	im := d.imgs()
	if im.Sources == nil {
		return nil, unsupportedRef(src, "glance")
	}
	info, err := im.Sources.Show(ctx, src)
	if err != nil {
		return nil, err
	}
	ii := task.Node.InstanceInfo
	ii["image_checksum"] = noneIfEmpty(info.Checksum)
	ii["image_os_hash_algo"] = noneIfEmpty(info.OSHashAlgo)
	ii["image_os_hash_value"] = noneIfEmpty(info.OSHashValue)
	if ds == DownloadSwift {
		if err := d.swiftImageURL(ctx, task, info); err != nil {
			return nil, err
		}
	} else if err := d.cacheAndConvert(ctx, task, info); err != nil {
		return nil, err
	}
	ii["image_container_format"] = noneIfEmpty(info.ContainerFormat)
	tags := make([]any, 0, len(info.Tags))
	for _, t := range info.Tags {
		tags = append(tags, t)
	}
	ii["image_tags"] = tags
	props := map[string]any{}
	for k, v := range info.Properties {
		props[k] = v
	}
	ii["image_properties"] = props
	return info, nil
}

// unsupportedRef is the image service's refusal of a reference it has no
// service for.
func unsupportedRef(href, scheme string) error {
	if scheme == "" {
		if u, err := url.Parse(href); err == nil {
			scheme = u.Scheme
		}
	}
	return errs.New(errs.ClassImageRefValidationFailed, map[string]any{"image_href": href, "reason": "Image download protocol " + scheme + " is not supported."})
}

func noneIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// swiftImageURL hands the agent a Swift temporary URL of a Glance image
// stored in Swift; the URL is secret (it grants access) and is not shown
// in errors.
func (d *Direct) swiftImageURL(ctx context.Context, task *driver.Task, info *image.Info) error {
	im := d.imgs()
	if im.Swift == nil {
		return driver.InvalidParameterValue("image_download_source swift is not configured on this conductor for Glance image %s; use http or local", info.ID)
	}
	u, err := im.Swift.TempURL(info)
	if err != nil {
		return err
	}
	if im.Sources != nil && im.Sources.HTTP != nil {
		if err := im.Sources.HTTP.Validate(ctx, u, true); err != nil {
			task.Logger().ErrorContext(ctx, "the Swift temporary URL of the image is not reachable", "node", task.Node.UUID, "error", err)
			return err
		}
	}
	format := noneIfEmpty(info.DiskFormat)
	if im.AlwaysValidateImages && !im.DisableDeepInspection {
		detected, err := d.inspectRemoteImage(ctx, task, iiString(task.Node, "image_source"), info.DiskFormat)
		if err != nil {
			return err
		}
		format = detected
	}
	task.Node.InstanceInfo["image_url"] = u
	task.Node.InstanceInfo["image_disk_format"] = format
	return nil
}

// checkImageSize is upstream's check_image_size: an image the agent holds
// in memory must fit next to the agent.
func checkImageSize(n *model.Node, info *image.Info, im *Images) error {
	mem, ok := n.Properties["memory_mb"]
	if !ok {
		return nil
	}
	if im.ForceRaw && im.StreamRaw {
		return nil
	}
	if im.StreamRaw && (info.DiskFormat == "raw" || iiString(n, "image_disk_format") == "raw") {
		return nil
	}
	memMiB, ok := intValue(mem)
	if !ok {
		return driver.InvalidParameterValue("invalid literal for int() with base 10: %s", pyfmt.Repr(mem))
	}
	const mib = 1 << 20
	if info.Size+int64(im.MemoryConsumedByAgent)*mib > int64(memMiB)*mib {
		return driver.InvalidParameterValue("Memory size is too small for requested image, if it is less than (image size + reserved RAM size), will break the IPA deployments. Image size: %d MiB, Memory size: %d MiB, Reserved size: %d MiB.",
			info.Size/mib, memMiB, im.MemoryConsumedByAgent)
	}
	return nil
}

// intValue is Python's int() of a JSON value: whole numbers, floats
// truncated, integer strings.
func intValue(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		return int(x), true
	case int:
		return x, true
	case int64:
		return int(x), true
	case json.Number:
		return pyfmt.Int(x.String())
	case string:
		return pyfmt.Int(x)
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// validateRemoteImage is the "any other URL" branch of upstream's
// build_instance_info_for_deploy: a HEAD request (following redirects,
// whose target becomes the source), and, with
// conductor_always_validates_images, a download to inspect the content.
func (d *Direct) validateRemoteImage(ctx context.Context, task *driver.Task, src string) error {
	n := task.Node
	ii := n.InstanceInfo
	im := d.imgs()
	if im.Sources == nil {
		// No image services configured: the agent checks the URL.
		ii["image_url"] = src
		return nil
	}
	svc, err := im.Sources.For(src)
	if err != nil {
		return err
	}
	hs, ok := svc.(*image.HTTPService)
	if !ok {
		return unsupportedRef(src, "")
	}
	final, err := hs.ValidateRedirect(ctx, src, false)
	if err != nil {
		task.Logger().ErrorContext(ctx, "the specified URL is not a valid HTTP(S) URL or is not reachable", "node", n.UUID, "error", err)
		return err
	}
	if im.AlwaysValidateImages && !im.DisableDeepInspection {
		format, err := d.inspectRemoteImage(ctx, task, src, iiString(n, "image_disk_format"))
		if err != nil {
			return err
		}
		ii["image_disk_format"] = format
	}
	if final != src {
		task.Logger().DebugContext(ctx, "image URL redirected", "node", n.UUID, "url", src, "target", final)
		ii["image_source"] = final
		ii["image_url"] = final
	}
	if !pyfmt.Truthy(ii["image_url"]) {
		ii["image_url"] = src
	}
	return nil
}

// inspectRemoteImage downloads the image through the instance cache
// without conversion and answers its detected format; the node's copy is
// dropped, as it serves nothing after the check.
func (d *Direct) inspectRemoteImage(ctx context.Context, task *driver.Task, src, expected string) (string, error) {
	im := d.imgs()
	cache, err := im.instanceCache()
	if err != nil {
		return "", err
	}
	n := task.Node
	if err := os.MkdirAll(im.nodeImageDir(n.UUID), 0o755); err != nil {
		return "", fmt.Errorf("instance image directory: %w", err)
	}
	dest := im.nodeImagePath(n.UUID)
	if err := cache.EnsureSpaceFor(ctx, src); err != nil {
		return "", err
	}
	noRaw := false
	if err := cache.FetchImage(ctx, src, dest, &noRaw, image.FetchOptions{ExpectedFormat: expected}); err != nil {
		return "", err
	}
	defer os.Remove(dest)
	return image.SourceFormat(src, dest)
}

// cacheAndConvert is upstream's _cache_and_convert_image: the conductor
// fetches the image into its master cache (once for every node that
// asks), verifies its checksum, converts it to raw when configured, links
// it for the node and publishes it under [deploy]/http_url. info is the
// Glance image, nil for URLs.
func (d *Direct) cacheAndConvert(ctx context.Context, task *driver.Task, info *image.Info) (err error) {
	n := task.Node
	ii := n.InstanceInfo
	im := d.imgs()
	if err := d.validateHTTPProvisioning(n); err != nil {
		return err
	}
	forceRaw := im.ForceRaw && im.StreamRaw
	src, _ := n.InternalInfo().Get(model.DIIImageSource).(string)
	if src == "" {
		src = iiString(n, "image_source")
	}
	initialFormat := iiString(n, "image_disk_format")
	if info != nil {
		initialFormat = info.DiskFormat
	}
	checksum, algo, err := im.checksums().Resolve(ctx, ii)
	if err != nil {
		return err
	}
	cache, err := im.instanceCache()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(im.nodeImageDir(n.UUID), 0o755); err != nil {
		return fmt.Errorf("instance image directory: %w", err)
	}
	link := filepath.Join(im.symlinkDir(), n.UUID)
	defer func() {
		if err != nil {
			os.Remove(link)
			os.RemoveAll(im.nodeImageDir(n.UUID))
		}
	}()
	path := im.nodeImagePath(n.UUID)
	task.Logger().DebugContext(ctx, "fetching image", "node", n.UUID, "image", src)
	if err := cache.EnsureSpaceFor(ctx, src); err != nil {
		return err
	}
	if err := cache.FetchImage(ctx, src, path, &forceRaw, image.FetchOptions{ExpectedFormat: initialFormat, Checksum: checksum, ChecksumAlgo: algo}); err != nil {
		return err
	}

	if forceRaw || info == nil {
		if forceRaw {
			ii["image_disk_format"] = "raw"
		} else {
			format, err := image.SourceFormat(src, path)
			if err != nil {
				return err
			}
			ii["image_disk_format"] = format
		}
		var hashAlgo string
		var hashValue, oldChecksum any
		if info == nil {
			hashAlgo = iiString(n, "image_os_hash_algo")
			hashValue, oldChecksum = ii["image_os_hash_value"], ii["image_checksum"]
		} else {
			hashAlgo = info.OSHashAlgo
			hashValue, oldChecksum = noneIfEmpty(info.OSHashValue), noneIfEmpty(info.Checksum)
		}
		if initialFormat != ii["image_disk_format"] {
			// The agent checks what it downloads, which is now the
			// converted file; md5 is not trusted for a new checksum.
			if hashAlgo == "" || hashAlgo == "md5" {
				hashAlgo = "sha256"
			}
			ii["image_checksum"] = nil
			sum, err := image.FileChecksum(path, hashAlgo)
			if err != nil {
				return err
			}
			hashValue = sum
		} else {
			ii["image_checksum"] = oldChecksum
		}
		ii["image_os_hash_algo"] = noneIfEmpty(hashAlgo)
		ii["image_os_hash_value"] = hashValue
	} else {
		ii["image_checksum"] = noneIfEmpty(info.Checksum)
		ii["image_disk_format"] = noneIfEmpty(info.DiskFormat)
		ii["image_os_hash_algo"] = noneIfEmpty(info.OSHashAlgo)
		ii["image_os_hash_value"] = noneIfEmpty(info.OSHashValue)
	}

	if err := os.MkdirAll(im.symlinkDir(), 0o755); err != nil {
		return fmt.Errorf("http image directory: %w", err)
	}
	if err := os.Symlink(path, link); err != nil && !errors.Is(err, os.ErrExist) {
		task.Logger().WarnContext(ctx, "failed to link the instance image for the HTTP server", "node", n.UUID, "source", path, "link", link, "error", err)
	}
	u := strings.TrimSuffix(im.HTTPURL, "/") + "/" + im.HTTPImageSubdir + "/" + n.UUID
	if im.Sources != nil && im.Sources.HTTP != nil {
		if err := im.Sources.HTTP.Validate(ctx, u, false); err != nil {
			task.Logger().ErrorContext(ctx, "the published image URL is not reachable", "node", n.UUID, "error", err)
			return err
		}
	}
	ii["image_url"] = u
	return nil
}

// destroyHTTPInstanceImages is upstream's destroy_http_instance_images:
// the published link, the node's copy, and the cache trimmed to its
// limits.
func (d *Direct) destroyHTTPInstanceImages(ctx context.Context, task *driver.Task) {
	im := d.imgs()
	n := task.Node
	if im.HTTPRoot != "" {
		removeQuietly(ctx, task, filepath.Join(im.symlinkDir(), n.UUID))
	}
	if im.ImagesPath == "" {
		return
	}
	removeQuietly(ctx, task, im.nodeImagePath(n.UUID))
	if err := os.RemoveAll(im.nodeImageDir(n.UUID)); err != nil {
		task.Logger().WarnContext(ctx, "failed to remove the instance image directory", "node", n.UUID, "error", err)
	}
	im.mu.Lock()
	cache := im.cache
	im.mu.Unlock()
	if cache == nil && im.MasterPath != "" && im.Fetcher != nil {
		if _, err := os.Stat(im.MasterPath); err == nil {
			cache, _ = im.instanceCache()
		}
	}
	if cache != nil {
		cache.CleanUp(0)
	}
}

var (
	_ driver.ImageCacheKeeper        = (*Direct)(nil)
	_ driver.InstanceImagesDestroyer = (*Direct)(nil)
)

// CleanUpImageCaches trims the instance image cache, when one was made.
func (d *Direct) CleanUpImageCaches(context.Context) {
	im := d.imgs()
	im.mu.Lock()
	cache := im.cache
	im.mu.Unlock()
	if cache != nil {
		cache.CleanUp(0)
	}
}

// DestroyInstanceImages is upstream's destroy_images: the node's copy and
// its directory go, and the cache is trimmed.
func (d *Direct) DestroyInstanceImages(ctx context.Context, task *driver.Task) {
	im := d.imgs()
	if im.ImagesPath == "" {
		return
	}
	removeQuietly(ctx, task, im.nodeImagePath(task.Node.UUID))
	if err := os.RemoveAll(im.nodeImageDir(task.Node.UUID)); err != nil {
		task.Logger().WarnContext(ctx, "failed to remove the instance image directory", "node", task.Node.UUID, "error", err)
	}
	d.CleanUpImageCaches(ctx)
}

func removeQuietly(ctx context.Context, task *driver.Task, p string) {
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		task.Logger().WarnContext(ctx, "failed to remove file", "path", p, "error", err)
	}
}

// diskLayoutParams are upstream's DISK_LAYOUT_PARAMS.
var diskLayoutParams = []string{"root_gb", "swap_mb", "ephemeral_gb"}

// parseInstanceInfo is upstream's parse_instance_info for a partition
// image deployed to local disk: root_gb required, the layout as integers
// (root_mb, swap_mb, ephemeral_mb), preserve_ephemeral a boolean.
func (d *Direct) parseInstanceInfo(n *model.Node) error {
	ii := n.InstanceInfo
	if !pyfmt.Truthy(ii["root_gb"]) {
		return driver.MissingParameterValue("Some parameters were missing in node's instance_info. Missing are: ['root_gb']")
	}
	pe := ii["preserve_ephemeral"]
	if pe == nil {
		pe = false
	}
	preserve, err := boolFromString(pe)
	if err != nil {
		return driver.InvalidParameterValue("Invalid parameter preserve_ephemeral: %s", err.Error())
	}
	layout := map[string]any{"root_gb": ii["root_gb"], "swap_mb": valueOr(ii, "swap_mb", 0.0), "ephemeral_gb": valueOr(ii, "ephemeral_gb", 0.0)}
	ints := map[string]int{}
	for _, p := range diskLayoutParams {
		v, ok := intValue(layout[p])
		if !ok {
			return driver.InvalidParameterValue("Invalid parameter %s: %s is not an integer value.", p, pyfmt.Str(layout[p]))
		}
		ints[p] = v
	}
	ephemeralFormat := ii["ephemeral_format"]
	if pyfmt.Truthy(layout["ephemeral_gb"]) && !pyfmt.Truthy(ephemeralFormat) {
		ephemeralFormat = d.imgs().DefaultEphemeralFormat
	}
	if preserve {
		if err := checkDiskLayoutUnchanged(n, ints); err != nil {
			return err
		}
	}
	ii["preserve_ephemeral"] = preserve
	ii["swap_mb"] = ints["swap_mb"]
	ii["ephemeral_gb"] = layout["ephemeral_gb"]
	ii["root_mb"] = 1024 * ints["root_gb"]
	ii["ephemeral_mb"] = 1024 * ints["ephemeral_gb"]
	ii["ephemeral_format"] = ephemeralFormat
	return nil
}

func valueOr(m map[string]any, k string, def any) any {
	if v, ok := m[k]; ok {
		return v
	}
	return def
}

// checkDiskLayoutUnchanged is upstream's _check_disk_layout_unchanged: a
// rebuild that keeps the ephemeral partition keeps the layout too.
func checkDiskLayoutUnchanged(n *model.Node, requested map[string]int) error {
	prev, ok := n.InternalInfo().Get(model.DIIInstance).(map[string]any)
	if !ok {
		return nil
	}
	msg := ""
	for _, p := range diskLayoutParams {
		was, _ := intValue(prev[p])
		if was != requested[p] {
			msg += fmt.Sprintf(" Deployed value of %s was %d but requested value is %d.", p, was, requested[p])
		}
	}
	if msg != "" {
		return driver.InvalidParameterValue("The following parameters have different values from previous deployment:%s", msg)
	}
	return nil
}

var (
	trueStrings  = []string{"1", "t", "true", "on", "y", "yes"}
	falseStrings = []string{"0", "f", "false", "off", "n", "no"}
)

// boolFromString is oslo's bool_from_string(strict=True).
func boolFromString(v any) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	s := strings.ToLower(strings.TrimSpace(pyfmt.Str(v)))
	for _, t := range trueStrings {
		if s == t {
			return true, nil
		}
	}
	for _, f := range falseStrings {
		if s == f {
			return false, nil
		}
	}
	all := append(append([]string{}, trueStrings...), falseStrings...)
	sort.Strings(all)
	quoted := make([]string, len(all))
	for i, a := range all {
		quoted[i] = "'" + a + "'"
	}
	return false, fmt.Errorf("Unrecognized value '%s', acceptable values are: %s", pyfmt.Str(v), strings.Join(quoted, ", "))
}

// configdriveImage is upstream's get_configdrive_image: a dict is built
// into a gzipped, base64-encoded ISO; a string (ISO or URL) is handed on.
func configdriveImage(ctx context.Context, n *model.Node) (any, error) {
	cd := n.InstanceInfo["configdrive"]
	m, ok := cd.(map[string]any)
	if !ok {
		return cd, nil
	}
	name := ""
	if n.Name != nil {
		name = *n.Name
	}
	built, err := configdrive.Build(ctx, n.UUID, name, m)
	if err != nil {
		return nil, err
	}
	iso, err := configdrive.Decode(built, 0)
	if err != nil {
		return nil, err
	}
	if mib := int(math.Ceil(float64(len(iso)) / (1 << 20))); mib > maxConfigDriveMiB {
		return nil, errs.NewMessage(errs.ClassInstanceDeployFailure, fmt.Sprintf("Config drive size exceeds maximum limit of 64MiB. Size of the given config drive is %d MiB for node %s.", mib, n.UUID))
	}
	return built, nil
}

// partitionImageLabels are upstream's PARTITION_IMAGE_LABELS, the
// instance_info entries the agent needs to partition the disk.
var partitionImageLabels = []string{"kernel", "ramdisk", "root_gb", "root_mb", "swap_mb", "ephemeral_mb", "ephemeral_format", "configdrive", "preserve_ephemeral", "image_type", "deploy_boot_mode"}

// buildsImageInfo: only a deployment resolves the image; takeover and
// rescue reuse what the deployment recorded.
func buildsImageInfo(n *model.Node) bool { return n.ProvisionState == states.Deploying }

// Prepare is CustomAgent's, then, for a deployment that writes an image,
// upstream's _update_instance_info: the image is resolved, cached and
// published as image_download_source says.
func (d *Direct) Prepare(ctx context.Context, task *driver.Task) error {
	if err := d.CustomAgent.Prepare(ctx, task); err != nil {
		return err
	}
	if !buildsImageInfo(task.Node) || !task.Driver.Storage.ShouldWriteImage(ctx, task) {
		return nil
	}
	return d.updateInstanceInfo(ctx, task)
}

// CleanUp is CustomAgent's, then the node's cached and published image
// is removed (upstream's destroy_http_instance_images).
func (d *Direct) CleanUp(ctx context.Context, task *driver.Task) error {
	if err := d.CustomAgent.CleanUp(ctx, task); err != nil {
		return err
	}
	d.destroyHTTPInstanceImages(ctx, task)
	return nil
}

// imageRequestAuthorization is base64 of the secret, as upstream hands
// it to the agent.
func imageRequestAuthorization(secret string) string {
	return base64.StdEncoding.EncodeToString([]byte(secret))
}
