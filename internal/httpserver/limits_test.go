package httpserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/config"
)

// logBuffer collects a server's log lines for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// raiseFileLimit makes room for n open files in this process: the test
// holds both ends of every connection.
func raiseFileLimit(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("getrlimit: %v", err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Fatalf("this test needs %d open files; the hard limit is %d (raise ulimit -Hn)", n, lim.Max)
	}
	old := lim
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("setrlimit: %v", err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

// waitFor fails the test when ch is not closed within a generous bound.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(2 * time.Minute):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// fakeTimers arms body timers that fire only when the test says so.
type fakeTimers struct {
	mu      sync.Mutex
	pending map[int]func()
	next    int
	armed   []time.Duration
}

func (f *fakeTimers) afterFunc(d time.Duration, fn func()) func() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending == nil {
		f.pending = map[int]func(){}
	}
	id := f.next
	f.next++
	f.pending[id] = fn
	f.armed = append(f.armed, d)
	return func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		_, ok := f.pending[id]
		delete(f.pending, id)
		return ok
	}
}

// fire runs every pending timer, as if their deadline had passed, and
// returns how many there were.
func (f *fakeTimers) fire() int {
	f.mu.Lock()
	fns := f.pending
	f.pending = map[int]func(){}
	f.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
	return len(fns)
}

// slowClient sends a request announcing a 100000-byte body, then trickles
// the body one byte at a time, as the client of issue 17 did.
type slowClient struct {
	conn net.Conn
	path string
	// sent is taken before the headers are written: the server cannot
	// have started the body's deadline earlier.
	sent     time.Time
	closedAt time.Time
	answer   string
	done     chan struct{}
}

func (c *slowClient) run(t *testing.T, trickle time.Duration) {
	c.sent = time.Now()
	if _, err := fmt.Fprintf(c.conn, "POST %s HTTP/1.1\r\nHost: ironic\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", c.path); err != nil {
		t.Errorf("send headers: %v", err)
	}
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(trickle)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				// A write error means the server has closed: the
				// reader below sees it.
				if _, err := c.conn.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	go func() {
		defer close(c.done)
		b, _ := io.ReadAll(c.conn) // until the server closes
		c.closedAt = time.Now()
		close(stop)
		c.answer, _, _ = strings.Cut(string(b), "\r\n")
	}()
}

