package auth

import (
	"fmt"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/keystoneauth"
)

// New returns the API's authenticator for [DEFAULT]/auth_strategy. Errors
// (an unreadable user file, missing Keystone settings) are start-up errors.
func New(c *config.Config) (Authenticator, error) {
	return build(c, c.StringOf(config.DefaultAuthStrategy), c.StringOf(config.DefaultHTTPBasicAuthUserFile))
}

// NewJSONRPC returns the authenticator of the JSON-RPC server in section
// group ("json_rpc"): its own auth_strategy, falling back to
// [DEFAULT]/auth_strategy, and its own http_basic_auth_user_file.
func NewJSONRPC(c *config.Config, group string) (Authenticator, error) {
	strategy := c.String(group, "auth_strategy")
	if strategy == "" {
		strategy = c.StringOf(config.DefaultAuthStrategy)
	}
	return build(c, strategy, c.String(group, "http_basic_auth_user_file"))
}

func build(c *config.Config, strategy, userFile string) (Authenticator, error) {
	switch strategy {
	case StrategyNoAuth:
		return NoAuth{}, nil
	case StrategyHTTPBasic:
		return NewBasicAuth(userFile)
	case StrategyKeystone:
		kc, err := KeystoneConfigFrom(c)
		if err != nil {
			return nil, err
		}
		return NewKeystone(kc)
	default:
		return nil, fmt.Errorf("unknown auth_strategy %q", strategy)
	}
}

// KeystoneConfigFrom reads [keystone_authtoken]. The service's own
// credentials (auth_type, auth_url, username, password, their scope …)
// come from the section [keystone_authtoken]/auth_section names when it
// is set, as auth_token loads its keystoneauth plugin there; TLS, the
// cache and the validator's own options stay in [keystone_authtoken].
func KeystoneConfigFrom(c *config.Config) (KeystoneConfig, error) {
	const s = "keystone_authtoken"
	plug := keystoneauth.SessionOptionsFromConfig(c, s)
	section := s
	if a := c.StringOf(config.KeystoneAuthtokenAuthSection); a != "" {
		section = a
	}
	if t := plug.AuthType; t != "password" && t != "v3password" {
		return KeystoneConfig{}, fmt.Errorf("[%s]/auth_type %q is not supported (password only)", section, t)
	}
	client, err := TLSClient(c.String(s, "cafile"), c.String(s, "certfile"), c.String(s, "keyfile"),
		c.Bool(s, "insecure"), time.Duration(c.Int(s, "http_connect_timeout"))*time.Second)
	if err != nil {
		return KeystoneConfig{}, err
	}
	return KeystoneConfig{
		AuthURL:                   plug.AuthURL,
		WWWAuthenticateURI:        c.String(s, "www_authenticate_uri"),
		Username:                  plug.Username,
		UserID:                    plug.UserID,
		Password:                  plug.Password,
		UserDomainName:            plug.UserDomainName,
		UserDomainID:              plug.UserDomainID,
		ProjectName:               plug.ProjectName,
		ProjectID:                 plug.ProjectID,
		ProjectDomainName:         plug.ProjectDomainName,
		ProjectDomainID:           plug.ProjectDomainID,
		DomainID:                  plug.DomainID,
		DomainName:                plug.DomainName,
		SystemScope:               plug.SystemScope,
		PluginSection:             section,
		ServiceType:               c.StringOf(config.KeystoneAuthtokenServiceType),
		Interface:                 c.String(s, "interface"),
		RegionName:                c.String(s, "region_name"),
		TokenCacheTime:            c.Duration(s, "token_cache_time"),
		IncludeServiceCatalog:     c.Bool(s, "include_service_catalog"),
		ServiceTokenRoles:         c.List(s, "service_token_roles"),
		ServiceTokenRolesRequired: c.Bool(s, "service_token_roles_required"),
		ConnectRetries:            c.IntOf(config.KeystoneAuthtokenHTTPRequestMaxRetries),
		Client:                    client,
	}, nil
}
