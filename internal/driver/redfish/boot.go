package redfish

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/swift"
)

// BootOptions are the ironic.conf settings and services of the
// redfish-virtual-media boot interface.
type BootOptions struct {
	// HTTPRoot is [deploy]/http_root; images go to its "redfish" directory.
	HTTPRoot string
	// HTTPURL and ExternalHTTPURL are [deploy]/http_url and
	// external_http_url; the latter wins, and the node's
	// driver_info/external_http_url wins over both.
	HTTPURL, ExternalHTTPURL string
	// ExternalCallbackURL is [deploy]/external_callback_url: it replaces
	// the ipa-api-url the ramdisk is given.
	ExternalCallbackURL string
	// APIURL is the Ironic API URL given to the ramdisk as ipa-api-url
	// when the caller's ramdisk parameters carry none (upstream resolves it
	// from [service_catalog]).
	APIURL string
	// KernelAppendParams is [redfish]/kernel_append_params.
	KernelAppendParams string
	// NFS and CIFS are the shares ([nfs], [cifs]) a built ISO is published
	// on when driver_info's vmedia_transport_protocol asks for them.
	NFS, CIFS Share
	// DisableKernelParameterParsing is [conductor]/
	// disable_kernel_parameter_parsing: a node's kernel_append_params is
	// then only sanitized, not checked.
	DisableKernelParameterParsing bool
	// InspectionForceDHCP is [inspector]/force_dhcp: the ISO of a node
	// being inspected carries no static network data, so that its ramdisk
	// takes DHCP on every interface and reports each one's LLDP.
	InspectionForceDHCP bool
	// FilePermission is [redfish]/file_permission of published images.
	FilePermission fs.FileMode
	// DownloadSource is [deploy]/ramdisk_image_download_source for a
	// pre-built deploy ISO: "local" republishes it, "http"/"swift" hand
	// an http(s) URL to the BMC as it is.
	DownloadSource string
	// DefaultBootMode is [deploy]/default_boot_mode.
	DefaultBootMode string
	// Conductor-wide agent images ([conductor]/deploy_kernel, …,
	// bootloader), used when the node has none.
	DeployKernel, DeployRamdisk, RescueKernel, RescueRamdisk, Bootloader string
	// The same by the node's cpu_arch ([conductor]/deploy_kernel_by_arch,
	// …, bootloader_by_arch), before the conductor-wide ones.
	DeployKernelByArch, DeployRamdiskByArch, RescueKernelByArch, RescueRamdiskByArch, BootloaderByArch map[string]string
	// ErrorOnRamdiskConfigInconsistency is [conductor]/
	// error_on_ramdisk_config_inconsistency (driver.RamdiskSources).
	ErrorOnRamdiskConfigInconsistency bool
	// APICAFile is [agent]/api_ca_file, put on the ISO for the agent.
	APICAFile string
	// Debug is [DEFAULT]/debug (ipa-debug=1).
	Debug bool
	// Image are the ISO building options ([DEFAULT]/isolinux_bin,
	// esp_image, tempdir, …).
	Image image.Options
	// Fetcher downloads kernels, ramdisks, ESP images and pre-built ISOs.
	Fetcher *image.Fetcher
	// ISOMasterPath, ISOCacheSize (bytes) and ISOCacheTTL are
	// [deploy]/iso_master_path, iso_cache_size and iso_cache_ttl:
	// pre-built ISOs the conductor republishes (deploy_iso, rescue_iso,
	// the instance's boot_iso) are downloaded once into this master cache
	// and handed to each node as a hard link, as upstream's ISOImageCache.
	// An empty path downloads them every time, as upstream does without
	// an iso_master_path.
	ISOMasterPath string
	ISOCacheSize  int64
	ISOCacheTTL   time.Duration
	// isoCache is that cache, made at its first use and shared by every
	// copy of these options (both boot interfaces of a registration), so
	// that one set of locks guards the directory. Only
	// BootOptionsFromConfig and DefaultBootOptions set it: options made
	// otherwise download every time.
	isoCache *lazyISOCache
	// Ports lists the node's ports and CurrentVIF tells the VIF one boots
	// through (network.CurrentVIF); with both, the ramdisk is told the MAC
	// address of the NIC to boot from (BOOTIF) as upstream's
	// get_single_nic_with_vif_port_id finds it.
	Ports      PortLister
	CurrentVIF func(task *driver.Task, internalInfo map[string]any) string
	// Swift, set with [redfish]/use_swift, publishes the images in
	// SwiftContainer ([redfish]/swift_container) instead of http_root,
	// each for SwiftObjectExpiry ([redfish]/swift_object_expiry_timeout)
	// under a temporary URL, as upstream's SwiftPublisher.
	Swift             ObjectStore
	SwiftContainer    string
	SwiftObjectExpiry time.Duration
}