// TestSlowBodiesDoNotHoldTheServer is item 4 of issue 17: 1,000 clients
// announce a body and trickle it; normal requests are still served while
// they are held, and each slow one is disconnected once the body deadline
// has passed, whether its handler reads the body (JSON-RPC, PATCH) or
// answers before reading it (401 before authentication).
func TestSlowBodiesDoNotHoldTheServer(t *testing.T) {
	const slow = 1000
	// Both ends of every connection live in this process.
	raiseFileLimit(t, 2*slow+256)
	// The deadline passes when the test fires the timers, after the
	// normal requests, however slow the machine.
	const bodyTimeout = 5 * time.Second
	var timers fakeTimers

	var entered atomic.Int64
	allIn := make(chan struct{})
	enter := func() {
		if entered.Add(1) == slow {
			close(allIn)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /unread", func(w http.ResponseWriter, r *http.Request) {
		enter()
		http.Error(w, "authentication required", http.StatusUnauthorized)
	})
	mux.HandleFunc("POST /read", func(w http.ResponseWriter, r *http.Request) {
		enter()
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "cannot read body", http.StatusBadRequest)
			return
		}
		io.WriteString(w, "read")
	})
	mux.Handle("GET /", ok)
	var logs logBuffer
	s, _ := start(t, Options{HostIP: "127.0.0.1", Limits: Limits{BodyTimeout: bodyTimeout}, Logger: logs.logger(), afterFunc: timers.afterFunc}, mux)
	addr := s.Addr().String()

	// Connect them all first, then send every request's headers, so that
	// their deadlines start close together.
	clients := make([]*slowClient, slow)
	for i := range clients {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("slow client %d: %v", i, err)
		}
		t.Cleanup(func() { conn.Close() })
		path := "/unread"
		if i%2 == 1 {
			path = "/read"
		}
		clients[i] = &slowClient{conn: conn, path: path, done: make(chan struct{})}
	}
	for _, c := range clients {
		c.run(t, time.Second)
	}
	waitFor(t, allIn, fmt.Sprintf("%d slow requests to reach their handlers", slow))

	closed := func() int {
		n := 0
		for _, c := range clients {
			select {
			case <-c.done:
				n++
			default:
			}
		}
		return n
	}
	normal := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 5 {
		resp, err := normal.Get("http://" + addr + "/")
		if err != nil {
			t.Fatalf("normal request %d while %d slow bodies are held: %v", i, slow, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != "ok" {
			t.Fatalf("normal request %d: %d %q", i, resp.StatusCode, b)
		}
	}
	if n := closed(); n != 0 {
		t.Fatalf("%d slow clients were closed before their deadline", n)
	}
	for i, d := range timers.armed {
		if d != bodyTimeout {
			t.Fatalf("timer %d armed for %v, want the configured %v", i, d, bodyTimeout)
		}
	}
	if n := timers.fire(); n != slow {
		t.Fatalf("%d body timers pending, want one per slow request (%d)", n, slow)
	}
	for i, c := range clients {
		waitFor(t, c.done, fmt.Sprintf("slow client %d to be disconnected", i))
		want := "HTTP/1.1 401"
		if c.path == "/read" {
			want = "HTTP/1.1 400"
		}
		if !strings.HasPrefix(c.answer, want) {
			t.Errorf("slow client %d (%s) got %q, want %s", i, c.path, c.answer, want)
		}
	}
	if n := logs.count("request body not received in time"); n != slow {
		t.Errorf("%d slow bodies logged, want %d", n, slow)
	}
	// The server still answers after the storm.
	resp, err := normal.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestBodyDeadlineLiftedAfterBody: a handler that has read its body runs
// past the body deadline with its request context intact (http.Server's
// ReadTimeout would cancel it) and answers on the same connection.
func TestBodyDeadlineLiftedAfterBody(t *testing.T) {
	const bodyTimeout = 200 * time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-r.Context().Done():
			http.Error(w, "context cancelled", http.StatusInternalServerError)
		case <-time.After(5 * bodyTimeout):
			w.Write(b)
		}
	})
	s, _ := start(t, Options{HostIP: "127.0.0.1", Limits: Limits{BodyTimeout: bodyTimeout}}, h)
	client := &http.Client{Timeout: 30 * time.Second}
	for i := range 2 { // the second call reuses the kept-alive connection
		resp, err := client.Post("http://"+s.Addr().String()+"/", "application/json", strings.NewReader(`{"a": 1}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(b) != `{"a": 1}` {
			t.Fatalf("call %d: %d %q", i, resp.StatusCode, b)
		}
	}
}

// TestRealBodyDeadline: with the real timer, a trickling client is
// disconnected once the deadline has passed, not before, whether the
// handler reads its body or not.
func TestRealBodyDeadline(t *testing.T) {
	const bodyTimeout = 300 * time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/read" {
			if _, err := io.ReadAll(r.Body); err != nil {
				http.Error(w, "cannot read body", http.StatusBadRequest)
				return
			}
		}
		http.Error(w, "authentication required", http.StatusUnauthorized)
	})
	s, _ := start(t, Options{HostIP: "127.0.0.1", Limits: Limits{BodyTimeout: bodyTimeout}}, h)
	for _, tc := range []struct{ path, want string }{{"/read", "HTTP/1.1 400"}, {"/unread", "HTTP/1.1 401"}} {
		conn, err := net.Dial("tcp", s.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		c := &slowClient{conn: conn, path: tc.path, done: make(chan struct{})}
		c.run(t, bodyTimeout/5)
		waitFor(t, c.done, tc.path+" client to be disconnected")
		if held := c.closedAt.Sub(c.sent); held < bodyTimeout {
			t.Errorf("%s: disconnected after %v, before the %v deadline", tc.path, held, bodyTimeout)
		}
		if !strings.HasPrefix(c.answer, tc.want) {
			t.Errorf("%s: got %q, want %s", tc.path, c.answer, tc.want)
		}
	}
}

// TestLimitListenerQueuesBeyondBound: with the bound reached, Accept waits
// (the client stays in the kernel's queue), logs once, and takes the next
// connection as soon as one closes; Close ends a waiting Accept.
func TestLimitListenerQueuesBeyondBound(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	ln := newLimitListener(raw, 2, logs.logger())
	// Each wait at the bound is announced, so the test sees it happen
	// instead of polling for it.
	atBound := make(chan struct{}, 2)
	ln.waiting = func() { atBound <- struct{}{} }
	defer ln.Close()
	var clients []net.Conn
	dial := func() {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		t.Cleanup(func() { c.Close() })
	}
	var held []net.Conn
	for range 2 {
		dial()
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	dial()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Errorf("accept: %v", err)
		}
		accepted <- c
	}()
	waitFor(t, atBound, "Accept to wait at the bound")
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted beyond the bound of 2")
	default:
	}
	held[0].Close()
	held[0].Close() // a second Close must not free a second slot
	var third net.Conn
	select {
	case third = <-accepted:
	case <-time.After(time.Minute):
		t.Fatal("the waiting connection was not accepted after a slot was freed")
	}
	defer third.Close()
	if got := len(ln.slots); got != 2 {
		t.Fatalf("%d slots in use, want 2", got)
	}
	if n := logs.count("connection limit reached"); n != 1 {
		t.Fatalf("limit logged %d times, want once", n)
	}

	// At the bound again: Close releases the waiting Accept.
	errc := make(chan error, 1)
	go func() {
		_, err := ln.Accept()
		errc <- err
	}()
	waitFor(t, atBound, "Accept to wait at the bound")
	ln.Close()
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
	}
}

// TestIdleConnectionsFreeTheirSlots: clients beyond max_connections are not
// starved by kept-alive connections that send nothing more: the idle
// timeout closes those and the waiting client is served.
func TestIdleConnectionsFreeTheirSlots(t *testing.T) {
	const idle = 500 * time.Millisecond
	s, _ := start(t, Options{HostIP: "127.0.0.1", Limits: Limits{MaxConnections: 2, IdleTimeout: idle}}, ok)
	addr := s.Addr().String()
	var idlers []net.Conn
	for i := range 2 {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		idlers = append(idlers, conn)
		// One request, then the connection stays open and silent.
		fmt.Fprint(conn, "GET / HTTP/1.1\r\nHost: ironic\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("idle client %d: %v", i, err)
		}
		resp.Body.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatalf("the client beyond the bound was not served: %v", err)
	}
	resp.Body.Close()
	// It could only be accepted once the server had closed an idle
	// connection: one of them reads the end of the stream, at once.
	closed := 0
	for _, conn := range idlers {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Read(make([]byte, 1)); errors.Is(err, io.EOF) {
			closed++
		}
	}
	if closed == 0 {
		t.Fatal("the client beyond the bound was served while both idle connections were open: the bound did not hold")
	}
}

// TestLimitsFromConfigDefaults: the [openkeel_http] defaults are the ones
// a listener gets when its wiring passes no limits.
func TestLimitsFromConfigDefaults(t *testing.T) {
	c, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := LimitsFromConfig(c), (Limits{}).withDefaults(); got != want {
		t.Fatalf("[openkeel_http] defaults %+v, built-in defaults %+v", got, want)
	}
	c, err = config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"openkeel_http": {
		"max_connections": "10", "request_body_timeout": "5", "idle_timeout": "7"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := LimitsFromConfig(c), (Limits{MaxConnections: 10, BodyTimeout: 5 * time.Second, IdleTimeout: 7 * time.Second}); got != want {
		t.Fatalf("limits %+v, want %+v", got, want)
	}
}
