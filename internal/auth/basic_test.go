package auth

import (
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/openkeel/ironic/internal/errs"
)

func bcryptDigest(t *testing.T, password, prefix string) string {
	t.Helper()
	d, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	// Go writes $2a$; the other bcrypt variants differ only in the tag.
	return prefix + string(d[4:])
}

func writeUserFile(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func basicHeader(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// serve runs one request through Handler and returns the recorded answer.
func serve(t *testing.T, a Authenticator, header map[string]string) (*httptest.ResponseRecorder, *Context) {
	t.Helper()
	var got *Context
	h := Handler(a, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = FromContext(r.Context())
		w.WriteHeader(http.StatusNoContent)
	}))
	r := httptest.NewRequest(http.MethodGet, "/v1/nodes", nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w, got
}

func TestBasicAuth(t *testing.T) {
	path := writeUserFile(t,
		"# comment lines have no colon and are skipped",
		"alice:"+bcryptDigest(t, "wonderland", "$2y$"),
		"  bob:"+bcryptDigest(t, "builder", "$2b$")+"  ",
		"carol:"+bcryptDigest(t, "secret:with:colons", "$2a$"),
		"alice:"+bcryptDigest(t, "second-entry-ignored", "$2y$"),
	)
	a, err := NewBasicAuth(path)
	if err != nil {
		t.Fatal(err)
	}
	const realm = `Basic realm="Baremetal API"`
	cases := []struct {
		name      string
		header    string
		noHeader  bool
		status    int
		body      string
		challenge bool
		user      string
	}{
		{name: "good password $2y$", header: basicHeader("alice", "wonderland"), status: 204, user: "alice"},
		{name: "good password $2b$, entry with spaces", header: basicHeader("bob", "builder"), status: 204, user: "bob"},
		{name: "password with colons", header: basicHeader("carol", "secret:with:colons"), status: 204, user: "carol"},
		{name: "scheme is case-insensitive", header: strings.Replace(basicHeader("alice", "wonderland"), "Basic", "bAsIc", 1), status: 204, user: "alice"},
		{name: "first entry wins", header: basicHeader("alice", "second-entry-ignored"), status: 401,
			body: `{"error":{"message":"Incorrect username or password","code":401}}`, challenge: true},
		{name: "bad password", header: basicHeader("alice", "wrong"), status: 401,
			body: `{"error":{"message":"Incorrect username or password","code":401}}`, challenge: true},
		{name: "unknown user", header: basicHeader("mallory", "wonderland"), status: 401,
			body: `{"error":{"message":"Incorrect username or password","code":401}}`, challenge: true},
		{name: "no header", noHeader: true, status: 401,
			body: `{"error":{"message":"Authorization required","code":401}}`, challenge: true},
		{name: "one word", header: "Basic", status: 400,
			body: `{"error":{"message":"Could not parse Authorization header","code":400}}`},
		{name: "other scheme", header: "Bearer abc", status: 400,
			body: `{"error":{"message":"Unsupported authorization type \"Bearer\"","code":400}}`},
		{name: "not base64", header: "Basic !!!!", status: 400,
			body: `{"error":{"message":"Could not decode authorization token","code":400}}`},
		{name: "bad padding", header: "Basic YWxpY2U", status: 400,
			body: `{"error":{"message":"Could not decode authorization token","code":400}}`},
		{name: "no colon", header: "Basic " + base64.StdEncoding.EncodeToString([]byte("alice")), status: 400,
			body: `{"error":{"message":"Could not decode authorization token","code":400}}`},
		{name: "user not UTF-8", header: "Basic " + base64.StdEncoding.EncodeToString([]byte("\xff\xfe:x")), status: 400,
			body: `{"error":{"message":"Could not decode authorization token","code":400}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"X-Roles": "admin", "X-Auth-Token": "client-token"}
			if !tc.noHeader {
				h["Authorization"] = tc.header
			}
			w, c := serve(t, a, h)
			if w.Code != tc.status {
				t.Fatalf("status = %d, want %d (body %s)", w.Code, tc.status, w.Body)
			}
			if tc.status == 204 {
				if c == nil || c.UserName != tc.user || c.UserID != tc.user || c.Strategy != StrategyHTTPBasic {
					t.Fatalf("context = %v", c)
				}
				if c.AuthToken != "" {
					t.Error("http_basic must not keep a token in the context")
				}
				if len(c.Roles) != 1 || c.Roles[0] != "admin" {
					t.Errorf("roles = %q; upstream reads the client's headers", c.Roles)
				}
				return
			}
			if got := w.Body.String(); got != tc.body {
				t.Errorf("body = %s\nwant   %s", got, tc.body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if got := w.Header().Get("WWW-Authenticate"); (got == realm) != tc.challenge || (!tc.challenge && got != "") {
				t.Errorf("WWW-Authenticate = %q, challenge expected: %v", got, tc.challenge)
			}
		})
	}
}

func TestBasicFileStartup(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := NewBasicAuth(missing)
	if err == nil {
		t.Fatal("missing file accepted")
	}
	if !strings.Contains(err.Error(), missing) || !errs.Is(err, errs.ClassConfigInvalid) {
		t.Errorf("error %q must be ConfigInvalid naming the file", err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %q must wrap the cause", err)
	}

	dir := t.TempDir()
	if _, err := NewBasicAuth(dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("a directory must be refused naming it, got %v", err)
	}

	for name, digest := range map[string]string{
		"md5":   "$apr1$abc$0123456789abcdefghijkl",
		"sha1":  "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=",
		"crypt": "rqXexS6ZhobKA",
		"plain": "password",
	} {
		p := writeUserFile(t, "ok:"+bcryptDigest(t, "x", "$2y$"), "dave:"+digest)
		_, err := NewBasicAuth(p)
		if err == nil {
			t.Errorf("%s digest accepted", name)
			continue
		}
		want := "Invalid configuration file. Only bcrypt digested passwords are supported for dave"
		if !strings.Contains(err.Error(), want) || !errs.Is(err, errs.ClassConfigInvalid) {
			t.Errorf("%s: error %q, want %q", name, err, want)
		}
	}
}

// The file is read again when it changes, as upstream reads it per request.
func TestBasicFileReload(t *testing.T) {
	path := writeUserFile(t, "alice:"+bcryptDigest(t, "one", "$2y$"))
	a, err := NewBasicAuth(path)
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := serve(t, a, map[string]string{"Authorization": basicHeader("alice", "one")}); w.Code != 204 {
		t.Fatalf("status %d", w.Code)
	}
	if err := os.WriteFile(path, []byte("alice:"+bcryptDigest(t, "two", "$2y$")+"\nerin:{SHA}x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Make sure the change is visible even on coarse mtime file systems.
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if w, _ := serve(t, a, map[string]string{"Authorization": basicHeader("alice", "one")}); w.Code != 401 {
		t.Errorf("old password: status %d", w.Code)
	}
	if w, _ := serve(t, a, map[string]string{"Authorization": basicHeader("alice", "two")}); w.Code != 204 {
		t.Errorf("new password: status %d", w.Code)
	}
	w, _ := serve(t, a, map[string]string{"Authorization": basicHeader("erin", "x")})
	if w.Code != 500 || w.Body.String() != `{"error":{"message":"Invalid configuration file. Only bcrypt digested passwords are supported for erin","code":500}}` {
		t.Errorf("non-bcrypt entry at request time: %d %s", w.Code, w.Body)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	w, _ = serve(t, a, map[string]string{"Authorization": basicHeader("alice", "two")})
	if w.Code != 500 || w.Body.String() != `{"error":{"message":"Invalid configuration file. Problem reading auth user file","code":500}}` {
		t.Errorf("file gone: %d %s", w.Code, w.Body)
	}
}

func TestCheckCacheBounded(t *testing.T) {
	c := newCheckCache(3)
	for i := byte(0); i < 5; i++ {
		c.put([32]byte{i}, i%2 == 0)
	}
	if len(c.items) != 3 || c.order.Len() != 3 {
		t.Fatalf("cache holds %d entries, want 3", len(c.items))
	}
	if _, ok := c.get([32]byte{0}); ok {
		t.Error("oldest entry kept")
	}
	if ok, hit := c.get([32]byte{4}); !hit || !ok {
		t.Error("newest entry lost")
	}
}