// ObjectStore is the part of internal/swift's Client images are
// published with.
type ObjectStore interface {
	CreateObjectFromFile(ctx context.Context, container, obj, path string, headers map[string]string) error
	TempURL(ctx context.Context, container, obj string, timeout time.Duration) (string, error)
	DeleteObject(ctx context.Context, container, obj string) error
}

// PortLister lists a node's ports; store.Store satisfies it.
type PortLister interface {
	ListPorts(ctx context.Context, f store.PortFilter, o store.ListOptions) ([]*model.Port, error)
}

// BootOptionsFromConfig reads the options; the image services are the
// caller's to set. With [redfish]/use_swift the images are published
// with the [swift] section's credentials.
func BootOptionsFromConfig(c *config.Config) BootOptions {
	o := BootOptions{
		HTTPRoot:                          c.StringOf(config.DeployHTTPRoot),
		HTTPURL:                           c.StringOf(config.DeployHTTPURL),
		ExternalHTTPURL:                   c.StringOf(config.DeployExternalHTTPURL),
		ExternalCallbackURL:               c.StringOf(config.DeployExternalCallbackURL),
		APIURL:                            c.StringOf(config.ServiceCatalogEndpointOverride),
		KernelAppendParams:                c.StringOf(config.RedfishKernelAppendParams),
		DisableKernelParameterParsing:     c.BoolOf(config.ConductorDisableKernelParameterParsing),
		InspectionForceDHCP:               c.BoolOf(config.InspectorForceDHCP),
		FilePermission:                    fs.FileMode(c.IntOf(config.RedfishFilePermission)),
		DownloadSource:                    c.StringOf(config.DeployRamdiskImageDownloadSource),
		DefaultBootMode:                   c.StringOf(config.DeployDefaultBootMode),
		DeployKernel:                      c.StringOf(config.ConductorDeployKernel),
		DeployRamdisk:                     c.StringOf(config.ConductorDeployRamdisk),
		RescueKernel:                      c.StringOf(config.ConductorRescueKernel),
		RescueRamdisk:                     c.StringOf(config.ConductorRescueRamdisk),
		Bootloader:                        c.StringOf(config.ConductorBootloader),
		DeployKernelByArch:                c.DictOf(config.ConductorDeployKernelByArch),
		DeployRamdiskByArch:               c.DictOf(config.ConductorDeployRamdiskByArch),
		RescueKernelByArch:                c.DictOf(config.ConductorRescueKernelByArch),
		RescueRamdiskByArch:               c.DictOf(config.ConductorRescueRamdiskByArch),
		BootloaderByArch:                  c.DictOf(config.ConductorBootloaderByArch),
		ErrorOnRamdiskConfigInconsistency: c.BoolOf(config.ConductorErrorOnRamdiskConfigInconsistency),
		APICAFile:                         c.StringOf(config.AgentAPICAFile),
		Debug:                             c.BoolOf(config.DefaultDebug),
		Image:                             image.OptionsFromConfig(c),
		SwiftContainer:                    c.StringOf(config.RedfishSwiftContainer),
		SwiftObjectExpiry:                 time.Duration(c.IntOf(config.RedfishSwiftObjectExpiryTimeout)) * time.Second,
		ISOMasterPath:                     c.StringOf(config.DeployISOMasterPath),
		ISOCacheSize:                      int64(c.IntOf(config.DeployISOCacheSize)) << 20,
		ISOCacheTTL:                       time.Duration(c.IntOf(config.DeployISOCacheTTL)) * time.Minute,
		isoCache:                          &lazyISOCache{},
	}
	if c.BoolOf(config.RedfishUseSwift) {
		o.Swift = swift.FromConfig(c)
	}
	o.NFS, o.CIFS = SharesFromConfig(c)
	return o
}

