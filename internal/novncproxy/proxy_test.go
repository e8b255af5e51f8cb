package novncproxy

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/openkeel/ironic/internal/console/vnc"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/testing/await"
)

// nodes is the proxy's view of the database.
type nodes struct {
	mu sync.Mutex
	m  map[string]*model.Node
}

func (s *nodes) GetNodeByUUID(_ context.Context, ident string) (*model.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.m[ident]
	if !ok {
		return nil, errors.New("not found")
	}
	c := *n
	return &c, nil
}

// rfbServer is a VNC server speaking RFB 3.8 as real ones do: it sends
// its version, its security types, the SecurityResult after a choice of
// None, then ServerInit after ClientInit. version and types let tests
// play servers the proxy must refuse.
type rfbServer struct {
	version string
	types   []byte
	reason  string
	// got records what the server received from the proxy.
	got chan []byte
}

func startRFB(t *testing.T, s *rfbServer) (string, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s.got = make(chan []byte, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	a := l.Addr().(*net.TCPAddr)
	return "127.0.0.1", a.Port
}

func (s *rfbServer) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write([]byte(s.version)); err != nil {
		return
	}
	v := make([]byte, 12)
	if _, err := io.ReadFull(c, v); err != nil {
		return
	}
	s.got <- v
	if len(s.types) == 0 {
		out := append([]byte{0}, binary.BigEndian.AppendUint32(nil, uint32(len(s.reason)))...)
		_, _ = c.Write(append(out, s.reason...))
		return
	}
	_, _ = c.Write(append([]byte{byte(len(s.types))}, s.types...))
	choice := make([]byte, 1)
	if _, err := io.ReadFull(c, choice); err != nil {
		return
	}
	s.got <- choice
	if choice[0] != authTypeNone {
		return
	}
	_, _ = c.Write([]byte{0, 0, 0, 0}) // SecurityResult OK
	ci := make([]byte, 1)
	if _, err := io.ReadFull(c, ci); err != nil {
		return
	}
	name := "fake-console"
	init := binary.BigEndian.AppendUint16(nil, 1024)
	init = binary.BigEndian.AppendUint16(init, 768)
	init = append(init, make([]byte, 16)...) // pixel format
	init = append(init, binary.BigEndian.AppendUint32(nil, uint32(len(name)))...)
	_, _ = c.Write(append(init, name...))
	// Echo what follows, so that the joined stream can be checked.
	_, _ = io.Copy(c, c)
}

// clock is a settable clock for token expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type env struct {
	srv   *httptest.Server
	nodes *nodes
	clock *clock
	node  *model.Node
	token string
}

func newEnv(t *testing.T, host string, port int, o Options) *env {
	t.Helper()
	ck := &clock{now: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	n := &model.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", ConsoleEnabled: true, DriverInternalInfo: map[string]any{}}
	n.InternalInfo().Set(model.DIIVNCHost, host)
	n.InternalInfo().Set(model.DIIVNCPort, port)
	token := vnc.Authorize(n, ck.Now())
	ns := &nodes{m: map[string]*model.Node{n.UUID: n}}
	o.Now = ck.Now
	if o.TokenTimeout == 0 {
		o.TokenTimeout = 600 * time.Second
	}
	p, err := New(o, ns)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); p.Wait() })
	return &env{srv: srv, nodes: ns, clock: ck, node: n, token: token}
}

func (e *env) wsURL(node, token string) string {
	return "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/websockify?" + url.Values{"node": {node}, "token": {token}}.Encode()
}

func dial(t *testing.T, u string, h http.Header) (net.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{"binary"}, HTTPHeader: h})
	if err != nil {
		return nil, resp, err
	}
	nc := websocket.NetConn(ctx, c, websocket.MessageBinary)
	t.Cleanup(func() { nc.Close() })
	return nc, resp, nil
}

func read(t *testing.T, r io.Reader, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	return b
}

