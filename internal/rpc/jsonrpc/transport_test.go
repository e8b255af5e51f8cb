package jsonrpc

import (
	"bufio"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/errs"
)

// brokenPeer is a conductor address that accepts JSON-RPC requests and
// then misbehaves as a dying conductor does: answer is called with the
// connection once the whole request has been read. It stops when the test
// ends.
type brokenPeer struct {
	ln   net.Listener
	stop chan struct{}
	wg   sync.WaitGroup
}

func newBrokenPeer(t *testing.T, answer func(c net.Conn, stop <-chan struct{})) *brokenPeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &brokenPeer{ln: ln, stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					t.Errorf("peer: read request: %v", err)
					return
				}
				if _, err := io.Copy(io.Discard, req.Body); err != nil {
					t.Errorf("peer: read body: %v", err)
					return
				}
				answer(c, p.stop)
			}()
		}
	}()
	t.Cleanup(func() {
		close(p.stop)
		ln.Close()
		p.wg.Wait()
	})
	return p
}

func (p *brokenPeer) topic() string { return "." + p.ln.Addr().String() }

// refusedTopic names a 127.0.0.1 port nothing listens on any more: a
// conductor that was killed.
func refusedTopic(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "." + addr
}

func newTestClient(t *testing.T, timeout time.Duration) *Client {
	t.Helper()
	c, err := NewClient(ClientOptions{AuthStrategy: "noauth", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A conductor that is gone or dies during the call is a 503 fault the
// caller may retry, whatever way the connection failed.
func TestTransportFailuresAreUnavailable(t *testing.T) {
	cases := []struct {
		name   string
		topic  func(t *testing.T) string
		method func(c *Client, ctx context.Context, topic string) error
	}{
		{name: "connection refused", topic: refusedTopic},
		{name: "closed before answering", topic: func(t *testing.T) string {
			return newBrokenPeer(t, func(net.Conn, <-chan struct{}) {}).topic()
		}},
		{name: "connection reset", topic: func(t *testing.T) string {
			return newBrokenPeer(t, func(c net.Conn, _ <-chan struct{}) {
				c.(*net.TCPConn).SetLinger(0) // close sends RST
			}).topic()
		}},
		{name: "EOF in the middle of the answer", topic: func(t *testing.T) string {
			return newBrokenPeer(t, func(c net.Conn, _ <-chan struct{}) {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"jsonrpc\": \"2.0\", \"id\": \"1\", \"res")
			}).topic()
		}},
		{name: "no answer within the timeout", topic: func(t *testing.T) string {
			return newBrokenPeer(t, func(_ net.Conn, stop <-chan struct{}) { <-stop }).topic()
		}},
		{name: "conductor listener answers 503", topic: func(t *testing.T) string {
			return newBrokenPeer(t, func(c net.Conn, _ <-chan struct{}) {
				io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			}).topic()
		}},
		{name: "cast to a dead conductor", topic: refusedTopic, method: func(c *Client, ctx context.Context, topic string) error {
			return c.ContinueNodeDeploy(ctx, topic, "1be26c0b-03f2-4d2e-ae87-c02d7f33c123")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestClient(t, 500*time.Millisecond)
			call := tc.method
			if call == nil {
				call = func(c *Client, ctx context.Context, topic string) error {
					return c.ChangeNodePowerState(ctx, topic, "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "power on", 0)
				}
			}
			err := call(c, context.Background(), tc.topic(t))
			if !errs.IsUnavailable(err) {
				t.Fatalf("error %v (%T) is not a 503 fault", err, err)
			}
			if !errs.Is(err, errs.ClassTemporaryFailure) || errs.Cause(err) == nil {
				t.Errorf("error %v: want a TemporaryFailure keeping its cause", err)
			}
		})
	}
}

// The caller giving up is not the conductor's fault; a certificate the
// client cannot verify is a configuration error no retry cures.
func TestTransportFailuresThatAreNotRetryable(t *testing.T) {
	t.Run("caller canceled", func(t *testing.T) {
		p := newBrokenPeer(t, func(_ net.Conn, stop <-chan struct{}) { <-stop })
		c := newTestClient(t, time.Minute)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.ChangeNodePowerState(ctx, p.topic(), "n", "power on", 0) }()
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) || errs.IsUnavailable(err) {
			t.Fatalf("error %v: want context.Canceled, not a 503 fault", err)
		}
	})
	t.Run("unknown certificate authority", func(t *testing.T) {
		ts := httptest.NewTLSServer(http.NotFoundHandler())
		t.Cleanup(ts.Close)
		c, err := NewClient(ClientOptions{AuthStrategy: "noauth", UseSSL: true, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		err = c.ChangeNodePowerState(context.Background(), "."+strings.TrimPrefix(ts.URL, "https://"), "n", "power on", 0)
		if err == nil || errs.IsUnavailable(err) {
			t.Fatalf("error %v: want a plain (500) error", err)
		}
	})
}

// Through the API's error writer the fault is upstream's envelope with
// status 503 and Retry-After, never a 500.
func TestAPIAnswers503WhenTheConductorIsGone(t *testing.T) {
	c := newTestClient(t, 500*time.Millisecond)
	topic := refusedTopic(t)
	h := api.New(api.Deps{Authorize: api.AllowAll, Logger: slog.New(slog.DiscardHandler), Handlers: map[string]api.HandlerFunc{
		"PUT /v1/nodes/{node_ident}/states/power": func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
			return c.ChangeNodePowerState(r.Context(), topic, rc.Params["node_ident"], "power on", 0)
		},
	}})
	req := httptest.NewRequest(http.MethodPut, "http://127.0.0.1:6385/v1/nodes/node-0/states/power", strings.NewReader(`{"target": "power on"}`))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503; body %s", w.Code, w.Body)
	}
	if got := w.Header().Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want 2", got)
	}
	want := `{"error_message": "{\"faultcode\": \"Server\", \"faultstring\": \"Resource temporarily unavailable, please retry.\", \"debuginfo\": null}"}`
	if w.Body.String() != want {
		t.Errorf("body\n got %s\nwant %s", w.Body, want)
	}
}

// A database outage the conductor meets reaches the caller as the 503 it
// would have met reading the database itself, not as an unexpected 500.
func TestConductorDatabaseOutageIsUnavailable(t *testing.T) {
	fake := newFake()
	fake.errors["ChangeNodePowerState"] = fmt.Errorf("save node: %w", driver.ErrBadConn)
	fake.errors["SetBootDevice"] = errors.New("something else broke")
	c, topic := newNoauth(t, fake)
	err := c.ChangeNodePowerState(context.Background(), topic, "n", "power on", 0)
	if !errs.IsUnavailable(err) || !errs.Is(err, errs.ClassTemporaryFailure) {
		t.Errorf("database outage on the conductor: %v, want TemporaryFailure 503", err)
	}
	err = c.SetBootDevice(context.Background(), topic, "n", "pxe", false)
	if errs.IsUnavailable(err) || errs.Status(err) != http.StatusInternalServerError {
		t.Errorf("other conductor error: %v (status %d), want a 500", err, errs.Status(err))
	}
}
