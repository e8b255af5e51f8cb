package keystoneauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/testing/keystone"
)

// service is a stand-in OpenStack service that accepts only live tokens
// of ks and records the tokens it saw.
type service struct {
	srv    *httptest.Server
	tokens []string
	status atomic.Int32 // answered instead of 200 while non-zero
	calls  atomic.Int32
}

func newService(t *testing.T, ks *keystone.Fixture) *service {
	t.Helper()
	s := &service{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		if st := s.status.Load(); st != 0 {
			w.WriteHeader(int(st))
			return
		}
		tok := r.Header.Get("X-Auth-Token")
		s.tokens = append(s.tokens, tok)
		if ks != nil && !ks.TokenValid(tok) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(r.Body)
		fmt.Fprintf(w, "ok %s", body.String())
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func identity(t *testing.T) *keystone.Fixture {
	t.Helper()
	return keystone.New(t).Project("service").
		User("ironic", "s3cret").Grant("ironic", "service", "service", "admin")
}

func passwordOpts(ks *keystone.Fixture, serviceType string) Options {
	return Options{
		Section: "neutron", AuthType: "password", AuthURL: ks.URL(),
		Username: "ironic", Password: "s3cret", UserDomainName: "Default",
		ProjectName: "service", ProjectDomainName: "Default",
		ServiceType: serviceType, ValidInterfaces: []string{"internal", "public"},
	}
}

func wantClass(t *testing.T, err error, class errs.Class, msg string) {
	t.Helper()
	var e *errs.Error
	if !errors.As(err, &e) || e.Class != class || e.Error() != msg {
		t.Fatalf("error = %v, want %s %q", err, class, msg)
	}
}

func TestPasswordTokenAndCatalogEndpoint(t *testing.T) {
	ctx := context.Background()
	ks := identity(t).
		AddService("network", "neutron", "RegionOne", "http://public.example:9696", "public").
		AddService("network", "neutron", "RegionOne", "http://internal.example:9696", "internal").
		AddService("network", "neutron", "RegionTwo", "http://internal.two.example:9696", "internal").
		AddService("image", "glance", "RegionOne", "http://glance.example:9292", "public")
	s := New(passwordOpts(ks, "network"))
	tok, ep, err := s.Auth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !ks.TokenValid(tok) || ep != "http://internal.example:9696" {
		t.Fatalf("token valid=%v endpoint=%q", ks.TokenValid(tok), ep)
	}
	if pid, err := s.ProjectID(ctx); err != nil || pid != ks.ProjectID("service") {
		t.Fatalf("project id %q, %v", pid, err)
	}
	// The token is kept: no new authentication.
	for range 3 {
		if again, err := s.Token(ctx); err != nil || again != tok {
			t.Fatalf("token %q, %v", again, err)
		}
	}
	if n := ks.Authentications(); n != 1 {
		t.Fatalf("authentications = %d, want 1", n)
	}

	o := passwordOpts(ks, "network")
	o.RegionName = "RegionTwo"
	if ep, err := New(o).Endpoint(ctx); err != nil || ep != "http://internal.two.example:9696" {
		t.Fatalf("RegionTwo endpoint %q, %v", ep, err)
	}
	o = passwordOpts(ks, "image")
	if ep, err := New(o).Endpoint(ctx); err != nil || ep != "http://glance.example:9292" {
		t.Fatalf("image falls back to public: %q, %v", ep, err)
	}
	o.ValidInterfaces = []string{"internal"}
	_, err = New(o).Endpoint(ctx)
	wantClass(t, err, "CatalogNotFound", "Service type image with endpoint type internal not found in keystone service catalog.")
	// Upstream names "internal" whatever valid_interfaces says.
	o.ValidInterfaces = []string{"admin"}
	_, err = New(o).Endpoint(ctx)
	wantClass(t, err, "CatalogNotFound", "Service type image with endpoint type internal not found in keystone service catalog.")
	o = passwordOpts(ks, "network")
	o.EndpointOverride = "http://override.example:9696/"
	if ep, err := New(o).Endpoint(ctx); err != nil || ep != "http://override.example:9696/" {
		t.Fatalf("override %q, %v", ep, err)
	}
}

func TestServiceTypeAliases(t *testing.T) {
	ks := identity(t).AddService("block-storage", "cinder", "RegionOne", "http://cinder.example:8776/v3", "internal")
	if ep, err := New(passwordOpts(ks, "volumev3")).Endpoint(context.Background()); err != nil || ep != "http://cinder.example:8776/v3" {
		t.Fatalf("volumev3 endpoint %q, %v", ep, err)
	}
}

func TestTokenRenewedBeforeExpiry(t *testing.T) {
	ctx := context.Background()
	ks := identity(t).TokenTTL(10 * time.Minute)
	s := New(passwordOpts(ks, "network"))
	s.SetClock(ks.Now)
	first, err := s.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ks.Advance(7 * time.Minute)
	if tok, _ := s.Token(ctx); tok != first || ks.Authentications() != 1 {
		t.Fatalf("token renewed with 3 minutes left")
	}
	// Within keystoneauth's two minutes of expiry the token is renewed.
	ks.Advance(90 * time.Second)
	second, err := s.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || ks.Authentications() != 2 {
		t.Fatalf("token not renewed: authentications = %d", ks.Authentications())
	}
}

func TestUnauthorizedAnswerReauthenticatesOnce(t *testing.T) {
	ctx := context.Background()
	ks := identity(t)
	svc := newService(t, ks)
	o := passwordOpts(ks, "network")
	o.EndpointOverride = svc.srv.URL
	s := New(o)
	call := func() (*http.Response, string) {
		t.Helper()
		tok, ep, err := s.Auth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, ep+"/v2.0/ports/x", strings.NewReader(`{"port":{}}`))
		req.Header.Set("X-Auth-Token", tok)
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp, b.String()
	}
	if resp, body := call(); resp.StatusCode != http.StatusOK || body != `ok {"port":{}}` {
		t.Fatalf("first call %d %q", resp.StatusCode, body)
	}
	// The service stops accepting the token (revoked): the session
	// renews it and repeats the call, body included.
	ks.RevokeUserTokens("ironic")
	resp, body := call()
	if resp.StatusCode != http.StatusOK || body != `ok {"port":{}}` || ks.Authentications() != 2 {
		t.Fatalf("after revocation %d %q, authentications %d", resp.StatusCode, body, ks.Authentications())
	}
	if n := len(svc.tokens); n != 3 || svc.tokens[1] != svc.tokens[0] || svc.tokens[2] == svc.tokens[1] {
		t.Fatalf("tokens seen: %d", n)
	}
	// A second 401 is the answer: one retry only.
	svc.status.Store(http.StatusUnauthorized)
	calls := svc.calls.Load()
	if resp, _ := call(); resp.StatusCode != http.StatusUnauthorized || svc.calls.Load()-calls != 2 {
		t.Fatalf("persistent 401: %d after %d calls", resp.StatusCode, svc.calls.Load()-calls)
	}
}

func TestStatusAndConnectRetries(t *testing.T) {
	ctx := context.Background()
	svc := newService(t, nil)
	o := Options{Section: "glance", AuthType: "none", EndpointOverride: svc.srv.URL, StatusCodeRetries: 2, StatusCodeRetryDelay: time.Second}
	s := New(o)
	var slept []time.Duration
	s.sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	svc.status.Store(http.StatusServiceUnavailable)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, svc.srv.URL, nil)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || svc.calls.Load() != 3 || len(slept) != 2 || slept[0] != time.Second {
		t.Fatalf("status %d, calls %d, slept %v", resp.StatusCode, svc.calls.Load(), slept)
	}

	// Connection failures back off from 0.5 s, doubling.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	s = New(Options{Section: "glance", AuthType: "none", EndpointOverride: deadURL, ConnectRetries: 3})
	slept = nil
	s.sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, deadURL, nil)
	if _, err := s.Client().Do(req); err == nil {
		t.Fatal("call to a closed port succeeded")
	}
	if want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}; fmt.Sprint(slept) != fmt.Sprint(want) {
		t.Fatalf("slept %v, want %v", slept, want)
	}
}

