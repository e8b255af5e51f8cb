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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/template"

	"github.com/openkeel/ironic/internal/driver"
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

// Boot is the pxe (ipxe false) or ipxe boot interface.
type Boot struct {
	driver.NoSteps
	ipxe  bool
	opts  Options
	cache *lazyCache
}

// lazyCache is the image cache made at the first download, shared by the
// interfaces of one registration so that one lock guards its directory.
type lazyCache struct {
	once  sync.Once
	cache *image.Cache
	err   error
}

func (l *lazyCache) get(o Options) (*image.Cache, error) {
	l.once.Do(func() {
		if o.Cache != nil || o.CacheDir == "" || o.Fetcher == nil {
			l.cache = o.Cache
			return
		}
		l.cache, l.err = image.NewCache(o.CacheDir, o.CacheSize, o.CacheTTL, false, o.Fetcher)
	})
	return l.cache, l.err
}

var _ driver.BootInterface = (*Boot)(nil)

// NewPXE is the "pxe" interface: configuration under [pxe]/tftp_root,
// pxelinux for BIOS, GRUB for UEFI.
func NewPXE(o Options) *Boot { return &Boot{opts: withDefaults(o), cache: &lazyCache{}} }

// NewIPXE is the "ipxe" interface: configuration and images under
// [deploy]/http_root, served over HTTP to iPXE.
func NewIPXE(o Options) *Boot { return &Boot{ipxe: true, opts: withDefaults(o), cache: &lazyCache{}} }

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

// Register adds pxe and ipxe to r.
func Register(r *driver.Registry, o Options) error {
	shared := &lazyCache{}
	p, i := NewPXE(o), NewIPXE(o)
	p.cache, i.cache = shared, shared
	if err := r.Register(driver.KindBoot, "pxe", p); err != nil {
		return fmt.Errorf("boot pxe: %w", err)
	}
	if err := r.Register(driver.KindBoot, "ipxe", i); err != nil {
		return fmt.Errorf("boot ipxe: %w", err)
	}
	return nil
}

// Properties are upstream's driver_info properties of the PXE boot.
func (b *Boot) Properties() map[string]string {
	return map[string]string{
		"deploy_kernel":  "UUID (from Glance) of the deployment kernel. Required.",
		"deploy_ramdisk": "UUID (from Glance) of the ramdisk that is mounted at boot time. Required.",
		"rescue_kernel":  "UUID (from Glance) of the rescue kernel. This value is required for rescue mode.",
		"rescue_ramdisk": "UUID (from Glance) of the rescue ramdisk with agent that is used at node rescue time. This value is required for rescue mode.",
	}
}

// Capabilities are upstream's capabilities of the classes.
func (b *Boot) Capabilities() []string {
	if b.ipxe {
		return []string{"ipxe_boot", "iscsi_volume_boot", "ramdisk_boot"}
	}
	return []string{"ramdisk_boot", "pxe_boot"}
}

// root is where this interface writes (upstream _get_root_dir).
func (b *Boot) root() string {
	if b.ipxe {
		return b.opts.HTTPRoot
	}
	return b.opts.TFTPRoot
}

func (b *Boot) nodeDir(n *model.Node) string { return filepath.Join(b.root(), n.UUID) }

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
		filepath.Join(b.root(), b.opts.ConfigSubdir, first),
		filepath.Join(b.root(), "grub.cfg-01-"+hyph),
		filepath.Join(b.root(), *p.Address+".conf"),
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

// kernelRamdisk is upstream parse_driver_info: the pair from driver_info,
// or, when the node names neither, from the configuration.
func (b *Boot) kernelRamdisk(n *model.Node, mode string) (kernel, ramdisk string, err error) {
	kernel, ramdisk = strField(n.DriverInfo, mode+"_kernel"), strField(n.DriverInfo, mode+"_ramdisk")
	if kernel == "" && ramdisk == "" {
		kernel, ramdisk = b.opts.DeployKernel, b.opts.DeployRamdisk
		if mode == "rescue" {
			kernel, ramdisk = b.opts.RescueKernel, b.opts.RescueRamdisk
		}
	}
	var missing []string
	if kernel == "" {
		missing = append(missing, "'"+mode+"_kernel'")
	}
	if ramdisk == "" {
		missing = append(missing, "'"+mode+"_ramdisk'")
	}
	if len(missing) > 0 {
		return "", "", errs.NewMessage("MissingParameterValue",
			"Cannot validate PXE bootloader. Some parameters were missing in node's driver_info and configuration. Missing are: ["+strings.Join(missing, ", ")+"]")
	}
	return kernel, ramdisk, nil
}

