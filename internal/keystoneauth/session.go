package keystoneauth

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/errs"
)

// minTokenLife is keystoneauth's MIN_TOKEN_LIFE_SECONDS: a token expiring
// sooner than this is renewed before use.
const minTokenLife = 120 * time.Second

// Session authenticates with one section's credentials and finds that
// section's service. It is safe for concurrent use. Configuration errors
// surface on first use, as upstream loads the plugin lazily, so a section
// nobody uses cannot stop the service from starting.
type Session struct {
	opts   Options
	err    error
	base   http.RoundTripper
	client *http.Client
	now    func() time.Time
	sleep  func(ctx context.Context, d time.Duration) error
	// globalID is the caller's global request id, sent to the service as
	// X-OpenStack-Request-ID (openstacksdk's global_request).
	globalID func(ctx context.Context) string

	mu        sync.Mutex
	issued    []string // the latest tokens of this session, newest last
	token     string
	expires   time.Time
	projectID string
	catalog   []catalogService
}

type catalogService struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Endpoints []struct {
		Interface string `json:"interface"`
		Region    string `json:"region"`
		RegionID  string `json:"region_id"`
		URL       string `json:"url"`
	} `json:"endpoints"`
}

// New returns the session for o; nothing is sent before the first call.
func New(o Options) *Session {
	s := &Session{opts: o, now: time.Now, sleep: clock.Sleep, base: http.DefaultTransport}
	s.err = o.check()
	if s.err == nil {
		if tr, err := o.transport(); err != nil {
			s.err = err
		} else {
			s.base = tr
		}
	}
	s.client = &http.Client{Transport: &transport{s: s, base: s.base}, Timeout: o.Timeout}
	return s
}

// SetGlobalRequestID sets where the caller's global request id comes
// from; calls made while handling a request then carry it to the service
// so their logs can be joined up.
func (s *Session) SetGlobalRequestID(id func(ctx context.Context) string) { s.globalID = id }

// SetClock replaces the clock used to decide when the token is due for
// renewal (tests share the identity fixture's).
func (s *Session) SetClock(now func() time.Time) { s.now = now }

// check is keystoneauth's loading: a known plugin with its required
// options, and a consistent adapter.
func (o Options) check() error {
	switch o.AuthType {
	case "password", "v3password", "token", "v3token":
		if o.AuthURL == "" {
			return errs.New(errs.ClassConfigInvalid, map[string]any{"error_msg": "Auth plugin requires parameters which were not given: auth_url"})
		}
	case "none", "http_basic":
	default:
		return errs.New(errs.ClassConfigInvalid, map[string]any{"error_msg": fmt.Sprintf("The plugin %s could not be found", o.AuthType)})
	}
	if len(o.ValidInterfaces) > 0 && o.Interface != "" {
		return errs.NewMessage(errs.ClassKeystoneFailure, "interface and valid_interfaces are mutually exclusive. Please use valid_interfaces.")
	}
	for _, i := range o.ValidInterfaces {
		if !slices.Contains([]string{"public", "internal", "admin"}, i) {
			return errs.NewMessage(errs.ClassKeystoneFailure, fmt.Sprintf("'%s' is not a valid value for valid_interfaces. Valid values are public, internal or admin", i))
		}
	}
	return nil
}

