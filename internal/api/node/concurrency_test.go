package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
)

// interposer runs before before each UpdateNode reaches the conductor.
type interposer struct {
	rpc.ConductorAPI
	before func(ctx context.Context, nodeID string)
}

func (i *interposer) UpdateNode(ctx context.Context, topic, nodeID string, upd *model.NodeUpdate, reset bool) (*model.Node, error) {
	if i.before != nil {
		i.before(ctx, nodeID)
	}
	return i.ConductorAPI.UpdateNode(ctx, topic, nodeID, upd, reset)
}

// newInterposedEnv is newEnv with UpdateNode calls passing through ip.
func newInterposedEnv(t *testing.T, ip *interposer) *env {
	return newEnvWith(t, func(d *Deps) {
		ip.ConductorAPI = d.Conductor
		d.Conductor = ip
	})
}

// TestConcurrentWritesKeepEveryKey is the measured data loss: PATCHes of
// different keys (of one dict or of two) and maintenance, sent at the same
// time to one node, all answered 200/202 and all kept.
func TestConcurrentWritesKeepEveryKey(t *testing.T) {
	e := newEnv(t)
	uuid := e.create(`{"driver": "fake-hardware"}`)["uuid"].(string)
	const rounds = 20
	var wg sync.WaitGroup
	fail := make(chan string, 4*rounds)
	send := func(method, path, body string, want int) {
		defer wg.Done()
		if r := e.do(method, path, "1.115", body); r.status != want {
			fail <- fmt.Sprintf("%s %s %s: %d %s", method, path, body, r.status, r.body)
		}
	}
	for i := 0; i < rounds; i++ {
		wg.Add(4)
		go send("PATCH", "/v1/nodes/"+uuid, fmt.Sprintf(`[{"op": "add", "path": "/extra/e%d", "value": %d}]`, i, i), http.StatusOK)
		go send("PATCH", "/v1/nodes/"+uuid, fmt.Sprintf(`[{"op": "add", "path": "/properties/p%d", "value": %d}]`, i, i), http.StatusOK)
		go send("PATCH", "/v1/nodes/"+uuid, fmt.Sprintf(`[{"op": "add", "path": "/extra/f%d", "value": "x"}]`, i), http.StatusOK)
		go send("PUT", "/v1/nodes/"+uuid+"/maintenance", fmt.Sprintf(`{"reason": "r%d"}`, i), http.StatusAccepted)
		wg.Wait()
	}
	close(fail)
	for f := range fail {
		t.Error(f)
	}
	got := e.do("GET", "/v1/nodes/"+uuid, "1.115", "").json(t)
	extra, props := got["extra"].(map[string]any), got["properties"].(map[string]any)
	for i := 0; i < rounds; i++ {
		if _, ok := extra[fmt.Sprintf("e%d", i)]; !ok {
			t.Errorf("extra/e%d lost: %v", i, extra)
		}
		if _, ok := extra[fmt.Sprintf("f%d", i)]; !ok {
			t.Errorf("extra/f%d lost: %v", i, extra)
		}
		if _, ok := props[fmt.Sprintf("p%d", i)]; !ok {
			t.Errorf("properties/p%d lost: %v", i, props)
		}
	}
	if got["maintenance"] != true || got["maintenance_reason"] != fmt.Sprintf("r%d", rounds-1) {
		t.Errorf("maintenance %v reason %v", got["maintenance"], got["maintenance_reason"])
	}
}

