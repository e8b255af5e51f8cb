package metrics_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/metrics"
)

// logRecorder keeps every log record of the API.
type logRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}

func (l *logRecorder) snapshot() []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]slog.Record(nil), l.records...)
}

func attr(r slog.Record, key string) string {
	var v string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value.String()
			return false
		}
		return true
	})
	return v
}

// A client that disconnects while its request is being served is logged
// as a disconnect and counted under 499, never as a 5xx or an error line,
// whether it closes, half-closes, or goes away while the answer is being
// written (broken pipe).
func TestClientDisconnectIsNotAServerError(t *testing.T) {
	cases := []struct {
		name string
		// halfClose closes only the client's writing side; the client
		// then still reads the answer.
		halfClose bool
		// writeAfter makes the handler write its answer after the
		// disconnect, meeting a broken pipe.
		writeAfter bool
		code       string
	}{
		{name: "client closes", code: "499"},
		{name: "client half-closes", halfClose: true, code: "499"},
		{name: "client gone while the answer is written", writeAfter: true, code: "499"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logRecorder{}
			reg := metrics.NewRegistry()
			a, err := metrics.NewAPI(reg, api.Routes)
			if err != nil {
				t.Fatal(err)
			}
			started := make(chan struct{})
			h := api.New(api.Deps{Authorize: api.AllowAll, Logger: slog.New(logs), Handlers: map[string]api.HandlerFunc{
				"GET /v1/nodes": func(w http.ResponseWriter, r *http.Request, _ *api.RequestContext) error {
					close(started)
					<-r.Context().Done()
					if !tc.writeAfter {
						// What the store returns when the request's
						// context is canceled under a query.
						return fmt.Errorf("list nodes: %w", r.Context().Err())
					}
					w.WriteHeader(http.StatusOK)
					chunk := []byte(strings.Repeat("x", 64<<10))
					for range 1024 {
						if _, err := w.Write(chunk); err != nil {
							return fmt.Errorf("write answer: %w", err)
						}
						http.NewResponseController(w).Flush()
					}
					return errors.New("writes to a closed connection never failed")
				},
			}})
			served := make(chan struct{}, 1)
			inner := a.Middleware(h)
			srv := httptest.NewServer(metrics.Mount(metrics.Handler(reg), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				inner.ServeHTTP(w, r)
				served <- struct{}{}
			})))
			t.Cleanup(srv.Close)

			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte("GET /v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			<-started
			if tc.halfClose {
				if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
					t.Fatal(err)
				}
				// Still reading: it gets a fault it may retry.
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					t.Fatalf("read answer after half-close: %v", err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
					t.Errorf("half-closed client got %d Retry-After %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
				}
			} else {
				conn.Close()
			}
			<-served

			fams := scrape(t, srv)
			for _, m := range fams["ironic_api_requests_total"].GetMetric() {
				if l := labels(m); strings.HasPrefix(l["code"], "5") {
					t.Errorf("disconnect counted as %v", l)
				}
			}
			m := find(fams, "ironic_api_requests_total", map[string]string{"route": "GET /v1/nodes", "code": tc.code})
			if m == nil || m.GetCounter().GetValue() != 1 {
				t.Errorf("ironic_api_requests_total{code=%q} = %v, want 1", tc.code, m)
			}

			disconnects := 0
			for _, r := range logs.snapshot() {
				if r.Level >= slog.LevelWarn {
					t.Errorf("logged at %s: %s %v", r.Level, r.Message, attr(r, "error"))
				}
				if r.Message == "client disconnected" {
					disconnects++
				}
				if strings.HasPrefix(r.Message, "request") && attr(r, "status") != tc.code {
					t.Errorf("request line %q with status %s, want %s", r.Message, attr(r, "status"), tc.code)
				}
			}
			if disconnects != 1 {
				t.Errorf("%d \"client disconnected\" lines, want 1", disconnects)
			}
		})
	}
}

// A server error is one even when its client also left: only failures
// the disconnect itself caused are recorded as 499.
func TestServerErrorOfAGoneClientStaysAServerError(t *testing.T) {
	logs := &logRecorder{}
	reg := metrics.NewRegistry()
	a, err := metrics.NewAPI(reg, api.Routes)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	h := api.New(api.Deps{Authorize: api.AllowAll, Logger: slog.New(logs), Handlers: map[string]api.HandlerFunc{
		"GET /v1/nodes": func(w http.ResponseWriter, r *http.Request, _ *api.RequestContext) error {
			close(started)
			<-r.Context().Done()
			return errors.New("the conductor's answer made no sense")
		},
	}})
	served := make(chan struct{}, 1)
	inner := a.Middleware(h)
	srv := httptest.NewServer(metrics.Mount(metrics.Handler(reg), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		served <- struct{}{}
	})))
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("GET /v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	<-started
	conn.Close()
	<-served
	m := find(scrape(t, srv), "ironic_api_requests_total", map[string]string{"route": "GET /v1/nodes", "code": "500"})
	if m == nil || m.GetCounter().GetValue() != 1 {
		t.Errorf("ironic_api_requests_total{code=500} = %v, want 1", m)
	}
	errorLines := 0
	for _, r := range logs.snapshot() {
		if r.Level == slog.LevelError {
			errorLines++
		}
	}
	if errorLines != 1 {
		t.Errorf("%d error lines, want 1", errorLines)
	}
}