// bootMode is upstream get_boot_mode.
func (b *Boot) bootMode(n *model.Node) string {
	if m := strField(n.InstanceInfo, "deploy_boot_mode"); m != "" {
		return strings.ToLower(m)
	}
	if m := capability(n.Properties["capabilities"], "boot_mode"); m != "" {
		return strings.ToLower(m)
	}
	if n.BootMode != nil && *n.BootMode != "" {
		return strings.ToLower(*n.BootMode)
	}
	return b.opts.DefaultBootMode
}

// capability reads key from capabilities ("k:v,k2:v2" or a dict).
func capability(caps any, key string) string {
	switch c := caps.(type) {
	case map[string]any:
		s, _ := c[key].(string)
		return s
	case string:
		for item := range strings.SplitSeq(c, ",") {
			if k, v, ok := strings.Cut(item, ":"); ok && strings.TrimSpace(k) == key {
				return strings.TrimSpace(v)
			}
		}
	}
	return ""
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

// Validate is upstream PXEBaseMixin.validate: the node needs a port to
// boot from, iPXE an HTTP server, and the agent ramdisk must be known.
func (b *Boot) Validate(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if m := b.bootMode(n); m != "uefi" && m != "bios" {
		return errs.NewMessage("InvalidParameterValue", fmt.Sprintf("Invalid boot mode %q for node %s", m, n.UUID))
	}
	ports, err := b.ports(ctx, n)
	if err != nil {
		return err
	}
	if len(ports) == 0 {
		return errs.NewMessage("MissingParameterValue", fmt.Sprintf("Node %s does not have any port associated with it.", n.UUID))
	}
	if b.ipxe && (b.opts.HTTPURL == "" || b.opts.HTTPRoot == "") {
		return errs.NewMessage("MissingParameterValue", "iPXE boot is enabled but no HTTP URL or HTTP root was specified.")
	}
	_, _, err = b.kernelRamdisk(n, "deploy")
	return err
}

// ValidateRescue checks the rescue ramdisk is known.
func (b *Boot) ValidateRescue(_ context.Context, task *driver.Task) error {
	_, _, err := b.kernelRamdisk(task.Node, "rescue")
	return err
}

// needPrepareRamdisk is upstream need_prepare_ramdisk: only the states
// that boot the agent rewrite the boot configuration.
func needPrepareRamdisk(n *model.Node) bool {
	return slices.Contains([]string{
		states.Deploying, states.DeployWait, states.Cleaning, states.CleanWait, states.Inspecting,
		states.InspectWait, states.Rescuing, states.RescueWait, states.Servicing, states.ServiceWait,
	}, n.ProvisionState)
}

// PrepareRamdisk writes the node's boot configuration for the deploy or
// rescue ramdisk, links every port's MAC address to it, fetches the
// kernel and ramdisk into the node's folder and sets a one-time network
// boot.
func (b *Boot) PrepareRamdisk(ctx context.Context, task *driver.Task, ramdiskParams map[string]any) error {
	if task.Shared {
		return errs.New("ExclusiveLockRequired", nil)
	}
	n := task.Node
	if !needPrepareRamdisk(n) {
		return nil
	}
	m := mode(n)
	kernel, ramdisk, err := b.kernelRamdisk(n, m)
	if err != nil {
		return err
	}
	if b.ipxe {
		if err := b.writeBootScript(); err != nil {
			return err
		}
	}
	opts := b.configOptions(n, m, ramdiskParams)
	if err := b.writeConfig(ctx, task, opts); err != nil {
		return err
	}
	if err := setBootDevice(ctx, task, "pxe", false); err != nil {
		return err
	}
	dir := b.nodeDir(n)
	for label, href := range map[string]string{m + "_kernel": kernel, m + "_ramdisk": ramdisk} {
		if err := b.fetch(ctx, href, filepath.Join(dir, label)); err != nil {
			return err
		}
	}
	return nil
}

// configOptions is upstream build_pxe_config_options for the agent
// ramdisk: where the kernel and ramdisk are, and the kernel command line.
func (b *Boot) configOptions(n *model.Node, m string, ramdiskParams map[string]any) map[string]any {
	o := map[string]any{}
	for _, l := range [][2]string{{m + "_kernel", "deployment_aki_path"}, {m + "_ramdisk", "deployment_ari_path"}} {
		if b.ipxe {
			o[l[1]] = strings.TrimRight(b.opts.HTTPURL, "/") + "/" + n.UUID + "/" + l[0]
		} else {
			// pxelinux and GRUB resolve paths against the TFTP root.
			o[l[1]] = n.UUID + "/" + l[0]
		}
	}
	if b.ipxe {
		o["initrd_filename"] = m + "_ramdisk"
	}
	o["aki_path"], o["ari_path"] = "no_kernel", "no_ramdisk"
	appendParams := b.opts.KernelAppendParams
	for _, src := range []map[string]any{n.InstanceInfo, n.DriverInfo} {
		if v, ok := src["kernel_append_params"].(string); ok {
			appendParams = v
			break
		}
	}
	if b.opts.Debug && !strings.Contains(appendParams, "ipa-debug") {
		appendParams += " ipa-debug=1"
	}
	if s := formatParams(ramdiskParams); s != "" {
		appendParams += " " + s
	}
	o["pxe_append_params"] = appendParams
	o["tftp_server"] = b.opts.TFTPServer
	o["ipxe_timeout"] = b.opts.IPXETimeoutSeconds * 1000
	if u, ok := ramdiskParams["ipa-api-url"]; ok {
		o["ipa-api-url"] = u
	}
	return o
}

// formatParams renders key=value pairs (a bare key for a nil value) in
// key order, so the configuration is the same for the same parameters.
func formatParams(params map[string]any) string {
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if params[k] == nil {
			parts = append(parts, k)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%v", k, params[k]))
	}
	return strings.Join(parts, " ")
}

// configTemplate is the node's template: the operator's file when
// configured, else the embedded one for the loader.
func (b *Boot) configTemplate(n *model.Node) (name, override string) {
	switch {
	case b.ipxe:
		return "ipxe_config.tmpl", b.opts.IPXEConfigTemplate
	case b.bootMode(n) == "uefi":
		return "grub.tmpl", b.opts.UEFIPXEConfigTemplate
	default:
		return "pxelinux.tmpl", b.opts.PXEConfigTemplate
	}
}

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
	t, err := template.New(name).Option("missingkey=zero").Parse(string(text))
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
	for _, d := range []string{b.nodeDir(n), filepath.Join(b.root(), b.opts.ConfigSubdir)} {
		if err := os.MkdirAll(d, b.opts.DirPermission); err != nil {
			return fmt.Errorf("boot configuration directory: %w", err)
		}
	}
	name, override := b.configTemplate(n)
	root, disk := "{{ ROOT }}", "{{ DISK_IDENTIFIER }}"
	if name == "grub.tmpl" {
		// GRUB chokes on braces in its configuration.
		root, disk = "(( ROOT ))", "(( DISK_IDENTIFIER ))"
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

// cleanUp is upstream clean_up_pxe_env: the MAC links, the node's folder
// with its configuration and images, then expired cache entries.
func (b *Boot) cleanUp(ctx context.Context, task *driver.Task) error {
	n := task.Node
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
	if err := os.RemoveAll(b.nodeDir(n)); err != nil {
		task.Logger().Warn("could not remove node boot folder", "node", n.UUID, "error", err)
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

// PrepareInstance readies a local boot: the node's network boot
// configuration goes and the disk becomes the persistent boot device
// (left alone on an active node, as at takeover).
func (b *Boot) PrepareInstance(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if opt := bootOption(n); opt != "local" {
		return errs.NewMessage("InvalidParameterValue", fmt.Sprintf("Boot option %s of node %s is not supported by this boot interface", opt, n.UUID))
	}
	if err := b.cleanUp(ctx, task); err != nil {
		return err
	}
	if n.ProvisionState == states.Active {
		return nil
	}
	return setBootDevice(ctx, task, "disk", true)
}

// bootOption is upstream get_boot_option: instance_info capabilities,
// then the node's, then local.
func bootOption(n *model.Node) string {
	if opt := capability(n.InstanceInfo["capabilities"], "boot_option"); opt != "" {
		return opt
	}
	if opt := capability(n.Properties["capabilities"], "boot_option"); opt != "" {
		return opt
	}
	if n.DeployInterface == "ramdisk" {
		return "ramdisk"
	}
	return "local"
}

// CleanUpInstance removes any boot configuration left for the node.
func (b *Boot) CleanUpInstance(ctx context.Context, task *driver.Task) error {
	return b.cleanUp(ctx, task)
}
