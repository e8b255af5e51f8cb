package compat

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"
)

// lockedFault is upstream's NodeLocked faultstring; the host is the
// conductor's, which the test reads from the server rather than assumes.
var lockedFault = regexp.MustCompile(`^Node ([0-9a-f-]{36}) is locked by host (\S+), please retry after the current operation is completed\.$`)

// python-ironicclient and openstacksdk retry 409 (NodeLocked) by default:
// a power request while a slow fake deploy holds the node's lock waits the
// lock out and succeeds; with retries turned off each client raises with
// the server's faultstring, the one a plain HTTP client reads.
func TestClientsRetryNodeLocked(t *testing.T) {
	requireTool(t, "python3-ironicclient", debianPython, "-c", "import ironicclient")
	requireTool(t, "python3-openstacksdk", debianPython, "-c", "import openstack")
	forEachDeployment(t, clientsRetryNodeLocked)
}

func clientsRetryNodeLocked(t *testing.T, d deployment) {
	// A deploy that outlasts any client start-up: the clients without
	// retries must meet the lock however slow the machine is.
	s, c, uuids := lockableNodes(t, d, 300, 1)
	fs := lockNode(t, c, uuids[0], "active")
	t.Log(runPython(t, "retry_check.py", s.URL, "fail", "409", uuids[0], fs, uuids[0], fs))
	if st := c.get("/v1/nodes/" + uuids[0])["provision_state"]; st != "deploying" {
		t.Fatalf("the lock ended before the clients ran: %v", st)
	}
	// Graceful shutdown would wait the long deploy out.
	s.kill()

	// A lock shorter than either client's default retry budget
	// (ironicclient 5 × 2 s, the SDK's five retries backed off from
	// 0.5 s): the fake deploy sleeps deploy_delay in prepare and again in
	// deploy, 8 s in all. One node per client.
	s, c, uuids = lockableNodes(t, d, 4, 2)
	faults := []string{lockNode(t, c, uuids[0], "active"), lockNode(t, c, uuids[1], "active")}
	t.Log(runPython(t, "retry_check.py", s.URL, "retry", "409", uuids[0], faults[0], uuids[1], faults[1]))
	for _, u := range uuids {
		// The retried call got through only once the deploy had let go.
		if st := c.get("/v1/nodes/" + u)["provision_state"]; st != "active" {
			t.Fatalf("after the retried power on: %v", st)
		}
		waitField(t, c, "/v1/nodes/"+u, "power_state", "power on")
	}
	t.Logf("raw client made %d calls", c.calls.n.Load())
}

// lockableNodes starts a server whose fake deploy sleeps delay seconds
// twice and makes n nodes available on it. The conductor tries a lock
// once: its own retries (3 × 1 s by default) would only slow every 409
// down, they change nothing the clients see.
func lockableNodes(t *testing.T, d deployment, delay, n int) (*server, *raw, []string) {
	t.Helper()
	s := d.start(t, fmt.Sprintf("[fake]\ndeploy_delay = %d\n[conductor]\nnode_locked_retry_attempts = 1\n", delay))
	c := newRaw(t, s.URL, "1.81")
	var uuids []string
	for i := range n {
		uuids = append(uuids, availableNode(t, c, fmt.Sprintf("locked-%d", i)))
	}
	return s, c, uuids
}

// lockNode starts a slow deploy (or rebuild) and returns once the node is
// reserved, with the faultstring a power request now gets.
func lockNode(t *testing.T, c *raw, uuid, target string) string {
	t.Helper()
	if st, body, _ := c.do("PUT", "/v1/nodes/"+uuid+"/states/provision", map[string]any{"target": target}); st != http.StatusAccepted {
		t.Fatalf("%s: %d %v", target, st, body)
	}
	eventually(t, func() (bool, string) {
		r := c.get("/v1/nodes/" + uuid)["reservation"]
		return r != nil, fmt.Sprint(r)
	})
	st, body, _ := c.do("PUT", "/v1/nodes/"+uuid+"/states/power", map[string]any{"target": "power off"})
	fs := faultstring(t, body)
	m := lockedFault.FindStringSubmatch(fs)
	if st != http.StatusConflict || m == nil || m[1] != uuid {
		t.Fatalf("power off of a reserved node: %d %q", st, fs)
	}
	return fs
}
