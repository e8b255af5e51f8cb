package httpserver

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openkeel/ironic/internal/config"
)

// Defaults of the [openkeel_http] options, also used when a caller leaves
// Limits empty, so that every listener is bounded even if its wiring
// forgets the configuration.
const (
	// DefaultMaxConnections is high enough that no ordinary deployment
	// meets it (the API of a large fleet keeps a few hundred connections)
	// and low enough to stay well below the open-file limit of a
	// container or a systemd service.
	DefaultMaxConnections = 4096
	// DefaultBodyTimeout leaves a minute for the largest body a listener
	// takes (a configdrive in a JSON-RPC call) on a slow link.
	DefaultBodyTimeout = 60 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may wait for
	// its next request.
	DefaultIdleTimeout = 120 * time.Second
	// headerTimeout bounds the request line and headers.
	headerTimeout = 30 * time.Second
)

// Limits bound what one client can hold of a listener.
type Limits struct {
	// MaxConnections is how many connections the listener keeps open at
	// once; further clients wait in the kernel's accept queue until one
	// closes. 0 is DefaultMaxConnections.
	MaxConnections int
	// BodyTimeout is how long a request body may take to arrive, counted
	// from the end of its headers; a client still sending after it is
	// disconnected. 0 is DefaultBodyTimeout.
	BodyTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no new request. 0 is
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// LimitsFromConfig reads the [openkeel_http] options, which every listener
// of the process (API, JSON-RPC, http_root) shares.
func LimitsFromConfig(cfg *config.Config) Limits {
	return Limits{
		MaxConnections: cfg.IntOf(config.OpenkeelHTTPMaxConnections),
		BodyTimeout:    cfg.DurationOf(config.OpenkeelHTTPRequestBodyTimeout),
		IdleTimeout:    cfg.DurationOf(config.OpenkeelHTTPIdleTimeout),
	}
}

func (l Limits) withDefaults() Limits {
	if l.MaxConnections <= 0 {
		l.MaxConnections = DefaultMaxConnections
	}
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	return l
}

// maxDrainBytes is how much of a body its handler left unread is read
// afterwards so that the connection can serve another request: net/http's
// own bound (maxPostHandlerReadBytes); beyond it net/http closes the
// connection instead.
const maxDrainBytes = 256 << 10

// afterFunc runs f after d unless the returned stop is called first;
// time.AfterFunc in production, a fake in tests.
type afterFunc func(d time.Duration, f func()) (stop func() bool)

func realAfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// bodyDeadline gives each request body d to arrive, from the time its
// headers have (the handler starts): then the connection's read deadline
// is moved into the past, the pending read fails and net/http closes the
// connection after the answer. http.Server's ReadTimeout is not used: it
// stays armed while the handler runs, and its expiry during the server's
// background read cancels the request's context, cutting a long call
// short. Here the timer stops once the body has been read to its end. A
// body the handler leaves unread (401 before authentication) is drained
// here, still under the timer, as net/http would drain it without one.
func bodyDeadline(next http.Handler, d time.Duration, after afterFunc, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		b := &deadlineBody{ReadCloser: r.Body, rc: http.NewResponseController(w), r: r, timeout: d, log: log}
		b.stop = after(d, b.expire)
		defer b.disarm()
		r.Body = b
		next.ServeHTTP(w, r)
		b.drain()
	})
}

// deadlineBody is a request body read under its deadline timer.
type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	r       *http.Request
	timeout time.Duration
	log     *slog.Logger
	stop    func() bool

	mu       sync.Mutex
	disarmed bool // the timer must no longer touch the connection
	expired  bool
	read     bool // the handler has asked for the body
	ended    bool // nothing more will be read for this request
}

// expire ends the body's time: the pending or next read fails at once.
func (b *deadlineBody) expire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.disarmed {
		return
	}
	b.expired = true
	if err := b.rc.SetReadDeadline(time.Unix(1, 0)); err != nil {
		b.log.WarnContext(b.r.Context(), "cannot end a request body past its deadline", "remote", b.r.RemoteAddr, "error", err)
	}
}

// disarm stops the timer for good; once it returns, expire does nothing,
// so the connection's next request is never touched.
func (b *deadlineBody) disarm() {
	b.stop()
	b.mu.Lock()
	b.disarmed = true
	b.mu.Unlock()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	b.read = true
	b.mu.Unlock()
	n, err := b.ReadCloser.Read(p)
	if err == nil {
		return n, nil
	}
	b.mu.Lock()
	ended, expired := b.ended, b.expired
	b.ended = true
	b.mu.Unlock()
	if ended {
		return n, err
	}
	if expired && errors.Is(err, os.ErrDeadlineExceeded) {
		b.log.WarnContext(b.r.Context(), "request body not received in time, closing the connection",
			"remote", b.r.RemoteAddr, "method", b.r.Method, "path", b.r.URL.Path, "timeout", b.timeout.String())
		return n, err
	}
	// io.EOF, a size bound or a broken connection: nothing more is read
	// from the client for this request, so the timer must not cut the
	// server's watch for a closed connection while the handler runs.
	b.disarm()
	return n, err
}

// drain reads what the handler left of the body, as net/http would, but
// under the timer. A client that asked to be told to send its body
// (Expect: 100-continue) and was not asked is left alone: net/http closes
// that connection without reading.
func (b *deadlineBody) drain() {
	b.mu.Lock()
	skip := b.ended || (!b.read && b.r.Header.Get("Expect") != "")
	b.mu.Unlock()
	if skip || b.r.ContentLength > maxDrainBytes {
		return
	}
	io.CopyN(io.Discard, b, maxDrainBytes+1)
}

// limitListener keeps at most cap(slots) connections open: Accept waits
// for a slot, so clients beyond the bound queue in the kernel's backlog
// rather than exhausting the process's file descriptors. Every held slot
// is freed within the header, body or idle timeout, so a queued client is
// delayed, never starved for good.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
	// full is set while Accept waits, so that the warning is logged once
	// per episode rather than once per connection.
	full atomic.Bool
	log  *slog.Logger
	// waiting, when set (tests), is called each time Accept starts to
	// wait at the bound.
	waiting func()
}

func newLimitListener(ln net.Listener, n int, log *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), closed: make(chan struct{}), log: log}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
		l.full.Store(false)
	default:
		if l.full.CompareAndSwap(false, true) {
			l.log.Warn("connection limit reached, new connections wait for one to close",
				"address", l.Addr().String(), "max_connections", cap(l.slots))
		}
		if l.waiting != nil {
			l.waiting()
		}
		select {
		case l.slots <- struct{}{}:
		case <-l.closed:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// limitConn frees its slot when closed, once however often Close is called.
type limitConn struct {
	net.Conn
	release func()
}

// ReadFrom keeps the TCP connection's sendfile path for http_root's
// downloads, which the wrapper would otherwise hide from net/http.
func (c *limitConn) ReadFrom(r io.Reader) (int64, error) { return io.Copy(c.Conn, r) }

// CloseWrite lets net/http half-close before closing, as it does on a bare
// TCP connection, so that a client still sending sees the answer rather
// than a reset.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
