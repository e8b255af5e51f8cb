package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/tcpproxy"
)

// temporaryFailure is the body of every 503 an outage answers.
const temporaryFailure = `{"error_message": "{\"faultcode\": \"Server\", \"faultstring\": \"Resource temporarily unavailable, please retry.\", \"debuginfo\": null}"}`

// answer is one API answer with the header clients pace retries by.
type answer struct {
	status     int
	retryAfter string
	body       string
}

func (c *Cluster) ask(t *testing.T, method, path, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, c.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", method, path, err)
	}
	return answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(b)}
}

// createNode registers a fake-hardware node and returns its UUID.
func (c *Cluster) createNode(t *testing.T, name string) string {
	t.Helper()
	a := c.ask(t, "POST", "/v1/nodes", `{"driver": "fake-hardware", "name": "`+name+`"}`)
	if a.status != http.StatusCreated {
		t.Fatalf("create node: %d %s", a.status, a.body)
	}
	var n struct{ UUID string }
	if err := json.Unmarshal([]byte(a.body), &n); err != nil {
		t.Fatal(err)
	}
	return n.UUID
}

// isUnavailable reports whether a is the outage answer: 503, Retry-After
// and TemporaryFailure's fault body.
func isUnavailable(a answer) bool {
	return a.status == http.StatusServiceUnavailable && a.retryAfter == "2" && a.body == temporaryFailure
}

// A conductor killed with SIGKILL stays in the API's hash ring until its
// heartbeat times out; meanwhile every request the API sends it answers
// 503 with Retry-After, never 500, and once it is restarted the same
// requests succeed again.
func TestConductorOutageAnswers503(t *testing.T) {
	c := Start(t, Options{Conductors: 1, Database: storetest.MySQLURL(t)})
	u := c.createNode(t, "node-0")
	requests := []struct{ method, path, body string }{
		{"PATCH", "/v1/nodes/" + u, `[{"op": "add", "path": "/extra/k", "value": "v"}]`},
		{"PUT", "/v1/nodes/" + u + "/states/power", `{"target": "power on"}`},
		{"GET", "/v1/nodes/" + u + "/validate", ""},
	}
	c.Conductors[0].Kill()
	for round := range 5 {
		for _, r := range requests {
			if a := c.ask(t, r.method, r.path, r.body); !isUnavailable(a) {
				t.Errorf("round %d: %s %s with the conductor dead: %d Retry-After %q %s; want 503, Retry-After 2, TemporaryFailure",
					round, r.method, r.path, a.status, a.retryAfter, a.body)
			}
		}
	}
	// Reads go to the database, not to the conductor.
	if a := c.ask(t, "GET", "/v1/nodes/"+u, ""); a.status != http.StatusOK {
		t.Errorf("GET node with the conductor dead: %d %s", a.status, a.body)
	}

	c.Conductors[0].Restart(t)
	await.UntilReason(t, 60*time.Second, "PATCH served by the restarted conductor", func() (bool, string) {
		a := c.ask(t, requests[0].method, requests[0].path, requests[0].body)
		if a.status != http.StatusOK && !isUnavailable(a) {
			t.Fatalf("PATCH while the conductor restarts: %d %s; want 503 or 200", a.status, a.body)
		}
		return a.status == http.StatusOK, fmt.Sprintf("%d %s", a.status, a.body)
	})
	if a := c.ask(t, "PUT", "/v1/nodes/"+u+"/states/power", `{"target": "power on"}`); a.status != http.StatusAccepted {
		t.Errorf("power on after the restart: %d %s", a.status, a.body)
	}
}

// The database going away under a running api and conductor: reads and
// writes answer 503 with Retry-After while it is cut, 200 once it is back,
// without restarting anything.
func TestDatabaseOutageAnswers503(t *testing.T) {
	raw, err := url.Parse(storetest.MySQLURL(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := tcpproxy.New(t, raw.Host)
	raw.Host = proxy.Addr()
	c := Start(t, Options{Conductors: 1, Database: raw.String()})
	u := c.createNode(t, "node-0")

	proxy.Cut()
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/v1/nodes/" + u, ""},
		{"GET", "/v1/nodes", ""},
		{"PATCH", "/v1/nodes/" + u, `[{"op": "add", "path": "/extra/during", "value": "outage"}]`},
		{"PUT", "/v1/nodes/" + u + "/states/power", `{"target": "power on"}`},
	} {
		if a := c.ask(t, r.method, r.path, r.body); !isUnavailable(a) {
			t.Errorf("%s %s with the database cut: %d Retry-After %q %s; want 503, Retry-After 2, TemporaryFailure",
				r.method, r.path, a.status, a.retryAfter, a.body)
		}
	}
	proxy.Restore()
	await.UntilReason(t, 30*time.Second, "PATCH after the database is back", func() (bool, string) {
		a := c.ask(t, "PATCH", "/v1/nodes/"+u, `[{"op": "add", "path": "/extra/after", "value": "outage"}]`)
		if a.status != http.StatusOK && !isUnavailable(a) {
			t.Fatalf("PATCH as the database comes back: %d %s; want 503 or 200", a.status, a.body)
		}
		return a.status == http.StatusOK, fmt.Sprintf("%d %s", a.status, a.body)
	})
	if a := c.ask(t, "GET", "/v1/nodes/"+u, ""); a.status != http.StatusOK || !strings.Contains(a.body, `"after": "outage"`) || strings.Contains(a.body, `"during"`) {
		t.Errorf("node after the outage: %d %s", a.status, a.body)
	}
}
