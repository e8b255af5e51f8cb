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

// The node and conductor learnt while a request is served reach every
// line logged in its context, the lines logged before included once the
// request ends (the API's access line is written last), and what a logger
// binds itself wins.
func TestFlowNamesNodeAndConductor(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(slog.NewJSONHandler(&buf, nil))
	h := logging.Middleware(middleware.AssignRequestID()(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		log.InfoContext(ctx, "before routing")
		f := logging.FlowFrom(ctx)
		f.SetNode("1be26c0b-03f2-4d2e-ae87-c02d7f33c123")
		f.SetConductor("cond-1")
		// A derived context (a worker's) shares the flow.
		log.InfoContext(context.WithoutCancel(ctx), "in a worker")
		log.With(logging.KeyConductor, "cond-2").InfoContext(ctx, "bound conductor")
		log.InfoContext(ctx, "own node", logging.KeyNode, "other-node")
	})))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v1/nodes/n1", nil))
	log.InfoContext(context.Background(), "no flow")

	recs := records(t, &buf)
	if len(recs) != 5 {
		t.Fatalf("%d records, want 5:\n%s", len(recs), buf.String())
	}
	if _, ok := recs[0][logging.KeyNode]; ok {
		t.Errorf("node before it was known: %v", recs[0])
	}
	want := map[string][2]string{
		"in a worker":     {"1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "cond-1"},
		"bound conductor": {"1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "cond-2"},
		"own node":        {"other-node", "cond-1"},
	}
	for _, r := range recs[1:4] {
		w := want[r["msg"].(string)]
		if r[logging.KeyNode] != w[0] || r[logging.KeyConductor] != w[1] || r[logging.KeyRequestID] == nil {
			t.Errorf("%v: want node %s, conductor %s and a request id", r, w[0], w[1])
		}
	}
	if strings.Count(buf.String(), `"conductor"`) != 3 || strings.Count(buf.String(), `"node"`) != 3 {
		t.Errorf("a key written twice in one line, or missing:\n%s", buf.String())
	}
	if _, ok := recs[4][logging.KeyNode]; ok {
		t.Errorf("node outside the flow: %v", recs[4])
	}
}

// A flow about several nodes names none of them.
func TestFlowOfSeveralNodesNamesNone(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(slog.NewJSONHandler(&buf, nil))
	ctx := logging.WithFlow(context.Background())
	if logging.WithFlow(ctx) != ctx {
		t.Error("WithFlow replaced the flow of its context")
	}
	f := logging.FlowFrom(ctx)
	f.SetNode("node-a")
	f.SetNode("node-a")
	f.SetConductor("cond-1")
	log.InfoContext(ctx, "one node")
	f.SetNode("node-b")
	f.SetNode("node-a")
	log.InfoContext(ctx, "two nodes")
	var none *logging.Flow
	none.SetNode("ignored")
	recs := records(t, &buf)
	if recs[0][logging.KeyNode] != "node-a" {
		t.Errorf("one node: %v", recs[0])
	}
	if _, ok := recs[1][logging.KeyNode]; ok || recs[1][logging.KeyConductor] != "cond-1" {
		t.Errorf("two nodes: %v", recs[1])
	}
}

// A record repeating what its logger binds (a driver adding "node" to the
// task's logger) writes it once; a different value is kept.
func TestBoundAttributesNotRepeated(t *testing.T) {
	var buf bytes.Buffer
	log := logging.New(slog.NewJSONHandler(&buf, nil)).With(logging.KeyNode, "n1")
	log.Info("same", logging.KeyNode, "n1", "args", "x")
	log.Info("other", logging.KeyNode, "n2")
	log.WithGroup("g").Info("grouped", logging.KeyNode, "n1")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if n := strings.Count(lines[0], `"node"`); n != 1 || !strings.Contains(lines[0], `"args":"x"`) {
		t.Errorf("same value: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"node":"n1"`) || !strings.Contains(lines[1], `"node":"n2"`) {
		t.Errorf("other value lost: %s", lines[1])
	}
	if !strings.Contains(lines[2], `"g":{"node":"n1"}`) {
		t.Errorf("grouped attribute lost: %s", lines[2])
	}
}
