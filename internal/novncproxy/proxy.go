// Package novncproxy is upstream's ironic-novncproxy: it serves the noVNC
// web client and, on its websocket, checks the node's console token, then
// joins the browser to the VNC server of the node's console container
// through an RFB security proxy.
package novncproxy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/openkeel/ironic/internal/console/vnc"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// Nodes finds a node by UUID (the proxy reads the database directly, as
// upstream's does with use_rpc_for_database off).
type Nodes interface {
	GetNodeByUUID(ctx context.Context, uuid string) (*model.Node, error)
}

// Options configure the proxy ([vnc] and [cors]/allowed_origin).
type Options struct {
	// Web is [vnc]/novnc_web, the noVNC files served; "" serves none.
	Web string
	// AuthSchemes is [vnc]/novnc_auth_schemes.
	AuthSchemes []string
	// TokenTimeout is [vnc]/token_timeout.
	TokenTimeout time.Duration
	// AllowedOrigins is [cors]/allowed_origin: hosts a browser's Origin
	// may name besides the proxy's own.
	AllowedOrigins []string
	// Now is the clock tokens are checked against.
	Now func() time.Time
	// DialTimeout bounds the connection to the VNC server.
	DialTimeout time.Duration
	Log         *slog.Logger
}

// Proxy is the proxy's HTTP handler.
type Proxy struct {
	o     Options
	nodes Nodes
	sec   *securityProxy
	files http.Handler
	wg    sync.WaitGroup
}

// New checks the options (the web directory must exist, as upstream
// refuses to start without it) and returns the handler.
func New(o Options, nodes Nodes) (*Proxy, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = 10 * time.Second
	}
	if len(o.AuthSchemes) == 0 {
		o.AuthSchemes = []string{"none"}
	}
	sec, err := newSecurityProxy(o.AuthSchemes)
	if err != nil {
		return nil, errs.New(errs.ClassConfigInvalid, map[string]any{"error_msg": err.Error()})
	}
	p := &Proxy{o: o, nodes: nodes, sec: sec}
	if o.Web != "" {
		if _, err := os.Stat(o.Web); err != nil {
			return nil, errs.New(errs.ClassConfigInvalid, map[string]any{"error_msg": fmt.Sprintf("Can not find html/js files at %s.", o.Web)})
		}
		p.files = http.FileServer(noListing{http.Dir(o.Web)})
	}
	return p, nil
}

// Wait returns when every proxied connection has ended.
func (p *Proxy) Wait() { p.wg.Wait() }

// ServeHTTP serves the websocket on any path with ?node=&token=, and the
// noVNC files otherwise.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		p.serveWebsocket(w, r)
		return
	}
	if strings.HasPrefix(r.URL.Path, "//") {
		http.Error(w, "URI must not start with //", http.StatusBadRequest)
		return
	}
	if p.files == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		http.NotFound(w, r)
		return
	}
	p.files.ServeHTTP(w, r)
}

