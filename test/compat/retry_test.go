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
	s, c, uuid := lockableNode(t, d, 300)
	fs := lockNode(t, c, uuid, "active")
	t.Log(runPython(t, "retry_check.py", s.URL, uuid, "ironicclient-fail", fs))
	t.Log(runPython(t, "retry_check.py", s.URL, uuid, "sdk-fail", fs))
	if st := c.get("/v1/nodes/" + uuid)["provision_state"]; st != "deploying" {
		t.Fatalf("the lock ended before the clients ran: %v", st)
	}
	// Graceful shutdown would wait the long deploy out.
	s.kill()

	// A deploy shorter than either client's default retry budget
	// (ironicclient 5 × 2 s, the SDK's five backed-off retries), each 409
	// itself taking the server's own lock retries.
	s, c, uuid = lockableNode(t, d, 4)
	lockNode(t, c, uuid, "active")
	t.Log(runPython(t, "retry_check.py", s.URL, uuid, "ironicclient-retry"))
	// The retried call got through only once the deploy had let go.
	if st := c.get("/v1/nodes/" + uuid)["provision_state"]; st != "active" {
		t.Fatalf("after the retried power off: %v", st)
	}
	waitField(t, c, "/v1/nodes/"+uuid, "power_state", "power off")
	lockNode(t, c, uuid, "rebuild")
	t.Log(runPython(t, "retry_check.py", s.URL, uuid, "sdk-retry"))
	if st := c.get("/v1/nodes/" + uuid)["provision_state"]; st != "active" {
		t.Fatalf("after the retried power off: %v", st)
	}
	waitField(t, c, "/v1/nodes/"+uuid, "power_state", "power off")
	t.Logf("raw client made %d calls", c.calls.n.Load())
}

// lockableNode starts a server whose fake deploy takes delay seconds and
// enrols an available node on it.
func lockableNode(t *testing.T, d deployment, delay int) (*server, *raw, string) {
	t.Helper()
	s := d.start(t, fmt.Sprintf("[fake]\ndeploy_delay = %d\n", delay))
	c := newRaw(t, s.URL, "1.81")
	status, n, _ := c.do("POST", "/v1/nodes", map[string]any{
		"driver": "fake-hardware", "name": "locked-0",
		"driver_info": map[string]any{"ipmi_address": "192.168.122.1"},
	})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, n)
	}
	uuid := n["uuid"].(string)
	provisionRaw(t, c, c, uuid, map[string]any{"target": "manage"}, "manageable")
	provisionRaw(t, c, c, uuid, map[string]any{"target": "provide"}, "available")
	return s, c, uuid
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
