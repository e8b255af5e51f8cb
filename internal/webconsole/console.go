// Package webconsole is the built-in web console: a page served by the
// API process under /openkeel/console/ that shows the fleet, lists and
// pages nodes, shows one node with its ports, history, BIOS, firmware and
// inventory, and acts on it, all through the real /v1 API with the
// caller's own credentials. It is ours, not upstream's: it lives under the
// /openkeel/ prefix so that /v1 stays exactly upstream's.
//
// The server side is small on purpose. The assets (plain HTML, CSS and
// JavaScript, embedded) never contain data; the browser reads every value
// from the API, which authenticates and authorizes each call as it does
// for any client, and renders it as text. Besides the assets the package
// answers three things the browser cannot do alone: the fleet's counts
// (one pass over the node table instead of paging 10,000 nodes into the
// browser), which authentication the API expects, and a Keystone login
// (identity endpoints rarely allow a cross-origin POST from our page).
package webconsole

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/openkeel/ironic/internal/auth"
)

// Prefix is where the console's pages are served.
const Prefix = "/openkeel/console/"

// FleetPath is the fleet overview's JSON endpoint.
const FleetPath = "/openkeel/v1/fleet"

// csp forbids everything the console does not use: no inline script or
// style, no third-party origin, no framing. Data shown by the page comes
// from the API as JSON and is set as text, so even a value crafted as
// markup by whoever can write a node field cannot run here.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

//go:embed assets
var assets embed.FS

// Options is what the console needs from the process that serves it.
type Options struct {
	// AuthStrategy is [DEFAULT]/auth_strategy: the login form the page
	// shows (none, user and password, Keystone credentials or token).
	AuthStrategy string
	// Authenticate is the API's own authenticator; the fleet endpoint
	// accepts exactly the callers the API accepts.
	Authenticate auth.Authenticator
	// Fleet counts the nodes the caller may list.
	Fleet *Fleet
	// Login obtains Keystone tokens for the login form; nil unless
	// AuthStrategy is keystone.
	Login *Login
}

// Handler serves the console and its endpoints.
type Handler struct {
	opts   Options
	static http.Handler
}

// New returns the console's handler.
func New(o Options) (*Handler, error) {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, fmt.Errorf("console assets: %w", err)
	}
	return &Handler{opts: o, static: http.StripPrefix(Prefix, http.FileServerFS(sub))}, nil
}

// Mount serves the console's paths from h and every other path from next.
func (h *Handler) Mount(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.Owns(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Owns reports whether path is one of the console's.
func (h *Handler) Owns(path string) bool {
	return path == FleetPath || path == strings.TrimSuffix(Prefix, "/") || strings.HasPrefix(path, Prefix)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", csp)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cache-Control", "no-store")
	switch p := r.URL.Path; {
	case p == FleetPath:
		auth.Handler(h.opts.Authenticate, http.HandlerFunc(h.opts.Fleet.serve)).ServeHTTP(w, r)
	case p == strings.TrimSuffix(Prefix, "/"):
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
	case p == Prefix+"config.json":
		h.serveConfig(w, r)
	case p == Prefix+"login":
		if h.opts.Login == nil {
			http.NotFound(w, r)
			return
		}
		h.opts.Login.serve(w, r)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	default:
		h.static.ServeHTTP(w, r)
	}
}

// consoleConfig tells the page how to log in. It holds no secret and is
// served without authentication: the login form is shown before there
// are credentials to send.
type consoleConfig struct {
	AuthStrategy string `json:"auth_strategy"`
	// KeystoneLogin says the server can obtain a token from a user name
	// and password (else the page offers only a pasted token).
	KeystoneLogin bool `json:"keystone_login"`
}

func (h *Handler) serveConfig(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, consoleConfig{AuthStrategy: h.opts.AuthStrategy, KeystoneLogin: h.opts.Login != nil})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "cannot encode response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
