// Package pxe holds the pxe and ipxe boot interfaces (upstream's
// ironic/drivers/modules/{pxe,ipxe,pxe_base}.py and
// ironic/common/pxe_utils.py): the agent ramdisk is booted from the
// network with a per-node configuration that every port's MAC address
// links to, kernels and ramdisks are taken from the image cache into the
// node's folder, and everything is removed again at clean-up.
package pxe

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/anaconda"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

//go:embed templates/*.tmpl
var templates embed.FS

// PortLister lists a node's ports; store.Store satisfies it.
type PortLister interface {
	ListPorts(ctx context.Context, f store.PortFilter, o store.ListOptions) ([]*model.Port, error)
}

// Boot is one of upstream's PXEBaseMixin interfaces: pxe, ipxe, http or
// http-ipxe.
type Boot struct {
	driver.NoSteps
	// ipxe is upstream ipxe_enabled: an iPXE script under http_root that
	// fetches the kernel and ramdisk from http_url.
	ipxe bool
	// httpBoot is upstream http_boot_enabled: kernels and ramdisks go to
	// http_root and the node is told to boot over UEFI HTTP.
	httpBoot bool
	opts     Options
	cache    *lazyCache
	// setupState guards the one-time preparation of the roots.
	setupState setup
}

// lazyCache is the image cache made at the first download, shared by the
// interfaces of one registration so that one lock guards its directory.
type lazyCache struct {
	once  sync.Once
	cache *image.Cache
	err   error
	// made is the cache this made, for the clean-up periodic, which must
	// not make it.
	made atomic.Pointer[image.Cache]
}

func (l *lazyCache) get(o Options) (*image.Cache, error) {
	l.once.Do(func() {
		if o.Cache != nil || o.CacheDir == "" || o.Fetcher == nil {
			l.cache = o.Cache
			return
		}
		l.cache, l.err = image.NewCache(o.CacheDir, o.CacheSize, o.CacheTTL, false, o.Fetcher)
		if l.err == nil {
			l.made.Store(l.cache)
		}
	})
	return l.cache, l.err
}

var (
	_ driver.BootInterface    = (*Boot)(nil)
	_ driver.ImageCacheKeeper = (*Boot)(nil)
)

// CleanUpImageCaches trims the TFTP/HTTP image cache, when one was made
// (upstream's TFTPImageCache in clean_up_all).
func (b *Boot) CleanUpImageCaches(context.Context) {
	if b.cache == nil {
		return
	}
	if c := b.cache.made.Load(); c != nil {
		c.CleanUp(0)
	}
}

// NewPXE is the "pxe" interface: configuration under [pxe]/tftp_root,
// pxelinux for BIOS, GRUB for UEFI.
func NewPXE(o Options) *Boot { return &Boot{opts: withDefaults(o), cache: &lazyCache{}} }

// NewIPXE is the "ipxe" interface: configuration and images under
// [deploy]/http_root, served over HTTP to iPXE.
func NewIPXE(o Options) *Boot { return &Boot{ipxe: true, opts: withDefaults(o), cache: &lazyCache{}} }

// NewHTTP is the "http" interface (upstream HttpBoot): the node boots
// over UEFI HTTP. As upstream, the GRUB (or pxelinux) configuration and
// its MAC links stay under [pxe]/tftp_root, while the kernel and ramdisk
// go to [deploy]/http_root, named in the configuration relative to
// tftp_root.
func NewHTTP(o Options) *Boot {
	return &Boot{httpBoot: true, opts: withDefaults(o), cache: &lazyCache{}}
}

// NewHTTPIPXE is the "http-ipxe" interface (upstream iPXEHttpBoot): the
// ipxe interface's files, with the node booting over UEFI HTTP.
func NewHTTPIPXE(o Options) *Boot {
	return &Boot{ipxe: true, httpBoot: true, opts: withDefaults(o), cache: &lazyCache{}}
}

func withDefaults(o Options) Options {
	d := DefaultOptions()
	if o.ConfigSubdir == "" {
		o.ConfigSubdir = d.ConfigSubdir
	}
	if o.FilePermission == 0 {
		o.FilePermission = d.FilePermission
	}
	if o.DirPermission == 0 {
		o.DirPermission = 0o755
	}
	if o.DefaultBootMode == "" {
		o.DefaultBootMode = d.DefaultBootMode
	}
	return o
}

