package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkRouteNodeShow routes GET /v1/nodes/{uuid} to a handler that
// answers at once: the router's own cost per request (issue 29 profiled it
// at a tenth of a one-node GET).
func BenchmarkRouteNodeShow(b *testing.B) {
	h := New(Deps{Logger: quiet, Authorize: AllowAll, Handlers: map[string]HandlerFunc{
		"GET /v1/nodes/{node_ident}": func(w http.ResponseWriter, _ *http.Request, _ *RequestContext) error {
			w.WriteHeader(http.StatusOK)
			return nil
		},
	}})
	req := httptest.NewRequest("GET", "http://127.0.0.1:6385/v1/nodes/1be26c0b-03f2-4d2e-ae87-c02d7f33c123", nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.78")
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
