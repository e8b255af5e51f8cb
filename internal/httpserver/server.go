// Package httpserver runs an http.Handler on the listeners Ironic's [api]
// options describe (TCP host and port or a unix socket, optional TLS) and
// shuts it down gracefully when its context ends.
package httpserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

// Options mirror the [api] section (and the same shape serves JSON-RPC).
type Options struct {
	HostIP         string
	Port           int
	UnixSocket     string      // when set, listen here instead of HostIP:Port
	UnixSocketMode fs.FileMode // 0 keeps the umask's mode
	EnableSSL      bool
	CertFile       string
	KeyFile        string
	// TLSMinVersion is "1.2" or "1.3" as [api]/tls_minimum_version.
	TLSMinVersion string
	// ShutdownTimeout bounds how long in-flight requests may finish.
	ShutdownTimeout time.Duration
	// Limits bound connections and slow clients ([openkeel_http]); the
	// zero value has safe defaults.
	Limits Limits
	Logger *slog.Logger
	// CherootServerName, when set, makes the listener answer as the
	// cheroot server of upstream master's standalone API named so
	// ("ironic_api"): malformed request heads get cheroot's plain-text
	// answers, request targets reach the handler as cheroot passes them
	// (see cheroot.go), every answer names the server in its Server
	// header, and the listener speaks HTTP/1.x only, as cheroot does.
	CherootServerName string
	// afterFunc arms the body timers; tests replace time.AfterFunc.
	afterFunc afterFunc
}

// Server is a listening HTTP server; Serve blocks until it stops.
type Server struct {
	opts Options
	ln   net.Listener
	srv  *http.Server
}

// Listen opens the listener now, so that callers learn about a busy port or
// a bad certificate before they report themselves ready.
func Listen(opts Options, h http.Handler) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	limits := opts.Limits.withDefaults()
	if opts.afterFunc == nil {
		opts.afterFunc = realAfterFunc
	}
	h = bodyDeadline(h, limits.BodyTimeout, opts.afterFunc, opts.Logger)
	if opts.CherootServerName != "" {
		h = withTLSState(serverHeader(opts.CherootServerName, h))
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       limits.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	var ln net.Listener
	var err error
	if opts.UnixSocket != "" {
		ln, err = listenUnix(opts.UnixSocket, opts.UnixSocketMode)
	} else {
		ln, err = net.Listen("tcp", net.JoinHostPort(opts.HostIP, strconv.Itoa(opts.Port)))
	}
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	// Below TLS, so that a handshake never started still holds a slot
	// only until the header timeout closes it.
	ln = newLimitListener(ln, limits.MaxConnections, opts.Logger)
	if opts.EnableSSL {
		cfg, err := tlsConfig(opts)
		if err != nil {
			ln.Close()
			return nil, err
		}
		srv.TLSConfig = cfg
		ln = tls.NewListener(ln, cfg)
	}
	if opts.CherootServerName != "" {
		// Outermost: the front reads what TLS decrypted. net/http then
		// sees no *tls.Conn, so it neither negotiates HTTP/2 (which
		// cheroot does not speak either) nor sets r.TLS, which
		// withTLSState restores.
		ln = cherootListener{Listener: ln, name: opts.CherootServerName}
		srv.ConnContext = cherootConnContext
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
	}
	return &Server{opts: opts, ln: ln, srv: srv}, nil
}

// Addr is the bound address (useful with port 0 in tests).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve answers requests until ctx ends, then stops accepting connections and
// waits for in-flight requests up to ShutdownTimeout.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	timeout := s.opts.ShutdownTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := s.srv.Shutdown(sctx)
	if s.opts.UnixSocket != "" {
		os.Remove(s.opts.UnixSocket)
	}
	if err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

func listenUnix(path string, mode fs.FileMode) (net.Listener, error) {
	// A socket left by a previous run would make bind fail; only remove a
	// socket, never a regular file someone pointed us at by mistake.
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSocket != 0 {
		os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if mode != 0 {
		if err := os.Chmod(path, mode); err != nil {
			ln.Close()
			return nil, fmt.Errorf("chmod %s: %w", path, err)
		}
	}
	return ln, nil
}

func tlsConfig(opts Options) (*tls.Config, error) {
	if opts.CertFile == "" || opts.KeyFile == "" {
		return nil, errors.New("enable_ssl_api is set but cert_file or key_file is empty")
	}
	cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate %s: %w", opts.CertFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
	switch opts.TLSMinVersion {
	case "", "1.3":
	case "1.2":
		cfg.MinVersion = tls.VersionTLS12
	default:
		return nil, fmt.Errorf("unsupported tls_minimum_version %q", opts.TLSMinVersion)
	}
	return cfg, nil
}
