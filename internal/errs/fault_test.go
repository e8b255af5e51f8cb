package errs

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// Expected bodies below were recorded from a live upstream Ironic
// (tools/reference-ironic.sh) for the same conditions; the envelope code
// has not changed between that release and ours.
func TestFaultBodyMatchesUpstream(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		opts   FaultOptions
		status int
		body   string
	}{
		{
			name:   "ironic exception in a handler",
			err:    New(ClassNodeNotFound, map[string]any{"node": "11111111-2222-3333-4444-555555555555"}),
			status: 404,
			body:   `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node 11111111-2222-3333-4444-555555555555 could not be found.\", \"debuginfo\": null}"}`,
		},
		{
			name:   "pecan.abort while routing",
			err:    Abort(404),
			opts:   FaultOptions{Routing: true},
			status: 404,
			body:   `{"error_message": "{\"code\": 404, \"title\": \"Not Found\", \"description\": \"\"}"}`,
		},
		{
			name:   "webob exception with detail while routing",
			err:    HTTPStatus(405, "The API version does not allow allocations"),
			opts:   FaultOptions{Routing: true},
			status: 405,
			body:   `{"error_message": "{\"code\": 405, \"title\": \"Method Not Allowed\", \"description\": \"The API version does not allow allocations\"}"}`,
		},
		{
			name:   "non-ASCII detail is escaped",
			err:    HTTPStatus(400, "Expected UUID or name for node: é☃"),
			opts:   FaultOptions{Routing: true},
			status: 400,
			body:   `{"error_message": "{\"code\": 400, \"title\": \"Bad Request\", \"description\": \"Expected UUID or name for node: \\u00e9\\u2603\"}"}`,
		},
		{
			name:   "pecan.abort inside an exposed handler",
			err:    Abort(405),
			status: 405,
			body:   `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"The server could not comply with the request since it is either malformed or otherwise incorrect.\", \"debuginfo\": null}"}`,
		},
		{
			name:   "server error message is kept",
			err:    New(ClassInstanceDeployFailure, map[string]any{"reason": "disk"}),
			status: 500,
			body:   `{"error_message": "{\"faultcode\": \"Server\", \"faultstring\": \"Failed to deploy instance: disk\", \"debuginfo\": null}"}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := FaultBody(c.err, c.opts)
			if status != c.status || string(body) != c.body {
				t.Errorf("got %d %s\nwant %d %s", status, body, c.status, c.body)
			}
		})
	}
}

func TestPlainErrorsDoNotLeak(t *testing.T) {
	err := fmt.Errorf("query nodes: %w", errors.New("dial tcp 10.0.0.1:3306: secret"))
	status, body := FaultBody(err, FaultOptions{})
	want := `{"error_message": "{\"faultcode\": \"Server\", \"faultstring\": \"An unknown exception occurred.\", \"debuginfo\": null}"}`
	if status != 500 || string(body) != want {
		t.Errorf("got %d %s", status, body)
	}
	_, body = FaultBody(err, FaultOptions{DebugTracebacks: true})
	want = `{"error_message": "{\"faultcode\": \"Server\", \"faultstring\": \"An unknown exception occurred.\", \"debuginfo\": \"query nodes: dial tcp 10.0.0.1:3306: secret\"}"}`
	if string(body) != want {
		t.Errorf("debug: got %s", body)
	}
	// Client errors never carry debuginfo.
	_, body = FaultBody(New(ClassNodeNotFound, map[string]any{"node": "n"}), FaultOptions{DebugTracebacks: true})
	if want := `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node n could not be found.\", \"debuginfo\": null}"}`; string(body) != want {
		t.Errorf("client with debug: got %s", body)
	}
}

func TestUnknownCodeIs500(t *testing.T) {
	e := NewMessageKw(ClassInvalid, "odd", map[string]any{"code": 499})
	status, body := FaultBody(e, FaultOptions{})
	want := `{"error_message": "{\"faultcode\": \"Server\", \"faultstring\": \"odd\", \"debuginfo\": null}"}`
	if status != 500 || string(body) != want {
		t.Errorf("got %d %s", status, body)
	}
}

func TestTracebackIsCut(t *testing.T) {
	e := FromClass("NodeLocked", "Node a is locked.\nTraceback (most recent call last):\n  File x\n")
	_, body := FaultBody(e, FaultOptions{})
	want := `{"error_message": "{\"faultcode\":\"Client\",\"faultstring\":\"Node a is locked.\",\"debuginfo\":null}"}`
	if string(body) != want {
		t.Errorf("got %s", body)
	}
	_, body = FaultBody(e, FaultOptions{DebugTracebacks: true})
	want = `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node a is locked.\\nTraceback (most recent call last):\\n  File x\\n\", \"debuginfo\": null}"}`
	if string(body) != want {
		t.Errorf("debug keeps traceback: got %s", body)
	}
}

func TestWriteFault(t *testing.T) {
	rec := httptest.NewRecorder()
	e := HTTPStatus(406, "Version 1.200 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.82].").
		WithHeaders(map[string]string{"X-OpenStack-Ironic-API-Minimum-Version": "1.1", "X-OpenStack-Ironic-API-Maximum-Version": "1.82"})
	WriteFault(rec, httptest.NewRequest(http.MethodGet, "/v1/nodes", nil), e, FaultOptions{Routing: true})
	want := `{"error_message": "{\"code\": 406, \"title\": \"Not Acceptable\", \"description\": \"Version 1.200 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.82].\"}"}`
	if rec.Code != 406 || rec.Body.String() != want {
		t.Errorf("got %d %s", rec.Code, rec.Body)
	}
	h := rec.Header()
	if h.Get("Content-Type") != "application/json" || h.Get("Content-Length") != "218" ||
		h.Get("X-OpenStack-Ironic-API-Maximum-Version") != "1.82" {
		t.Errorf("headers: %v", h)
	}

	rec = httptest.NewRecorder()
	WriteFault(rec, httptest.NewRequest(http.MethodHead, "/v1/foo", nil), Abort(404), FaultOptions{Routing: true})
	if rec.Header().Get("Content-Length") != "21" || rec.Body.String() != `{"error_message": ""}` {
		t.Errorf("HEAD: %v %q", rec.Header(), rec.Body)
	}

	rec = httptest.NewRecorder()
	WriteFault(rec, httptest.NewRequest(http.MethodGet, "/v1/nodes", nil), New(ClassUnauthorized, nil), FaultOptions{})
	if rec.Code != 401 || rec.Header().Get("WWW-Authenticate") != `Basic realm="Baremetal API"` ||
		rec.Header().Get("Content-Length") != strconv.Itoa(rec.Body.Len()) {
		t.Errorf("Unauthorized: %d %v", rec.Code, rec.Header())
	}
}

func BenchmarkFaultBody(b *testing.B) {
	e := New(ClassNodeNotFound, map[string]any{"node": "11111111-2222-3333-4444-555555555555"})
	for b.Loop() {
		FaultBody(e, FaultOptions{})
	}
}