// clientHandshake plays noVNC's side up to ServerInit and returns the
// desktop name.
func clientHandshake(t *testing.T, c net.Conn) (w, h int, name string) {
	t.Helper()
	if v := read(t, c, 12); string(v) != "RFB 003.008\n" {
		t.Fatalf("version from proxy %q", v)
	}
	if _, err := c.Write([]byte("RFB 003.008\n")); err != nil {
		t.Fatal(err)
	}
	if types := read(t, c, 2); types[0] != 1 || types[1] != authTypeNone {
		t.Fatalf("security types offered to the client %v, want only None", types)
	}
	if _, err := c.Write([]byte{authTypeNone}); err != nil {
		t.Fatal(err)
	}
	if res := read(t, c, 4); binary.BigEndian.Uint32(res) != 0 {
		t.Fatalf("SecurityResult %v", res)
	}
	if _, err := c.Write([]byte{1}); err != nil { // ClientInit, shared
		t.Fatal(err)
	}
	init := read(t, c, 24)
	w, h = int(binary.BigEndian.Uint16(init[0:])), int(binary.BigEndian.Uint16(init[2:]))
	name = string(read(t, c, int(binary.BigEndian.Uint32(init[20:]))))
	return w, h, name
}

func TestProxyJoinsClientToConsole(t *testing.T) {
	s := &rfbServer{version: "RFB 003.008\n", types: []byte{2, authTypeNone}}
	host, port := startRFB(t, s)
	e := newEnv(t, host, port, Options{})
	c, resp, err := dial(t, e.wsURL(e.node.UUID, e.token), nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != "binary" {
		t.Errorf("subprotocol %q, want binary", got)
	}
	w, h, name := clientHandshake(t, c)
	if w != 1024 || h != 768 || name != "fake-console" {
		t.Errorf("ServerInit %dx%d %q", w, h, name)
	}
	if v := <-s.got; string(v) != "RFB 003.008\n" {
		t.Errorf("server got version %q", v)
	}
	if ch := <-s.got; ch[0] != authTypeNone {
		t.Errorf("proxy chose security type %d with the server, want None", ch[0])
	}
	// After the handshake the stream is joined both ways.
	msg := []byte{3, 0, 0, 0, 0, 0, 4, 0, 3, 0} // FramebufferUpdateRequest
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	if got := read(t, c, len(msg)); string(got) != string(msg) {
		t.Errorf("echo %v, want %v", got, msg)
	}
}

func TestProxyRefusesBadTokens(t *testing.T) {
	s := &rfbServer{version: "RFB 003.008\n", types: []byte{authTypeNone}}
	host, port := startRFB(t, s)
	e := newEnv(t, host, port, Options{TokenTimeout: 60 * time.Second})
	for name, tc := range map[string]struct{ node, token string }{
		"wrong token":   {e.node.UUID, e.token + "x"},
		"empty token":   {e.node.UUID, ""},
		"unknown node":  {"5b1f7a56-2e61-4bd3-9a41-6f52a1a0b2c4", e.token},
		"no parameters": {"", ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, resp, err := dial(t, e.wsURL(tc.node, tc.token), nil)
			if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("got %v %v, want 403", resp, err)
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		e.clock.Add(61 * time.Second)
		_, resp, err := dial(t, e.wsURL(e.node.UUID, e.token), nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("got %v %v, want 403 after token_timeout", resp, err)
		}
	})
	select {
	case v := <-s.got:
		t.Fatalf("the VNC server was reached by a refused client: %q", v)
	default:
	}
}

func TestProxyChecksOrigin(t *testing.T) {
	s := &rfbServer{version: "RFB 003.008\n", types: []byte{authTypeNone}}
	host, port := startRFB(t, s)
	e := newEnv(t, host, port, Options{AllowedOrigins: []string{"console.example.org"}})
	for origin, ok := range map[string]bool{
		"http://127.0.0.1:9999":       true,
		"https://console.example.org": true,
		"http://evil.example.com":     false,
		"null":                        false,
	} {
		t.Run(origin, func(t *testing.T) {
			c, resp, err := dial(t, e.wsURL(e.node.UUID, e.token), http.Header{"Origin": {origin}})
			if ok {
				if err != nil {
					t.Fatalf("refused: %v %v", resp, err)
				}
				clientHandshake(t, c)
				return
			}
			if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("got %v %v, want 403", resp, err)
			}
		})
	}
}

func TestProxyNegotiationFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		server *rfbServer
		// want is what the client reads after its version.
		check func(t *testing.T, c net.Conn)
	}{
		"server speaks 3.3": {
			server: &rfbServer{version: "RFB 003.003\n", types: []byte{authTypeNone}},
			check: func(t *testing.T, c net.Conn) {
				// The proxy gives up before sending the client anything.
				b := make([]byte, 1)
				if n, _ := c.Read(b); n != 0 {
					t.Errorf("client got %v from a proxy that refused the server's version", b)
				}
			},
		},
		"server refuses with a reason": {
			server: &rfbServer{version: "RFB 003.008\n", reason: "too many clients"},
			check: func(t *testing.T, c net.Conn) {
				read(t, c, 12)
				_, _ = c.Write([]byte("RFB 003.008\n"))
				if st := read(t, c, 1); st[0] != authStatusFail {
					t.Fatalf("status %v", st)
				}
				n := binary.BigEndian.Uint32(read(t, c, 4))
				if r := read(t, c, int(n)); string(r) != "too many clients" {
					t.Errorf("reason %q", r)
				}
			},
		},
		"server offers only VNC password auth": {
			server: &rfbServer{version: "RFB 003.008\n", types: []byte{2}},
			check: func(t *testing.T, c net.Conn) {
				read(t, c, 12)
				_, _ = c.Write([]byte("RFB 003.008\n"))
				read(t, c, 2)
				_, _ = c.Write([]byte{authTypeNone})
				if res := binary.BigEndian.Uint32(read(t, c, 4)); res != 1 {
					t.Fatalf("SecurityResult %d, want failed", res)
				}
				n := binary.BigEndian.Uint32(read(t, c, 4))
				if r := read(t, c, int(n)); string(r) != "Unable to negotiate security with server" {
					t.Errorf("reason %q (must not reveal the server's types)", r)
				}
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			host, port := startRFB(t, tc.server)
			e := newEnv(t, host, port, Options{})
			c, resp, err := dial(t, e.wsURL(e.node.UUID, e.token), nil)
			if err != nil {
				t.Fatalf("dial: %v %v", err, resp)
			}
			tc.check(t, c)
		})
	}
}

func TestProxyServesFilesOnly(t *testing.T) {
	web := t.TempDir()
	if err := os.WriteFile(filepath.Join(web, "vnc_lite.html"), []byte("<html>noVNC</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(web, "core"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "127.0.0.1", 1, Options{Web: web})
	for path, want := range map[string]int{"/vnc_lite.html": 200, "/core/": 404, "/missing.js": 404} {
		resp, err := http.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	if _, err := New(Options{Web: filepath.Join(web, "absent")}, &nodes{}); err == nil ||
		!strings.Contains(err.Error(), "Can not find html/js files at") {
		t.Errorf("missing novnc_web: %v", err)
	}
}

// TestProxyWithTigerVNC joins a websocket client to a real VNC server
// (TigerVNC's Xvnc without authentication, on loopback).
func TestProxyWithTigerVNC(t *testing.T) {
	xvnc, err := exec.LookPath("Xvnc")
	if err != nil {
		if os.Getenv("IRONIC_SPEC_REQUIRED") == "1" {
			t.Fatal("Xvnc (tigervnc-standalone-server) is required in CI")
		}
		t.Skip("Xvnc (tigervnc-standalone-server) not installed")
	}
	port := freePort(t)
	display := 40 + port%500
	cmd := exec.Command(xvnc, ":"+strconv.Itoa(display), "-rfbport", strconv.Itoa(port), "-interface", "127.0.0.1",
		"-SecurityTypes", "None", "-geometry", "800x600", "-desktop", "ironic-console-test", "-nolisten", "tcp")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = &strings.Builder{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	await.UntilReason(t, 60*time.Second, "Xvnc listening", func() (bool, string) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false, err.Error()
		}
		c.Close()
		return true, ""
	})
	e := newEnv(t, "127.0.0.1", port, Options{})
	c, resp, err := dial(t, e.wsURL(e.node.UUID, e.token), nil)
	if err != nil {
		t.Fatalf("dial: %v %v", err, resp)
	}
	w, h, name := clientHandshake(t, c)
	if w != 800 || h != 600 || !strings.Contains(name, "ironic-console-test") {
		t.Errorf("ServerInit from Xvnc: %dx%d %q", w, h, name)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
