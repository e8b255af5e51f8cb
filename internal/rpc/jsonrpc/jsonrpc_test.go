package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/openkeel/ironic/internal/auth"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
)

// fakeConductor records each call's arguments and answers the result or
// error set for the method (methods are in fake_gen_test.go).
type fakeConductor struct {
	mu      sync.Mutex
	calls   []fakeCall
	results map[string]any
	errors  map[string]error
}

type fakeCall struct {
	method string
	args   []any
	rc     *rpc.RequestContext
}

var _ rpc.ConductorAPI = (*fakeConductor)(nil)

func newFake() *fakeConductor {
	return &fakeConductor{results: map[string]any{}, errors: map[string]error{}}
}

func (f *fakeConductor) record(ctx context.Context, method string, args ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{method: method, args: args, rc: rpc.RequestContextFrom(ctx)})
	return f.errors[method]
}

func (f *fakeConductor) result(method string) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.results[method]
}

func (f *fakeConductor) takeCalls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

type roundTripCase struct {
	method string
	args   []any
	result any
	call   func(ctx context.Context, c rpc.ConductorAPI, topic string) (any, error)
}

var when = time.Date(2026, 8, 20, 10, 11, 12, 0, time.UTC)

func sampleNode() *model.Node {
	return &model.Node{
		ID: 7, UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", CreatedAt: when, UpdatedAt: model.Ptr(when.Add(time.Hour)),
		Name: model.Ptr("node-7"), PowerState: "power on", ProvisionState: "active",
		Driver: "fake-hardware", DriverInfo: map[string]any{"ipmi_address": "10.0.0.1", "ipmi_port": 623.0},
		InstanceInfo: map[string]any{"image_source": "http://x/img.qcow2"}, Properties: map[string]any{"cpus": 8.0},
		DriverInternalInfo: map[string]any{"agent_url": "https://10.0.0.5:9999"}, CleanStep: map[string]any{},
		ConductorGroup: "rack1", Maintenance: true, MaintenanceReason: model.Ptr("because"), Reservation: model.Ptr("c1"),
		ResourceClass: model.Ptr("baremetal"),
	}
}

// sampleNodeUpdate has one edit of each kind: a conditional key edit, a
// key removal and an unconditional column edit.
func sampleNodeUpdate() *model.NodeUpdate {
	return &model.NodeUpdate{Edits: []model.NodeEdit{
		{Path: []string{"extra", "rack"}, Value: []byte(`"r1"`), Check: true, WasAbsent: true},
		{Path: []string{"properties", "cpus"}, Remove: true, Check: true, Was: []byte(`8`)},
		{Path: []string{"maintenance"}, Value: []byte(`true`)},
	}}
}

func samplePort() *model.Port {
	// local_link_connection and pxe_enabled are not nullable upstream:
	// unset, they are {} and true.
	return &model.Port{ID: 3, UUID: "5e1c3d1c-0a44-4a5a-8a4f-9b2f0a1c2d3e", Address: model.Ptr("52:54:00:12:34:56"), NodeID: model.Ptr[int64](7),
		LocalLinkConnection: map[string]any{}, PXEEnabled: model.Ptr(true), CreatedAt: when}
}

func samplePortgroup() *model.Portgroup {
	return &model.Portgroup{ID: 4, UUID: "0b0e2d84-4a38-4b6e-9d3e-9a2b6c0f8e1a", Name: model.Ptr("pg0"), NodeID: model.Ptr[int64](7),
		StandalonePortsSupported: model.Ptr(true), DynamicPortgroup: model.Ptr(false), CreatedAt: when}
}

func sampleConnector() *model.VolumeConnector {
	return &model.VolumeConnector{ID: 5, UUID: "c1b8e5a3-6f3d-4a9e-8c47-0f3e1d2b4a5c", NodeID: model.Ptr[int64](7), Type: model.Ptr("iqn"), ConnectorID: model.Ptr("iqn.2010-10.org.openstack:x"), CreatedAt: when}
}

func sampleTarget() *model.VolumeTarget {
	return &model.VolumeTarget{ID: 6, UUID: "f3c2b1a0-9e8d-4c7b-8a69-5e4d3c2b1a09", NodeID: model.Ptr[int64](7), VolumeType: model.Ptr("iscsi"), VolumeID: model.Ptr("vol-1"), BootIndex: model.Ptr(0), CreatedAt: when}
}

func sampleAllocation() *model.Allocation {
	return &model.Allocation{ID: 8, UUID: "a9b8c7d6-e5f4-4a3b-9c2d-1e0f9a8b7c6d", Name: model.Ptr("alloc"), State: "allocating",
		ResourceClass: model.Ptr("baremetal"), Traits: []string{"CUSTOM_GPU"}, CandidateNodes: []string{}, CreatedAt: when}
}