// DefaultBootOptions are upstream's defaults, without image services and
// without an ISO cache directory (set ISOMasterPath to cache ISOs).
func DefaultBootOptions() BootOptions {
	return BootOptions{
		HTTPRoot: "/httpboot", KernelAppendParams: "nofb vga=normal", FilePermission: 0o644,
		DownloadSource: "local", DefaultBootMode: "uefi", Image: image.DefaultOptions(),
		ISOCacheSize: 20480 << 20, ISOCacheTTL: 10080 * time.Minute, isoCache: &lazyISOCache{},
	}
}

// lazyISOCache is the ISO master cache, made at the first download of a
// pre-built ISO so that a conductor that never republishes one does not
// need its directory.
type lazyISOCache struct {
	once  sync.Once
	cache *image.Cache
	err   error
	// made is cache once made, for the clean-up periodic, which must not
	// make it.
	made atomic.Pointer[image.Cache]
}

var _ driver.ImageCacheKeeper = (*VirtualMediaBoot)(nil)

// CleanUpImageCaches trims the boot ISO cache, when one was made
// (upstream's ISOImageCache in clean_up_all).
func (b *VirtualMediaBoot) CleanUpImageCaches(context.Context) {
	if l := b.opts.isoCache; l != nil {
		if c := l.made.Load(); c != nil {
			c.CleanUp(0)
		}
	}
}

// get is the cache for o, nil when o caches no ISO.
func (l *lazyISOCache) get(o *BootOptions) (*image.Cache, error) {
	if l == nil || o.ISOMasterPath == "" || o.Fetcher == nil {
		return nil, nil
	}
	l.once.Do(func() {
		// Upstream's ISOImageCache: ISOs are neither inspected nor
		// converted.
		l.cache, l.err = image.NewCache(o.ISOMasterPath, o.ISOCacheSize, o.ISOCacheTTL, false, o.Fetcher)
		if l.err == nil {
			l.cache.DisableValidation = true
			l.made.Store(l.cache)
		}
	})
	return l.cache, l.err
}

// imageSubdir is where the interface publishes under http_root
// (upstream's IMAGE_SUBDIR).
const imageSubdir = "redfish"

// VirtualMediaBoot is upstream RedfishVirtualMediaBoot: the deploy or
// rescue ramdisk is built into an ISO, published on the conductor's HTTP
// server and inserted into the BMC's virtual CD.
type VirtualMediaBoot struct {
	driver.NoSteps
	core *core
	mgmt *Management
	opts BootOptions
}

var _ driver.BootInterface = (*VirtualMediaBoot)(nil)

// Properties are upstream's REQUIRED_PROPERTIES, all get_properties shows.
func (b *VirtualMediaBoot) Properties() map[string]string {
	return map[string]string{
		"deploy_kernel":  "URL or Glance UUID of the deployment kernel. Required if deploy_iso is not set.",
		"deploy_ramdisk": "URL or Glance UUID of the ramdisk that is mounted at boot time. Required if deploy_iso is not set.",
		"deploy_iso":     "URL or Glance UUID of the deployment ISO to use. Required if deploy_kernel/deploy_ramdisk are not set.",
	}
}

// Capabilities are upstream's capabilities of the class.
func (b *VirtualMediaBoot) Capabilities() []string {
	return []string{"iscsi_volume_boot", "ramdisk_boot", "ramdisk_boot_configdrive"}
}

// deployInfo is upstream's _parse_driver_info result for the agent ramdisk.
type deployInfo struct {
	mode                string // deploy or rescue
	kernel, ramdisk     string
	iso                 string
	bootloader          string
	configViaRemovable  bool
	canProvideConfig    bool
	needsAgent          bool
	externalHTTPURLNode string
}