// Register adds pxe, ipxe, http and http-ipxe to r.
func Register(r *driver.Registry, o Options) error {
	shared := &lazyCache{}
	for _, i := range []struct {
		name string
		impl *Boot
	}{{"pxe", NewPXE(o)}, {"ipxe", NewIPXE(o)}, {"http", NewHTTP(o)}, {"http-ipxe", NewHTTPIPXE(o)}} {
		i.impl.cache = shared
		if err := r.Register(driver.KindBoot, i.name, i.impl); err != nil {
			return fmt.Errorf("boot %s: %w", i.name, err)
		}
	}
	return nil
}

// Properties are upstream pxe_base COMMON_PROPERTIES.
func (b *Boot) Properties() map[string]string {
	return map[string]string{
		"deploy_kernel":  "UUID (from Glance) of the deployment kernel. Required.",
		"deploy_ramdisk": "UUID (from Glance) of the ramdisk that is mounted at boot time. Required.",
		"force_persistent_boot_device": "Controls the persistency of boot order changes. 'Always' will make all changes persistent, " +
			"'Default' will make all but the final one upon instance deployment non-persistent, and 'Never' will make no persistent " +
			"changes at all. The old values 'True' and 'False' are still supported but deprecated in favor of the new ones." +
			"Defaults to 'Default'. Optional.",
		"rescue_kernel":  "UUID (from Glance) of the rescue kernel. This value is required for rescue mode.",
		"rescue_ramdisk": "UUID (from Glance) of the rescue ramdisk with agent that is used at node rescue time. This value is required for rescue mode.",
		"kernel_append_params": "Additional kernel parameters to pass down to instance kernel. These parameters can be consumed " +
			"by the kernel or by the applications by reading /proc/cmdline. Mind severe cmdline size limit. When used with virtual " +
			"media, only applies to ISO images that Ironic builds, but not to pre-built ISOs provided via e.g. deploy_iso. " +
			"Overrides the [pxe]/kernel_append_params configuration option, use %default% to insert its value.",
	}
}

// Capabilities are upstream's capabilities of the classes.
func (b *Boot) Capabilities() []string {
	if b.ipxe {
		return []string{"iscsi_volume_boot", "ramdisk_boot", "ipxe_boot", "pxe_boot"}
	}
	return []string{"ramdisk_boot", "pxe_boot"}
}

// configRoot is where the configuration and its MAC links go (upstream
// _get_root_dir(ipxe_enabled) in create_pxe_config).
func (b *Boot) configRoot() string {
	if b.ipxe {
		return b.opts.HTTPRoot
	}
	return b.opts.TFTPRoot
}

// imageRoot is where kernels and ramdisks go (upstream _use_http_folder).
func (b *Boot) imageRoot() string {
	if b.ipxe || b.httpBoot {
		return b.opts.HTTPRoot
	}
	return b.opts.TFTPRoot
}

func (b *Boot) nodeDir(n *model.Node) string { return filepath.Join(b.configRoot(), n.UUID) }

func (b *Boot) imageDir(n *model.Node) string { return filepath.Join(b.imageRoot(), n.UUID) }

// configPath is upstream get_pxe_config_file_path.
func (b *Boot) configPath(n *model.Node) string { return filepath.Join(b.nodeDir(n), "config") }

// macLinks are the names a port's MAC address reaches the node's
// configuration under: the pxelinux/iPXE one and GRUB's two.
func (b *Boot) macLinks(p *model.Port) []string {
	mac := strings.ToLower(*p.Address)
	hyph := strings.ReplaceAll(mac, ":", "-")
	first := hyph
	if !b.ipxe {
		// ARP hardware type: 01 Ethernet, 32 (0x20) InfiniBand.
		first = "01-" + hyph
		if cid, _ := p.Extra["client-id"].(string); cid != "" {
			first = "20-" + hyph
		}
	}
	return []string{
		filepath.Join(b.configRoot(), b.opts.ConfigSubdir, first),
		filepath.Join(b.configRoot(), "grub.cfg-01-"+hyph),
		filepath.Join(b.configRoot(), *p.Address+".conf"),
	}
}

