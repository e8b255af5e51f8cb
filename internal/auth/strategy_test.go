package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/config"
)

func loadConfig(t *testing.T, body string) *config.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ironic.conf")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.LoadOptions{Files: []string{p}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewFromConfig(t *testing.T) {
	api := writeUserFile(t, "api:"+bcryptDigest(t, "a", "$2y$"))
	rpc := writeUserFile(t, "rpc:"+bcryptDigest(t, "r", "$2y$"))
	c := loadConfig(t, "[DEFAULT]\nauth_strategy = http_basic\nhttp_basic_auth_user_file = "+api+
		"\n[json_rpc]\nhttp_basic_auth_user_file = "+rpc+"\n")
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := a.(*BasicAuth); !ok || b.File.Path() != api {
		t.Errorf("API authenticator = %#v", a)
	}
	// [json_rpc]/auth_strategy unset: the global one, with its own file.
	r, err := NewJSONRPC(c, "json_rpc")
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := r.(*BasicAuth); !ok || b.File.Path() != rpc {
		t.Errorf("JSON-RPC authenticator = %#v", r)
	}
	if w, _ := serve(t, r, map[string]string{"Authorization": basicHeader("api", "a")}); w.Code != 401 {
		t.Errorf("API user accepted by the JSON-RPC file: %d", w.Code)
	}
	if w, _ := serve(t, r, map[string]string{"Authorization": basicHeader("rpc", "r")}); w.Code != 204 {
		t.Errorf("JSON-RPC user refused: %d", w.Code)
	}

	c = loadConfig(t, "[DEFAULT]\nauth_strategy = keystone\n[json_rpc]\nauth_strategy = noauth\n")
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), "auth_url") {
		t.Errorf("keystone without auth_url: %v", err)
	}
	if r, err := NewJSONRPC(c, "json_rpc"); err != nil || r != (NoAuth{}) {
		t.Errorf("json_rpc noauth: %#v %v", r, err)
	}

	missing := filepath.Join(t.TempDir(), "htpasswd")
	c = loadConfig(t, "[DEFAULT]\nauth_strategy = http_basic\nhttp_basic_auth_user_file = "+missing+"\n")
	if _, err := New(c); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing user file: %v", err)
	}

	c = loadConfig(t, "[DEFAULT]\nauth_strategy = keystone\n[keystone_authtoken]\nauth_url = http://127.0.0.1:5000\nusername = ironic\npassword = p\nproject_name = service\ntoken_cache_time = 60\n")
	a, err = New(c)
	if err != nil {
		t.Fatal(err)
	}
	k := a.(*Keystone)
	if k.cfg.TokenCacheTime.Seconds() != 60 || k.cfg.WWWAuthenticateURI != "http://127.0.0.1:5000" || k.cfg.Interface != "internal" || !k.cfg.IncludeServiceCatalog {
		t.Errorf("keystone settings = %+v", k.cfg)
	}
}
