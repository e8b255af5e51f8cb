package pxe

import (
	"io/fs"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver/anaconda"
	"github.com/openkeel/ironic/internal/image"
)

// Options are the ironic.conf settings and services of the pxe, ipxe,
// http and http-ipxe boot interfaces.
type Options struct {
	// EnableInsecureTemplateOverride is [pxe]/
	// enable_insecure_template_override: a node's driver_info/pxe_template
	// is used instead of refused.
	EnableInsecureTemplateOverride bool
	// Kickstart configures the kickstart boot of the anaconda deploy
	// interface ([anaconda] and the API URL the installer reports to).
	Kickstart anaconda.BootOptions
	// TFTPRoot is [pxe]/tftp_root, the pxe interface's root.
	TFTPRoot string
	// HTTPRoot and HTTPURL are [deploy]/http_root and http_url, the ipxe
	// interface's root and how nodes reach it.
	HTTPRoot, HTTPURL string
	// ConfigSubdir is [pxe]/pxe_config_subdir, where MAC links go.
	ConfigSubdir string
	// KernelAppendParams is [pxe]/kernel_append_params.
	KernelAppendParams string
	// TFTPServer is [pxe]/tftp_server, given to the templates.
	TFTPServer string
	// IPXETimeoutSeconds is [pxe]/ipxe_timeout.
	IPXETimeoutSeconds int
	// IPXEFallbackScript is [pxe]/ipxe_fallback_script.
	IPXEFallbackScript string
	// Template files overriding the embedded ones ([pxe]/pxe_config_template,
	// uefi_pxe_config_template, ipxe_config_template, ipxe_boot_script);
	// empty or upstream's "$pybasedir/..." default means embedded.
	PXEConfigTemplate, UEFIPXEConfigTemplate, IPXEConfigTemplate, IPXEBootScript string
	// DirPermission and FilePermission are [pxe]/dir_permission and
	// file_permission.
	DirPermission, FilePermission fs.FileMode
	// DefaultBootMode is [deploy]/default_boot_mode.
	DefaultBootMode string
	// Conductor-wide agent images ([conductor]/deploy_kernel, …), used
	// when the node's driver_info names neither of the pair.
	DeployKernel, DeployRamdisk, RescueKernel, RescueRamdisk string
	// The same by the node's cpu_arch ([conductor]/deploy_kernel_by_arch,
	// …), between the node's pair and the conductor-wide one.
	DeployKernelByArch, DeployRamdiskByArch, RescueKernelByArch, RescueRamdiskByArch map[string]string
	// ErrorOnRamdiskConfigInconsistency is [conductor]/
	// error_on_ramdisk_config_inconsistency (driver.RamdiskSources).
	ErrorOnRamdiskConfigInconsistency bool
	// DisableKernelParameterParsing is [conductor]/
	// disable_kernel_parameter_parsing: a node's kernel_append_params is
	// then only sanitized, not checked.
	DisableKernelParameterParsing bool
	// ConfigTemplateByArch is [pxe]/pxe_config_template_by_arch: a PXE
	// (not iPXE) template by the node's cpu_arch, before the boot mode's.
	ConfigTemplateByArch map[string]string
	// Debug is [DEFAULT]/debug (ipa-debug=1).
	Debug bool
	// Cache holds the master copies of kernels and ramdisks
	// ([pxe]/tftp_master_path); Fetcher is used when no cache is set.
	Cache   *image.Cache
	Fetcher *image.Fetcher
	// CacheDir, CacheSize and CacheTTL are [pxe]/tftp_master_path,
	// image_cache_size and image_cache_ttl: without Cache, a cache is
	// made there at the first download (upstream creates the directory
	// then too); an empty CacheDir downloads straight to the node.
	CacheDir  string
	CacheSize int64
	CacheTTL  time.Duration
	// Ports lists the node's ports for the MAC links.
	Ports PortLister
	// AddAllPorts is [neutron]/add_all_ports: link every port's MAC
	// address, not only those of ports with pxe_enabled.
	AddAllPorts bool
	// Boot file names handed out over DHCP: [pxe]/pxe_bootfile_name,
	// uefi_pxe_bootfile_name, ipxe_bootfile_name, uefi_ipxe_bootfile_name
	// and the by-architecture maps pxe_bootfile_name_by_arch and
	// ipxe_bootfile_name_by_arch ("arch" or "arch-bootmode" keys).
	PXEBootfileName, UEFIPXEBootfileName, IPXEBootfileName, UEFIIPXEBootfileName string
	PXEBootfileByArch, IPXEBootfileByArch                                        map[string]string
	// MyIPv6 is [DEFAULT]/my_ipv6, the TFTP host of DHCPv6 answers.
	MyIPv6 string
	// LoaderFilePaths is [pxe]/loader_file_paths: boot loaders copied from
	// the host into the roots (file name -> source path).
	LoaderFilePaths map[string]string
	// InitialGrubTemplate is [pxe]/initial_grub_template when it names an
	// operator's file; InitialGrubDisabled is true when it is set empty.
	InitialGrubTemplate string
	InitialGrubDisabled bool
	// NetbootFallback is [pxe]/enable_netboot_fallback: a local boot keeps
	// a network boot configuration that chains to the disk, for machines
	// that cannot boot from disk persistently.
	NetbootFallback bool
	// DHCP, when set, receives the nodes' DHCP boot options
	// ([dhcp]/dhcp_provider); nil is upstream's "none" provider.
	DHCP DHCPProvider
	// BootRetryTimeout is [pxe]/boot_retry_timeout: how long an agent may
	// stay silent in a wait state before the network boot is retried; 0
	// (unset) disables the retry.
	BootRetryTimeout time.Duration
	// BootRetryCheckInterval is [pxe]/boot_retry_check_interval, the
	// period of that check.
	BootRetryCheckInterval time.Duration
	// IPXEUseSwift is [pxe]/ipxe_use_swift: with iPXE, a deploy or rescue
	// kernel or ramdisk that is a Glance image is fetched by the node from
	// a Swift temporary URL instead of being copied under http_root.
	IPXEUseSwift bool
	// Swift signs those URLs ([glance] swift_* options); nil is none of
	// them configured, refused as upstream refuses missing options.
	Swift *image.SwiftTempURLs
}