func strField(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// mode is upstream rescue_or_deploy_mode.
func mode(n *model.Node) string {
	switch n.ProvisionState {
	case states.Rescuing, states.RescueWait, states.RescueFail, states.UnrescueFail:
		return "rescue"
	}
	return "deploy"
}

// kernelRamdisk is upstream parse_driver_info: the agent images of
// get_agent_kernel_ramdisk (driver.AgentKernelRamdisk), all of them
// required.
func (b *Boot) kernelRamdisk(task *driver.Task, mode string) (kernel, ramdisk string, err error) {
	o := b.opts
	src := driver.RamdiskSources{Kernel: o.DeployKernel, Ramdisk: o.DeployRamdisk, KernelByArch: o.DeployKernelByArch,
		RamdiskByArch: o.DeployRamdiskByArch, ErrorOnInconsistency: o.ErrorOnRamdiskConfigInconsistency}
	if mode == "rescue" {
		src = driver.RamdiskSources{Kernel: o.RescueKernel, Ramdisk: o.RescueRamdisk, KernelByArch: o.RescueKernelByArch,
			RamdiskByArch: o.RescueRamdiskByArch, ErrorOnInconsistency: o.ErrorOnRamdiskConfigInconsistency}
	}
	kernel, ramdisk, err = driver.AgentKernelRamdisk(task.Node, mode, src, task.Logger())
	if err != nil {
		return "", "", err
	}
	var missing []string
	if kernel == "" {
		missing = append(missing, "'"+mode+"_kernel'")
	}
	if ramdisk == "" {
		missing = append(missing, "'"+mode+"_ramdisk'")
	}
	if len(missing) > 0 {
		return "", "", errs.NewMessage(errs.ClassMissingParameterValue,
			"Cannot validate PXE bootloader. Some parameters were missing in node's driver_info and configuration. Missing are: ["+strings.Join(missing, ", ")+"]")
	}
	return kernel, ramdisk, nil
}

// bootMode is upstream get_boot_mode.
func (b *Boot) bootMode(n *model.Node) string {
	if m := strField(n.InstanceInfo, "deploy_boot_mode"); m != "" {
		return strings.ToLower(m)
	}
	if m := driver.Capability(n.Properties["capabilities"], "boot_mode"); m != "" {
		return strings.ToLower(m)
	}
	if n.BootMode != nil && *n.BootMode != "" {
		return strings.ToLower(*n.BootMode)
	}
	return b.opts.DefaultBootMode
}

func (b *Boot) ports(ctx context.Context, n *model.Node) ([]*model.Port, error) {
	if b.opts.Ports == nil {
		return nil, fmt.Errorf("boot interface has no port store configured")
	}
	id := n.ID
	ports, err := b.opts.Ports.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list ports of node %s: %w", n.UUID, err)
	}
	return slices.DeleteFunc(ports, func(p *model.Port) bool { return p.Address == nil || *p.Address == "" }), nil
}

// validateCommon is upstream _validate_common: the node needs a port to
// boot from, iPXE an HTTP server, and the agent ramdisk must be known.
func (b *Boot) validateCommon(ctx context.Context, task *driver.Task) error {
	n := task.Node
	ports, err := b.ports(ctx, n)
	if err != nil {
		return err
	}
	if len(ports) == 0 {
		return errs.NewMessage(errs.ClassMissingParameterValue, fmt.Sprintf("Node %s does not have any port associated with it", n.UUID))
	}
	if b.ipxe && (b.opts.HTTPURL == "" || b.opts.HTTPRoot == "") {
		return errs.NewMessage(errs.ClassMissingParameterValue, "iPXE boot is enabled but no HTTP URL or HTTP root was specified")
	}
	if err := b.validateKickstart(n); err != nil {
		return err
	}
	if m := b.bootMode(n); m != "uefi" && m != "bios" {
		return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("Invalid boot mode %q for node %s", m, n.UUID))
	}
	if strField(n.InstanceInfo, "image_source") != "" && strField(n.InstanceInfo, "boot_iso") != "" {
		return errs.NewMessage(errs.ClassInvalidParameterValue, "An 'image_source' and 'boot_iso' parameter may not be specified at the same time")
	}
	_, _, err = b.kernelRamdisk(task, "deploy")
	return err
}

// Validate is upstream PXEBaseMixin.validate: a local boot needs nothing
// of the instance image, a ramdisk boot needs what it boots from.
func (b *Boot) Validate(ctx context.Context, task *driver.Task) error {
	if err := b.validateCommon(ctx, task); err != nil {
		return err
	}
	// Nothing is written to a node booting from a volume, and a local
	// boot needs no instance image parameters.
	if task.Driver.Storage != nil && !task.Driver.Storage.ShouldWriteImage(ctx, task) {
		return nil
	}
	switch bootOption(task.Node) {
	case "ramdisk":
		return b.validateInstanceImage(ctx, task.Node)
	case "kickstart":
		return b.validateKickstartImage(ctx, task.Node)
	}
	return nil
}