func TestNoAuth(t *testing.T) {
	ctx := context.Background()
	s := New(Options{Section: "neutron", AuthType: "none", EndpointOverride: "http://127.0.0.1:9696", ServiceType: "network"})
	tok, ep, err := s.Auth(ctx)
	if err != nil || tok != "" || ep != "http://127.0.0.1:9696" {
		t.Fatalf("none: %q %q %v", tok, ep, err)
	}
	_, _, err = New(Options{Section: "neutron", AuthType: "none", ServiceType: "network"}).Auth(ctx)
	wantClass(t, err, "CatalogNotFound", "Service type network with endpoint type internal not found in keystone service catalog.")
}

func TestLoadingErrorsSurfaceOnUse(t *testing.T) {
	ctx := context.Background()
	_, err := New(Options{AuthType: "kerberos"}).Token(ctx)
	wantClass(t, err, "ConfigInvalid", "Invalid configuration file. The plugin kerberos could not be found")
	_, err = New(Options{AuthType: "password", Username: "ironic"}).Token(ctx)
	wantClass(t, err, "ConfigInvalid", "Invalid configuration file. Auth plugin requires parameters which were not given: auth_url")
	_, err = New(Options{AuthType: "none", EndpointOverride: "http://x", ValidInterfaces: []string{"internal"}, Interface: "public"}).Endpoint(ctx)
	wantClass(t, err, "KeystoneFailure", "interface and valid_interfaces are mutually exclusive. Please use valid_interfaces.")
	_, err = New(Options{AuthType: "none", EndpointOverride: "http://x", ValidInterfaces: []string{"private"}}).Endpoint(ctx)
	wantClass(t, err, "KeystoneFailure", "'private' is not a valid value for valid_interfaces. Valid values are public, internal or admin")
}

