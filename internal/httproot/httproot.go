// Package httproot is the conductor's embedded file server for
// [deploy]/http_root: what nginx or Apache serve next to an upstream
// conductor (boot ISOs, iPXE scripts, kernels, instance images for the
// agent), so an all-in-one deployment needs no separate web server.
//
// It serves regular files only, read-only, never lists directories and
// never leaves the root, symbolic links included, except for links into
// the directories the conductor itself publishes from by linking: upstream
// links instance images for the agent from [pxe]/images_path into
// http_root, which nginx follows.
package httproot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/httpserver"
)

// Options say what to serve and where.
type Options struct {
	// Root is [deploy]/http_root.
	Root string
	// HostIP is the address to listen on ("" = all addresses):
	// [openkeel_http]/http_root_host_ip.
	HostIP string
	// Port is the port of [deploy]/http_url (0 = any free port).
	Port int
	// TLS serves HTTPS with CertFile and KeyFile.
	TLS               bool
	CertFile, KeyFile string
	// TLSMinVersion is "1.2" or "1.3".
	TLSMinVersion string
	// Limits bound connections and slow clients ([openkeel_http]).
	Limits httpserver.Limits
	Logger *slog.Logger
	// LinkTargets are directories outside Root that symbolic links under
	// Root may lead into ([pxe]/images_path).
	LinkTargets []string
}

// OptionsFromConfig derives the server from [deploy]/http_url: its port
// (80 or 443 when it has none) and, for an https URL, TLS with the
// certificate of [api]/cert_file and key_file; it listens on
// [openkeel_http]/http_root_host_ip (every address when unset).
func OptionsFromConfig(c *config.Config) (Options, error) {
	raw := c.StringOf(config.DeployHTTPURL)
	if raw == "" {
		return Options{}, errors.New("[deploy]/http_url is not set")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Options{}, fmt.Errorf("[deploy]/http_url %q: %w", raw, err)
	}
	o := Options{
		Root: c.StringOf(config.DeployHTTPRoot), TLS: u.Scheme == "https",
		HostIP: c.StringOf(config.OpenkeelHTTPHTTPRootHostIP), Limits: httpserver.LimitsFromConfig(c),
	}
	if p := c.StringOf(config.PXEImagesPath); p != "" {
		o.LinkTargets = []string{p}
	}
	o.Port, err = urlPort(u)
	if err != nil {
		return Options{}, fmt.Errorf("[deploy]/http_url %q: %w", raw, err)
	}
	if o.TLS {
		o.CertFile = c.StringOf(config.APICertFile)
		o.KeyFile = c.StringOf(config.APIKeyFile)
		o.TLSMinVersion = c.StringOf(config.APITLSMinimumVersion)
	}
	return o, nil
}

func urlPort(u *url.URL) (int, error) {
	p := u.Port()
	if p == "" {
		if u.Scheme == "https" {
			return 443, nil
		}
		return 80, nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("invalid port %q", p)
	}
	return n, nil
}

// Server is a running file server.
type Server struct {
	srv  *httpserver.Server
	tls  bool
	done chan error
}

// Start creates the root when missing, listens (so a busy port is
// reported here) and serves until ctx ends.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.Root == "" {
		return nil, errors.New("http_root is empty")
	}
	if err := os.MkdirAll(o.Root, 0o755); err != nil {
		return nil, fmt.Errorf("create http_root: %w", err)
	}
	h, err := NewHandler(o.Root, o.Logger, o.LinkTargets...)
	if err != nil {
		return nil, err
	}
	srv, err := httpserver.Listen(httpserver.Options{
		HostIP: o.HostIP, Port: o.Port, EnableSSL: o.TLS, CertFile: o.CertFile, KeyFile: o.KeyFile,
		TLSMinVersion: o.TLSMinVersion, Limits: o.Limits, Logger: o.Logger,
	}, h)
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("http_root server: %w", err)
	}
	s := &Server{srv: srv, tls: o.TLS, done: make(chan error, 1)}
	go func() {
		err := srv.Serve(ctx)
		h.Close()
		s.done <- err
	}()
	return s, nil
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.srv.Addr() }

// URL is the server's base URL on its bound address.
func (s *Server) URL() string {
	scheme := "http"
	if s.tls {
		scheme = "https"
	}
	return scheme + "://" + s.Addr().String()
}

// Wait blocks until the server has stopped after its context ended.
func (s *Server) Wait() error { return <-s.done }

// Handler serves files below an os.Root, which refuses any path or
// symbolic link leading outside it, and files of the link targets that
// links under the root resolve to.
type Handler struct {
	root    *os.Root
	dir     string
	targets []string
	log     *slog.Logger
}

// NewHandler serves the files under dir, and those of linkTargets reached
// through links under dir; Close releases the directory.
func NewHandler(dir string, log *slog.Logger, linkTargets ...string) (*Handler, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open http_root: %w", err)
	}
	if log == nil {
		log = slog.Default()
	}
	return &Handler{root: r, dir: dir, targets: linkTargets, log: log}, nil
}

// openLinked opens name when it resolves into one of the link targets;
// the file is then opened below that target's own os.Root, so nothing
// further along can lead out of it.
func (h *Handler) openLinked(name string) (*os.File, error) {
	resolved, err := filepath.EvalSymlinks(filepath.Join(h.dir, name))
	if err != nil {
		return nil, err
	}
	for _, t := range h.targets {
		dir, err := filepath.EvalSymlinks(t)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(dir, resolved)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			continue
		}
		r, err := os.OpenRoot(dir)
		if err != nil {
			continue
		}
		f, err := r.Open(rel)
		r.Close()
		return f, err
	}
	return nil, fs.ErrNotExist
}

// Close releases the root directory.
func (h *Handler) Close() error { return h.root.Close() }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name, ok := relName(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	f, err := h.root.Open(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && len(h.targets) > 0 {
		f, err = h.openLinked(name)
	}
	if err != nil {
		h.notFound(w, r, name, err)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		h.notFound(w, r, name, err)
		return
	}
	http.ServeContent(w, r, st.Name(), st.ModTime(), f)
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request, name string, err error) {
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		h.log.Debug("http_root request refused", "path", name, "error", err)
	}
	http.NotFound(w, r)
}

// relName turns a URL path into a name relative to the root; a path with
// ".." segments or NUL bytes is refused rather than cleaned, as no
// legitimate client sends one.
func relName(p string) (string, bool) {
	if strings.ContainsRune(p, 0) || strings.HasSuffix(p, "/") {
		return "", false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == ".." {
			return "", false
		}
	}
	name := strings.TrimPrefix(path.Clean("/"+p), "/")
	if name == "" || name == "." {
		return "", false
	}
	return name, true
}