// OptionsFromConfig reads the options; image services and ports are the
// caller's to set.
func OptionsFromConfig(c *config.Config) Options {
	return Options{
		TFTPRoot:                          c.StringOf(config.PXETFTPRoot),
		HTTPRoot:                          c.StringOf(config.DeployHTTPRoot),
		HTTPURL:                           c.StringOf(config.DeployHTTPURL),
		ConfigSubdir:                      c.StringOf(config.PXEPXEConfigSubdir),
		KernelAppendParams:                c.StringOf(config.PXEKernelAppendParams),
		TFTPServer:                        c.StringOf(config.PXETFTPServer),
		IPXETimeoutSeconds:                c.IntOf(config.PXEIPXETimeout),
		IPXEFallbackScript:                c.StringOf(config.PXEIPXEFallbackScript),
		PXEConfigTemplate:                 operatorFile(c, config.PXEPXEConfigTemplate),
		EnableInsecureTemplateOverride:    c.BoolOf(config.PXEEnableInsecureTemplateOverride),
		UEFIPXEConfigTemplate:             operatorFile(c, config.PXEUEFIPXEConfigTemplate),
		IPXEConfigTemplate:                operatorFile(c, config.PXEIPXEConfigTemplate),
		IPXEBootScript:                    operatorFile(c, config.PXEIPXEBootScript),
		DirPermission:                     fs.FileMode(c.IntOf(config.PXEDirPermission)),
		FilePermission:                    fs.FileMode(c.IntOf(config.PXEFilePermission)),
		DefaultBootMode:                   c.StringOf(config.DeployDefaultBootMode),
		DeployKernel:                      c.StringOf(config.ConductorDeployKernel),
		DeployRamdisk:                     c.StringOf(config.ConductorDeployRamdisk),
		RescueKernel:                      c.StringOf(config.ConductorRescueKernel),
		RescueRamdisk:                     c.StringOf(config.ConductorRescueRamdisk),
		DeployKernelByArch:                c.DictOf(config.ConductorDeployKernelByArch),
		DeployRamdiskByArch:               c.DictOf(config.ConductorDeployRamdiskByArch),
		RescueKernelByArch:                c.DictOf(config.ConductorRescueKernelByArch),
		RescueRamdiskByArch:               c.DictOf(config.ConductorRescueRamdiskByArch),
		ErrorOnRamdiskConfigInconsistency: c.BoolOf(config.ConductorErrorOnRamdiskConfigInconsistency),
		DisableKernelParameterParsing:     c.BoolOf(config.ConductorDisableKernelParameterParsing),
		ConfigTemplateByArch:              c.DictOf(config.PXEPXEConfigTemplateByArch),
		Debug:                             c.BoolOf(config.DefaultDebug),
		CacheDir:                          c.StringOf(config.PXETFTPMasterPath),
		CacheSize:                         int64(c.IntOf(config.PXEImageCacheSize)) << 20,
		CacheTTL:                          time.Duration(c.IntOf(config.PXEImageCacheTTL)) * time.Minute,
		AddAllPorts:                       c.BoolOf(config.NeutronAddAllPorts),
		PXEBootfileName:                   c.StringOf(config.PXEPXEBootfileName),
		UEFIPXEBootfileName:               c.StringOf(config.PXEUEFIPXEBootfileName),
		IPXEBootfileName:                  c.StringOf(config.PXEIPXEBootfileName),
		UEFIIPXEBootfileName:              c.StringOf(config.PXEUEFIIPXEBootfileName),
		PXEBootfileByArch:                 c.DictOf(config.PXEPXEBootfileNameByArch),
		IPXEBootfileByArch:                c.DictOf(config.PXEIPXEBootfileNameByArch),
		MyIPv6:                            c.StringOf(config.DefaultMyIpv6),
		NetbootFallback:                   c.BoolOf(config.PXEEnableNetbootFallback),
		LoaderFilePaths:                   c.DictOf(config.PXELoaderFilePaths),
		InitialGrubTemplate:               operatorFile(c, config.PXEInitialGrubTemplate),
		InitialGrubDisabled:               c.StringOf(config.PXEInitialGrubTemplate) == "",
		BootRetryTimeout:                  time.Duration(c.IntOf(config.PXEBootRetryTimeout)) * time.Second,
		BootRetryCheckInterval:            time.Duration(c.IntOf(config.PXEBootRetryCheckInterval)) * time.Second,
		Kickstart:                         anaconda.BootOptionsFromConfig(c),
		IPXEUseSwift:                      c.BoolOf(config.PXEIPXEUseSwift),
		Swift:                             image.SwiftTempURLsFromConfig(c),
	}
}

// DefaultOptions are upstream's defaults, without services.
func DefaultOptions() Options {
	return Options{
		TFTPRoot: "/tftpboot", HTTPRoot: "/httpboot", ConfigSubdir: "pxelinux.cfg",
		KernelAppendParams: "nofb vga=normal", FilePermission: 0o644, DefaultBootMode: "uefi",
		PXEBootfileName: "pxelinux.0", UEFIPXEBootfileName: "bootx64.efi",
		IPXEBootfileName: "undionly.kpxe", UEFIIPXEBootfileName: "snponly.efi",
		BootRetryCheckInterval: 90 * time.Second,
	}
}

// operatorFile is a template option naming an operator's file, "" when it
// names one of upstream's source tree ($pybasedir, which the configuration
// resolves next to our executable), whose content is embedded.
func operatorFile(c *config.Config, k config.StringOpt) string {
	v := c.StringOf(k)
	if base := c.StringOf(config.DefaultPybasedir); base != "" && strings.HasPrefix(v, strings.TrimRight(base, "/")+"/") {
		return ""
	}
	return v
}

// custom reports whether a template option names an operator's file.
func custom(path string) bool { return path != "" && !strings.Contains(path, "$pybasedir") }