// rescueOrDeployMode is upstream deploy_utils.rescue_or_deploy_mode.
func rescueOrDeployMode(n *model.Node) string {
	switch n.ProvisionState {
	case states.Rescuing, states.RescueWait, states.RescueFail, states.UnrescueFail:
		return "rescue"
	}
	return "deploy"
}

func strField(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func boolField(m map[string]any, key string) bool {
	switch v := m[key].(type) {
	case bool:
		return v
	case string:
		switch strings.ToLower(v) {
		case "1", "t", "true", "on", "y", "yes":
			return true
		}
	}
	return false
}

// ramdiskSources are the configured agent images of mode.
func (b *VirtualMediaBoot) ramdiskSources(mode string) driver.RamdiskSources {
	o := b.opts
	if mode == "rescue" {
		return driver.RamdiskSources{Kernel: o.RescueKernel, Ramdisk: o.RescueRamdisk, KernelByArch: o.RescueKernelByArch,
			RamdiskByArch: o.RescueRamdiskByArch, ErrorOnInconsistency: o.ErrorOnRamdiskConfigInconsistency}
	}
	return driver.RamdiskSources{Kernel: o.DeployKernel, Ramdisk: o.DeployRamdisk, KernelByArch: o.DeployKernelByArch,
		RamdiskByArch: o.DeployRamdiskByArch, ErrorOnInconsistency: o.ErrorOnRamdiskConfigInconsistency}
}

func (b *VirtualMediaBoot) parseDriverInfo(task *driver.Task) (deployInfo, error) {
	n := task.Node
	di := n.DriverInfo
	d := deployInfo{mode: rescueOrDeployMode(n), needsAgent: true}
	if d.mode == "deploy" && n.DeployInterface == "ramdisk" {
		// A ramdisk deploy boots no agent and takes no other option.
		d.needsAgent = false
		return d, nil
	}
	d.iso = strField(di, d.mode+"_iso")
	if d.iso == "" {
		d.iso = strField(di, "redfish_"+d.mode+"_iso")
	}
	if d.iso == "" {
		var err error
		d.kernel, d.ramdisk, err = driver.AgentKernelRamdisk(n, d.mode, b.ramdiskSources(d.mode), task.Logger())
		if err != nil {
			return d, err
		}
		var missing []string
		if d.kernel == "" {
			missing = append(missing, "'"+d.mode+"_kernel'")
		}
		if d.ramdisk == "" {
			missing = append(missing, "'"+d.mode+"_ramdisk'")
		}
		if len(missing) > 0 {
			return d, driver.MissingParameterValue("Error validating Redfish virtual media. Some parameters were "+
				"missing in node's driver_info. Missing are: [%s]", strings.Join(missing, ", "))
		}
	}
	d.bootloader = strField(di, "bootloader")
	if d.bootloader == "" {
		d.bootloader = b.opts.BootloaderByArch[driver.CPUArch(n)]
	}
	if d.bootloader == "" {
		d.bootloader = b.opts.Bootloader
	}
	d.configViaRemovable = boolField(di, "config_via_removable")
	if _, ok := di["config_via_removable"]; !ok {
		d.configViaRemovable = boolField(di, "config_via_floppy")
	}
	d.externalHTTPURLNode = strField(di, "external_http_url")
	if _, err := ParseDriverInfo(n, &b.core.opts); err != nil {
		return d, err
	}
	d.canProvideConfig = d.configViaRemovable || d.iso == ""
	return d, nil
}

// Validate is upstream validate: the agent images and the BMC address,
// and for a ramdisk deployment what the instance boots from.
func (b *VirtualMediaBoot) Validate(ctx context.Context, task *driver.Task) error {
	if _, err := b.parseDriverInfo(task); err != nil {
		return err
	}
	if bootOption(task.Node) != "ramdisk" {
		return nil
	}
	var sources *image.Sources
	if b.opts.Fetcher != nil {
		sources = b.opts.Fetcher.Sources
	}
	return image.ValidateRamdiskInstance(ctx, sources, task.Node.UUID, task.Node.InstanceInfo)
}

// ValidateInspection is upstream validate_inspection: no unmanaged
// fallback for virtual media.
func (b *VirtualMediaBoot) ValidateInspection(_ context.Context, task *driver.Task) error {
	_, err := b.parseDriverInfo(task)
	return err
}

// PrepareRamdisk builds the deploy or rescue ISO, publishes it, inserts it
// into the virtual CD and sets a one-time boot from it, with the node
// powered off.
func (b *VirtualMediaBoot) PrepareRamdisk(ctx context.Context, task *driver.Task, ramdiskParams map[string]any) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	n := task.Node
	if !driver.NeedPrepareRamdisk(n) {
		return nil
	}
	d, err := b.parseDriverInfo(task)
	if err != nil {
		return err
	}
	params := make(map[string]any, len(ramdiskParams)+4)
	for k, v := range ramdiskParams {
		params[k] = v
	}
	if d.canProvideConfig {
		token, err := pregeneratedToken()
		if err != nil {
			return err
		}
		n.InternalInfo().Set(model.DIIAgentSecretToken, token)
		n.InternalInfo().Set(model.DIIAgentSecretTokenPregenerated, true)
		params["ipa-agent-token"] = token
	}
	if err := b.powerOff(ctx, task); err != nil {
		return err
	}
	if _, ok := params["ipa-api-url"]; !ok && b.opts.APIURL != "" {
		params["ipa-api-url"] = strings.TrimRight(b.opts.APIURL, "/")
	}
	mac, err := b.deployNICMAC(ctx, task)
	if err != nil {
		return err
	}
	if mac != "" {
		params["BOOTIF"] = mac
	}
	if _, ok := params["ipa-debug"]; b.opts.Debug && !ok {
		params["ipa-debug"] = "1"
	}
	// Mandatory for virtual media: the agent looks for its configuration
	// on the media.
	params["boot_method"] = "vmedia"
	if d.configViaRemovable {
		if err := b.insertConfig(ctx, task, d, params); err != nil {
			return err
		}
	}
	protocol, err := b.selectTransport(ctx, task)
	if err != nil {
		return err
	}
	n.InternalInfo().Set(model.DIIVmediaTransportProtocol, protocol)

	isoURL, err := b.prepareDeployISO(ctx, task, d, params)
	if err != nil {
		return err
	}
	if err := b.mgmt.attachVirtualMedia(ctx, task, "cdrom", isoURL, b.insertParameters(n, protocol)); err != nil {
		return err
	}
	if err := b.setBootDevice(ctx, task, "cdrom", false); err != nil {
		return err
	}
	task.Logger().Debug("node set to one time boot from cdrom", "node", n.UUID)
	return nil
}

