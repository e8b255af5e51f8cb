package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/openkeel/ironic/internal/clock"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// KeystoneConfig is the [keystone_authtoken] section as auth_token and its
// keystoneauth password plugin read it.
type KeystoneConfig struct {
	// AuthURL is the identity endpoint for the service's own password
	// authentication (with or without its /v3 suffix).
	AuthURL string
	// WWWAuthenticateURI goes into the 401's WWW-Authenticate header;
	// AuthURL when empty, as auth_token falls back to the plugin's.
	WWWAuthenticateURI string

	Username          string
	UserID            string
	Password          string
	UserDomainName    string
	UserDomainID      string
	ProjectName       string
	ProjectID         string
	ProjectDomainName string
	ProjectDomainID   string
	// DomainID and DomainName scope the service's own token to a domain,
	// SystemScope ("all") to the system; at most one of project, domain
	// and system may be given, as keystoneauth requires.
	DomainID    string
	DomainName  string
	SystemScope string
	// PluginSection is the section the credentials above were read from:
	// [keystone_authtoken]/auth_section, or keystone_authtoken itself.
	PluginSection string

	// ServiceType is this service's type in the catalog. Tokens of
	// application credentials with access rules are accepted only for
	// requests a rule of this service type allows; without it they are
	// refused.
	ServiceType string

	// Interface and RegionName choose the identity endpoint of the
	// service token's catalog used for validation (AuthURL if none).
	Interface  string
	RegionName string

	// TokenCacheTime is how long a validated token is trusted without
	// asking Keystone again (token_cache_time, default 300 s; negative
	// disables the cache, as -1 does for auth_token).
	TokenCacheTime time.Duration
	// CacheSize bounds the number of cached tokens (default 10000).
	CacheSize int
	// IncludeServiceCatalog asks for and keeps the token's catalog.
	IncludeServiceCatalog bool
	// ServiceTokenRoles and ServiceTokenRolesRequired decide whether an
	// X-Service-Token is a valid service token.
	ServiceTokenRoles         []string
	ServiceTokenRolesRequired bool

	// ConnectRetries is http_request_max_retries: how many times a call
	// to Keystone that could not connect is tried again (keystoneauth's
	// connect_retries, 0.5 s apart doubling, as auth_token's adapter).
	ConnectRetries int

	// Client makes the calls to Keystone (default: one honouring the
	// TLS options with a 30 s timeout).
	Client *http.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// serviceTokenMinLife is keystoneauth's MIN_TOKEN_LIFE_SECONDS: the
// service's own token is renewed this long before it expires.
const serviceTokenMinLife = 120 * time.Second

const defaultCacheSize = 10000

// Keystone is auth_strategy = keystone: keystonemiddleware's auth_token
// without delay_auth_decision. The caller's X-Auth-Token (and an optional
// X-Service-Token) is validated with GET /v3/auth/tokens, authorised by the
// service's own token obtained by password authentication.
type Keystone struct {
	cfg    KeystoneConfig
	client *http.Client
	now    func() time.Time
	cache  *tokenCache

	mu         sync.Mutex
	svcToken   string
	svcExpires time.Time
	svcCatalog []CatalogService
}

// NewKeystone checks the configuration and returns the authenticator. No
// call to Keystone is made before the first request.
func NewKeystone(cfg KeystoneConfig) (*Keystone, error) {
	if cfg.PluginSection == "" {
		cfg.PluginSection = "keystone_authtoken"
	}
	if cfg.AuthURL == "" {
		return nil, fmt.Errorf("[%s]/auth_url is required for auth_strategy = keystone", cfg.PluginSection)
	}
	if cfg.Username == "" && cfg.UserID == "" {
		return nil, fmt.Errorf("[%s]/username is required for auth_strategy = keystone", cfg.PluginSection)
	}
	if cfg.WWWAuthenticateURI == "" {
		slog.Warn("configuring [keystone_authtoken]/www_authenticate_uri to point to the public identity endpoint is required; clients may not be able to authenticate against an admin endpoint")
		cfg.WWWAuthenticateURI = cfg.AuthURL
	}
	if cfg.Interface == "" {
		cfg.Interface = "internal"
	}
	if cfg.TokenCacheTime == 0 {
		cfg.TokenCacheTime = 300 * time.Second
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = defaultCacheSize
	}
	k := &Keystone{cfg: cfg, client: cfg.Client, now: cfg.Now}
	if k.client == nil {
		k.client = &http.Client{Timeout: 30 * time.Second}
	}
	if k.now == nil {
		k.now = time.Now
	}
	k.cache = newTokenCache(cfg.CacheSize)
	return k, nil
}

// TLSClient returns an HTTP client for Keystone honouring cafile, certfile,
// keyfile and insecure, with timeout as http_connect_timeout (0: 30 s).
func TLSClient(cafile, certfile, keyfile string, insecure bool, timeout time.Duration) (*http.Client, error) {
	tc := &tls.Config{InsecureSkipVerify: insecure, MinVersion: tls.VersionTLS12} //nolint:gosec // insecure is the operator's explicit choice
	if cafile != "" {
		pem, err := os.ReadFile(cafile)
		if err != nil {
			return nil, fmt.Errorf("read [keystone_authtoken]/cafile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("[keystone_authtoken]/cafile %s holds no PEM certificate", cafile)
		}
		tc.RootCAs = pool
	}
	if certfile != "" {
		cert, err := tls.LoadX509KeyPair(certfile, keyfile)
		if err != nil {
			return nil, fmt.Errorf("load [keystone_authtoken]/certfile: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	tr.DialContext = (&net.Dialer{Timeout: timeout}).DialContext
	return &http.Client{Transport: tr, Timeout: timeout}, nil
}

// errInvalidToken is auth_token's InvalidToken: the answer is 401.
var errInvalidToken = errors.New("token authorization failed")

// serviceError is auth_token's ServiceError or a connection failure: the
// answer is 503.
type serviceError struct{ err error }

func (e *serviceError) Error() string { return "unable to validate token: " + e.err.Error() }
func (e *serviceError) Unwrap() error { return e.err }

// Authenticate validates the request's tokens.
func (k *Keystone) Authenticate(r *http.Request) (*Context, error) {
	ctx := r.Context()
	var svc *tokenData
	serviceValid, allowExpired := true, false
	if st := r.Header.Get("X-Service-Token"); st != "" {
		d, err := k.fetch(ctx, strings.TrimSpace(st), false)
		switch {
		case err == nil && !d.expired(k.now()):
			roleOK := len(intersect(k.cfg.ServiceTokenRoles, d.roleNames())) > 0
			serviceValid = roleOK || !k.cfg.ServiceTokenRolesRequired
			allowExpired = roleOK
			if serviceValid {
				svc = d
			}
		case err == nil || errors.Is(err, errInvalidToken):
			slog.Info("invalid service token")
			serviceValid = false
		default:
			return nil, k.failure(err)
		}
	}
	raw := r.Header.Get("X-Auth-Token")
	if raw == "" {
		raw = r.Header.Get("X-Storage-Token")
	}
	if raw == "" || !serviceValid {
		slog.Info("rejecting request")
		return nil, keystoneUnauthorized(k.cfg.WWWAuthenticateURI, errInvalidToken)
	}
	d, err := k.fetch(ctx, strings.TrimSpace(raw), allowExpired)
	if err != nil {
		return nil, k.failure(err)
	}
	if !allowExpired && d.expired(k.now()) {
		slog.Info("invalid user token: expired")
		return nil, keystoneUnauthorized(k.cfg.WWWAuthenticateURI, errInvalidToken)
	}
	if !k.allowedRequest(r, d) {
		return nil, keystoneUnauthorized(k.cfg.WWWAuthenticateURI, errInvalidToken)
	}
	c := d.context()
	c.Strategy = StrategyKeystone
	c.AuthToken = raw
	if !k.cfg.IncludeServiceCatalog {
		c.ServiceCatalog = nil
	}
	if svc != nil {
		c.ServiceToken = r.Header.Get("X-Service-Token")
		s := svc.context()
		c.ServiceUserID, c.ServiceUserName = s.UserID, s.UserName
		c.ServiceUserDomainID, c.ServiceUserDomainName = s.UserDomainID, s.UserDomainName
		c.ServiceProjectID, c.ServiceProjectName = s.ProjectID, s.ProjectName
		c.ServiceProjectDomainID, c.ServiceProjectDomainName = s.ProjectDomainID, s.ProjectDomainName
		c.ServiceRoles = s.Roles
		// auth_token writes OpenStack-System-Scope for the service token
		// after the user's, so the service token's scope wins.
		c.SystemScope = s.SystemScope
	}
	return c, nil
}

func (k *Keystone) failure(err error) error {
	if errors.Is(err, errInvalidToken) {
		slog.Warn("authorization failed for token")
		return keystoneUnauthorized(k.cfg.WWWAuthenticateURI, err)
	}
	slog.Error("unable to validate token", "error", err)
	return keystoneUnavailable(err)
}

// fetch returns the token's data from the cache or from Keystone.
func (k *Keystone) fetch(ctx context.Context, token string, allowExpired bool) (*tokenData, error) {
	key := sha256.Sum256([]byte(token))
	if d, ok := k.cache.get(key, k.now()); ok {
		return d, nil
	}
	d, err := k.verify(ctx, token, allowExpired, true)
	if err != nil {
		return nil, err
	}
	if k.cfg.TokenCacheTime > 0 {
		k.cache.put(key, d, k.now().Add(k.cfg.TokenCacheTime))
	}
	return d, nil
}

// verify asks Keystone. A 401 means our own token was refused: it is
// renewed and the call retried once, as keystoneauth's session and
// auth_token's verify_token do.
func (k *Keystone) verify(ctx context.Context, token string, allowExpired, retry bool) (*tokenData, error) {
	svcToken, endpoint, err := k.serviceToken(ctx)
	if err != nil {
		return nil, err
	}
	u := endpoint + "/auth/tokens"
	var q []string
	if !k.cfg.IncludeServiceCatalog {
		q = append(q, "nocatalog")
	}
	if allowExpired {
		q = append(q, "allow_expired=1")
	}
	if len(q) > 0 {
		u += "?" + strings.Join(q, "&")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, &serviceError{fmt.Errorf("build validation request: %w", err)}
	}
	req.Header.Set("X-Auth-Token", svcToken)
	req.Header.Set("X-Subject-Token", token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("OpenStack-Identity-Access-Rules", "1.0")
	resp, err := k.do(req)
	if err != nil {
		return nil, &serviceError{fmt.Errorf("GET %s: %w", endpoint+"/auth/tokens", err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, &serviceError{fmt.Errorf("read token validation: %w", err)}
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		d, err := parseTokenData(body)
		if err != nil {
			slog.Warn("invalid token contents", "error", err)
			return nil, errInvalidToken
		}
		return d, nil
	case resp.StatusCode == http.StatusNotFound:
		slog.Info("authorization failed for token")
		return nil, errInvalidToken
	case resp.StatusCode == http.StatusUnauthorized:
		slog.Info("identity server rejected authorization")
		k.invalidateServiceToken(svcToken)
		if retry {
			return k.verify(ctx, token, allowExpired, false)
		}
		return nil, &serviceError{errors.New("identity server rejected authorization necessary to fetch token data")}
	default:
		return nil, &serviceError{fmt.Errorf("bad response code while validating token: %d", resp.StatusCode)}
	}
}

// ServiceTokenValid reports whether the service's own token is held and
// not due for renewal (for tests and health reporting).
func (k *Keystone) ServiceTokenValid() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.svcToken != "" && k.now().Add(serviceTokenMinLife).Before(k.svcExpires)
}

func (k *Keystone) invalidateServiceToken(tok string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.svcToken == tok {
		k.svcToken = ""
	}
}

// serviceToken returns the service's own token and the identity endpoint
// (…/v3) to validate against, authenticating when there is no token or it
// expires within serviceTokenMinLife.
func (k *Keystone) serviceToken(ctx context.Context) (string, string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.svcToken == "" || !k.now().Add(serviceTokenMinLife).Before(k.svcExpires) {
		tok, d, err := k.passwordAuth(ctx)
		if err != nil {
			return "", "", err
		}
		k.svcToken, k.svcExpires, k.svcCatalog = tok, d.expiresAt, d.Token.Catalog
	}
	return k.svcToken, k.identityEndpoint(), nil
}

func (k *Keystone) identityEndpoint() string {
	for _, s := range k.svcCatalog {
		if s.Type != "identity" {
			continue
		}
		for _, e := range s.Endpoints {
			if strings.TrimSuffix(e.Interface, "URL") != k.cfg.Interface {
				continue
			}
			if k.cfg.RegionName != "" && e.Region != k.cfg.RegionName && e.RegionID != k.cfg.RegionName {
				continue
			}
			return v3URL(e.URL)
		}
	}
	return v3URL(k.cfg.AuthURL)
}

// v3URL points an identity URL at its v3 API: keystoneauth discovers the
// version; Keystone serves it under /v3 of the unversioned endpoint.
func v3URL(u string) string {
	u = strings.TrimRight(u, "/")
	if strings.HasSuffix(u, "/v3") {
		return u
	}
	return u + "/v3"
}

type authRequest struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password struct {
				User map[string]any `json:"user"`
			} `json:"password"`
		} `json:"identity"`
		Scope map[string]any `json:"scope,omitempty"`
	} `json:"auth"`
}

func (k *Keystone) passwordAuth(ctx context.Context) (string, *tokenData, error) {
	var ar authRequest
	ar.Auth.Identity.Methods = []string{"password"}
	user := map[string]any{"password": k.cfg.Password}
	if k.cfg.UserID != "" {
		user["id"] = k.cfg.UserID
	} else {
		user["name"] = k.cfg.Username
		user["domain"] = domainRef(k.cfg.UserDomainID, k.cfg.UserDomainName)
	}
	ar.Auth.Identity.Password.User = user
	// keystoneauth counts every target given, even a system scope other
	// than "all", which it then leaves out of the request.
	targets := 0
	switch {
	case k.cfg.ProjectID != "":
		ar.Auth.Scope = map[string]any{"project": map[string]any{"id": k.cfg.ProjectID}}
		targets++
	case k.cfg.ProjectName != "":
		ar.Auth.Scope = map[string]any{"project": map[string]any{
			"name": k.cfg.ProjectName, "domain": domainRef(k.cfg.ProjectDomainID, k.cfg.ProjectDomainName)}}
		targets++
	}
	if k.cfg.DomainID != "" || k.cfg.DomainName != "" {
		ar.Auth.Scope = map[string]any{"domain": domainRef(k.cfg.DomainID, k.cfg.DomainName)}
		targets++
	}
	if k.cfg.SystemScope != "" {
		if k.cfg.SystemScope == "all" {
			ar.Auth.Scope = map[string]any{"system": map[string]any{"all": true}}
		}
		targets++
	}
	if targets > 1 {
		return "", nil, &serviceError{errors.New("Authentication cannot be scoped to multiple targets. Pick one of: project, domain, trust, system or unscoped")}
	}
	body, err := json.Marshal(ar)
	if err != nil {
		return "", nil, &serviceError{fmt.Errorf("encode password authentication: %w", err)}
	}
	u := v3URL(k.cfg.AuthURL) + "/auth/tokens"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return "", nil, &serviceError{fmt.Errorf("build password authentication: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := k.do(req)
	if err != nil {
		return "", nil, &serviceError{fmt.Errorf("POST %s: %w", u, err)}
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return "", nil, &serviceError{fmt.Errorf("read password authentication: %w", err)}
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return "", nil, &serviceError{fmt.Errorf("password authentication as %q: %s", k.cfg.Username, resp.Status)}
	}
	tok := resp.Header.Get("X-Subject-Token")
	if tok == "" {
		return "", nil, &serviceError{errors.New("password authentication: no X-Subject-Token in the answer")}
	}
	d, err := parseTokenData(rb)
	if err != nil {
		return "", nil, &serviceError{fmt.Errorf("password authentication: %w", err)}
	}
	return tok, d, nil
}

func domainRef(id, name string) map[string]any {
	if id != "" {
		return map[string]any{"id": id}
	}
	if name == "" {
		name = "Default"
	}
	return map[string]any{"name": name}
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// connectRetryDelay is keystoneauth's first delay between connection
// retries; it doubles each time.
const connectRetryDelay = 500 * time.Millisecond

// do sends req, trying again ConnectRetries times while Keystone cannot be
// connected to; an answer, whatever its status, is not retried.
func (k *Keystone) do(req *http.Request) (*http.Response, error) {
	delay := connectRetryDelay
	for attempt := 0; ; attempt++ {
		resp, err := k.client.Do(req)
		var op *net.OpError
		if err == nil || attempt >= k.cfg.ConnectRetries || !errors.As(err, &op) || op.Op != "dial" {
			return resp, err
		}
		slog.Warn("failure connecting to the identity server, retrying", "error", err, "delay", delay)
		if serr := clock.Sleep(req.Context(), delay); serr != nil {
			return nil, err
		}
		delay *= 2
		if req.GetBody != nil {
			body, berr := req.GetBody()
			if berr != nil {
				return nil, berr
			}
			req.Body = body
		}
	}
}
