package auth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/keystone"
)

const wwwAuth = "https://keystone.example.com/identity"

// newKeystone builds a Keystone with the service user "ironic" (roles
// service and admin on project "service"), users alice (member, reader on
// "demo") and sam (system admin), and an authenticator sharing its clock.
func newKeystone(t *testing.T, mod func(*KeystoneConfig)) (*keystone.Fixture, *Keystone) {
	t.Helper()
	ks := keystone.New(t).
		Project("service").Project("demo").
		User("ironic", "svc-secret").Grant("ironic", "service", "service", "admin").
		User("alice", "pw").Grant("alice", "demo", "member", "reader").
		User("sam", "pw").GrantSystem("sam", "admin", "reader").
		User("nova", "pw").Grant("nova", "service", "service").
		AddService("baremetal", "ironic", "RegionOne", "http://ironic.example.com:6385", "public", "internal")
	cfg := KeystoneConfig{
		AuthURL:                   ks.URL() + "/v3",
		WWWAuthenticateURI:        wwwAuth,
		Username:                  "ironic",
		Password:                  "svc-secret",
		UserDomainName:            "Default",
		ProjectName:               "service",
		ProjectDomainName:         "Default",
		Interface:                 "internal",
		TokenCacheTime:            300 * time.Second,
		IncludeServiceCatalog:     true,
		ServiceTokenRoles:         []string{"service"},
		ServiceTokenRolesRequired: true,
		Now:                       ks.Now,
	}
	if mod != nil {
		mod(&cfg)
	}
	k, err := NewKeystone(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ks, k
}

func keystoneRequest(t *testing.T, k Authenticator, headers map[string]string) (*httptest.ResponseRecorder, *Context) {
	t.Helper()
	return serve(t, k, headers)
}

func assertKeystone401(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("status = %d, want 401 (body %s)", w.Code, w.Body)
	}
	if got := w.Header().Get("WWW-Authenticate"); got != `Keystone uri="`+wwwAuth+`"` {
		t.Errorf("WWW-Authenticate = %q", got)
	}
	want := `{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}`
	if got := w.Body.String(); got != want {
		t.Errorf("body = %s\nwant   %s", got, want)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=UTF-8" {
		t.Errorf("Content-Type = %q", ct)
	}
}

func TestKeystoneValidProjectToken(t *testing.T) {
	ks, k := newKeystone(t, nil)
	tok := ks.Token("alice", "demo")
	w, c := keystoneRequest(t, k, map[string]string{
		"X-Auth-Token": tok,
		// Identity headers sent by the client are never trusted.
		"X-Roles": "admin", "X-Project-Id": "forged", "OpenStack-System-Scope": "all", "X-User-Id": "forged",
	})
	if w.Code != http.StatusNoContent {
		t.Fatalf("status %d body %s", w.Code, w.Body)
	}
	want := &Context{
		Strategy: StrategyKeystone, UserID: ks.UserID("alice"), UserName: "alice",
		UserDomainID: "default", UserDomainName: "Default",
		ProjectID: ks.ProjectID("demo"), ProjectName: "demo", ProjectDomainID: "default", ProjectDomainName: "Default",
		Roles: []string{"member", "reader"}, IsAdminProject: true, AuthToken: tok,
	}
	got := *c
	if got.ExpiresAt != ks.Now().Add(time.Hour) {
		t.Errorf("ExpiresAt = %v", got.ExpiresAt)
	}
	types := []string{}
	for _, s := range got.ServiceCatalog {
		types = append(types, s.Type)
	}
	if !slices.Equal(types, []string{"identity", "baremetal"}) {
		t.Errorf("catalog services = %q", types)
	}
	var info struct {
		Token struct {
			User struct{ Name string } `json:"user"`
		} `json:"token"`
	}
	if err := json.Unmarshal(got.TokenInfo, &info); err != nil || info.Token.User.Name != "alice" {
		t.Errorf("TokenInfo = %s (%v)", got.TokenInfo, err)
	}
	got.ExpiresAt, got.ServiceCatalog, got.TokenInfo = time.Time{}, nil, nil
	if !contextEqual(&got, want) {
		t.Errorf("context\n got %#v\nwant %#v", fields(&got), fields(want))
	}
	creds := c.ToPolicyCredentials()
	if creds["project_id"] != ks.ProjectID("demo") || creds["system_scope"] != nil || creds["is_admin_project"] != true ||
		creds["project_name"] != "demo" || !slices.Equal(creds["roles"].([]string), []string{"member", "reader"}) {
		t.Errorf("credentials = %v", creds)
	}
}