// deployNICMAC is upstream get_single_nic_with_vif_port_id: the address
// of the first port with a VIF in use, "" when none has one.
func (b *VirtualMediaBoot) deployNICMAC(ctx context.Context, task *driver.Task) (string, error) {
	if b.opts.Ports == nil || b.opts.CurrentVIF == nil {
		return "", nil
	}
	id := task.Node.ID
	ports, err := b.opts.Ports.ListPorts(ctx, store.PortFilter{NodeID: &id}, store.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("list ports of node %s: %w", task.Node.UUID, err)
	}
	for _, p := range ports {
		if p.Address != nil && b.opts.CurrentVIF(task, p.InternalInfo) != "" {
			return *p.Address, nil
		}
	}
	return "", nil
}

// pregeneratedToken is an agent token handed to the ramdisk on its boot
// media instead of at its first lookup.
func pregeneratedToken() (string, error) {
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("generate agent token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(buf), nil
}

// powerOff is what upstream's node_power_action(POWER_OFF) does for the
// boot interface: nothing when the node is already off.
func (b *VirtualMediaBoot) powerOff(ctx context.Context, task *driver.Task) error {
	if task.Driver == nil || task.Driver.Power == nil {
		return nil
	}
	p := task.Driver.Power
	cur, err := p.GetPowerState(ctx, task)
	if err != nil {
		return err
	}
	if cur != states.PowerOff {
		if err := p.SetPowerState(ctx, task, states.PowerOff, 0); err != nil {
			return err
		}
	}
	task.Node.PowerState = states.PowerOff
	task.Node.TargetPowerState = ""
	return nil
}

func (b *VirtualMediaBoot) setBootDevice(ctx context.Context, task *driver.Task, device string, persistent bool) error {
	if set := b.core.ext.VirtualBootDevice; set != nil && (device == "cdrom" || device == "floppy") {
		return b.core.withConnection(ctx, task, func(cl *client, info DriverInfo) error {
			sys, err := fetchSystem(cl, info)
			if err != nil {
				return redfishError(err.Error())
			}
			return set(ctx, task, &Session{cl: cl, sys: sys}, device, persistent)
		})
	}
	var m driver.ManagementInterface = b.mgmt
	if task.Driver != nil && task.Driver.Management != nil {
		m = task.Driver.Management
	}
	return m.SetBootDevice(ctx, task, device, persistent)
}

// overrideAPIURL is upstream image_utils.override_api_url.
func (b *VirtualMediaBoot) overrideAPIURL(params map[string]any) {
	if b.opts.ExternalCallbackURL == "" {
		return
	}
	u := strings.TrimRight(b.opts.ExternalCallbackURL, "/")
	params["ipa-api-url"] = u
	const cbParam, cbEndpoint = "ipa-inspection-callback-url", "/v1/continue_inspection"
	if cb, ok := params[cbParam].(string); ok && strings.HasSuffix(cb, cbEndpoint) {
		params[cbParam] = u + cbEndpoint
	}
}

// bootMode is upstream boot_mode_utils.get_boot_mode: the instance's
// requested mode, the node's capability, the mode in use, the default.
func (b *VirtualMediaBoot) bootMode(n *model.Node) string {
	if m := strField(n.InstanceInfo, "deploy_boot_mode"); m != "" {
		return strings.ToLower(m)
	}
	if m := driver.Capability(n.Properties["capabilities"], "boot_mode"); m != "" {
		return strings.ToLower(m)
	}
	if m := n.InternalInfo().String(model.DIIDeployBootMode); m != "" {
		return strings.ToLower(m)
	}
	if b.opts.DefaultBootMode != "" {
		return b.opts.DefaultBootMode
	}
	return "uefi"
}

// isoName is upstream's object name of a node's boot ISO.
func isoName(n *model.Node) string { return "boot-" + n.UUID + ".iso" }

// prepareDeployISO is upstream image_utils.prepare_deploy_iso.
func (b *VirtualMediaBoot) prepareDeployISO(ctx context.Context, task *driver.Task, d deployInfo, params map[string]any) (string, error) {
	n := task.Node
	b.overrideAPIURL(params)
	if d.iso != "" {
		return b.prepareRemoteISO(ctx, task, d, d.iso, b.opts.DownloadSource)
	}
	inject := map[string]image.FileEntry{}
	if b.opts.APICAFile != "" {
		inject["etc/ironic-python-agent/ironic.crt"] = image.FileEntry{Source: b.opts.APICAFile}
		inject["etc/ironic-python-agent.d/ironic-tls.conf"] = image.FileEntry{
			Data: []byte("[DEFAULT]\ncafile = /etc/ironic-python-agent/ironic.crt\n")}
	}
	inspecting := n.ProvisionState == states.Inspecting || n.ProvisionState == states.InspectWait
	if b.opts.InspectionForceDHCP && inspecting {
		task.Logger().DebugContext(ctx, "not injecting network data into the inspection ISO: [inspector]/force_dhcp", "node", n.UUID)
	} else if nd, err := networkData(ctx, task); err != nil {
		return "", err
	} else if len(nd) > 0 {
		data, err := json.MarshalIndent(nd, "", "  ")
		if err != nil {
			return "", fmt.Errorf("network data of node %s: %w", n.UUID, err)
		}
		inject["openstack/latest/network_data.json"] = image.FileEntry{Data: data}
	}
	appendParams, err := driver.KernelAppendParams(n, b.opts.KernelAppendParams, !b.opts.DisableKernelParameterParsing)
	if err != nil {
		return "", err
	}
	kernelParams := appendParams + " ir_pub_id=" + uuid.NewString()
	if s := driver.FormatKernelParams(params); s != "" {
		kernelParams += " " + s
	}
	return b.buildAndPublish(ctx, task, d, kernelParams, inject)
}

// networkData is the network interface's configuration for the node
// (upstream get_node_network_data; node.network_data by default).
func networkData(ctx context.Context, task *driver.Task) (map[string]any, error) {
	if task.Driver != nil && task.Driver.Network != nil {
		if p, ok := task.Driver.Network.(driver.NetworkDataProvider); ok {
			return p.GetNodeNetworkData(ctx, task)
		}
	}
	return task.Node.NetworkData, nil
}

// fetch downloads a kernel, ramdisk or ESP image for one ISO build; as
// upstream's create_boot_iso, they bypass the ISO cache.
func (b *VirtualMediaBoot) fetch(ctx context.Context, href, dest string) error {
	if b.opts.Fetcher == nil {
		return fmt.Errorf("no image fetcher configured to download %s", href)
	}
	return b.opts.Fetcher.Download(ctx, href, dest, image.FetchOptions{DisableValidation: true})
}

// fetchISO downloads a pre-built ISO through the ISO master cache, as
// upstream's prepare_remote_image, or directly without one.
func (b *VirtualMediaBoot) fetchISO(ctx context.Context, href, dest string) error {
	cache, err := b.opts.isoCache.get(&b.opts)
	if err != nil {
		return err
	}
	if cache == nil {
		return b.fetch(ctx, href, dest)
	}
	raw := false
	return cache.FetchImage(ctx, href, dest, &raw, image.FetchOptions{DisableValidation: true})
}

func (b *VirtualMediaBoot) tempDir() (string, error) {
	dir, err := os.MkdirTemp(b.opts.Image.TempDir, "redfish-vmedia")
	if err != nil {
		return "", fmt.Errorf("temporary directory for the boot ISO: %w", err)
	}
	return dir, nil
}

// buildAndPublish is the ISO building half of upstream _prepare_iso_image.
func (b *VirtualMediaBoot) buildAndPublish(ctx context.Context, task *driver.Task, d deployInfo, kernelParams string, inject map[string]image.FileEntry) (string, error) {
	n := task.Node
	dir, err := b.tempDir()
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	kernel, ramdisk := filepath.Join(dir, "kernel"), filepath.Join(dir, "ramdisk")
	if err := b.fetch(ctx, d.kernel, kernel); err != nil {
		return "", err
	}
	if err := b.fetch(ctx, d.ramdisk, ramdisk); err != nil {
		return "", err
	}
	iso := image.BootISOOptions{
		Kernel: kernel, Ramdisk: ramdisk, KernelParams: kernelParams, InjectFiles: inject,
		UEFI: b.bootMode(n) == "uefi",
	}
	if _, pub, ok := strings.Cut(kernelParams, "ir_pub_id="); ok {
		iso.PublisherID, _, _ = strings.Cut(pub, " ")
	}
	if iso.UEFI && d.bootloader != "" {
		iso.ESPImage = filepath.Join(dir, "esp.img")
		if err := b.fetch(ctx, d.bootloader, iso.ESPImage); err != nil {
			return "", err
		}
	}
	task.Logger().Debug("building boot ISO", "node", n.UUID, "uefi", iso.UEFI, "kernel", d.kernel, "ramdisk", d.ramdisk)
	out := filepath.Join(dir, "boot.iso")
	if err := image.BuildBootISO(ctx, b.opts.Image, out, iso); err != nil {
		return "", err
	}
	return b.opts.publishFor(ctx, n, out, isoName(n), d.externalHTTPURLNode)
}

// prepareRemoteISO is upstream prepare_remote_image for a pre-built ISO;
// source is the ramdisk_image_download_source in force.
func (b *VirtualMediaBoot) prepareRemoteISO(ctx context.Context, task *driver.Task, d deployInfo, href, source string) (string, error) {
	u, _ := url.Parse(href)
	scheme := ""
	if u != nil {
		scheme = strings.ToLower(u.Scheme)
	}
	if scheme == "swift" {
		return href, nil
	}
	if source != "local" && (scheme == "http" || scheme == "https") {
		return href, nil
	}
	task.Logger().Debug("using pre-built ISO, custom configuration will not be available", "node", task.Node.UUID, "iso", href)
	dir, err := b.tempDir()
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, isoName(task.Node))
	if err := b.fetchISO(ctx, href, tmp); err != nil {
		return "", err
	}
	return b.opts.publish(ctx, tmp, isoName(task.Node), d.externalHTTPURLNode)
}