func (o Options) transport() (*http.Transport, error) {
	tc := &tls.Config{InsecureSkipVerify: o.Insecure, MinVersion: tls.VersionTLS12} //nolint:gosec // insecure is the operator's explicit choice
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, errs.NewMessage(errs.ClassKeystoneFailure, fmt.Sprintf("read [%s]/cafile: %v", o.Section, err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errs.NewMessage(errs.ClassKeystoneFailure, fmt.Sprintf("[%s]/cafile %s holds no PEM certificate", o.Section, o.CAFile))
		}
		tc.RootCAs = pool
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, errs.NewMessage(errs.ClassKeystoneFailure, fmt.Sprintf("load [%s]/certfile: %v", o.Section, err))
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	return tr, nil
}

// Client is the HTTP client to call the service with: it has the
// section's TLS settings and timeout, renews the token and repeats the
// call once when the service answers 401 to a token of this session, and
// retries connection failures and 503s as the adapter's retry options say.
func (s *Session) Client() *http.Client { return s.client }

// Auth returns a token (empty with auth_type none) and the service
// endpoint, the provider signature of the Neutron and Glance clients.
func (s *Session) Auth(ctx context.Context) (token, endpoint string, err error) {
	token, err = s.Token(ctx)
	if err != nil {
		return "", "", err
	}
	endpoint, err = s.Endpoint(ctx)
	if err != nil {
		return "", "", err
	}
	return token, endpoint, nil
}

// Token returns a valid token, authenticating when none is held or it
// expires within minTokenLife.
func (s *Session) Token(ctx context.Context) (string, error) {
	if s.err != nil {
		return "", s.err
	}
	if !s.opts.keystone() {
		return "", nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && s.now().Add(minTokenLife).Before(s.expires) {
		return s.token, nil
	}
	return s.authenticate(ctx)
}

// maxIssued bounds the tokens remembered as the session's own, enough
// for the calls in flight across a renewal.
const maxIssued = 4

// own reports whether tok was issued to this session.
func (s *Session) own(tok string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.issued, tok)
}

// UserToken returns the token of the user a call is made for ("" when
// none) and whether that token is system scoped.
type UserToken func(ctx context.Context) (token string, systemScoped bool)

// UserAuth is Auth on behalf of the caller, as upstream wraps the user's
// token and the service's credentials (keystoneauth's
// ServiceTokenAuthWrapper): when the plugin authenticates and the caller
// has a token (project scoped unless allowSystem), the call carries the
// user's token and the session's client adds the service's as
// X-Service-Token; otherwise it is Auth.
func (s *Session) UserAuth(user UserToken, allowSystem bool) func(ctx context.Context) (token, endpoint string, err error) {
	return func(ctx context.Context) (string, string, error) {
		if user == nil || !s.opts.keystone() {
			return s.Auth(ctx)
		}
		tok, system := user(ctx)
		if tok == "" || (system && !allowSystem) {
			return s.Auth(ctx)
		}
		// The endpoint comes from the service's catalog, as upstream
		// resolves it with the service auth before wrapping.
		endpoint, err := s.Endpoint(ctx)
		if err != nil {
			return "", "", err
		}
		return tok, endpoint, nil
	}
}

// keystone tells whether the plugin authenticates with Keystone (the
// others have no token, no catalog and a fixed endpoint).
func (o Options) keystone() bool { return o.AuthType != "none" && o.AuthType != "http_basic" }

// ProjectID is the project of the session's token (upstream's
// auth.get_project_id, e.g. the conductor's project for Glance).
func (s *Session) ProjectID(ctx context.Context) (string, error) {
	if _, err := s.Token(ctx); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.projectID, nil
}

// Invalidate drops token if it is the one held, so the next call
// authenticates again.
func (s *Session) Invalidate(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token == "" || s.token != token {
		return false
	}
	s.token = ""
	return true
}

// Endpoint is endpoint_override, else the catalog's URL for the service
// type (and name) on the first valid interface with an endpoint in the
// region. Upstream names the "internal" endpoint type when none is found,
// whatever valid_interfaces says.
func (s *Session) Endpoint(ctx context.Context) (string, error) {
	if s.err != nil {
		return "", s.err
	}
	if s.opts.EndpointOverride != "" {
		return s.opts.EndpointOverride, nil
	}
	notFound := errs.New(errs.ClassCatalogNotFound, map[string]any{"service_type": s.opts.ServiceType, "endpoint_type": "internal"})
	if !s.opts.keystone() {
		if s.opts.Endpoint != "" {
			return s.opts.Endpoint, nil
		}
		return "", notFound
	}
	if _, err := s.Token(ctx); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	interfaces := s.opts.ValidInterfaces
	if len(interfaces) == 0 {
		interfaces = []string{"public"}
		if s.opts.Interface != "" {
			interfaces = []string{s.opts.Interface}
		}
	}
	for _, iface := range interfaces {
		for _, svc := range s.catalog {
			if !sameServiceType(svc.Type, s.opts.ServiceType) || (s.opts.ServiceName != "" && svc.Name != s.opts.ServiceName) {
				continue
			}
			for _, e := range svc.Endpoints {
				if strings.TrimSuffix(e.Interface, "URL") != iface {
					continue
				}
				if r := s.opts.RegionName; r != "" && e.RegionID != r && e.Region != r {
					continue
				}
				return e.URL, nil
			}
		}
	}
	return "", notFound
}

// serviceTypeAliases are the os-service-types aliases keystoneauth
// matches catalog entries with, for the types Ironic's sections use.
var serviceTypeAliases = [][]string{
	{"block-storage", "volumev3", "volumev2", "volume", "block-store"},
	{"object-store"},
	{"image"},
	{"network"},
	{"compute"},
	{"baremetal"},
}

func sameServiceType(a, b string) bool {
	if a == b {
		return true
	}
	for _, group := range serviceTypeAliases {
		if slices.Contains(group, a) && slices.Contains(group, b) {
			return true
		}
	}
	return false
}

// identityV3 points the auth URL at the v3 API: keystoneauth discovers the
// version, and Keystone serves v3 under /v3 of the unversioned endpoint.
func identityV3(u string) string {
	u = strings.TrimRight(u, "/")
	if strings.HasSuffix(u, "/v3") {
		return u
	}
	return u + "/v3"
}

// authBody is the v3 password authentication request.
func (o Options) authBody() (map[string]any, error) {
	generic := o.AuthType == "password" || o.AuthType == "token"
	userDomainID, userDomainName := o.UserDomainID, o.UserDomainName
	projectDomainID, projectDomainName := o.ProjectDomainID, o.ProjectDomainName
	if generic {
		if userDomainID == "" && userDomainName == "" {
			userDomainID, userDomainName = o.DefaultDomainID, o.DefaultDomainName
		}
		if projectDomainID == "" && projectDomainName == "" {
			projectDomainID, projectDomainName = o.DefaultDomainID, o.DefaultDomainName
		}
	}
	user := map[string]any{"password": o.Password}
	if o.UserID != "" {
		user["id"] = o.UserID
	} else {
		user["name"] = o.Username
		if d := domainRef(userDomainID, userDomainName); d != nil {
			user["domain"] = d
		}
	}
	auth := map[string]any{"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{"user": user}}}
	if o.AuthType == "token" || o.AuthType == "v3token" {
		auth["identity"] = map[string]any{"methods": []string{"token"}, "token": map[string]any{"id": o.Token}}
	}
	var scopes []map[string]any
	if o.ProjectID != "" {
		scopes = append(scopes, map[string]any{"project": map[string]any{"id": o.ProjectID}})
	} else if o.ProjectName != "" {
		p := map[string]any{"name": o.ProjectName}
		if d := domainRef(projectDomainID, projectDomainName); d != nil {
			p["domain"] = d
		}
		scopes = append(scopes, map[string]any{"project": p})
	}
	if d := domainRef(o.DomainID, o.DomainName); d != nil {
		scopes = append(scopes, map[string]any{"domain": d})
	}
	if o.TrustID != "" {
		scopes = append(scopes, map[string]any{"OS-TRUST:trust": map[string]any{"id": o.TrustID}})
	}
	if o.SystemScope != "" {
		if o.SystemScope != "all" {
			return nil, errs.NewMessage(errs.ClassKeystoneFailure, fmt.Sprintf("system_scope %q is not supported; only 'all' is", o.SystemScope))
		}
		scopes = append(scopes, map[string]any{"system": map[string]any{"all": true}})
	}
	switch len(scopes) {
	case 0:
	case 1:
		auth["scope"] = scopes[0]
	default:
		return nil, errs.NewMessage(errs.ClassKeystoneFailure, "Authentication cannot be scoped to multiple targets. Pick one of: project, domain, trust, system or unscoped")
	}
	return map[string]any{"auth": auth}, nil
}

func domainRef(id, name string) map[string]any {
	switch {
	case id != "":
		return map[string]any{"id": id}
	case name != "":
		return map[string]any{"name": name}
	}
	return nil
}

// authenticate runs with s.mu held, so concurrent callers wait for one
// authentication instead of each making their own.
func (s *Session) authenticate(ctx context.Context) (string, error) {
	body, err := s.opts.authBody()
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("encode authentication request: %w", err)
	}
	u := identityV3(s.opts.AuthURL) + "/auth/tokens"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(data))
	if err != nil {
		return "", errs.NewMessage(errs.ClassKeystoneFailure, fmt.Sprintf("build authentication request: %v", err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	// The session's own client would treat Keystone's 401 as a stale
	// token; authentication goes through the plain transport.
	hc := &http.Client{Transport: s.base, Timeout: s.opts.Timeout}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("authenticate to %s: %w", u, ctx.Err())
		}
		return "", errs.NewMessage(errs.ClassKeystoneFailure, fmt.Sprintf("Unable to establish connection to %s: %v", u, err))
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return "", errs.NewMessage(errs.ClassKeystoneFailure, fmt.Sprintf("read authentication answer: %v", err))
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return "", errs.New(errs.ClassKeystoneUnauthorized, nil)
	case resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK:
		return "", errs.NewMessage(errs.ClassKeystoneFailure, fmt.Sprintf("Keystone answered %d to authentication: %s", resp.StatusCode, keystoneMessage(rb)))
	}
	tok := resp.Header.Get("X-Subject-Token")
	var doc struct {
		Token struct {
			ExpiresAt string `json:"expires_at"`
			Project   struct {
				ID string `json:"id"`
			} `json:"project"`
			Catalog []catalogService `json:"catalog"`
		} `json:"token"`
	}
	if err := json.Unmarshal(rb, &doc); err != nil || tok == "" {
		return "", errs.NewMessage(errs.ClassKeystoneFailure, "Keystone's authentication answer has no token")
	}
	exp, err := time.Parse(time.RFC3339Nano, doc.Token.ExpiresAt)
	if err != nil {
		return "", errs.NewMessage(errs.ClassKeystoneFailure, fmt.Sprintf("Keystone's token has an unreadable expires_at %q", doc.Token.ExpiresAt))
	}
	s.token, s.expires, s.projectID, s.catalog = tok, exp, doc.Token.Project.ID, doc.Token.Catalog
	s.issued = append(s.issued, tok)
	if len(s.issued) > maxIssued {
		s.issued = s.issued[len(s.issued)-maxIssued:]
	}
	return tok, nil
}

// keystoneMessage is the message of Keystone's error document, or the
// start of the body.
func keystoneMessage(b []byte) string {
	var doc struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &doc) == nil && doc.Error.Message != "" {
		return doc.Error.Message
	}
	if len(b) > 200 {
		b = b[:200]
	}
	return strings.TrimSpace(string(b))
}

