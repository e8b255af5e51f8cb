package oslo_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/rpc"
)

// python is Debian's interpreter, where python3-oslo.messaging and
// python3-ironic live (CI installs them with ironic-common).
const python = "/usr/bin/python3"

// peer runs testdata/peer.py against the test's bus; it is skipped where
// Debian's oslo.messaging is not installed.
func peer(t *testing.T, b bus, mode, host string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	if err := exec.Command(python, "-c", "import oslo_messaging, ironic.common.exception").Run(); err != nil {
		t.Skipf("Debian's python3-oslo.messaging and python3-ironic are not installed: %v", err)
	}
	cmd := exec.Command(python, "testdata/peer.py", mode, b.opts.TransportURL, b.opts.Exchange, b.topic, host)
	cmd.Stderr = &testWriter{t: t}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return cmd, bufio.NewScanner(stdout)
}

// testWriter shows a peer's stderr in the test's log.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// step reads the peer's next JSON line.
func step(t *testing.T, lines *bufio.Scanner, want string) map[string]any {
	t.Helper()
	if !lines.Scan() {
		t.Fatalf("peer ended before step %s: %v", want, lines.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(lines.Bytes(), &m); err != nil || m["step"] != want {
		t.Fatalf("peer said %s, want step %s", lines.Text(), want)
	}
	return m
}

// oslo.messaging's own client (as upstream's ironic-api uses it) calls our
// server: results, the request context, an Ironic error rebuilt as its
// class with its code, oslo's UnsupportedVersion, and a cast.
func TestPythonClientCallsOurServer(t *testing.T) {
	b := newBus(t)
	c := newConductor("go-conductor")
	b.serve(t, c)
	_, lines := peer(t, b, "client", "go-conductor")

	res := step(t, lines, "call")["result"].(map[string]any)
	if res["served_by"] != "go-conductor" || res["driver"] != "fake-hardware" {
		t.Errorf("python's call answered %v", res)
	}
	c.mu.Lock()
	rc := c.contexts[0]
	c.mu.Unlock()
	if rc == nil || rc.RequestID != "req-from-python" || rc.ProjectID != "p-python" {
		t.Errorf("our conductor saw python's context as %+v", rc)
	}
	e := step(t, lines, "error")
	if e["cls"] != "DriverNotFound_Remote" || e["module"] != "ironic.common.exception_Remote" || fmt.Sprint(e["code"]) != "404" ||
		!strings.Contains(e["message"].(string), "missing") {
		t.Errorf("python rebuilt our error as %#v", e)
	}
	if v := step(t, lines, "version"); v["exc_type"] != "UnsupportedVersion" {
		t.Errorf("python saw a call at 2.0 fail with %v, want oslo's UnsupportedVersion", v)
	}
	step(t, lines, "cast")
	select {
	case got := <-c.casts:
		if got != "node-from-python" {
			t.Errorf("python's cast delivered node %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("python's cast not delivered within 30 s")
	}
}

// Our client calls oslo.messaging's own server (as upstream's conductor
// serves): result, context, and an Ironic error rebuilt with its class.
func TestOurClientCallsPythonServer(t *testing.T) {
	b := newBus(t)
	_, lines := peer(t, b, "server", "py-conductor")
	step(t, lines, "ready")
	api := b.client(t)
	ctx := contextWithRequest("req-from-go")
	got, err := api.GetDriverProperties(ctx, b.topic+".py-conductor", "fake-hardware")
	if err != nil {
		t.Fatalf("call to python: %v", err)
	}
	if got["served_by"] != "python" || got["request_id"] != "req-from-go" {
		t.Errorf("python answered %v", got)
	}
	_, err = api.GetDriverProperties(ctx, b.topic+".py-conductor", "missing")
	if e, ok := errs.As(err); !ok || e.Class != errs.ClassDriverNotFound || e.Code != http.StatusNotFound {
		t.Errorf("python's error reached us as %#v, want DriverNotFound 404", err)
	}
}

func contextWithRequest(id string) context.Context {
	return rpc.WithRequestContext(context.Background(), &rpc.RequestContext{RequestID: id})
}
