// Package image fetches, checks, converts and caches the images a
// conductor hands to nodes, and builds the ISO images it boots them from,
// as upstream's ironic/common/{images,image_service,checksum_utils,
// qemu_img}.py and ironic/drivers/modules/image_cache.py do.
//
// Errors are upstream's classes (internal/errs) with upstream's messages,
// because they reach node.last_error and clients read them.
package image

import (
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/config"
)

// Options are the ironic.conf values this package reads; OptionsFromConfig
// fills them, tests set them directly.
type Options struct {
	// WebserverVerifyCA is [DEFAULT]/webserver_verify_ca: "True", "False"
	// or the path of a CA bundle.
	WebserverVerifyCA string
	// WebserverTLSMinVersion is [DEFAULT]/webserver_tls_minimum_version:
	// "1.2" or "1.3" (empty: 1.3, upstream's default), the lowest TLS
	// version of HTTPS image downloads.
	WebserverTLSMinVersion string
	// WebserverTimeout is [DEFAULT]/webserver_connection_timeout.
	WebserverTimeout time.Duration
	// ImageServerUser/Password are used when [deploy]/image_server_auth_strategy
	// is http_basic (ImageServerBasicAuth).
	ImageServerBasicAuth bool
	ImageServerUser      string
	ImageServerPassword  string
	// FileURLAllowedPaths is [conductor]/file_url_allowed_paths.
	FileURLAllowedPaths []string
	// AllowMD5 is [agent]/allow_md5_checksum.
	AllowMD5 bool
	// DisableChecksumFiles is [conductor]/disable_support_for_checksum_files.
	DisableChecksumFiles bool
	// DisableFileChecksum is [conductor]/disable_file_checksum.
	DisableFileChecksum bool
	// DisableZstdDecompression is [conductor]/disable_zstandard_decompression.
	DisableZstdDecompression bool
	// DisableDeepInspection is [conductor]/disable_deep_image_inspection.
	DisableDeepInspection bool
	// PermittedFormats is [conductor]/permitted_image_formats.
	PermittedFormats []string
	// ConvertMemoryLimitMiB is [disk_utils]/image_convert_memory_limit.
	ConvertMemoryLimitMiB int
	// ConvertAttempts is [disk_utils]/image_convert_attempts.
	ConvertAttempts int
	// RawImageGrowthFactor is [DEFAULT]/raw_image_growth_factor.
	RawImageGrowthFactor float64
	// DownloadConcurrency is [DEFAULT]/image_download_concurrency.
	DownloadConcurrency int
	// ParallelDownloads is [DEFAULT]/parallel_image_downloads.
	ParallelDownloads bool
	// GlanceAllowedDirectURLSchemes is [glance]/allowed_direct_url_schemes.
	GlanceAllowedDirectURLSchemes []string
	// GlanceNumRetries is [glance]/num_retries.
	GlanceNumRetries int
	// GlanceRetryDelay is the wait between Glance retries (upstream: 1 s).
	GlanceRetryDelay time.Duration
	// ConductorProjectID is the project of the conductor's Glance service
	// user: private images it owns and shared images it is a member of
	// are available (upstream's is_image_available).
	ConductorProjectID string
	// AllowImageAccessViaAuthToken is [DEFAULT]/allow_image_access_via_auth_token.
	AllowImageAccessViaAuthToken bool
	// IgnoreProjectCheckForAdmin is [DEFAULT]/ignore_project_check_for_admin_tasks.
	IgnoreProjectCheckForAdmin bool
	// Isolinux and boot ISO options from [DEFAULT].
	IsolinuxBin    string
	LdlinuxC32     string
	ESPImage       string
	GrubConfigPath string
	// TempDir is [DEFAULT]/tempdir.
	TempDir string
	// IsolinuxConfigTemplate and GrubConfigTemplate are
	// [DEFAULT]/isolinux_config_template and grub_config_template when
	// they name an operator's file; "" (upstream's default under
	// $pybasedir) is the built-in text.
	IsolinuxConfigTemplate, GrubConfigTemplate string
	// Memory is the [DEFAULT]/minimum_memory_* and minimum_required_memory
	// check before a conversion to raw; DefaultOptions leaves it off (no
	// required memory) so that tests do not depend on the host's.
	Memory MemoryGuard
	// OCIVerifyCA is [oci]/verify_ca; nil (unset) means WebserverVerifyCA.
	OCIVerifyCA *string
	// OCIPermitHTTPFallback is [oci]/permit_fallback_to_http_transport.
	OCIPermitHTTPFallback bool
	// OCISecureCDNRegistries is [oci]/secure_cdn_registries.
	OCISecureCDNRegistries []string
	// OCIAuthConfig is [oci]/authentication_config.
	OCIAuthConfig string
}