func TestKeystoneScopes(t *testing.T) {
	ks, k := newKeystone(t, nil)
	ks.Domain("d1", "Dom One").User("dana", "pw").GrantDomain("dana", "d1", "manager")
	sys := ks.SystemToken("sam")
	_, c := keystoneRequest(t, k, map[string]string{"X-Auth-Token": sys})
	if c == nil || c.SystemScope != "all" || c.ProjectID != "" || !slices.Equal(c.Roles, []string{"admin", "reader"}) {
		t.Fatalf("system token context = %v", c)
	}
	if creds := c.ToPolicyCredentials(); creds["system_scope"] != "all" || creds["project_id"] != nil {
		t.Errorf("credentials = %v", creds)
	}
	dom := ks.DomainToken("dana", "d1")
	_, c = keystoneRequest(t, k, map[string]string{"X-Auth-Token": dom})
	if c == nil || c.DomainID != "d1" || c.DomainName != "Dom One" || c.SystemScope != "" || c.ProjectID != "" {
		t.Fatalf("domain token context = %v", c)
	}
	notAdmin := ks.Token("alice", "demo")
	ks.SetAdminProject(notAdmin, false)
	_, c = keystoneRequest(t, k, map[string]string{"X-Auth-Token": notAdmin})
	if c == nil || c.IsAdminProject {
		t.Errorf("is_admin_project false not carried: %v", c)
	}
}

func TestKeystoneRejections(t *testing.T) {
	ks, k := newKeystone(t, nil)
	expiring := ks.Token("alice", "demo")
	revoked := ks.Token("alice", "demo")
	ks.Revoke(revoked)
	cases := map[string]map[string]string{
		"no token":      {},
		"unknown token": {"X-Auth-Token": "gAAAAAnot-a-token"},
		"revoked token": {"X-Auth-Token": revoked},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			w, _ := keystoneRequest(t, k, h)
			assertKeystone401(t, w)
		})
	}
	t.Run("expired token", func(t *testing.T) {
		ks.Advance(time.Hour + time.Second)
		w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": expiring})
		assertKeystone401(t, w)
	})
}

// A cached token is checked for expiry without asking Keystone, as
// auth_token does with its cached data.
func TestKeystoneCachedTokenExpires(t *testing.T) {
	ks, k := newKeystone(t, nil)
	ks.TokenTTL(2 * time.Minute)
	tok := ks.Token("alice", "demo")
	if w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok}); w.Code != 204 {
		t.Fatalf("status %d", w.Code)
	}
	n := ks.Validations()
	ks.Advance(2*time.Minute + time.Second)
	w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok})
	assertKeystone401(t, w)
	if ks.Validations() != n {
		t.Errorf("expired cached token was sent to Keystone again")
	}
}

func TestKeystoneCache(t *testing.T) {
	ks, k := newKeystone(t, nil)
	tok := ks.Token("alice", "demo")
	for i := 0; i < 5; i++ {
		if w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok}); w.Code != 204 {
			t.Fatalf("request %d: status %d", i, w.Code)
		}
	}
	if n := ks.Validations(); n != 1 {
		t.Fatalf("validations = %d, want 1 (cache hits must not call Keystone)", n)
	}
	if n := ks.Authentications(); n != 1 {
		t.Errorf("service authentications = %d, want 1", n)
	}
	// A revoked token stays accepted until the cache entry expires, as
	// with auth_token.
	ks.Revoke(tok)
	ks.Advance(299 * time.Second)
	if w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok}); w.Code != 204 || ks.Validations() != 1 {
		t.Fatalf("within token_cache_time: status %d, validations %d", w.Code, ks.Validations())
	}
	ks.Advance(time.Second)
	w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok})
	assertKeystone401(t, w)
	if n := ks.Validations(); n != 2 {
		t.Errorf("after token_cache_time: validations = %d, want 2", n)
	}
	// Surrounding white space is not part of the token.
	other := ks.Token("alice", "demo")
	if w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": " " + other + " "}); w.Code != 204 {
		t.Errorf("padded token: status %d", w.Code)
	}
}