// serveWebsocket authorizes the request before upgrading it: upstream
// upgrades first and closes on a bad token, but refusing the upgrade
// gives a stranger nothing at all, not even a websocket.
func (p *Proxy) serveWebsocket(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	n, err := p.authorize(ctx, q.Get("node"), q.Get("token"))
	if err == nil {
		err = p.checkOrigin(r)
	}
	if err != nil {
		p.o.Log.InfoContext(ctx, "console connection refused", "node", q.Get("node"), "remote", r.RemoteAddr, "reason", err)
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	ii := n.InternalInfo()
	host := ii.String(model.DIIVNCHost)
	port, _ := ii.Int(model.DIIVNCPort)
	if host == "" || port == 0 {
		http.Error(w, "the node's console has no VNC server", http.StatusServiceUnavailable)
		return
	}
	// noVNC asks for the "binary" subprotocol; the Origin was checked
	// above by upstream's rules, so the library's own check is off.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"binary"}, InsecureSkipVerify: true})
	if err != nil {
		p.o.Log.InfoContext(ctx, "websocket upgrade failed", "node", n.UUID, "error", err)
		return
	}
	p.wg.Add(1)
	defer p.wg.Done()
	// The request's context ends when the handler returns; the proxied
	// session has its own.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	tenant := websocket.NetConn(sctx, c, websocket.MessageBinary)
	defer tenant.Close()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	p.o.Log.InfoContext(ctx, "connecting to console", "node", n.UUID, "target", addr)
	d := net.Dialer{Timeout: p.o.DialTimeout}
	target, err := d.DialContext(sctx, "tcp", addr)
	if err != nil {
		p.o.Log.WarnContext(ctx, "console VNC server unreachable", "node", n.UUID, "target", addr, "error", err)
		_ = c.Close(websocket.StatusTryAgainLater, "console unreachable")
		return
	}
	defer target.Close()
	if err := p.sec.connect(tenant, target); err != nil {
		p.o.Log.WarnContext(ctx, "Unable to perform security proxying, shutting down connection", "node", n.UUID, "error", err)
		return
	}
	p.o.Log.InfoContext(ctx, "Finished security handshake, resuming normal proxy mode", "node", n.UUID)
	join(tenant, target)
	p.o.Log.InfoContext(ctx, "websocket client or target closed", "node", n.UUID, "target", addr)
}

// join copies both ways until either side ends, then closes both.
func join(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	_ = a.Close()
	_ = b.Close()
	<-done
}

// authorize is upstream's _get_node plus novnc_validate: an unknown node
// and a bad or expired token are the same NotAuthorized.
func (p *Proxy) authorize(ctx context.Context, node, token string) (*model.Node, error) {
	if node == "" || token == "" {
		return nil, errs.New(errs.ClassNotAuthorized, nil)
	}
	n, err := p.nodes.GetNodeByUUID(ctx, node)
	if err != nil || n.UUID != node {
		return nil, errs.New(errs.ClassNotAuthorized, nil)
	}
	if err := vnc.Validate(n, token, p.o.Now(), p.o.TokenTimeout); err != nil {
		return nil, err
	}
	return n, nil
}

// checkOrigin is upstream's Origin check: a browser's Origin must name
// the proxy's own host or one of [cors]/allowed_origin;
// X-Forwarded-Proto stands for the scheme behind a TLS-terminating
// proxy. A request without Origin is not a browser's and passes.
func (p *Proxy) checkOrigin(r *http.Request) error {
	raw := r.Header.Get("Origin")
	if raw == "" {
		return nil
	}
	expected := append([]string{hostOnly(r.Host)}, p.o.AllowedOrigins...)
	u, err := url.Parse(raw)
	scheme := ""
	if err == nil {
		scheme = u.Scheme
	}
	if fp := r.Header.Get("X-Forwarded-Proto"); fp != "" {
		scheme = fp
	}
	if err != nil || u.Hostname() == "" || scheme == "" {
		return errs.NewMessage(errs.ClassNotAuthorized, "Origin header not valid.")
	}
	for _, e := range expected {
		if u.Hostname() == e {
			return nil
		}
	}
	return errs.NewMessage(errs.ClassNotAuthorized, "Origin header does not match this host.")
}

// hostOnly strips the port (and IPv6 brackets) from a Host header.
func hostOnly(h string) string {
	if strings.HasPrefix(h, "[") {
		if i := strings.Index(h, "]"); i > 0 {
			return h[1:i]
		}
	}
	if i := strings.LastIndex(h, ":"); i >= 0 {
		return h[:i]
	}
	return h
}

// noListing serves files only (websockify's file_only): a directory
// without index.html is not listed.
type noListing struct{ fs http.FileSystem }

func (n noListing) Open(name string) (http.File, error) {
	f, err := n.fs.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.IsDir() {
		idx, err := n.fs.Open(strings.TrimSuffix(name, "/") + "/index.html")
		if err != nil {
			f.Close()
			return nil, os.ErrNotExist
		}
		idx.Close()
	}
	return f, nil
}