// ValidateRescue checks the rescue ramdisk is known.
func (b *Boot) ValidateRescue(_ context.Context, task *driver.Task) error {
	_, _, err := b.kernelRamdisk(task, "rescue")
	return err
}

// ValidateInspection is upstream validate_inspection: without what a
// managed inspection needs, the conductor falls back to an unmanaged one.
func (b *Boot) ValidateInspection(ctx context.Context, task *driver.Task) error {
	err := b.validateCommon(ctx, task)
	if errs.Is(err, errs.ClassMissingParameterValue) {
		return errs.NewMessage(errs.ClassUnsupportedDriverExtension, "Insufficient information provided for managed inspection: "+err.Error())
	}
	return err
}

// PrepareRamdisk writes the node's boot configuration for the deploy or
// rescue ramdisk, links every port's MAC address to it, sets a one-time
// network boot and fetches the kernel and ramdisk into the node's folder.
func (b *Boot) PrepareRamdisk(ctx context.Context, task *driver.Task, ramdiskParams map[string]any) error {
	if task.Shared {
		return errs.New(errs.ClassExclusiveLockRequired, nil)
	}
	n := task.Node
	if !driver.NeedPrepareRamdisk(n) {
		return nil
	}
	m := mode(n)
	kernel, ramdisk, err := b.kernelRamdisk(task, m)
	if err != nil {
		return err
	}
	if err := b.setUp(); err != nil {
		return err
	}
	if b.ipxe {
		if err := b.writeBootScript(); err != nil {
			return err
		}
	}
	if err := b.updateDHCP(ctx, task); err != nil {
		return err
	}
	hrefs := map[string]string{m + "_kernel": kernel, m + "_ramdisk": ramdisk}
	fromSwift, err := b.swiftTempURLs(ctx, hrefs)
	if err != nil {
		return err
	}
	opts, err := b.configOptions(n, m, ramdiskParams, fromSwift)
	if err != nil {
		return err
	}
	if err := b.writeConfig(ctx, task, opts); err != nil {
		return err
	}
	if err := b.setNetworkBoot(ctx, task, false); err != nil {
		return err
	}
	dir := b.imageDir(n)
	for _, label := range []string{m + "_kernel", m + "_ramdisk"} {
		if _, ok := fromSwift[label]; ok {
			continue
		}
		if err := os.MkdirAll(dir, b.opts.DirPermission); err != nil {
			return fmt.Errorf("image directory of node %s: %w", n.UUID, err)
		}
		if err := b.fetch(ctx, hrefs[label], filepath.Join(dir, label)); err != nil {
			return err
		}
	}
	return nil
}

// swiftTempURLs is upstream's ipxe_use_swift part of
// build_deploy_pxe_options: with iPXE, each of hrefs (by label) that is a
// Glance image is answered as a Swift temporary URL of that image
// (get_temp_url_for_glance_image), which the node then downloads itself.
// Upstream also skips copying a non-Glance kernel or ramdisk while its
// script points at http_url for it, a boot that cannot work; here only
// what the script takes from Swift is left uncopied.
func (b *Boot) swiftTempURLs(ctx context.Context, hrefs map[string]string) (map[string]string, error) {
	if !b.ipxe || !b.opts.IPXEUseSwift {
		return nil, nil
	}
	urls := map[string]string{}
	for label, href := range hrefs {
		if !image.IsGlanceImage(href) {
			continue
		}
		sources := b.imageSources()
		if sources == nil {
			return nil, fmt.Errorf("no image service configured to look up Glance image %s", href)
		}
		info, err := sources.Show(ctx, href)
		if err != nil {
			return nil, err
		}
		signer := b.opts.Swift
		if signer == nil {
			// Nothing configured: the signer's own checks answer
			// upstream's error for the missing options.
			signer = &image.SwiftTempURLs{}
		}
		u, err := signer.TempURL(info)
		if err != nil {
			return nil, err
		}
		urls[label] = u
	}
	return urls, nil
}

// imageSources are the image services the kernels and ramdisks are
// downloaded through.
func (b *Boot) imageSources() *image.Sources {
	switch {
	case b.opts.Fetcher != nil:
		return b.opts.Fetcher.Sources
	case b.opts.Cache != nil && b.opts.Cache.Fetcher != nil:
		return b.opts.Cache.Fetcher.Sources
	}
	return nil
}

