// Package keystoneauth is what keystoneauth1 gives Ironic's client
// sections ([neutron], [glance], [cinder], [nova], [service_catalog],
// [swift]): an auth plugin (password, v3password or none) loaded from the
// section, a session that authenticates with POST /v3/auth/tokens, keeps
// the token until shortly before it expires and renews it once when a
// service answers 401, and an adapter that finds the service's endpoint in
// the token's catalog (or takes endpoint_override).
package keystoneauth

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/openkeel/ironic/internal/config"
)

// Options are one section's auth, session and adapter options.
type Options struct {
	// Section names the configuration section, for messages.
	Section string

	// AuthType is the plugin: "password" (keystoneauth's generic one,
	// Ironic's default), "v3password", "token", "v3token", "http_basic"
	// or "none".
	AuthType string
	AuthURL  string
	// Token is the token plugins' token, exchanged for a scoped one.
	Token string `json:"-"`
	// Endpoint is the fixed endpoint of the none and http_basic plugins.
	Endpoint string

	Username, UserID                   string
	Password                           string `json:"-"`
	UserDomainName, UserDomainID       string
	ProjectName, ProjectID             string
	ProjectDomainName, ProjectDomainID string
	// DefaultDomainID and DefaultDomainName stand in for the user's and
	// the project's domain when those are not given (generic plugin only).
	DefaultDomainID, DefaultDomainName string
	// DomainID and DomainName ask for a domain-scoped token.
	DomainID, DomainName string
	// SystemScope "all" asks for a system-scoped token.
	SystemScope string
	TrustID     string

	// Session options.
	CAFile, CertFile, KeyFile string
	Insecure                  bool
	// Timeout bounds each call; 0 is none, as keystoneauth.
	Timeout time.Duration

	// Adapter options.
	ServiceType, ServiceName, RegionName string
	// ValidInterfaces lists the catalog interfaces to use, by preference.
	ValidInterfaces []string
	// Interface is the deprecated single-interface option; keystoneauth
	// refuses it together with ValidInterfaces.
	Interface        string
	EndpointOverride string
	// ConnectRetries retries connection failures; ConnectRetryDelay is the
	// wait between them (0: keystoneauth's backoff from 0.5 s, doubling).
	ConnectRetries    int
	ConnectRetryDelay time.Duration
	// StatusCodeRetries retries answers 503 as keystoneauth's retriable
	// status codes; StatusCodeRetryDelay as ConnectRetryDelay.
	StatusCodeRetries    int
	StatusCodeRetryDelay time.Duration
}

// SessionOptionsFromConfig reads section's authentication plugin, TLS
// and timeout options: what a session needs to obtain a token. When
// [section]/auth_section names another section, the plugin options come
// from there, as keystoneauth loads them. Callers that never look a
// service up in the catalog (the JSON-RPC client builds each URL from a
// conductor's host) use this alone, so that the adapter options stay
// unread rather than read to no effect.
func SessionOptionsFromConfig(c *config.Config, section string) Options {
	plug := section
	if s := str(c, section, "auth_section"); s != "" {
		plug = s
	}
	o := Options{
		Section:           section,
		AuthType:          str(c, plug, "auth_type"),
		AuthURL:           str(c, plug, "auth_url"),
		Username:          str(c, plug, "username"),
		UserID:            str(c, plug, "user_id"),
		Password:          str(c, plug, "password"),
		Token:             str(c, plug, "token"),
		Endpoint:          str(c, plug, "endpoint"),
		UserDomainName:    str(c, plug, "user_domain_name"),
		UserDomainID:      str(c, plug, "user_domain_id"),
		ProjectName:       str(c, plug, "project_name"),
		ProjectID:         str(c, plug, "project_id"),
		ProjectDomainName: str(c, plug, "project_domain_name"),
		ProjectDomainID:   str(c, plug, "project_domain_id"),
		DefaultDomainID:   str(c, plug, "default_domain_id"),
		DefaultDomainName: str(c, plug, "default_domain_name"),
		DomainID:          str(c, plug, "domain_id"),
		DomainName:        str(c, plug, "domain_name"),
		SystemScope:       str(c, plug, "system_scope"),
		TrustID:           str(c, plug, "trust_id"),

		CAFile:   str(c, section, "cafile"),
		CertFile: str(c, section, "certfile"),
		KeyFile:  str(c, section, "keyfile"),
		Insecure: has(c, section, "insecure") && c.Bool(section, "insecure"),
		Timeout:  time.Duration(integer(c, section, "timeout")) * time.Second,
	}
	if o.AuthType == "" {
		// Ironic's register_auth_opts sets this default in every section.
		o.AuthType = "password"
	}
	return o
}

// OptionsFromConfig reads section: the session's options and the
// keystoneauth adapter options that find the service's endpoint.
func OptionsFromConfig(c *config.Config, section string) Options {
	o := SessionOptionsFromConfig(c, section)
	o.ServiceType = str(c, section, "service_type")
	o.ServiceName = str(c, section, "service_name")
	o.RegionName = str(c, section, "region_name")
	o.Interface = str(c, section, "interface")
	o.EndpointOverride = str(c, section, "endpoint_override")
	o.ConnectRetries = integer(c, section, "connect_retries")
	o.ConnectRetryDelay = seconds(c, section, "connect_retry_delay")
	o.StatusCodeRetries = integer(c, section, "status_code_retries")
	o.StatusCodeRetryDelay = seconds(c, section, "status_code_retry_delay")
	if has(c, section, "valid_interfaces") {
		o.ValidInterfaces = c.List(section, "valid_interfaces")
	}
	return o
}

// has tells whether section/name is an option this build knows and has a
// value; auth_section may name a section without every plugin option.
func has(c *config.Config, section, name string) bool {
	if _, ok := config.Lookup(section, name); !ok {
		return false
	}
	return c.Has(section, name)
}

func str(c *config.Config, section, name string) string {
	if !has(c, section, name) {
		return ""
	}
	return c.String(section, name)
}

func integer(c *config.Config, section, name string) int {
	if !has(c, section, name) {
		return 0
	}
	return c.Int(section, name)
}

func seconds(c *config.Config, section, name string) time.Duration {
	if !has(c, section, name) {
		return 0
	}
	return time.Duration(c.Float(section, name) * float64(time.Second))
}

// LogValue logs the options as String does, without secrets, whatever
// the handler.
func (o Options) LogValue() slog.Value { return slog.StringValue(o.String()) }

// String describes the options without secrets, for logs.
func (o Options) String() string {
	pw := ""
	if o.Password != "" || o.Token != "" {
		pw = "***"
	}
	return fmt.Sprintf("[%s] auth_type=%s auth_url=%s username=%s user_id=%s password=%s project_name=%s project_id=%s service_type=%s interfaces=%v region=%s endpoint_override=%s",
		o.Section, o.AuthType, o.AuthURL, o.Username, o.UserID, pw, o.ProjectName, o.ProjectID, o.ServiceType, o.ValidInterfaces, o.RegionName, o.EndpointOverride)
}

// ServiceCatalogOptions is [service_catalog] as upstream's
// get_ironic_api_url loads it: without Keystone authentication
// (auth_strategy other than keystone) the plugin is forced to none.
func ServiceCatalogOptions(c *config.Config) Options {
	o := OptionsFromConfig(c, "service_catalog")
	if c.StringOf(config.DefaultAuthStrategy) != "keystone" {
		o.AuthType = "none"
	}
	return o
}
