// Package nova is a Nova compute API fixture for tests: an HTTP server on
// 127.0.0.1 that takes os-server-external-events as Nova does at
// microversion 2.76, knows a set of instances, answers each event with its
// own code, and keeps a request log; faults and delays are injected by
// method call.
package nova

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Event is one external event as received.
type Event struct {
	Name       string `json:"name"`
	ServerUUID string `json:"server_uuid"`
	Tag        string `json:"tag,omitempty"`
	Status     string `json:"status,omitempty"`
}

// Request is one logged call.
type Request struct {
	Method string
	Path   string
	Token  string
	// Microversion is the OpenStack-API-Version header's value.
	Microversion string
	// LegacyMicroversion is X-OpenStack-Nova-API-Version.
	LegacyMicroversion string
	// RequestID is the X-OpenStack-Request-ID the caller sent.
	RequestID string
	// Body is the raw body, for checks of the exact document.
	Body   string
	Events []Event
	// Status is what the fixture answered.
	Status int
}

// Fixture is the fake Nova.
type Fixture struct {
	srv *httptest.Server
	t   testing.TB

	mu        sync.Mutex
	instances map[string]bool
	token     string
	valid     func(token string) bool
	failures  []int
	delay     time.Duration
	log       []Request
	received  chan struct{}
}

// New starts the fixture; it stops with the test. Its endpoint is the
// versioned one a catalog names (URL()+"/v2.1").
func New(t testing.TB) *Fixture {
	t.Helper()
	f := &Fixture{t: t, instances: map[string]bool{}, received: make(chan struct{}, 1024)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the server's root, without the API version.
func (f *Fixture) URL() string { return f.srv.URL }

// Endpoint is the compute endpoint a catalog would give: URL()+"/v2.1".
func (f *Fixture) Endpoint() string { return f.srv.URL + "/v2.1" }

// Instance makes uuid an instance Nova knows; events for others answer
// 404 as Nova does when no instance of a request is found.
func (f *Fixture) Instance(uuid string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.instances[uuid] = true
	return f
}

// RequireToken makes every call without this X-Auth-Token answer 401.
func (f *Fixture) RequireToken(token string) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.token = token
	return f
}

// ValidateTokens makes every call whose X-Auth-Token valid rejects
// answer 401, as Nova's auth_token middleware does; pass an identity
// fixture's TokenValid.
func (f *Fixture) ValidateTokens(valid func(token string) bool) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.valid = valid
	return f
}

// Close stops the server early, to play a Nova that is down.
func (f *Fixture) Close() { f.srv.Close() }

// FailNext makes the next calls answer the given statuses, one each, in
// order (e.g. 503 then 500).
func (f *Fixture) FailNext(statuses ...int) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, statuses...)
	return f
}

// Slow delays every answer by d, as a loaded Nova API does.
func (f *Fixture) Slow(d time.Duration) *Fixture {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delay = d
	return f
}

// Requests is a copy of the request log.
func (f *Fixture) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

// Accepted is every event answered with code 200, in arrival order.
func (f *Fixture) Accepted() []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Event
	for _, r := range f.log {
		if r.Status == http.StatusOK {
			out = append(out, r.Events...)
		}
	}
	return out
}

// Received is signalled after each logged call; tests wait on it rather
// than polling.
func (f *Fixture) Received() <-chan struct{} { return f.received }

func (f *Fixture) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	req := Request{
		Method: r.Method, Path: r.URL.Path, Token: r.Header.Get("X-Auth-Token"),
		Microversion: r.Header.Get("OpenStack-API-Version"), LegacyMicroversion: r.Header.Get("X-OpenStack-Nova-API-Version"),
		RequestID: r.Header.Get("X-OpenStack-Request-ID"), Body: string(body),
	}
	f.mu.Lock()
	delay := f.delay
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
	}
	status, answer := f.answer(&req, body)
	req.Status = status
	f.mu.Lock()
	f.log = append(f.log, req)
	f.mu.Unlock()
	f.t.Logf("nova fixture: %s %s %s -> %d", r.Method, r.URL.Path, body, status)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(answer)
	select {
	case f.received <- struct{}{}:
	default:
	}
}

// answer decides Nova's answer; it fills req.Events from the body.
func (f *Fixture) answer(req *Request, body []byte) (int, any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.failures) > 0 {
		st := f.failures[0]
		f.failures = f.failures[1:]
		return st, novaError(st, "injected failure")
	}
	if (f.token != "" && req.Token != f.token) || (f.valid != nil && !f.valid(req.Token)) {
		return http.StatusUnauthorized, map[string]any{"error": map[string]any{"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}
	}
	if req.Method != http.MethodPost || req.Path != "/v2.1/os-server-external-events" {
		return http.StatusNotFound, novaError(http.StatusNotFound, "The resource could not be found.")
	}
	// power-update exists from 2.76 on; Nova's schema refuses it below.
	if req.Microversion != "compute 2.76" && req.LegacyMicroversion != "2.76" {
		return http.StatusBadRequest, novaError(http.StatusBadRequest, "Invalid input for field/attribute name. Value: power-update. 'power-update' is not one of the allowed names")
	}
	var doc struct {
		Events []Event `json:"events"`
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil || len(doc.Events) == 0 {
		return http.StatusBadRequest, novaError(http.StatusBadRequest, fmt.Sprintf("Invalid input: %v", err))
	}
	req.Events = doc.Events
	out := make([]map[string]any, 0, len(doc.Events))
	found, failed := false, false
	for _, ev := range doc.Events {
		if ev.Name != "power-update" || (ev.Tag != "POWER_ON" && ev.Tag != "POWER_OFF") {
			return http.StatusBadRequest, novaError(http.StatusBadRequest, fmt.Sprintf("Invalid input for event %+v", ev))
		}
		res := map[string]any{"name": ev.Name, "server_uuid": ev.ServerUUID, "tag": ev.Tag}
		if f.instances[ev.ServerUUID] {
			found = true
			res["status"], res["code"] = "completed", 200
		} else {
			failed = true
			res["status"], res["code"] = "failed", 404
		}
		out = append(out, res)
	}
	if !found {
		return http.StatusNotFound, novaError(http.StatusNotFound, "No instances found for any event")
	}
	if failed {
		// Some events of the batch failed: Nova's multi-status answer.
		return http.StatusMultiStatus, map[string]any{"events": out}
	}
	return http.StatusOK, map[string]any{"events": out}
}

func novaError(status int, msg string) map[string]any {
	kind := map[int]string{400: "badRequest", 404: "itemNotFound", 409: "conflictingRequest"}[status]
	if kind == "" {
		kind = "computeFault"
	}
	return map[string]any{kind: map[string]any{"code": status, "message": msg}}
}