// configOptions is upstream build_pxe_config_options for the agent
// ramdisk: where the kernel and ramdisk are, and the kernel command line.
// fromSwift holds the Swift temporary URLs (by label) iPXE fetches
// instead of the copies under http_url.
func (b *Boot) configOptions(n *model.Node, m string, ramdiskParams map[string]any, fromSwift map[string]string) (map[string]any, error) {
	o := map[string]any{}
	initrd := m + "_ramdisk"
	for _, l := range [][2]string{{m + "_kernel", "deployment_aki_path"}, {m + "_ramdisk", "deployment_ari_path"}} {
		if u, ok := fromSwift[l[0]]; ok {
			o[l[1]] = u
			// The kernel names its initrd as iPXE does: the last
			// element of the URL's path (the image id).
			if l[0] == m+"_ramdisk" {
				if pu, err := url.Parse(u); err == nil {
					if p := strings.Trim(pu.Path, "/"); p != "" {
						initrd = p[strings.LastIndex(p, "/")+1:]
					}
				}
			}
			continue
		}
		if b.ipxe {
			o[l[1]] = strings.TrimRight(b.opts.HTTPURL, "/") + "/" + n.UUID + "/" + l[0]
			continue
		}
		// pxelinux and GRUB resolve paths against the TFTP root, even
		// for the http interface whose images are under http_root.
		rel, err := filepath.Rel(b.opts.TFTPRoot, filepath.Join(b.imageDir(n), l[0]))
		if err != nil {
			return nil, fmt.Errorf("path of %s relative to the TFTP root: %w", l[0], err)
		}
		o[l[1]] = filepath.ToSlash(rel)
	}
	if b.ipxe {
		o["initrd_filename"] = initrd
	}
	o["aki_path"], o["ari_path"] = "no_kernel", "no_ramdisk"
	appendParams, err := b.kernelAppendParams(n)
	if err != nil {
		return nil, err
	}
	if b.opts.Debug && !strings.Contains(appendParams, "ipa-debug") {
		appendParams += " ipa-debug=1"
	}
	if s := driver.FormatKernelParams(ramdiskParams); s != "" {
		appendParams += " " + s
	}
	o["pxe_append_params"] = appendParams
	o["tftp_server"] = b.opts.TFTPServer
	o["ipxe_timeout"] = b.opts.IPXETimeoutSeconds * 1000
	if u, ok := ramdiskParams["ipa-api-url"]; ok {
		o["ipa-api-url"] = u
	}
	return o, nil
}

// kernelAppendParams is upstream get_kernel_append_params with
// [pxe]/kernel_append_params as the default (driver.KernelAppendParams).
func (b *Boot) kernelAppendParams(n *model.Node) (string, error) {
	return driver.KernelAppendParams(n, b.opts.KernelAppendParams, !b.opts.DisableKernelParameterParsing)
}

// grub reports whether the node's configuration is for GRUB (upstream
// uefi_with_grub).
func (b *Boot) grub(n *model.Node) bool { return !b.ipxe && b.bootMode(n) == "uefi" }

// configTemplate is the node's template: the operator's file when
// configured (for PXE, the one of the node's cpu_arch first, as upstream's
// get_pxe_config_template), else the embedded one for the loader. A node's
// own driver_info/pxe_template is used only with [pxe]/
// enable_insecure_template_override, and refused otherwise, as master
// does since CVE-2026-44917 (a node's owner could name any file of the
// conductor).
func (b *Boot) configTemplate(n *model.Node) (name, override string, err error) {
	nodeTemplate, _ := n.DriverInfo["pxe_template"].(string)
	if nodeTemplate != "" && !b.opts.EnableInsecureTemplateOverride {
		byArchOption := "pxe_template_by_arch"
		if b.ipxe {
			byArchOption = "ipxe_template_by_arch"
		}
		return "", "", errs.NewMessage(errs.ClassInvalidParameterValue, "The node's driver_info field pxe_template override value is "+
			"insecure (CVE-2026-44917) and should not be used. The appropriate approach is to utilize [pxe]"+byArchOption+
			" configuration in ironic.conf to match the baremetal node's architecture. Please work with your Ironic operator "+
			"to remedy your usage and configuration. Default templates may be leveraged by deleting the pxe_template value "+
			"in the driver_info field.")
	}
	byArch := b.opts.ConfigTemplateByArch[driver.CPUArch(n)]
	switch {
	case b.ipxe && nodeTemplate != "":
		return "ipxe_config.tmpl", nodeTemplate, nil
	case b.ipxe:
		return "ipxe_config.tmpl", b.opts.IPXEConfigTemplate, nil
	case nodeTemplate != "" && b.grub(n):
		return "grub.tmpl", nodeTemplate, nil
	case nodeTemplate != "":
		return "pxelinux.tmpl", nodeTemplate, nil
	case b.grub(n) && byArch != "":
		return "grub.tmpl", byArch, nil
	case byArch != "":
		return "pxelinux.tmpl", byArch, nil
	case b.grub(n):
		return "grub.tmpl", b.opts.UEFIPXEConfigTemplate, nil
	default:
		return "pxelinux.tmpl", b.opts.PXEConfigTemplate, nil
	}
}

