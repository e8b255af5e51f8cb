package anaconda

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/keystoneauth"
)

// BootOptions configure the boot interfaces' kickstart boot: the
// [anaconda] options and how the installer reaches the API.
type BootOptions struct {
	// DefaultKSTemplate is [anaconda]/default_ks_template when it names
	// an operator's file; "" for upstream's default, whose counterpart is
	// embedded here.
	DefaultKSTemplate string
	// NoDefaultKSTemplate: the option is set empty, which upstream's
	// validation refuses for the kickstart boot.
	NoDefaultKSTemplate bool
	// InsecureHeartbeat is [anaconda]/insecure_heartbeat.
	InsecureHeartbeat bool
	// APIURL answers the Ironic API URL the installer heartbeats to
	// (upstream get_ironic_api_url).
	APIURL func(ctx context.Context) (string, error)
	// HTTPClient downloads a configuration drive given as a URL.
	HTTPClient *http.Client
}

// BootOptionsFromConfig reads [anaconda] and finds the API through
// [service_catalog].
func BootOptionsFromConfig(c *config.Config) BootOptions {
	tmpl := c.StringOf(config.AnacondaDefaultKsTemplate)
	o := BootOptions{
		DefaultKSTemplate:   tmpl,
		NoDefaultKSTemplate: tmpl == "",
		InsecureHeartbeat:   c.BoolOf(config.AnacondaInsecureHeartbeat),
		HTTPClient:          &http.Client{Timeout: time.Duration(c.IntOf(config.DefaultWebserverConnectionTimeout)) * time.Second},
	}
	// The configuration resolves $pybasedir next to our executable,
	// where upstream's template is not: ours stands for it.
	if base := c.StringOf(config.DefaultPybasedir); base != "" && strings.HasPrefix(tmpl, strings.TrimRight(base, "/")+"/") {
		o.DefaultKSTemplate = ""
	}
	// With an endpoint override the catalog is not consulted, so no
	// credentials are needed (keystoneauth's adapter answers the override
	// before it authenticates).
	if u := c.StringOf(config.ServiceCatalogEndpointOverride); u != "" {
		o.APIURL = func(context.Context) (string, error) { return strings.TrimRight(u, "/"), nil }
		return o
	}
	sess := keystoneauth.New(keystoneauth.OptionsFromConfig(c, "service_catalog"))
	o.APIURL = func(ctx context.Context) (string, error) { return keystoneauth.IronicAPIURL(ctx, sess) }
	return o
}