func TestKeystoneRefusals(t *testing.T) {
	ctx := context.Background()
	ks := identity(t)
	o := passwordOpts(ks, "network")
	o.Password = "wrong"
	_, err := New(o).Token(ctx)
	wantClass(t, err, "KeystoneUnauthorized", "Not authorized in Keystone.")
	ks.Fail(http.StatusInternalServerError)
	_, err = New(passwordOpts(ks, "network")).Token(ctx)
	if !errs.Is(err, errs.ClassKeystoneFailure) || !strings.Contains(err.Error(), "500") {
		t.Fatalf("keystone 500: %v", err)
	}
	ks.Heal()
	ks.Down()
	_, err = New(passwordOpts(ks, "network")).Token(ctx)
	if !errs.Is(err, errs.ClassKeystoneFailure) || !strings.Contains(err.Error(), "Unable to establish connection to "+ks.URL()+"/v3/auth/tokens") {
		t.Fatalf("keystone down: %v", err)
	}
}

func TestScopes(t *testing.T) {
	ctx := context.Background()
	ks := identity(t).User("sys", "pw").GrantSystem("sys", "admin").
		Domain("d1", "Dom").GrantDomain("sys", "d1", "admin")
	o := Options{AuthType: "v3password", AuthURL: ks.URL() + "/v3/", UserID: ks.UserID("sys"), Password: "pw", SystemScope: "all"}
	if _, err := New(o).Token(ctx); err != nil {
		t.Fatalf("system scope: %v", err)
	}
	o = Options{AuthType: "password", AuthURL: ks.URL(), Username: "sys", Password: "pw", DefaultDomainID: "default", DomainName: "Dom"}
	if _, err := New(o).Token(ctx); err != nil {
		t.Fatalf("domain scope with default_domain_id for the user: %v", err)
	}
	// The v3 plugin has no default domain: the user cannot be found.
	o.AuthType = "v3password"
	if _, err := New(o).Token(ctx); !errs.Is(err, errs.ClassKeystoneUnauthorized) {
		t.Fatalf("v3password without user domain: %v", err)
	}
	o = passwordOpts(ks, "network")
	o.SystemScope = "all"
	_, err := New(o).Token(ctx)
	wantClass(t, err, "KeystoneFailure", "Authentication cannot be scoped to multiple targets. Pick one of: project, domain, trust, system or unscoped")
}

