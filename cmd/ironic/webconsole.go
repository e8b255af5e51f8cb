package main

import (
	"fmt"
	"net/http"

	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/authz"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/webconsole"
)

// webConsole is the built-in console (/openkeel/console/) and its fleet
// counts, with the API's authentication and node list policy.
func (s *stack) webConsole(authn auth.Authenticator, az *authz.Authz) (*webconsole.Handler, error) {
	o := webconsole.Options{
		AuthStrategy: s.cfg.StringOf(config.DefaultAuthStrategy),
		Authenticate: authn,
		Fleet: &webconsole.Fleet{Nodes: s.store, Log: s.log,
			ListProject: func(r *http.Request) (*string, error) { return az.ListProject(r, "node") }},
	}
	if o.AuthStrategy == auth.StrategyKeystone {
		kc, err := auth.KeystoneConfigFrom(s.cfg)
		if err != nil {
			return nil, fmt.Errorf("console login: %w", err)
		}
		// The public identity endpoint is where users log in; auth_url
		// may be an internal one the API reaches but users do not.
		identity := kc.WWWAuthenticateURI
		if identity == "" {
			identity = kc.AuthURL
		}
		if identity != "" {
			o.Login = &webconsole.Login{IdentityURL: identity, Client: kc.Client, Log: s.log}
		}
	}
	return webconsole.New(o)
}