// appendFilenameParam adds filename=<name> to u's query unless it has a
// filename parameter (in any case) already.
func appendFilenameParam(u, name string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	for k := range p.Query() {
		if strings.EqualFold(k, "filename") {
			return u
		}
	}
	q := p.RawQuery
	if q != "" {
		q += "&"
	}
	p.RawQuery = q + "filename=" + url.QueryEscape(name)
	return p.String()
}

// ejectAll is upstream _eject_all: the CD, the removable configuration
// devices when used, and the published images.
func (b *VirtualMediaBoot) ejectAll(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if err := b.mgmt.DetachVirtualMedia(ctx, task, []string{"cdrom"}); err != nil {
		return err
	}
	if boolField(n.DriverInfo, "config_via_removable") || boolField(n.DriverInfo, "config_via_floppy") {
		if err := b.mgmt.DetachVirtualMedia(ctx, task, []string{"disk", "floppy"}); err != nil {
			return err
		}
		if err := b.opts.unpublish(ctx, task, configImageName(n)); err != nil {
			return err
		}
	}
	if err := b.opts.unpublishShared(n, isoName(n)); err != nil {
		return err
	}
	return b.opts.unpublish(ctx, task, isoName(n))
}

// CleanUpRamdisk ejects the ramdisk ISO and removes it.
func (b *VirtualMediaBoot) CleanUpRamdisk(ctx context.Context, task *driver.Task) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	task.Logger().Debug("cleaning up deploy boot", "node", task.Node.UUID)
	return b.ejectAll(ctx, task)
}