func TestOptionsFromConfig(t *testing.T) {
	c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"neutron": {
			"auth_url": "http://127.0.0.1:5000", "username": "ironic", "password": "s3cret",
			"project_name": "service", "user_domain_name": "Default", "project_domain_id": "default",
			"region_name": "RegionOne", "endpoint_override": "http://127.0.0.1:9696",
			"timeout": "30", "status_code_retries": "2", "status_code_retry_delay": "0.5", "insecure": "true",
		},
		"glance": {"auth_section": "neutron"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	o := OptionsFromConfig(c, "neutron")
	if o.AuthType != "password" || o.AuthURL != "http://127.0.0.1:5000" || o.Username != "ironic" || o.Password != "s3cret" ||
		o.ProjectName != "service" || o.UserDomainName != "Default" || o.ProjectDomainID != "default" ||
		o.ServiceType != "network" || fmt.Sprint(o.ValidInterfaces) != "[internal public]" || o.RegionName != "RegionOne" ||
		o.EndpointOverride != "http://127.0.0.1:9696" || o.Timeout != 30*time.Second || o.StatusCodeRetries != 2 ||
		o.StatusCodeRetryDelay != 500*time.Millisecond || !o.Insecure {
		t.Fatalf("neutron options %+v", o)
	}
	g := OptionsFromConfig(c, "glance")
	if g.Username != "ironic" || g.AuthURL != "http://127.0.0.1:5000" || g.ServiceType != "image" || g.EndpointOverride != "" {
		t.Fatalf("glance via auth_section %+v", g)
	}
}

func TestCredentialsNotLogged(t *testing.T) {
	ks := identity(t)
	o := passwordOpts(ks, "network")
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })
	s := New(o)
	tok, err := s.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	slog.Info("session", "options", o)
	o.Password = "wrong"
	_, err = New(o).Token(context.Background())
	asJSON, _ := json.Marshal(o)
	text := logs.String() + fmt.Sprint(err) + o.String() + fmt.Sprintf("%v %+v", o, o) + string(asJSON)
	if strings.Contains(text, "s3cret") || strings.Contains(text, tok) || !strings.Contains(logs.String(), "password=***") {
		t.Fatalf("credentials leaked or options unlogged: %s", text)
	}
}

func TestUserAuthAddsServiceToken(t *testing.T) {
	ctx := context.Background()
	ks := identity(t).Project("demo").User("alice", "pw").Grant("alice", "demo", "member")
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Clone())
		if !ks.TokenValid(r.Header.Get("X-Auth-Token")) || (r.Header.Get("X-Service-Token") != "" && !ks.TokenValid(r.Header.Get("X-Service-Token"))) {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	t.Cleanup(srv.Close)
	ks.AddService("network", "neutron", "RegionOne", srv.URL, "internal")
	s := New(passwordOpts(ks, "network"))
	userTok, system := ks.Token("alice", "demo"), false
	auth := s.UserAuth(func(context.Context) (string, bool) { return userTok, system }, false)
	call := func() int {
		t.Helper()
		tok, ep, err := auth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ep+"/v2.0/ports/x", nil)
		req.Header.Set("X-Auth-Token", tok)
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := call(); st != http.StatusOK {
		t.Fatalf("on behalf of the user: %d", st)
	}
	h := got[len(got)-1]
	if h.Get("X-Auth-Token") != userTok || !ks.TokenValid(h.Get("X-Service-Token")) || h.Get("X-Service-Token") == userTok {
		t.Fatalf("headers %v", h)
	}
	// The service token is renewed on 401; the user's is kept.
	ks.RevokeUserTokens("ironic")
	if st := call(); st != http.StatusOK || ks.Authentications() != 2 {
		t.Fatalf("after service token revocation: %d, authentications %d", st, ks.Authentications())
	}
	if h := got[len(got)-1]; h.Get("X-Auth-Token") != userTok {
		t.Fatalf("user token replaced: %v", h)
	}
	// A system-scoped caller gets the service's own token.
	system = true
	if st := call(); st != http.StatusOK {
		t.Fatalf("system-scoped caller: %d", st)
	}
	if h := got[len(got)-1]; h.Get("X-Auth-Token") == userTok || h.Get("X-Service-Token") != "" {
		t.Fatalf("system-scoped caller headers %v", h)
	}
}

