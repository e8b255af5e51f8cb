package errs

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestUnavailableAnswers503WithRetryAfter(t *testing.T) {
	cause := errors.New("dial tcp 127.0.0.1:8089: connect: connection refused")
	cases := []struct {
		name  string
		err   error
		debug bool
		body  string
	}{
		{
			name: "cause stays out of the faultstring",
			err:  fmt.Errorf("change power state: %w", Unavailable(cause)),
			body: `{"error_message": "{\"faultcode\": \"Server\", \"faultstring\": \"Resource temporarily unavailable, please retry.\", \"debuginfo\": null}"}`,
		},
		{
			name:  "debug tracebacks show the cause",
			err:   Unavailable(cause),
			debug: true,
			body:  `{"error_message": "{\"faultcode\": \"Server\", \"faultstring\": \"Resource temporarily unavailable, please retry.\", \"debuginfo\": \"dial tcp 127.0.0.1:8089: connect: connection refused\"}"}`,
		},
		{
			// Rebuilt from a conductor's JSON-RPC answer: no headers.
			name: "503 classes get Retry-After too",
			err:  FromClass(ModulePrefix+"NoFreeConductorWorker", "Requested action cannot be performed due to lack of free conductor workers."),
			body: `{"error_message": "{\"faultcode\": \"Server\", \"faultstring\": \"Requested action cannot be performed due to lack of free conductor workers.\", \"debuginfo\": null}"}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			WriteFault(w, httptest.NewRequest(http.MethodGet, "/v1/nodes", nil), tc.err, FaultOptions{DebugTracebacks: tc.debug})
			if w.Code != http.StatusServiceUnavailable {
				t.Fatalf("status %d, want 503", w.Code)
			}
			if got := w.Header().Get("Retry-After"); got != strconv.Itoa(RetryAfterSeconds) {
				t.Errorf("Retry-After %q, want %d", got, RetryAfterSeconds)
			}
			if w.Body.String() != tc.body {
				t.Errorf("body\n got %s\nwant %s", w.Body.String(), tc.body)
			}
		})
	}
}

func TestUnavailableKeepsItsCause(t *testing.T) {
	cause := errors.New("bad connection")
	err := fmt.Errorf("get node: %w", Unavailable(cause))
	if !errors.Is(err, cause) {
		t.Error("errors.Is does not reach the cause")
	}
	if !Is(err, ClassTemporaryFailure) || !IsUnavailable(err) {
		t.Error("not a TemporaryFailure")
	}
	if got := Cause(err); got != cause {
		t.Errorf("Cause = %v, want %v", got, cause)
	}
	if Cause(NodeNotFound("n")) != nil || Cause(cause) != nil {
		t.Error("Cause of an error without one is not nil")
	}
	if IsUnavailable(NodeLocked("n", "h")) {
		t.Error("NodeLocked (409) taken for a 503")
	}
}

func TestOtherFaultsGetNoRetryAfter(t *testing.T) {
	w := httptest.NewRecorder()
	WriteFault(w, nil, errors.New("boom"), FaultOptions{})
	if w.Code != http.StatusInternalServerError || w.Header().Get("Retry-After") != "" {
		t.Errorf("status %d Retry-After %q; want 500 without Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
}

// TestNoRetryAfterForIronicclient: python-ironicclient (and the baremetal
// CLI) turns a Retry-After on anything but a 413 into a TypeError, so its
// 503s go without the header; other clients keep it.
func TestNoRetryAfterForIronicclient(t *testing.T) {
	cases := []struct {
		agent string
		want  string
	}{
		{"python-ironicclient", ""},
		{"python-ironicclient keystoneauth1/5.1.2 python-requests/2.28.1 CPython/3.11.2", ""},
		{"openstacksdk/1.0.1 keystoneauth1/5.1.2 python-requests/2.28.1 CPython/3.11.2", strconv.Itoa(RetryAfterSeconds)},
		{"gophercloud/v2.16.0", strconv.Itoa(RetryAfterSeconds)},
		{"", strconv.Itoa(RetryAfterSeconds)},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(http.MethodPut, "/v1/nodes/n1/states/power", nil)
		r.Header.Set("User-Agent", tc.agent)
		w := httptest.NewRecorder()
		WriteFault(w, r, Unavailable(errors.New("connection refused")), FaultOptions{})
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != tc.want {
			t.Errorf("%q: %d Retry-After %q, want 503 %q", tc.agent, w.Code, w.Header().Get("Retry-After"), tc.want)
		}
	}
}
