package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api/microversion"
)

// FuzzPipeline drives the assembled handler with arbitrary methods, paths,
// headers and bodies. Without resource handlers the only server errors
// allowed are the 501 of an absent handler and a 503; nothing may panic
// (the panic stage would turn a panic into a 500, which fails too), and
// every error answer is upstream's envelope.
func FuzzPipeline(f *testing.F) {
	for _, s := range []struct{ method, path, name, value, version, body string }{
		{"GET", "/", "", "", "", ""},
		{"GET", "/v1/nodes", "Accept", "application/json", "latest", ""},
		{"POST", "/v1/nodes", "Content-Type", "application/json", "1.1", `{"driver": "fake-hardware"}`},
		{"PUT", "/v1/nodes/n1/states/provision", "OpenStack-API-Version", "baremetal 1.81", "", `{"target": "active"}`},
		{"PATCH", "/v1/nodes/n1/vendor_passthru/m", "X-Forwarded-Proto", "https", "1.115", "[[[[]]]]"},
		{"DELETE", "/v1/runbooks/r1/traits/CUSTOM_X", "Origin", "http://x", "1.91", ""},
		{"HEAD", "/v1//nodes//", "", "", "1.x", ""},
		{"OPTIONS", "/v1/nodes.json", "Access-Control-Request-Method", "GET", "1.5", ""},
		{"GET", "/v1/nodes/n1/management/indicators/@", "", "", "latest", ""},
		{"GET", "/healthcheck", "", "", "", ""},
	} {
		f.Add(s.method, s.path, s.name, s.value, s.version, []byte(s.body))
	}
	h := New(Deps{Logger: quiet, Authorize: AllowAll})
	f.Fuzz(func(t *testing.T, method, path, name, value, version string, body []byte) {
		if method == "" || strings.IndexFunc(method, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) }) >= 0 {
			return // net/http rejects such methods before any handler
		}
		u, err := url.ParseRequestURI("/" + strings.TrimPrefix(path, "/"))
		if err != nil {
			return
		}
		req := &http.Request{
			Method: method, URL: u, RequestURI: u.RequestURI(), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Host: "127.0.0.1:6385", RemoteAddr: "127.0.0.1:40000",
			Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		}
		if name != "" && httpHeaderName(name) {
			req.Header.Set(name, value)
		}
		if version != "" {
			req.Header.Set(microversion.HeaderLegacy, version)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 && rec.Code != http.StatusNotImplemented && rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("%s %q: %d %s", method, path, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && method != http.MethodHead {
			var env struct {
				ErrorMessage *string `json:"error_message"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.ErrorMessage == nil {
				t.Fatalf("%s %q: %d body %q is no error envelope", method, path, rec.Code, rec.Body)
			}
		}
	})
}

func httpHeaderName(s string) bool {
	for _, r := range s {
		if r <= ' ' || r >= 0x7f || r == ':' {
			return false
		}
	}
	return true
}
