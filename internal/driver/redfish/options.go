// Package redfish holds the interfaces of upstream's redfish hardware type
// (ironic/drivers/modules/redfish): power and management over the DMTF
// Redfish API, with gofish as the data model. Requests go through this
// package's own client (client.go) so that every call carries the caller's
// context, sessions are cached per BMC and re-established on a 401, and
// connection failures are retried as upstream's sushy-based code does.
package redfish

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/internal/swift"
)

// Options are the ironic.conf settings the redfish interfaces read, plus
// the clock, which tests replace.
type Options struct {
	// [redfish]
	AuthType                     string
	ConnectionAttempts           int
	ConnectionRetryInterval      time.Duration
	ConnectionCacheSize          int
	ConnectTimeout               time.Duration
	ReadTimeout                  time.Duration
	VerifyCA                     string
	TLSMinimumVersion            string
	TLSCiphers                   string
	BootModeConfigTimeout        time.Duration
	PowerOnConflictRetryAttempts int
	PowerOnConflictRetryInterval time.Duration
	PostBootRetryAttempts        int
	PostBootRetryDelay           time.Duration
	EnableVerifyBMCClock         bool
	// ServerSideRetries and ServerSideRetriesDelay are sushy's own retry
	// of GETs answered with a 5xx and of the "not ready yet" answers to
	// other methods (sushy defaults 10 and 3 s; Ironic does not change
	// them). Transport errors are not retried within a request: only
	// ConnectionAttempts, ConnectionRetryInterval apart.
	ServerSideRetries      int
	ServerSideRetriesDelay time.Duration

	// The asynchronous jobs: how often the conductor polls them
	// (raid_config_status_interval, firmware_update_status_interval) and
	// the firmware update's waits and timeouts.
	RAIDConfigStatusInterval     time.Duration
	RAIDConfigFailInterval       time.Duration
	FirmwareUpdateFailInterval   time.Duration
	FirmwareUpdateStatusInterval time.Duration
	FirmwareUpdateOverallTimeout time.Duration
	FirmwareUpdateRebootDelay    time.Duration
	// FirmwareUpdateWaitUnresponsiveBMC is [redfish]/
	// firmware_update_wait_unresponsive_bmc: the wait after an update of a
	// component of no known type before the reboot that finishes it.
	FirmwareUpdateWaitUnresponsiveBMC       time.Duration
	FirmwareUpdateBMCVersionCheckInterval   time.Duration
	FirmwareUpdateNICStartingWait           time.Duration
	FirmwareUpdateRequiredSuccesses         int
	FirmwareUpdateResourceValidationTimeout time.Duration
	FirmwareUpdateValidationInterval        time.Duration
	FirmwareSource                          string
	// FirmwareStaging is where firmware images that are not handed to the
	// BMC at their own URL are put for it.
	FirmwareStaging FirmwareStaging

	// [conductor]
	PowerStateChangeTimeout time.Duration
	SoftPowerOffTimeout     time.Duration

	// Clock is the time source of every wait in this package; nil means
	// the real clock.
	Clock clock.Clock
	// Log receives what happens below a task (sessions, retries); nil
	// means slog.Default(). Credentials are never logged.
	Log *slog.Logger
	// WrapTransport, when set, wraps the transport of every BMC
	// connection, so that each HTTP exchange (retries and session logins
	// included) can be timed for /metrics.
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// FirmwareStaging are the settings upstream's firmware_utils stages
// firmware images with: downloaded to <Image.TempDir>/<node uuid>, then
// hard-linked or copied to <HTTPRoot>/firmware/<node uuid>/ and served
// under ExternalHTTPURL (or HTTPURL) with FilePermission, or uploaded to
// SwiftContainer as <node uuid>/<file> for SwiftObjectExpiry.
type FirmwareStaging struct {
	// HTTPRoot, HTTPURL and ExternalHTTPURL are [deploy]/http_root,
	// http_url and external_http_url.
	HTTPRoot, HTTPURL, ExternalHTTPURL string
	// FilePermission is [redfish]/file_permission.
	FilePermission fs.FileMode
	// Image are the download settings: [DEFAULT]/tempdir, the webserver
	// options of HTTP downloads, [conductor]/file_url_allowed_paths.
	Image image.Options
	// Swift, SwiftContainer and SwiftObjectExpiry are the [swift] client,
	// [redfish]/swift_container and swift_object_expiry_timeout; the
	// latter is also the life of the temporary URLs of swift:// images.
	Swift             FirmwareObjectStore
	SwiftContainer    string
	SwiftObjectExpiry time.Duration
}

// FirmwareObjectStore is the part of internal/swift's Client firmware
// images are staged in: the calls images are published with, and the
// listing their clean-up searches.
type FirmwareObjectStore interface {
	ObjectStore
	ListObjects(ctx context.Context, container string) ([]string, error)
}

// firmwareStagingFromConfig takes the settings the boot interface reads
// for publishing images; the [swift] client is built whatever
// [redfish]/use_swift says, since firmware_source and swift:// URLs need
// it on their own (it authenticates on first use only).
func firmwareStagingFromConfig(c *config.Config) FirmwareStaging {
	bo := BootOptionsFromConfig(c)
	return FirmwareStaging{
		HTTPRoot: bo.HTTPRoot, HTTPURL: bo.HTTPURL, ExternalHTTPURL: bo.ExternalHTTPURL,
		FilePermission: bo.FilePermission, Image: bo.Image,
		Swift: swift.FromConfig(c), SwiftContainer: bo.SwiftContainer, SwiftObjectExpiry: bo.SwiftObjectExpiry,
	}
}

// DefaultOptions are upstream's defaults.
func DefaultOptions() Options {
	return Options{
		AuthType:                     "auto",
		ConnectionAttempts:           5,
		ConnectionRetryInterval:      4 * time.Second,
		ConnectionCacheSize:          1000,
		ConnectTimeout:               30 * time.Second,
		ReadTimeout:                  60 * time.Second,
		BootModeConfigTimeout:        900 * time.Second,
		PowerOnConflictRetryAttempts: 6,
		PowerOnConflictRetryInterval: 10 * time.Second,
		PostBootRetryAttempts:        6,
		PostBootRetryDelay:           5 * time.Second,
		ServerSideRetries:            10,
		ServerSideRetriesDelay:       3 * time.Second,
		PowerStateChangeTimeout:      60 * time.Second,
		SoftPowerOffTimeout:          600 * time.Second,

		RAIDConfigStatusInterval:                60 * time.Second,
		RAIDConfigFailInterval:                  60 * time.Second,
		FirmwareUpdateFailInterval:              60 * time.Second,
		FirmwareUpdateStatusInterval:            60 * time.Second,
		FirmwareUpdateOverallTimeout:            7200 * time.Second,
		FirmwareUpdateRebootDelay:               300 * time.Second,
		FirmwareUpdateBMCVersionCheckInterval:   30 * time.Second,
		FirmwareUpdateNICStartingWait:           30 * time.Second,
		FirmwareUpdateRequiredSuccesses:         3,
		FirmwareUpdateResourceValidationTimeout: 480 * time.Second,
		FirmwareUpdateValidationInterval:        30 * time.Second,
		FirmwareSource:                          "http",
		FirmwareStaging: FirmwareStaging{
			HTTPRoot: "/httpboot", FilePermission: 0o644, Image: defaultFirmwareImageOptions(),
			SwiftContainer: "ironic_redfish_container", SwiftObjectExpiry: 900 * time.Second,
		},
	}
}

// defaultFirmwareImageOptions are the download defaults with
// [DEFAULT]/tempdir's, the system's temporary directory.
func defaultFirmwareImageOptions() image.Options {
	o := image.DefaultOptions()
	o.TempDir = os.TempDir()
	return o
}

// OptionsFromConfig reads [redfish] and [conductor] options.
func OptionsFromConfig(c *config.Config) Options {
	o := DefaultOptions()
	o.AuthType = c.StringOf(config.RedfishAuthType)
	o.ConnectionAttempts = c.IntOf(config.RedfishConnectionAttempts)
	o.ConnectionRetryInterval = c.DurationOf(config.RedfishConnectionRetryInterval)
	o.ConnectionCacheSize = c.IntOf(config.RedfishConnectionCacheSize)
	o.ConnectTimeout = c.DurationOf(config.RedfishConnectTimeout)
	o.ReadTimeout = c.DurationOf(config.RedfishReadTimeout)
	o.VerifyCA = c.StringOf(config.RedfishVerifyCA)
	o.TLSMinimumVersion = c.StringOf(config.RedfishTLSMinimumVersion)
	o.TLSCiphers = c.StringOf(config.RedfishTLSCiphers)
	o.BootModeConfigTimeout = c.DurationOf(config.RedfishBootModeConfigTimeout)
	o.PowerOnConflictRetryAttempts = c.IntOf(config.RedfishPowerOnConflictRetryAttempts)
	o.PowerOnConflictRetryInterval = c.DurationOf(config.RedfishPowerOnConflictRetryInterval)
	o.PostBootRetryAttempts = c.IntOf(config.RedfishPostBootRetryAttempts)
	o.PostBootRetryDelay = c.DurationOf(config.RedfishPostBootRetryDelay)
	o.EnableVerifyBMCClock = c.BoolOf(config.RedfishEnableVerifyBmcClock)
	o.PowerStateChangeTimeout = c.DurationOf(config.ConductorPowerStateChangeTimeout)
	o.SoftPowerOffTimeout = c.DurationOf(config.ConductorSoftPowerOffTimeout)
	o.RAIDConfigStatusInterval = c.DurationOf(config.RedfishRAIDConfigStatusInterval)
	o.RAIDConfigFailInterval = c.DurationOf(config.RedfishRAIDConfigFailInterval)
	o.FirmwareUpdateFailInterval = c.DurationOf(config.RedfishFirmwareUpdateFailInterval)
	o.FirmwareUpdateStatusInterval = c.DurationOf(config.RedfishFirmwareUpdateStatusInterval)
	o.FirmwareUpdateOverallTimeout = c.DurationOf(config.RedfishFirmwareUpdateOverallTimeout)
	o.FirmwareUpdateRebootDelay = c.DurationOf(config.RedfishFirmwareUpdateRebootDelay)
	o.FirmwareUpdateWaitUnresponsiveBMC = c.DurationOf(config.RedfishFirmwareUpdateWaitUnresponsiveBmc)
	o.FirmwareUpdateBMCVersionCheckInterval = c.DurationOf(config.RedfishFirmwareUpdateBmcVersionCheckInterval)
	o.FirmwareUpdateNICStartingWait = c.DurationOf(config.RedfishFirmwareUpdateNicStartingWait)
	o.FirmwareUpdateRequiredSuccesses = c.IntOf(config.RedfishFirmwareUpdateRequiredSuccesses)
	o.FirmwareUpdateResourceValidationTimeout = c.DurationOf(config.RedfishFirmwareUpdateResourceValidationTimeout)
	o.FirmwareUpdateValidationInterval = c.DurationOf(config.RedfishFirmwareUpdateValidationInterval)
	o.FirmwareSource = c.StringOf(config.RedfishFirmwareSource)
	o.FirmwareStaging = firmwareStagingFromConfig(c)
	return o
}

func (o *Options) clock() clock.Clock {
	if o.Clock == nil {
		return clock.Real{}
	}
	return o.Clock
}