// render executes a template. As Jinja does for upstream's templates, one
// trailing newline of the template text is dropped, so the files end as
// upstream's do.
func render(name, override string, data map[string]any) ([]byte, error) {
	var text []byte
	var err error
	if custom(override) {
		text, err = os.ReadFile(override)
	} else {
		text, err = templates.ReadFile("templates/" + name)
	}
	if err != nil {
		return nil, fmt.Errorf("read template %s: %w", name, err)
	}
	t, err := template.New(name).Option("missingkey=zero").Parse(strings.TrimSuffix(string(text), "\n"))
	if err != nil {
		return nil, fmt.Errorf("parse template %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("render template %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// writeConfig is upstream create_pxe_config: the node's configuration
// file, then a relative symlink to it for every name a port can ask for.
func (b *Boot) writeConfig(ctx context.Context, task *driver.Task, opts map[string]any) error {
	n := task.Node
	for _, d := range []string{b.nodeDir(n), filepath.Join(b.configRoot(), b.opts.ConfigSubdir)} {
		if err := os.MkdirAll(d, b.opts.DirPermission); err != nil {
			return fmt.Errorf("boot configuration directory: %w", err)
		}
	}
	name, override, err := b.configTemplate(n)
	if err != nil {
		return err
	}
	root, disk := "{{ ROOT }}", "{{ DISK_IDENTIFIER }}"
	if b.grub(n) {
		// GRUB chokes on braces in its configuration.
		root, disk = "(( ROOT ))", "(( DISK_IDENTIFIER ))"
		opts["linux_cmd"], opts["initrd_cmd"] = "linux", "initrd"
	}
	data, err := render(name, override, map[string]any{"pxe_options": opts, "ROOT": root, "DISK_IDENTIFIER": disk})
	if err != nil {
		return err
	}
	cfg := b.configPath(n)
	if err := writeFile(cfg, data, b.opts.FilePermission); err != nil {
		return err
	}
	ports, err := b.ports(ctx, n)
	if err != nil {
		return err
	}
	for _, p := range ports {
		if p.PXEEnabled != nil && !*p.PXEEnabled && !b.opts.AddAllPorts {
			continue
		}
		for _, link := range b.macLinks(p) {
			rel, err := filepath.Rel(filepath.Dir(link), cfg)
			if err != nil {
				return fmt.Errorf("link %s: %w", link, err)
			}
			if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("replace link %s: %w", link, err)
			}
			if err := os.Symlink(rel, link); err != nil {
				return fmt.Errorf("link %s: %w", link, err)
			}
		}
	}
	if b.grub(n) {
		return b.linkIPConfigs(ctx, task, cfg)
	}
	return nil
}

// ipLink is upstream _get_pxe_ip_address_path: GRUB asks for its
// configuration by the address DHCP gave it, under tftp_root.
func (b *Boot) ipLink(address string) string {
	return filepath.Join(b.opts.TFTPRoot, address+".conf")
}

// ipAddresses is the DHCP provider's get_ip_addresses; upstream's "none"
// provider (a nil DHCP here) knows no address.
func (b *Boot) ipAddresses(ctx context.Context, task *driver.Task) ([]string, error) {
	if b.opts.DHCP == nil {
		return nil, nil
	}
	addrs, err := b.opts.DHCP.GetIPAddresses(ctx, task)
	if err != nil {
		return nil, fmt.Errorf("IP addresses of node %s: %w", task.Node.UUID, err)
	}
	return addrs, nil
}

// linkIPConfigs is upstream _link_ip_address_pxe_configs: a relative
// link to the configuration for every address the node's ports hold. As
// upstream's create_link_without_raise, a link that cannot be made is
// logged and the others are still made.
func (b *Boot) linkIPConfigs(ctx context.Context, task *driver.Task, cfg string) error {
	addrs, err := b.ipAddresses(ctx, task)
	if err != nil {
		return err
	}
	if len(addrs) == 0 {
		task.Logger().WarnContext(ctx, "no IP addresses assigned for node", "node", task.Node.UUID)
	}
	for _, a := range addrs {
		link := b.ipLink(a)
		if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
			task.Logger().WarnContext(ctx, "could not remove boot configuration link", "node", task.Node.UUID, "link", link, "error", err)
		}
		rel, err := filepath.Rel(filepath.Dir(link), cfg)
		if err == nil {
			err = os.Symlink(rel, link)
		}
		if err != nil {
			task.Logger().WarnContext(ctx, "could not link boot configuration", "node", task.Node.UUID, "link", link, "error", err)
		}
	}
	return nil
}

// writeFile writes through a temporary file so a booting node never reads
// half a configuration.
func writeFile(path string, data []byte, perm fs.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, perm); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// BootScriptName is the name of the iPXE script under http_root that
// DHCP hands to iPXE clients.
const BootScriptName = "boot.ipxe"

// writeBootScript is upstream create_ipxe_boot_script; it writes only
// when the content differs.
func (b *Boot) writeBootScript() error {
	name := BootScriptName
	if custom(b.opts.IPXEBootScript) {
		name = filepath.Base(b.opts.IPXEBootScript)
	}
	data, err := render("boot.ipxe.tmpl", b.opts.IPXEBootScript, map[string]any{
		"ipxe_for_mac_uri":     b.opts.ConfigSubdir + "/",
		"ipxe_fallback_script": b.opts.IPXEFallbackScript,
	})
	if err != nil {
		return err
	}
	path := filepath.Join(b.opts.HTTPRoot, name)
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, data) {
		return nil
	}
	if err := os.MkdirAll(b.opts.HTTPRoot, b.opts.DirPermission); err != nil {
		return fmt.Errorf("http root: %w", err)
	}
	return writeFile(path, data, b.opts.FilePermission)
}