func TestKeystoneCacheDisabledAndBounded(t *testing.T) {
	ks, k := newKeystone(t, func(c *KeystoneConfig) { c.TokenCacheTime = -time.Second })
	tok := ks.Token("alice", "demo")
	keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok})
	keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok})
	if n := ks.Validations(); n != 2 {
		t.Errorf("token_cache_time -1: validations = %d, want 2", n)
	}

	ks, k = newKeystone(t, func(c *KeystoneConfig) { c.CacheSize = 2 })
	var toks []string
	for i := 0; i < 3; i++ {
		toks = append(toks, ks.Token("alice", "demo"))
		keystoneRequest(t, k, map[string]string{"X-Auth-Token": toks[i]})
	}
	if n := k.cache.len(); n != 2 {
		t.Fatalf("cache holds %d tokens, want 2", n)
	}
	keystoneRequest(t, k, map[string]string{"X-Auth-Token": toks[0]})
	if n := ks.Validations(); n != 4 {
		t.Errorf("evicted token: validations = %d, want 4", n)
	}
}

func assertUnavailable(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status = %d, want 503 (body %s)", w.Code, w.Body)
	}
	if w.Header().Get("WWW-Authenticate") != "" {
		t.Error("503 must not carry a challenge")
	}
}

func TestKeystoneDown(t *testing.T) {
	ks, k := newKeystone(t, nil)
	tok := ks.Token("alice", "demo")
	ks.Down()
	w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok})
	assertUnavailable(t, w)
	want := "503 Service Unavailable\n\nThe server is currently unavailable. Please try again at a later time.\n\n The Keystone service is temporarily unavailable.  "
	if got := w.Body.String(); got != want {
		t.Errorf("plain body = %q\nwant %q", got, want)
	}
	ks.Up()
	if w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok}); w.Code != 204 {
		t.Errorf("after Up: status %d", w.Code)
	}
}

func TestKeystoneServerErrors(t *testing.T) {
	for _, status := range []int{500, 502, 403} {
		ks, k := newKeystone(t, nil)
		tok := ks.Token("alice", "demo")
		ks.Fail(status)
		w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok, "Accept": "application/json"})
		assertUnavailable(t, w)
		want := `{"message": "The server is currently unavailable. Please try again at a later time.<br /><br />\nThe Keystone service is temporarily unavailable.\n\n", "code": "503 Service Unavailable", "title": "Service Unavailable"}`
		if got := w.Body.String(); got != want {
			t.Errorf("Keystone %d: JSON body = %s\nwant %s", status, got, want)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
	}
}

func TestUnavailableNegotiation(t *testing.T) {
	for accept, want := range map[string]string{
		"":                                  "text/plain; charset=UTF-8",
		"*/*":                               "text/html; charset=UTF-8",
		"application/json":                  "application/json",
		"text/html;q=0.5, application/json": "application/json",
		"application/*":                     "application/json",
		"image/png":                         "text/plain; charset=UTF-8",
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		w := httptest.NewRecorder()
		keystoneUnavailable(nil).ServeHTTP(w, r)
		if got := w.Header().Get("Content-Type"); got != want {
			t.Errorf("Accept %q: Content-Type %q, want %q", accept, got, want)
		}
	}
}