func TestTokenAndHTTPBasicPlugins(t *testing.T) {
	ctx := context.Background()
	ks := identity(t).AddService("network", "neutron", "RegionOne", "http://neutron.example:9696", "internal")
	// token exchanges a token for a new one scoped to the project.
	seed := ks.Token("ironic", "service")
	s := New(Options{AuthType: "token", AuthURL: ks.URL(), Token: seed, ProjectName: "service", DefaultDomainID: "default",
		ServiceType: "network", ValidInterfaces: []string{"internal"}})
	tok, ep, err := s.Auth(ctx)
	if err != nil || tok == seed || !ks.TokenValid(tok) || ep != "http://neutron.example:9696" {
		t.Fatalf("token plugin: %q %q %v", tok, ep, err)
	}
	ks.RevokeUserTokens("ironic")
	if _, err := New(Options{AuthType: "v3token", AuthURL: ks.URL(), Token: seed}).Token(ctx); !errs.Is(err, errs.ClassKeystoneUnauthorized) {
		t.Fatalf("revoked seed token: %v", err)
	}

	// http_basic sends the credentials on every call to its fixed endpoint.
	var gotUser, gotPass, gotToken string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUser, gotPass, _ = r.BasicAuth()
		gotToken = r.Header.Get("X-Auth-Token")
	}))
	t.Cleanup(srv.Close)
	b := New(Options{AuthType: "http_basic", Username: "ironic", Password: "s3cret", Endpoint: srv.URL})
	tok, ep, err = b.Auth(ctx)
	if err != nil || tok != "" || ep != srv.URL {
		t.Fatalf("http_basic auth: %q %q %v", tok, ep, err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ep, nil)
	resp, err := b.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if gotUser != "ironic" || gotPass != "s3cret" || gotToken != "" {
		t.Fatalf("basic credentials %q %q token %q", gotUser, gotPass, gotToken)
	}
	// none takes the plugin's endpoint too; endpoint_override wins.
	if ep, err := New(Options{AuthType: "none", Endpoint: "http://a", EndpointOverride: "http://b"}).Endpoint(ctx); err != nil || ep != "http://b" {
		t.Fatalf("none endpoint %q %v", ep, err)
	}
	if ep, err := New(Options{AuthType: "none", Endpoint: "http://a"}).Endpoint(ctx); err != nil || ep != "http://a" {
		t.Fatalf("none endpoint %q %v", ep, err)
	}
}

// Concurrent callers share one authentication.
func TestConcurrentCallersAuthenticateOnce(t *testing.T) {
	ks := identity(t)
	s := New(passwordOpts(ks, "network"))
	var wg sync.WaitGroup
	tokens := make([]string, 16)
	for i := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tokens[i], _ = s.Token(context.Background())
		}()
	}
	wg.Wait()
	for _, tok := range tokens {
		if tok == "" || tok != tokens[0] {
			t.Fatalf("tokens differ or are missing: %q vs %q", tok, tokens[0])
		}
	}
	if n := ks.Authentications(); n != 1 {
		t.Fatalf("authentications = %d", n)
	}
}