func (b *Boot) fetch(ctx context.Context, href, dest string) error {
	// Kernels and ramdisks are not disk images: no conversion, no deep
	// inspection.
	cache, err := b.cache.get(b.opts)
	if err != nil {
		return err
	}
	if cache != nil {
		raw := false
		return cache.FetchImage(ctx, href, dest, &raw, image.FetchOptions{DisableValidation: true})
	}
	if b.opts.Fetcher == nil {
		return fmt.Errorf("no image fetcher configured to download %s", href)
	}
	return b.opts.Fetcher.Download(ctx, href, dest, image.FetchOptions{DisableValidation: true})
}

func setBootDevice(ctx context.Context, task *driver.Task, device string, persistent bool) error {
	if task.Driver == nil || task.Driver.Management == nil {
		return nil
	}
	if err := task.Driver.Management.SetBootDevice(ctx, task, device, persistent); err != nil {
		return fmt.Errorf("set boot device %s of node %s: %w", device, task.Node.UUID, err)
	}
	return nil
}

// setNetworkBoot is upstream _node_set_boot_device_for_network_boot: the
// HTTP boot interfaces ask for UEFI HTTP and fall back to PXE when the
// management interface rejects it (IPMI has no HTTP boot device).
func (b *Boot) setNetworkBoot(ctx context.Context, task *driver.Task, persistent bool) error {
	if b.httpBoot {
		err := setBootDevice(ctx, task, "uefihttp", persistent)
		if !errs.Is(err, errs.ClassInvalidParameterValue) {
			return err
		}
		task.Logger().Warn("UEFI HTTP boot is not supported by the management interface, falling back to PXE", "node", task.Node.UUID)
	}
	return setBootDevice(ctx, task, "pxe", persistent)
}