// TestPatchAppliedAgainWhenItsKeyChanged: a key the PATCH edits changes
// between the API's read and the conductor's lock; the PATCH is applied
// again to the new node, so it answers what it would have answered had it
// come second.
func TestPatchAppliedAgainWhenItsKeyChanged(t *testing.T) {
	ip := &interposer{}
	e := newInterposedEnv(t, ip)
	uuid := e.create(`{"driver": "fake-hardware", "extra": {"a": 1, "b": 1}}`)["uuid"].(string)
	interfere := func(ops string) func(context.Context, string) {
		done := false
		return func(ctx context.Context, nodeID string) {
			if done {
				return
			}
			done = true
			ip.before = nil
			if r := e.do("PATCH", "/v1/nodes/"+nodeID, "1.115", ops); r.status != http.StatusOK {
				t.Errorf("interfering PATCH: %d %s", r.status, r.body)
			}
		}
	}

	// Another writer replaced a: the removal still applies.
	ip.before = interfere(`[{"op": "replace", "path": "/extra/a", "value": 2}]`)
	r := e.do("PATCH", "/v1/nodes/"+uuid, "1.115", `[{"op": "remove", "path": "/extra/a"}]`)
	if r.status != http.StatusOK {
		t.Fatalf("remove after replace: %d %s", r.status, r.body)
	}
	if extra := r.json(t)["extra"].(map[string]any); extra["a"] != nil || extra["b"] != 1.0 {
		t.Fatalf("extra %v", extra)
	}

	// Another writer removed b first: this removal fails as upstream's
	// would on a node without b, and writes nothing.
	ip.before = interfere(`[{"op": "remove", "path": "/extra/b"}]`)
	r = e.do("PATCH", "/v1/nodes/"+uuid, "1.115", `[{"op": "add", "path": "/extra/c", "value": 3}, {"op": "remove", "path": "/extra/b"}]`)
	if r.status != http.StatusBadRequest || !strings.Contains(r.faultstring(t), "can't remove a non-existent object 'b'") {
		t.Fatalf("remove after remove: %d %s", r.status, r.body)
	}
	if extra := e.do("GET", "/v1/nodes/"+uuid, "1.115", "").json(t)["extra"].(map[string]any); len(extra) != 0 {
		t.Fatalf("a failed PATCH wrote: extra %v", extra)
	}

	// A key that changes before every attempt: a 409 after the bounded
	// number of attempts, and nothing written.
	n := 0
	ip.before = func(ctx context.Context, nodeID string) {
		n++
		held := ip.before
		ip.before = nil
		if r := e.do("PATCH", "/v1/nodes/"+nodeID, "1.115", fmt.Sprintf(`[{"op": "add", "path": "/extra/k", "value": %d}]`, n)); r.status != http.StatusOK {
			t.Errorf("interfering PATCH: %d %s", r.status, r.body)
		}
		ip.before = held
	}
	r = e.do("PATCH", "/v1/nodes/"+uuid, "1.115", `[{"op": "add", "path": "/extra/k", "value": "mine"}]`)
	ip.before = nil
	if r.status != http.StatusConflict || n != patchAttempts {
		t.Fatalf("always changed: %d after %d attempts: %s", r.status, n, r.body)
	}
	if k := e.do("GET", "/v1/nodes/"+uuid, "1.115", "").json(t)["extra"].(map[string]any)["k"]; k != float64(patchAttempts) {
		t.Fatalf("extra/k is %v", k)
	}
}

// TestWriteCompletesWhenClientLeaves: a client that closes its connection
// while its PATCH is with the conductor does not cancel the write half-way.
func TestWriteCompletesWhenClientLeaves(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	ctxErr := make(chan error, 1)
	ip := &interposer{}
	e := newInterposedEnv(t, ip)
	uuid := e.create(`{"driver": "fake-hardware"}`)["uuid"].(string)
	ip.before = func(ctx context.Context, _ string) {
		close(entered)
		<-release
		ctxErr <- ctx.Err()
	}
	var mu sync.Mutex
	var reqCtx context.Context
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reqCtx = r.Context()
		mu.Unlock()
		e.h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	body := `[{"op": "add", "path": "/extra/left", "value": true}]`
	fmt.Fprintf(conn, "PATCH /v1/nodes/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-OpenStack-Ironic-API-Version: 1.115\r\nContent-Length: %d\r\n\r\n%s", uuid, len(body), body)
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the PATCH never reached the conductor")
	}
	conn.Close()
	// The server notices the disconnect: the request's own context ends.
	mu.Lock()
	rc := reqCtx
	mu.Unlock()
	<-rc.Done()
	close(release)
	if err := <-ctxErr; err != nil {
		t.Fatalf("the conductor call saw its context end: %v", err)
	}
	// The answer went nowhere; the write is stored all the same once the
	// handler is done (the server closes the connection after it).
	srv.Close()
	if extra := e.do("GET", "/v1/nodes/"+uuid, "1.115", "").json(t)["extra"].(map[string]any); extra["left"] != true {
		t.Fatalf("extra %v", extra)
	}
}