// startServer serves s on 127.0.0.1 until the test ends.
func startServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	ts.Start() // httptest binds 127.0.0.1
	t.Cleanup(ts.Close)
	return ts
}

// topicFor addresses ts the way upstream's JSON-RPC topics do: ".host:port".
func topicFor(ts *httptest.Server) string {
	return "." + strings.TrimPrefix(ts.URL, "http://")
}

func newNoauth(t *testing.T, fake *fakeConductor) (*Client, string) {
	t.Helper()
	srv := NewServer(fake, ServerOptions{})
	ts := startServer(t, srv)
	c, err := NewClient(ClientOptions{AuthStrategy: "noauth", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, topicFor(ts)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRoundTripEveryMethod sends every ConductorAPI method through client
// and server to the fake: the fake must see the caller's arguments and
// context, and the caller the fake's result.
func TestRoundTripEveryMethod(t *testing.T) {
	apiType := reflect.TypeFor[rpc.ConductorAPI]()
	var covered []string
	for _, tc := range roundTripCases {
		covered = append(covered, tc.method)
	}
	for m := range apiType.Methods() {
		if !slices.Contains(covered, m.Name) {
			t.Errorf("method %s has no round-trip case", m.Name)
		}
	}
	if len(roundTripCases) != apiType.NumMethod() || len(methodList) != apiType.NumMethod() {
		t.Fatalf("%d cases, %d wire methods, %d interface methods", len(roundTripCases), len(methodList), apiType.NumMethod())
	}

	fake := newFake()
	c, topic := newNoauth(t, fake)
	rc := &rpc.RequestContext{UserID: "u1", ProjectID: "p1", Roles: []string{"admin", "member"}, RequestID: "req-123", SystemScope: "all", IsAdmin: true}
	ctx := rpc.WithRequestContext(context.Background(), rc)
	for _, tc := range roundTripCases {
		t.Run(tc.method, func(t *testing.T) {
			fake.results[tc.method] = tc.result
			got, err := tc.call(ctx, c, topic)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			calls := fake.takeCalls()
			if len(calls) != 1 || calls[0].method != tc.method {
				t.Fatalf("fake saw %+v, want one %s", calls, tc.method)
			}
			if g, w := jsonOf(t, calls[0].args), jsonOf(t, tc.args); g != w {
				t.Errorf("arguments:\n got %s\nwant %s", g, w)
			}
			if !reflect.DeepEqual(calls[0].rc, rc) {
				t.Errorf("context: got %+v, want %+v", calls[0].rc, rc)
			}
			if tc.result != nil {
				if g, w := jsonOf(t, got), jsonOf(t, tc.result); g != w {
					t.Errorf("result:\n got %s\nwant %s", g, w)
				}
				if reflect.TypeOf(got) != reflect.TypeOf(tc.result) {
					t.Errorf("result type %T, want %T", got, tc.result)
				}
			}
		})
	}
}

// TestLocalTransportPassesThrough checks the in-process transport: calls
// and errors reach the caller unchanged, cast errors are dropped.
func TestLocalTransportPassesThrough(t *testing.T) {
	fake := newFake()
	local := rpc.NewLocal(fake, nil)
	locked := errs.NodeLocked("n1", "c1")
	fake.errors["DestroyNode"] = locked
	fake.errors["ContinueNodeDeploy"] = locked
	if err := local.DestroyNode(context.Background(), "", "n1"); err != locked {
		t.Errorf("DestroyNode error = %v, want the conductor's own error value", err)
	}
	if err := local.ContinueNodeDeploy(context.Background(), "", "n1"); err != nil {
		t.Errorf("cast returned %v, want nil", err)
	}
	for _, tc := range roundTripCases {
		fake.results[tc.method] = tc.result
		got, err := tc.call(context.Background(), local, "")
		if err != nil && tc.method != "DestroyNode" {
			t.Errorf("%s: %v", tc.method, err)
		}
		if tc.result != nil && !reflect.DeepEqual(got, tc.result) {
			t.Errorf("%s: result %v, want %v", tc.method, got, tc.result)
		}
	}
	if n := len(fake.takeCalls()); n != len(roundTripCases)+2 {
		t.Errorf("fake saw %d calls, want %d", n, len(roundTripCases)+2)
	}
}

// TestErrorKeepsClassCodeAndMessage checks that conductor errors come back
// as the same Ironic class, code and message, and that errors of other
// kinds are not trusted.
func TestErrorKeepsClassCodeAndMessage(t *testing.T) {
	fake := newFake()
	c, topic := newNoauth(t, fake)
	ctx := context.Background()
	cases := []struct {
		name    string
		err     error
		class   errs.Class
		code    int
		message string
	}{
		{"NodeLocked", errs.NodeLocked("n1", "c1"), "NodeLocked", 409, errs.NodeLocked("n1", "c1").Message},
		{"wrapped", fmt.Errorf("deploy: %w", errs.InvalidStateRequested("deploy", "n1", "active")), "InvalidStateRequested", 400, errs.InvalidStateRequested("deploy", "n1", "active").Message},
		{"code override", errs.New(errs.ClassInstanceDeployFailure, map[string]any{"reason": "boom", "code": 418}), "InstanceDeployFailure", 418, "Failed to deploy instance: boom"},
		{"subclass", errs.NoFreeConductorWorker(), "NoFreeConductorWorker", 503, errs.NoFreeConductorWorker().Message},
		{"plain Go error", fmt.Errorf("disk on fire"), "IronicException", 500, "Unexpected error raised by RPC"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake.errors["DoProvisioningAction"] = tc.err
			err := c.DoProvisioningAction(ctx, topic, "n1", "deploy")
			e, ok := errs.As(err)
			if !ok {
				t.Fatalf("error %v (%T) is not an *errs.Error", err, err)
			}
			if e.Class != tc.class || e.Code != tc.code || e.Message != tc.message {
				t.Errorf("got %s %d %q, want %s %d %q", e.Class, e.Code, e.Message, tc.class, tc.code, tc.message)
			}
			if tc.class == "NodeLocked" && !errs.Is(err, errs.ClassConflict) {
				t.Errorf("rebuilt NodeLocked is not a Conflict")
			}
		})
	}
}

func post(t *testing.T, url, body string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

// TestFrames posts raw frames: upstream's error frames for malformed
// requests, the result frame, and 204 for casts (even failing ones).
func TestFrames(t *testing.T) {
	fake := newFake()
	fake.errors["DoNodeTearDown"] = errs.NodeLocked("n1", "c1")
	srv := NewServer(fake, ServerOptions{MaxJSONDepth: 10, MaxBodyBytes: 4096})
	ts := startServer(t, srv)
	locked := errs.NodeLocked("n1", "c1").Message
	cases := []struct {
		name   string
		body   string
		status int
		want   string // exact JSON; "" for an empty body
	}{
		{"parse error", `{"jsonrpc": "2.0", "method": `, 200,
			`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Invalid JSON received by RPC server"},"id":null}`},
		{"batch", `[{"jsonrpc": "2.0", "method": "inject_nmi", "id": 1}]`, 200,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request object received by RPC server"},"id":null}`},
		{"wrong version", `{"jsonrpc": "1.0", "method": "inject_nmi", "id": "a"}`, 200,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request object received by RPC server"},"id":"a"}`},
		{"no method", `{"jsonrpc": "2.0", "id": 5}`, 200,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request object received by RPC server"},"id":5}`},
		{"params not an object", `{"jsonrpc": "2.0", "method": "inject_nmi", "params": [1], "id": "b"}`, 200,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request object received by RPC server"},"id":"b"}`},
		{"malformed without id is still answered", `{"jsonrpc": "2.0"}`, 200,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request object received by RPC server"},"id":null}`},
		{"unknown method", `{"jsonrpc": "2.0", "method": "init_host", "params": {}, "id": "c"}`, 200,
			`{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method init_host was not found"},"id":"c"}`},
		{"missing kwarg", `{"jsonrpc": "2.0", "method": "inject_nmi", "params": {"context": {}}, "id": "d"}`, 200,
			`{"jsonrpc":"2.0","error":{"code":-32602,"message":"Params context are invalid for inject_nmi: missing required argument: 'node_id'"},"id":"d"}`},
		{"unexpected kwarg", `{"jsonrpc": "2.0", "method": "inject_nmi", "params": {"node_id": "n1", "force": true}, "id": "e"}`, 200,
			`{"jsonrpc":"2.0","error":{"code":-32602,"message":"Params force, node_id are invalid for inject_nmi: got an unexpected keyword argument 'force'"},"id":"e"}`},
		{"context not a dict", `{"jsonrpc": "2.0", "method": "inject_nmi", "params": {"node_id": "n1", "context": "x"}, "id": "f"}`, 200,
			`{"jsonrpc":"2.0","error":{"code":-32602,"message":"Params context, node_id are invalid for inject_nmi: Context must be a dictionary, if provided"},"id":"f"}`},
		{"call", `{"jsonrpc": "2.0", "method": "get_indicator_state", "params": {"context": {"request_id": "r"}, "node_id": "n1", "component": "system", "indicator": "led", "rpc.version": "1.50"}, "id": "g"}`, 200,
			`{"jsonrpc":"2.0","result":"blinking","id":"g"}`},
		{"optional kwargs left out", `{"jsonrpc": "2.0", "method": "heartbeat", "params": {"node_id": "n1", "callback_url": "http://10.0.0.5:9999"}, "id": "h"}`, 200,
			`{"jsonrpc":"2.0","result":null,"id":"h"}`},
		{"error", `{"jsonrpc": "2.0", "method": "do_node_tear_down", "params": {"context": {}, "node_id": "n1"}, "id": 9}`, 200,
			`{"jsonrpc":"2.0","error":{"code":409,"message":` + jsonString(locked) + `,"data":{"class":"ironic.common.exception.NodeLocked"}},"id":9}`},
		{"cast", `{"jsonrpc": "2.0", "method": "continue_node_clean", "params": {"context": {}, "node_id": "n1", "rpc.version": "1.27"}}`, 204, ""},
		{"failing cast", `{"jsonrpc": "2.0", "method": "do_node_tear_down", "params": {"context": {}, "node_id": "n1"}}`, 204, ""},
		{"cast of unknown method", `{"jsonrpc": "2.0", "method": "nope", "params": {}, "id": null}`, 204, ""},
		{"too deep", `{"jsonrpc": "2.0", "method": "vif_attach", "params": {"node_id": "n1", "vif_info": [[[[[[[[[[["x"]]]]]]]]]]]}, "id": 1}`, 400,
			`{"error":{"code":400,"message":"JSON body nesting exceeds the maximum depth of 10"}}`},
		{"too big", `{"jsonrpc": "2.0", "method": "inject_nmi", "params": {"node_id": "` + strings.Repeat("x", 5000) + `"}, "id": 1}`, 413,
			`{"error":{"code":413,"message":"Request body exceeds 4096 bytes"}}`},
	}
	fake.results["GetIndicatorState"] = "blinking"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := post(t, ts.URL+"/", tc.body, nil)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d (%s)", resp.StatusCode, tc.status, data)
			}
			if got := string(bytes.TrimSpace(data)); got != tc.want {
				t.Errorf("body\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	calls := fake.takeCalls()
	var names []string
	for _, c := range calls {
		names = append(names, c.method)
	}
	want := []string{"GetIndicatorState", "Heartbeat", "DoNodeTearDown", "ContinueNodeClean", "DoNodeTearDown"}
	if !slices.Equal(names, want) {
		t.Errorf("conductor saw %v, want %v", names, want)
	}

	resp, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET answered %d, want 405", resp.StatusCode)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestClientFrame checks what the client puts on the wire: URL from the
// topic, method, id from the request id, context, kwargs, rpc.version,
// and no id for a cast.
func TestClientFrame(t *testing.T) {
	var mu sync.Mutex
	var frames []map[string]any
	var paths []string
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var f map[string]any
		json.NewDecoder(r.Body).Decode(&f)
		mu.Lock()
		frames = append(frames, f)
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		if _, ok := f["id"]; !ok {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc": "2.0", "result": null, "id": %q}`, f["id"])
	}))
	c, err := NewClient(ClientOptions{AuthStrategy: "noauth"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := rpc.WithRequestContext(context.Background(), &rpc.RequestContext{RequestID: "req-42", ProjectID: "p"})
	topic := rpc.ManagerTopic + "." + strings.TrimPrefix(ts.URL, "http://")
	if err := c.DoNodeDeploy(ctx, topic, "n1", false, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.ContinueNodeDeploy(ctx, topic, "n1"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"id":"req-42","jsonrpc":"2.0","method":"do_node_deploy","params":{"configdrive":null,"context":{"project_id":"p","request_id":"req-42"},"node_id":"n1","rebuild":false,"rpc.version":"1.22"}}`,
		`{"jsonrpc":"2.0","method":"continue_node_deploy","params":{"context":{"project_id":"p","request_id":"req-42"},"node_id":"n1","rpc.version":"1.45"}}`,
	}
	if len(frames) != len(want) {
		t.Fatalf("server saw %d frames, want %d", len(frames), len(want))
	}
	for i := range want {
		if got := jsonOf(t, frames[i]); got != want[i] {
			t.Errorf("frame %d\n got %s\nwant %s", i, got, want[i])
		}
		if paths[i] != "/" {
			t.Errorf("frame %d posted to %s, want /", i, paths[i])
		}
	}
}

func TestClientURL(t *testing.T) {
	c, err := NewClient(ClientOptions{AuthStrategy: "noauth", Port: 8089})
	if err != nil {
		t.Fatal(err)
	}
	tls, err := NewClient(ClientOptions{AuthStrategy: "noauth", Port: 9000, UseSSL: true})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		c     *Client
		topic string
		want  string
	}{
		{c, ".ironic-conductor-0.ironic-conductor:8089", "http://ironic-conductor-0.ironic-conductor:8089/"},
		{c, ".cond-1", "http://cond-1:8089/"},
		{c, rpc.ManagerTopic + ".cond-1.example.com:7000", "http://cond-1.example.com:7000/"},
		{c, ".[fd00::5]:8090", "http://[fd00::5]:8090/"},
		{c, ".fd00::5", "http://[fd00::5]:8089/"},
		{tls, ".cond-1", "https://cond-1:9000/"},
	}
	for _, tc := range cases {
		if got := tc.c.URL(tc.topic); got != tc.want {
			t.Errorf("URL(%q) = %s, want %s", tc.topic, got, tc.want)
		}
	}
}

func writeHtpasswd(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "htpasswd")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func bcryptOf(t *testing.T, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

// TestBasicAuth checks http_basic in front of the server, as a conductor
// stacks it: the right password passes, a wrong one, an unknown user and
// a missing header get 401 with the challenge, and a non-Basic header
// gets 400; the conductor sees only the authenticated call.
func TestBasicAuth(t *testing.T) {
	file := writeHtpasswd(t, "ironic:"+bcryptOf(t, "s3cret"), "other:"+bcryptOf(t, "x"))
	fake := newFake()
	basic, err := auth.NewBasicAuth(file)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, auth.Handler(basic, NewServer(fake, ServerOptions{})))
	topic := topicFor(ts)
	ctx := context.Background()

	good, err := NewClient(ClientOptions{AuthStrategy: "http_basic", Username: "ironic", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if err := good.InjectNMI(ctx, topic, "n1"); err != nil {
		t.Errorf("right password refused: %v", err)
	}
	for _, creds := range [][2]string{{"ironic", "wrong"}, {"nobody", "s3cret"}, {"ironic", ""}} {
		bad, err := NewClient(ClientOptions{AuthStrategy: "http_basic", Username: creds[0], Password: creds[1]})
		if err != nil {
			t.Fatal(err)
		}
		err = bad.InjectNMI(ctx, topic, "n1")
		if err == nil || !strings.Contains(err.Error(), "HTTP 401") {
			t.Errorf("%s/%s: got %v, want HTTP 401", creds[0], creds[1], err)
		}
	}
	if n := len(fake.takeCalls()); n != 1 {
		t.Errorf("conductor ran %d calls, want only the authenticated one", n)
	}

	frame := `{"jsonrpc": "2.0", "method": "inject_nmi", "params": {"node_id": "n1"}, "id": 1}`
	resp, data := post(t, ts.URL, frame, nil)
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="Baremetal API"` {
		t.Errorf("no header: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if got := string(bytes.TrimSpace(data)); got != `{"error":{"message":"Authorization required","code":401}}` {
		t.Errorf("no header body: %s", got)
	}
	resp, data = post(t, ts.URL, frame, http.Header{"Authorization": {"Bearer abc"}})
	if resp.StatusCode != 400 || !strings.Contains(string(data), `Unsupported authorization type \"Bearer\"`) {
		t.Errorf("bearer: %d %s", resp.StatusCode, data)
	}
	if n := len(fake.takeCalls()); n != 0 {
		t.Errorf("conductor ran %d unauthenticated calls", n)
	}
}

// FuzzServerFrame feeds arbitrary bodies to the server: it must never
// panic, and must answer 204 or a JSON document.
func FuzzServerFrame(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc": "2.0", "method": "inject_nmi", "params": {"node_id": "n1"}, "id": 1}`,
		`{"jsonrpc": "2.0", "method": "update_node", "params": {"node_obj": {"uuid": 5}}, "id": "x"}`,
		`{"jsonrpc": "2.0", "method": "do_node_deploy", "params": {"node_id": "n", "rebuild": "yes", "configdrive": null}}`,
		`[`, `null`, `"x"`, `{"params": null}`,
	} {
		f.Add([]byte(seed))
	}
	srv := NewServer(newFake(), ServerOptions{MaxBodyBytes: 1 << 16})
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)))
		if rec.Code == http.StatusNoContent {
			return
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Errorf("status %d with a non-JSON body %q", rec.Code, rec.Body.String())
		}
	})
}