// cleanUp is upstream clean_up_pxe_env: the MAC links, the node's folders
// with the configuration and images, then expired cache entries. Unlike
// upstream, which for the http interface removes only the http_root side
// at clean_up_ramdisk (the tftp_root configuration goes at
// prepare_instance), both sides always go.
func (b *Boot) cleanUp(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if b.grub(n) {
		// Upstream clean_up_pxe_config: GRUB's links by IP address go
		// first; a provider that cannot list the addresses fails it.
		addrs, err := b.ipAddresses(ctx, task)
		if err != nil {
			return err
		}
		for _, a := range addrs {
			if err := os.Remove(b.ipLink(a)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				task.Logger().Warn("could not remove boot configuration link", "node", n.UUID, "link", b.ipLink(a), "error", err)
			}
		}
	}
	ports, err := b.ports(ctx, n)
	if err != nil {
		return err
	}
	for _, p := range ports {
		for _, link := range b.macLinks(p) {
			if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
				task.Logger().Warn("could not remove boot configuration link", "node", n.UUID, "link", link, "error", err)
			}
		}
	}
	for _, dir := range slices.Compact([]string{b.nodeDir(n), b.imageDir(n)}) {
		if err := os.RemoveAll(dir); err != nil {
			task.Logger().Warn("could not remove node boot folder", "node", n.UUID, "dir", dir, "error", err)
		}
	}
	if cache, err := b.cache.get(b.opts); err == nil && cache != nil {
		cache.CleanUp(0)
	}
	return nil
}

// CleanUpRamdisk removes what PrepareRamdisk wrote.
func (b *Boot) CleanUpRamdisk(ctx context.Context, task *driver.Task) error {
	return b.cleanUp(ctx, task)
}

// PrepareInstance readies the instance's boot. A ramdisk instance boots
// from the network; for a local boot the node's network boot
// configuration goes and the disk becomes the persistent boot device. The
// boot device is left alone on an active or adopting node, as at takeover.
func (b *Boot) PrepareInstance(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if err := b.setUp(); err != nil {
		return err
	}
	// A node booting from an iSCSI volume boots it through iPXE, whatever
	// its boot option (upstream checks is_iscsi_boot first).
	if b.ipxe {
		vol, err := driver.BootVolumeFromInternalInfo(ctx, task)
		if err != nil {
			return err
		}
		if vol != nil && vol.VolumeType != nil && *vol.VolumeType == "iscsi" {
			return b.prepareVolumeInstance(ctx, task, vol)
		}
	}
	switch opt := bootOption(n); opt {
	case "ramdisk":
		return b.prepareRamdiskInstance(ctx, task)
	case "kickstart":
		return b.prepareKickstartInstance(ctx, task)
	case "local":
	default:
		return errs.NewMessage(errs.ClassInvalidParameterValue, fmt.Sprintf("Boot option %s of node %s is not supported by this boot interface", opt, n.UUID))
	}
	if b.opts.NetbootFallback {
		if err := b.netbootFallback(ctx, task); err != nil {
			return err
		}
	} else if err := b.cleanUp(ctx, task); err != nil {
		return err
	}
	if n.ProvisionState == states.Active || n.ProvisionState == states.Adopting {
		return nil
	}
	if vendor, _ := n.Properties["vendor"].(string); n.ProvisionState == states.Deploying &&
		strings.EqualFold(vendor, "lenovo") && b.bootMode(n) == "uefi" {
		// Lenovo firmware restores its NVRAM from a backup when asked
		// for several changes in a row, dropping them; upstream leaves
		// the boot order alone there.
		return nil
	}
	return setBootDevice(ctx, task, "disk", true)
}

// bootOption is upstream get_boot_option: instance_info capabilities,
// then the node's, then local.
func bootOption(n *model.Node) string {
	if n.DeployInterface == anaconda.Name {
		// Upstream decides this one by the deploy interface first.
		return "kickstart"
	}
	if opt := driver.Capability(n.InstanceInfo["capabilities"], "boot_option"); opt != "" {
		return opt
	}
	if opt := driver.Capability(n.Properties["capabilities"], "boot_option"); opt != "" {
		return opt
	}
	if n.DeployInterface == "ramdisk" {
		return "ramdisk"
	}
	return "local"
}

// CleanUpInstance removes any boot configuration left for the node, and
// has a DHCP provider that keeps per-node entries forget them (upstream
// calls clean_dhcp from the deploy interface's clean_up, right after).
func (b *Boot) CleanUpInstance(ctx context.Context, task *driver.Task) error {
	if err := b.cleanUp(ctx, task); err != nil {
		return err
	}
	if c, ok := b.opts.DHCP.(DHCPCleaner); ok {
		if err := c.CleanDHCPOpts(ctx, task); err != nil {
			return fmt.Errorf("clean DHCP options of node %s: %w", task.Node.UUID, err)
		}
	}
	return nil
}