// DefaultOptions are upstream's defaults.
func DefaultOptions() Options {
	return Options{
		WebserverVerifyCA:      "True",
		WebserverTimeout:       60 * time.Second,
		WebserverTLSMinVersion: "1.3",
		FileURLAllowedPaths:    []string{"/var/lib/ironic"},
		AllowMD5:               true,
		PermittedFormats:       []string{"raw", "gpt", "qcow2", "iso"},
		ConvertMemoryLimitMiB:  2048,
		ConvertAttempts:        3,
		RawImageGrowthFactor:   2,
		DownloadConcurrency:    20,
		ParallelDownloads:      true,
		GlanceRetryDelay:       time.Second,
		// Upstream's default is an empty list, as the option reader gives.
		GlanceAllowedDirectURLSchemes: []string{},
		IgnoreProjectCheckForAdmin:    true,
		IsolinuxBin:                   "/usr/lib/syslinux/isolinux.bin",
		GrubConfigPath:                "EFI/BOOT/grub.cfg",
		OCISecureCDNRegistries:        []string{"registry.redhat.io", "registry.access.redhat.com", "docker.io", "registry-1.docker.io"},
		Memory:                        MemoryGuard{RequiredMiB: 1024, WaitTime: 15 * time.Second, WaitRetries: 6},
	}
}

// OptionsFromConfig reads Options from ironic.conf.
func OptionsFromConfig(c *config.Config) Options {
	o := Options{
		WebserverVerifyCA:             c.StringOf(config.DefaultWebserverVerifyCA),
		WebserverTimeout:              c.DurationOf(config.DefaultWebserverConnectionTimeout),
		WebserverTLSMinVersion:        c.StringOf(config.DefaultWebserverTLSMinimumVersion),
		ImageServerBasicAuth:          c.StringOf(config.DeployImageServerAuthStrategy) == "http_basic",
		ImageServerUser:               c.StringOf(config.DeployImageServerUser),
		ImageServerPassword:           c.StringOf(config.DeployImageServerPassword),
		FileURLAllowedPaths:           c.ListOf(config.ConductorFileURLAllowedPaths),
		AllowMD5:                      c.BoolOf(config.AgentAllowMd5Checksum),
		DisableChecksumFiles:          c.BoolOf(config.ConductorDisableSupportForChecksumFiles),
		DisableFileChecksum:           c.BoolOf(config.ConductorDisableFileChecksum),
		DisableDeepInspection:         c.BoolOf(config.ConductorDisableDeepImageInspection),
		DisableZstdDecompression:      c.BoolOf(config.ConductorDisableZstandardDecompression),
		PermittedFormats:              c.ListOf(config.ConductorPermittedImageFormats),
		ConvertMemoryLimitMiB:         c.IntOf(config.DiskUtilsImageConvertMemoryLimit),
		ConvertAttempts:               c.IntOf(config.DiskUtilsImageConvertAttempts),
		RawImageGrowthFactor:          c.FloatOf(config.DefaultRawImageGrowthFactor),
		DownloadConcurrency:           c.IntOf(config.DefaultImageDownloadConcurrency),
		ParallelDownloads:             c.BoolOf(config.DefaultParallelImageDownloads),
		GlanceNumRetries:              c.IntOf(config.GlanceNumRetries),
		GlanceAllowedDirectURLSchemes: c.ListOf(config.GlanceAllowedDirectURLSchemes),
		GlanceRetryDelay:              time.Second,
		AllowImageAccessViaAuthToken:  c.BoolOf(config.DefaultAllowImageAccessViaAuthToken),
		IsolinuxBin:                   c.StringOf(config.DefaultIsolinuxBin),
		LdlinuxC32:                    c.StringOf(config.DefaultLdlinuxC32),
		ESPImage:                      c.StringOf(config.DefaultEspImage),
		GrubConfigPath:                c.StringOf(config.DefaultGrubConfigPath),
		TempDir:                       c.StringOf(config.DefaultTempdir),
		OCIPermitHTTPFallback:         c.BoolOf(config.OciPermitFallbackToHTTPTransport),
		Memory: MemoryGuard{
			RequiredMiB: int64(c.IntOf(config.DefaultMinimumRequiredMemory)),
			WaitTime:    c.DurationOf(config.DefaultMinimumMemoryWaitTime),
			WaitRetries: c.IntOf(config.DefaultMinimumMemoryWaitRetries),
			WarningOnly: c.BoolOf(config.DefaultMinimumMemoryWarningOnly),
		},
		OCISecureCDNRegistries: c.ListOf(config.OciSecureCdnRegistries),
		OCIAuthConfig:          c.StringOf(config.OciAuthenticationConfig),
	}
	if c.HasOf(config.OciVerifyCA) {
		v := c.StringOf(config.OciVerifyCA)
		o.OCIVerifyCA = &v
	}
	o.IgnoreProjectCheckForAdmin = c.BoolOf(config.DefaultIgnoreProjectCheckForAdminTasks)
	o.IsolinuxConfigTemplate = operatorTemplate(c, config.DefaultIsolinuxConfigTemplate)
	o.GrubConfigTemplate = operatorTemplate(c, config.DefaultGrubConfigTemplate)
	return o
}

// verifyCA interprets webserver_verify_ca as oslo's bool_from_string(strict)
// does: a boolean word, otherwise a CA bundle path.
func verifyCA(v string) (verify bool, caFile string) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "t", "true", "on", "y", "yes", "":
		return true, ""
	case "0", "f", "false", "off", "n", "no":
		return false, ""
	}
	return true, v
}

// operatorTemplate is a template option naming an operator's file, "" when
// it names one of upstream's source tree ($pybasedir, which the
// configuration resolves next to our executable), whose text is built in.
func operatorTemplate(c *config.Config, k config.StringOpt) string {
	v := c.StringOf(k)
	if base := strings.TrimRight(c.StringOf(config.DefaultPybasedir), "/"); base != "" && strings.HasPrefix(v, base+"/") {
		return ""
	}
	return v
}
