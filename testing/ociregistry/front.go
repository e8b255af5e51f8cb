package ociregistry

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Front stands before a Registry as a public registry's edge does: it can
// require bearer tokens from its own token realm, send blobs to a CDN by
// redirect, expire tokens and corrupt a blob on demand. Every request is
// logged to the test.
type Front struct {
	t      testing.TB
	srv    *httptest.Server
	cdn    *httptest.Server
	target *url.URL
	proxy  *httputil.ReverseProxy

	mu sync.Mutex
	// user and pass are the credentials the token realm takes ("" user
	// with a pass: a pre-shared token), when bearer auth is on.
	bearer     bool
	user, pass string
	tokens     map[string]bool
	scopes     []string
	redirect   bool
	corrupt    bool
	cdnAuth    []string
	tokenCalls int
}

// NewFront serves a front to r on 127.0.0.1, over TLS when tls is set (its
// certificate is CAFile's).
func NewFront(t testing.TB, r *Registry, tls bool) *Front {
	t.Helper()
	target, _ := url.Parse("http://" + r.Host)
	f := &Front{t: t, target: target, tokens: map[string]bool{}, proxy: httputil.NewSingleHostReverseProxy(target)}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	if tls {
		f.srv.StartTLS()
	} else {
		f.srv.Start()
	}
	t.Cleanup(f.srv.Close)
	f.cdn = httptest.NewServer(http.HandlerFunc(f.serveCDN))
	t.Cleanup(f.cdn.Close)
	return f
}

// Host is the front's host:port.
func (f *Front) Host() string {
	return strings.TrimPrefix(strings.TrimPrefix(f.srv.URL, "https://"), "http://")
}

// CDNHost is the host:port blobs are redirected to.
func (f *Front) CDNHost() string { return strings.TrimPrefix(f.cdn.URL, "http://") }

// CAFile writes the front's TLS certificate to a file in dir.
func (f *Front) CAFile(dir string) string {
	f.t.Helper()
	p := filepath.Join(dir, "front-ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw})
	if err := os.WriteFile(p, pemBytes, 0o600); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// RequireBearer makes /v2/ ask for a bearer token from the front's
// /token realm, which hands one out for the Basic credentials user:pass.
func (f *Front) RequireBearer(user, pass string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bearer, f.user, f.pass = true, user, pass
}

// ExpireTokens invalidates every token handed out.
func (f *Front) ExpireTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens = map[string]bool{}
}

// RedirectBlobs sends blob requests to the CDN.
func (f *Front) RedirectBlobs() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.redirect = true
}

// CorruptNextBlob flips a byte of the next blob served.
func (f *Front) CorruptNextBlob() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.corrupt = true
}

// Scopes are the scopes tokens were asked for.
func (f *Front) Scopes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.scopes...)
}

// CDNAuthorization lists the Authorization header of each CDN request
// ("" when none came).
func (f *Front) CDNAuthorization() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cdnAuth...)
}

func (f *Front) serve(w http.ResponseWriter, r *http.Request) {
	f.t.Logf("oci front: %s %s", r.Method, r.URL)
	if r.URL.Path == "/token" {
		f.serveToken(w, r)
		return
	}
	f.mu.Lock()
	bearer, redirect := f.bearer, f.redirect
	authorized := !bearer || f.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	expired := bearer && strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") && !authorized
	f.mu.Unlock()
	if !authorized {
		challenge := fmt.Sprintf(`Bearer realm="%s/token",service="oci-front"`, f.srv.URL)
		if expired {
			challenge += `,error="invalid_token"`
		}
		w.Header().Set("Www-Authenticate", challenge)
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED"}]}`, http.StatusUnauthorized)
		return
	}
	if redirect && strings.Contains(r.URL.Path, "/blobs/") {
		http.Redirect(w, r, f.cdn.URL+r.URL.Path, http.StatusTemporaryRedirect)
		return
	}
	f.forward(w, r)
}

func (f *Front) serveToken(w http.ResponseWriter, r *http.Request) {
	user, pass, _ := r.BasicAuth()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokenCalls++
	f.scopes = append(f.scopes, r.URL.Query().Get("scope"))
	if user != f.user || pass != f.pass {
		w.Header().Set("Www-Authenticate", `Basic realm="oci-front"`)
		http.Error(w, "bad credentials", http.StatusUnauthorized)
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := base64.RawURLEncoding.EncodeToString(b)
	f.tokens[tok] = true
	_ = json.NewEncoder(w).Encode(map[string]string{"token": tok})
}

func (f *Front) serveCDN(w http.ResponseWriter, r *http.Request) {
	f.t.Logf("oci cdn: %s %s", r.Method, r.URL)
	f.mu.Lock()
	f.cdnAuth = append(f.cdnAuth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	f.forward(w, r)
}

// forward proxies to the registry, corrupting a blob when asked.
func (f *Front) forward(w http.ResponseWriter, r *http.Request) {
	r.Header.Del("Authorization")
	f.mu.Lock()
	corrupt := f.corrupt && strings.Contains(r.URL.Path, "/blobs/")
	if corrupt {
		f.corrupt = false
	}
	f.mu.Unlock()
	if !corrupt {
		f.proxy.ServeHTTP(w, r)
		return
	}
	resp, err := http.Get(f.target.String() + r.URL.Path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if len(body) > 0 {
		body[0] ^= 0xff
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}
