package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/testing/keystone"
)

// keystoneFromConfig builds the validator from [keystone_authtoken] and
// other sections as a configuration file sets them, on ks's clock.
func keystoneFromConfig(t *testing.T, ks *keystone.Fixture, sections map[string]map[string]string) *Keystone {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Overrides: sections})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := KeystoneConfigFrom(cfg)
	if err != nil {
		t.Fatal(err)
	}
	kc.Now = ks.Now
	k, err := NewKeystone(kc)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// [keystone_authtoken]/auth_section takes the service's own credentials
// from another section; the validator's own options stay.
func TestKeystoneAuthSection(t *testing.T) {
	ks, _ := newKeystone(t, nil)
	k := keystoneFromConfig(t, ks, map[string]map[string]string{
		"keystone_authtoken": {"auth_section": "service_catalog", "username": "nobody", "password": "wrong",
			"auth_url": "http://127.0.0.1:1/v3", "www_authenticate_uri": wwwAuth},
		"service_catalog": {"auth_type": "password", "auth_url": ks.URL(), "username": "ironic", "password": "svc-secret",
			"user_domain_name": "Default", "project_name": "service", "project_domain_name": "Default"},
	})
	w, c := keystoneRequest(t, k, map[string]string{"X-Auth-Token": ks.Token("alice", "demo")})
	if w.Code != http.StatusNoContent || c == nil || c.UserName != "alice" {
		t.Fatalf("status %d context %+v (body %s)", w.Code, c, w.Body)
	}
	if ks.Authentications() != 1 {
		t.Fatalf("authentications = %d", ks.Authentications())
	}
	if w, _ := keystoneRequest(t, k, map[string]string{"X-Auth-Token": "bogus"}); w.Code != http.StatusUnauthorized {
		t.Fatalf("bogus token: %d", w.Code)
	}
}

// [keystone_authtoken]/system_scope = all makes the service's own token
// system scoped: a user with only system roles can validate, one without
// cannot; a project as well is refused before Keystone is asked.
func TestKeystoneSystemScope(t *testing.T) {
	ks, _ := newKeystone(t, nil)
	validator := func(user, password string, extra map[string]string) *Keystone {
		opts := map[string]string{"auth_url": ks.URL(), "username": user, "password": password, "user_domain_name": "Default",
			"www_authenticate_uri": wwwAuth}
		for k, v := range extra {
			opts[k] = v
		}
		return keystoneFromConfig(t, ks, map[string]map[string]string{"keystone_authtoken": opts})
	}
	tok := ks.Token("alice", "demo")
	if w, _ := keystoneRequest(t, validator("sam", "pw", map[string]string{"system_scope": "all"}), map[string]string{"X-Auth-Token": tok}); w.Code != http.StatusNoContent {
		t.Fatalf("system-scoped validator: %d %s", w.Code, w.Body)
	}
	// alice has no system role: Keystone refuses her a system token.
	assertUnavailable(t, func() *httptest.ResponseRecorder {
		w, _ := keystoneRequest(t, validator("alice", "pw", map[string]string{"system_scope": "all"}), map[string]string{"X-Auth-Token": tok})
		return w
	}())
	before := ks.Authentications()
	w, _ := keystoneRequest(t, validator("sam", "pw", map[string]string{"system_scope": "all", "project_name": "service"}),
		map[string]string{"X-Auth-Token": tok})
	assertUnavailable(t, w)
	if ks.Authentications() != before {
		t.Fatal("a token scoped to two targets was asked of Keystone")
	}
}

// serveAt runs k on a request of method and path.
func serveAt(k Authenticator, method, path string, headers map[string]string) int {
	h := Handler(k, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	r := httptest.NewRequest(method, path, nil)
	for name, v := range headers {
		r.Header.Set(name, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// [keystone_authtoken]/service_type lets tokens of application
// credentials with access rules make the requests their rules allow for
// this service, and only those.
func TestKeystoneAccessRules(t *testing.T) {
	ks, withType := newKeystone(t, func(c *KeystoneConfig) { c.ServiceType = "baremetal" })
	_, without := newKeystone(t, nil)
	_, notInCatalog := newKeystone(t, func(c *KeystoneConfig) { c.ServiceType = "volumev3" })
	tok := ks.AppCredentialToken("alice", "demo",
		keystone.AccessRule{Method: "GET", Path: "/v1/nodes/{node_id}", Service: "baremetal"},
		keystone.AccessRule{Method: "PUT", Path: "/v1/nodes/*/states/**", Service: "baremetal"},
		keystone.AccessRule{Method: "GET", Path: "/v1/ports", Service: "compute"})
	auth := map[string]string{"X-Auth-Token": tok}
	for _, c := range []struct {
		k            *Keystone
		method, path string
		want         int
	}{
		{withType, "GET", "/v1/nodes/n1", 204},
		{withType, "PUT", "/v1/nodes/n1/states/power", 204},
		{withType, "PUT", "/v1/nodes/n1/states/provision/x", 204},
		{withType, "GET", "/v1/nodes/n1/ports", 401},
		{withType, "DELETE", "/v1/nodes/n1", 401},
		{withType, "GET", "/v1/ports", 401}, // a rule of another service
		{without, "GET", "/v1/nodes/n1", 401},
		{notInCatalog, "GET", "/v1/nodes/n1", 401},
	} {
		if got := serveAt(c.k, c.method, c.path, auth); got != c.want {
			t.Errorf("%s %s (service_type %q) = %d, want %d", c.method, c.path, c.k.cfg.ServiceType, got, c.want)
		}
	}
	// A request carrying a valid service token is part of a chain of
	// services and is not matched against the rules.
	svc := ks.Token("nova", "service")
	if got := serveAt(withType, "DELETE", "/v1/nodes/n1", map[string]string{"X-Auth-Token": tok, "X-Service-Token": svc}); got != 204 {
		t.Errorf("with a service token: %d", got)
	}
	// An ordinary token is not restricted.
	if got := serveAt(withType, "DELETE", "/v1/nodes/n1", map[string]string{"X-Auth-Token": ks.Token("alice", "demo")}); got != 204 {
		t.Errorf("unrestricted token: %d", got)
	}
}

func TestAccessRulePaths(t *testing.T) {
	for _, c := range []struct {
		path, template string
		want           bool
	}{
		{"/v1/nodes/abc", "/v1/nodes/{id}", true},
		{"/v1/nodes/abc/x", "/v1/nodes/{id}", false},
		{"/v1/nodes/abc", "/v1/nodes/*", true},
		{"/v1/nodes/", "/v1/nodes/*", false},
		{"/v1/nodes/a/b/c", "/v1/nodes/**", true},
		{"/v1/nodes/", "/v1/nodes/**", true},
		{"/v1/nodes/a/b", "/v1/nodes/***", true},
		{"/v2/nodes", "/v1/nodes", false},
		{"/v1/nodesX", "/v1/nodes", false},
	} {
		if got := pathMatches(c.path, c.template); got != c.want {
			t.Errorf("pathMatches(%q, %q) = %v", c.path, c.template, got)
		}
	}
}
