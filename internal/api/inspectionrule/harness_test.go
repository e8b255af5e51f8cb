package inspectionrule

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

type env struct {
	t *testing.T
	h http.Handler
}

func newEnv(t *testing.T) *env {
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: store.New(storetest.Backends(t)[0].DB)})
	return &env{t: t, h: api.New(api.Deps{Handlers: m, Logger: discard()})}
}

type resp struct {
	status int
	header http.Header
	body   string
}

func (e *env) do(method, path, version, body string) resp {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, "http://127.0.0.1:6385"+path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	return resp{w.Code, w.Header(), w.Body.String()}
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("%s: %v", r.body, err)
	}
	return m
}

func (r resp) fault(t *testing.T) string {
	t.Helper()
	var outer struct {
		ErrorMessage string `json:"error_message"`
	}
	// Handler faults carry a faultstring; routing errors a description.
	var inner struct{ Faultstring, Description string }
	if json.Unmarshal([]byte(r.body), &outer) != nil || json.Unmarshal([]byte(outer.ErrorMessage), &inner) != nil {
		t.Fatalf("not a fault: %s", r.body)
	}
	return inner.Faultstring + inner.Description
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