// bootOption is upstream deploy_utils.get_boot_option.
func bootOption(n *model.Node) string {
	if v := driver.Capability(n.InstanceInfo["capabilities"], "boot_option"); v != "" {
		return v
	}
	if n.DeployInterface == "ramdisk" {
		return "ramdisk"
	}
	return "local"
}

// PrepareInstance sets a persistent boot from disk for a local boot or a
// whole disk image, and from the instance's ISO for a ramdisk deployment.
// Booting a partition image over virtual media (upstream's netboot with a
// root_uuid) is refused, as upstream no longer offers netboot.
func (b *VirtualMediaBoot) PrepareInstance(ctx context.Context, task *driver.Task) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	n := task.Node
	if err := b.ejectAll(ctx, task); err != nil {
		return err
	}
	iwdi, _ := n.InternalInfo().Bool(model.DIIIsWholeDiskImage)
	opt := bootOption(n)
	if opt == "ramdisk" && !iwdi {
		return b.prepareRamdiskInstance(ctx, task)
	}
	if opt != "local" && !iwdi {
		return errs.New(errs.ClassInstanceDeployFailure, map[string]any{
			"reason": fmt.Sprintf("Boot option %s over virtual media is not supported for node %s", opt, n.UUID)})
	}
	if err := b.setBootDevice(ctx, task, "disk", true); err != nil {
		return err
	}
	task.Logger().Debug("node set to permanently boot from disk", "node", n.UUID)
	return nil
}

// CleanUpInstance ejects everything and removes the published images,
// the config drive of a ramdisk instance included.
func (b *VirtualMediaBoot) CleanUpInstance(ctx context.Context, task *driver.Task) error {
	if err := requireExclusive(task); err != nil {
		return err
	}
	if err := b.ejectAll(ctx, task); err != nil {
		return err
	}
	if bootOption(task.Node) != "ramdisk" || task.Node.InstanceInfo["configdrive"] == nil {
		return nil
	}
	if err := b.mgmt.DetachVirtualMedia(ctx, task, []string{"disk"}); err != nil {
		return err
	}
	return b.opts.unpublish(ctx, task, configdriveImageName(task.Node))
}
