package logging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api/middleware"
	"github.com/openkeel/ironic/internal/logging"
	"github.com/openkeel/ironic/internal/rpc"
)

func records(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

func TestRequestIDFromContext(t *testing.T) {
	cases := []struct {
		name         string
		ctx          context.Context
		id, globalID string
	}{
		{"none", context.Background(), "", ""},
		{"api", middleware.WithRequestID(context.Background(), "req-api"), "req-api", ""},
		{"rpc", rpc.WithRequestContext(context.Background(), &rpc.RequestContext{RequestID: "req-rpc", GlobalRequestID: "req-global"}), "req-rpc", "req-global"},
		{"api wins", middleware.WithRequestID(rpc.WithRequestContext(context.Background(), &rpc.RequestContext{RequestID: "req-rpc"}), "req-api"), "req-api", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := logging.New(slog.NewJSONHandler(&buf, nil)).With("conductor", "c1").WithGroup("g")
			log.InfoContext(c.ctx, "hello", "node", "n1")
			rec := records(t, &buf)[0]
			if rec["conductor"] != "c1" {
				t.Errorf("With attribute lost: %v", rec)
			}
			g, _ := rec["g"].(map[string]any)
			if g["node"] != "n1" {
				t.Errorf("record attribute lost: %v", rec)
			}
			if got, _ := g[logging.KeyRequestID].(string); got != c.id {
				t.Errorf("request_id = %q, want %q (%v)", got, c.id, rec)
			}
			if got, _ := g[logging.KeyGlobalRequestID].(string); got != c.globalID {
				t.Errorf("global_request_id = %q, want %q (%v)", got, c.globalID, rec)
			}
		})
	}
}

// Every line logged while the API middleware serves a request carries the
// id the client receives.
func TestRequestIDMatchesResponseHeader(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := middleware.AssignRequestID()(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.DebugContext(r.Context(), "one")
		log.ErrorContext(r.Context(), "two")
		log.InfoContext(r.Context(), "own id", logging.KeyRequestID, "req-own")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/nodes", nil))
	want := rec.Header().Get(middleware.HeaderRequestID)
	if !strings.HasPrefix(want, "req-") {
		t.Fatalf("no request id header: %v", rec.Header())
	}
	recs := records(t, &buf)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	// A record naming its request keeps its own id, once.
	if got := recs[2][logging.KeyRequestID]; got != "req-own" || strings.Count(buf.String(), `"request_id"`) != 3 {
		t.Errorf("record with its own id: %v\n%s", recs[2], buf.String())
	}
	for _, r := range recs[:2] {
		if r[logging.KeyRequestID] != want {
			t.Errorf("record %v: request_id, want %q", r, want)
		}
	}
}

func TestEnabledFollowsNext(t *testing.T) {
	h := logging.NewHandler(slog.NewJSONHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelError) {
		t.Error("levels not those of the wrapped handler")
	}
}