// transport is the session's request path to the service.
type transport struct {
	s    *Session
	base http.RoundTripper
}

// retryDelay is keystoneauth's: the configured delay, else a backoff
// from 0.5 s doubling up to 60 s.
func retryDelay(configured time.Duration, attempt int) time.Duration {
	if configured > 0 {
		return configured
	}
	d := 500 * time.Millisecond << attempt
	if d > time.Minute || d <= 0 {
		d = time.Minute
	}
	return d
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.s.globalID != nil && req.Header.Get("X-OpenStack-Request-ID") == "" {
		if id := t.s.globalID(req.Context()); id != "" {
			req = req.Clone(req.Context())
			req.Header.Set("X-OpenStack-Request-ID", id)
		}
	}
	if o := t.s.opts; o.AuthType == "http_basic" && o.Username != "" && o.Password != "" && req.Header.Get("Authorization") == "" {
		r := req.Clone(req.Context())
		r.SetBasicAuth(o.Username, o.Password)
		return t.send(r)
	}
	if tok := req.Header.Get("X-Auth-Token"); tok != "" && t.s.opts.keystone() && !t.s.own(tok) {
		return t.onBehalf(req)
	}
	resp, err := t.send(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	old := req.Header.Get("X-Auth-Token")
	if old == "" {
		return resp, nil
	}
	// Another caller may have renewed the token already; either way the
	// call is repeated once with the current one.
	t.s.Invalidate(old)
	tok, terr := t.s.Token(req.Context())
	if terr != nil || tok == old {
		return resp, nil
	}
	retry, rerr := rewind(req)
	if rerr != nil {
		return resp, nil
	}
	resp.Body.Close()
	retry.Header.Set("X-Auth-Token", tok)
	return t.send(retry)
}

// onBehalf sends a call carrying a user's token with the service's token
// as X-Service-Token. On 401 only the service token can be renewed; the
// call is repeated once with the new one.
func (t *transport) onBehalf(req *http.Request) (*http.Response, error) {
	svc, err := t.s.Token(req.Context())
	if err != nil {
		closeBody(req)
		return nil, err
	}
	first := req.Clone(req.Context())
	first.Header.Set("X-Service-Token", svc)
	resp, err := t.send(first)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	t.s.Invalidate(svc)
	renewed, terr := t.s.Token(req.Context())
	if terr != nil || renewed == svc {
		return resp, nil
	}
	retry, rerr := rewind(req)
	if rerr != nil {
		return resp, nil
	}
	resp.Body.Close()
	retry.Header.Set("X-Service-Token", renewed)
	return t.send(retry)
}

// send makes one call with the adapter's connection and status retries.
func (t *transport) send(req *http.Request) (*http.Response, error) {
	o := t.s.opts
	connect, status := 0, 0
	for {
		attempt := req
		if connect+status > 0 {
			var err error
			if attempt, err = rewind(req); err != nil {
				closeBody(req)
				return nil, err
			}
		}
		resp, err := t.base.RoundTrip(attempt)
		switch {
		case err != nil && req.Context().Err() == nil && connect < o.ConnectRetries:
			if serr := t.s.sleep(req.Context(), retryDelay(o.ConnectRetryDelay, connect)); serr != nil {
				return nil, err
			}
			connect++
		case err == nil && resp.StatusCode == http.StatusServiceUnavailable && status < o.StatusCodeRetries:
			resp.Body.Close()
			if serr := t.s.sleep(req.Context(), retryDelay(o.StatusCodeRetryDelay, status)); serr != nil {
				return nil, serr
			}
			status++
		default:
			return resp, err
		}
	}
}

// closeBody closes the body of a request that will not be sent, as a
// RoundTripper must.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// rewind copies req with a fresh body for another attempt.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return r, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("request body cannot be sent again")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, fmt.Errorf("rewind request body: %w", err)
	}
	r.Body = body
	return r, nil
}
