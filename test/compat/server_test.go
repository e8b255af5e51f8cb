// Package compat drives a running ironic binary with clients nobody here
// wrote (gophercloud, the Debian baremetal CLI, openstacksdk) and with
// Nova's call sequence, to prove they work against us unchanged.
package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/cluster"
)

// server is ironic, in one of the deployments, on a loopback port.
type server struct {
	URL string
	// cluster is the api + conductor deployment's processes; nil for
	// all-in-one.
	cluster *cluster.Cluster
	// database is the [database]/connection URL the server runs on, for
	// tests that act on the database as another conductor would.
	database string
	// kill ends every process at once, without the graceful shutdown
	// that would wait for the work still running.
	kill func()
}

// deployment is one way of running ironic. Every suite runs against each,
// so that a client meets the JSON-RPC hop and MariaDB as well as the
// single process on SQLite.
type deployment struct {
	name string
	// start runs ironic with conf appended to its ironic.conf and waits
	// until it takes node requests.
	start func(t *testing.T, conf string) *server
}

var deployments = []deployment{
	{"all-in-one", startAllInOne},
	{"api+conductor", startAPIConductor},
}

// forEachDeployment runs fn as one subtest per deployment. The
// deployments run side by side: the suites mostly wait for state changes
// and clients' retries, and CI has two cores.
func forEachDeployment(t *testing.T, fn func(t *testing.T, d deployment)) {
	t.Helper()
	for _, d := range deployments {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			fn(t, d)
		})
	}
}

// eachServer runs fn as one subtest per deployment, against a server
// started with conf.
func eachServer(t *testing.T, conf string, fn func(t *testing.T, s *server)) {
	t.Helper()
	forEachDeployment(t, func(t *testing.T, d deployment) { fn(t, d.start(t, conf)) })
}

// startAllInOne runs `ironic all-in-one` on SQLite.
func startAllInOne(t *testing.T, extra string) *server {
	t.Helper()
	bin := cluster.Binary(t)
	dir := t.TempDir()
	port := freePort(t)
	// A free port for the http_root server too: the all-in-one default
	// (6386) would be shared by the servers of parallel tests.
	database := "sqlite:///" + filepath.Join(dir, "ironic.sqlite")
	conf := fmt.Sprintf("[api]\nhost_ip = 127.0.0.1\nport = %d\n[deploy]\nhttp_url = http://127.0.0.1:%d\n[database]\nconnection = %s\n%s\n",
		port, freePort(t), database, extra)
	confPath := filepath.Join(dir, "ironic.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &server{URL: fmt.Sprintf("http://127.0.0.1:%d", port), database: database}
	logPath := filepath.Join(dir, "ironic.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config-file", confPath, "all-in-one")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		f.Close()
		close(done)
	}()
	s.kill = func() {
		cmd.Process.Kill()
		<-done
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("--- ironic output:\n%s", lastLines(string(b), 60))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.URL + "/v1")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return s
			}
		}
		select {
		case <-done:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("ironic exited early:\n%s", b)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("ironic never answered on %s", s.URL)
	return nil
}

// startAPIConductor runs `ironic api` and one `ironic conductor` talking
// JSON-RPC on loopback, sharing a new MariaDB database.
func startAPIConductor(t *testing.T, extra string) *server {
	t.Helper()
	database := mysqlURL(t)
	c := cluster.Start(t, cluster.Options{Conductors: 1, Database: database, Config: extra})
	return &server{URL: c.URL(), cluster: c, database: database, kill: func() {
		c.API.Kill()
		for _, p := range c.Conductors {
			p.Kill()
		}
	}}
}

// mysqlURL is a new database on IRONIC_TEST_MYSQL_DSN's server. Without
// the variable the api + conductor deployment is skipped, but not in CI,
// which always provides MariaDB.
func mysqlURL(t *testing.T) string {
	t.Helper()
	if os.Getenv(storetest.MySQLEnv) == "" && os.Getenv("CI") != "" {
		t.Fatalf("CI without %s: the api + conductor deployment needs MariaDB", storetest.MySQLEnv)
	}
	return storetest.MySQLURL(t)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// countingTransport counts the requests a client makes, so that each suite
// can say how many calls it made.
type countingTransport struct {
	n    atomic.Int64
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// raw is a plain HTTP client: the second opinion that checks what another
// client changed.
type raw struct {
	t       *testing.T
	base    string
	version string
	header  http.Header
	calls   countingTransport
	client  *http.Client
}

func newRaw(t *testing.T, base, version string) *raw {
	r := &raw{t: t, base: base, version: version, header: http.Header{}}
	r.calls.next = http.DefaultTransport
	r.client = &http.Client{Transport: &r.calls, Timeout: 30 * time.Second}
	return r
}

// do sends one request and returns the status, the decoded JSON body (nil
// when empty) and the response headers.
func (r *raw) do(method, path string, body any) (int, map[string]any, http.Header) {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			r.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.base+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if r.version != "" {
		req.Header.Set("X-OpenStack-Ironic-API-Version", r.version)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	var out map[string]any
	if len(bytes.TrimSpace(b)) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			r.t.Fatalf("%s %s: %d, body is not a JSON object: %q", method, path, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, out, resp.Header
}

// get fetches a resource and fails the test unless it answers 200.
func (r *raw) get(path string) map[string]any {
	r.t.Helper()
	status, body, _ := r.do("GET", path, nil)
	if status != http.StatusOK {
		r.t.Fatalf("GET %s: %d %v", path, status, body)
	}
	return body
}

// faultstring extracts upstream's faultstring from an error body.
func faultstring(t *testing.T, body map[string]any) string {
	t.Helper()
	s, ok := body["error_message"].(string)
	if !ok {
		t.Fatalf("error body without error_message string: %v", body)
	}
	var inner struct {
		Faultstring string `json:"faultstring"`
	}
	if err := json.Unmarshal([]byte(s), &inner); err != nil {
		t.Fatalf("error_message is not JSON: %q", s)
	}
	return inner.Faultstring
}