// The service's own token is reused until near its expiry, renewed
// then, and renewed at once when Keystone refuses it.
func TestKeystoneServiceTokenRefresh(t *testing.T) {
	ks, k := newKeystone(t, func(c *KeystoneConfig) { c.TokenCacheTime = -1 })
	ks.TokenTTL(10 * time.Minute)
	call := func() {
		t.Helper()
		tok := ks.Token("alice", "demo")
		if w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok}); w.Code != 204 {
			t.Fatalf("status %d body %s", w.Code, w.Body)
		}
	}
	call()
	call()
	if n := ks.Authentications(); n != 1 {
		t.Fatalf("authentications = %d, want 1", n)
	}
	// Within two minutes of expiry the token is renewed before use.
	ks.Advance(8*time.Minute + time.Second)
	call()
	if n := ks.Authentications(); n != 2 {
		t.Fatalf("near expiry: authentications = %d, want 2", n)
	}
	// Keystone forgets the service token: the validation answers 401,
	// the token is renewed and the validation retried.
	ks.RevokeUserTokens("ironic")
	v := ks.Validations()
	call()
	if n := ks.Authentications(); n != 3 {
		t.Errorf("after 401: authentications = %d, want 3", n)
	}
	if n := ks.Validations() - v; n != 2 {
		t.Errorf("after 401: validations = %d, want 2 (refused, then retried)", n)
	}
}

func TestKeystoneBadServiceCredentials(t *testing.T) {
	ks, k := newKeystone(t, func(c *KeystoneConfig) { c.Password = "wrong" })
	tok := ks.Token("alice", "demo")
	w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok})
	assertUnavailable(t, w)
	if ks.Validations() != 0 {
		t.Error("validated without a service token")
	}
}

func TestKeystoneServiceToken(t *testing.T) {
	ks, k := newKeystone(t, nil)
	user := ks.Token("alice", "demo")
	svc := ks.Token("nova", "service")
	_, c := keystoneRequest(t, k, map[string]string{"X-Auth-Token": user, "X-Service-Token": svc})
	if c == nil {
		t.Fatal("rejected")
	}
	if c.ServiceUserName != "nova" || c.ServiceProjectID != ks.ProjectID("service") || !slices.Equal(c.ServiceRoles, []string{"service"}) {
		t.Errorf("service identity = %+v", fields(c))
	}
	if creds := c.ToPolicyCredentials(); !slices.Equal(creds["service_roles"].([]string), []string{"service"}) ||
		creds["service_user_id"] != ks.UserID("nova") {
		t.Errorf("credentials = %v", creds)
	}

	// A valid token without the service role is not a service token;
	// with service_token_roles_required the request is refused.
	notSvc := ks.Token("alice", "demo")
	w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": user, "X-Service-Token": notSvc})
	assertKeystone401(t, w)
	w, _ = keystoneRequest(t, k, map[string]string{"X-Auth-Token": user, "X-Service-Token": "bogus"})
	assertKeystone401(t, w)

	// A valid service token lets an expired user token through
	// (allow_expired), as auth_token does for long-running operations.
	ks2, k2 := newKeystone(t, nil)
	ks2.TokenTTL(time.Minute)
	old := ks2.Token("alice", "demo")
	ks2.TokenTTL(time.Hour)
	ks2.Advance(2 * time.Minute)
	svc2 := ks2.Token("nova", "service")
	if w, _ := keystoneRequest(t, k2, map[string]string{"X-Auth-Token": old, "X-Service-Token": svc2}); w.Code != 204 {
		t.Errorf("expired user token with service token: status %d", w.Code)
	}
	w, _ = keystoneRequest(t, k2, map[string]string{"X-Auth-Token": old})
	assertKeystone401(t, w)
}

func TestKeystoneWithoutCatalog(t *testing.T) {
	ks, k := newKeystone(t, func(c *KeystoneConfig) { c.IncludeServiceCatalog = false })
	_, c := keystoneRequest(t, k, map[string]string{"X-Auth-Token": ks.Token("alice", "demo")})
	if c == nil || c.ServiceCatalog != nil || strings.Contains(string(c.TokenInfo), `"catalog"`) {
		t.Errorf("catalog kept with include_service_catalog = False: %v", c)
	}
}

// Tokens never appear in what a context prints or logs.
func TestContextHidesTokens(t *testing.T) {
	ks, k := newKeystone(t, nil)
	tok := ks.Token("alice", "demo")
	_, c := keystoneRequest(t, k, map[string]string{"X-Auth-Token": tok})
	for _, s := range []string{c.String(), strings.TrimSpace(sprintAll(c)), c.LogValue().String()} {
		if strings.Contains(s, tok) {
			t.Errorf("token printed: %s", s)
		}
	}
}
