package compat

import (
	"fmt"
	"net/http"
	"testing"
)

// noFreeWorker is upstream's NoFreeConductorWorker faultstring.
const noFreeWorker = "Requested action cannot be performed due to lack of free conductor workers."

// busyConf leaves the conductor exactly poolSize workers (none reserved)
// and makes each fake deploy hold one for eight seconds (deploy_delay is
// slept in prepare and again in deploy, as upstream's fake does): longer
// than the clients without retries take to start and fail, shorter than
// ironicclient's retry budget (5 × 2 s) and the SDK's (five retries backed
// off from 0.5 s).
const poolSize = 6

var busyConf = fmt.Sprintf("[conductor]\nworkers_pool_size = %d\nreserved_workers_pool_percentage = 0\n"+
	"sync_power_state_workers = 1\nperiodic_max_workers = 1\n[fake]\ndeploy_delay = 4\n", poolSize)

// python-ironicclient and openstacksdk retry 503 as they retry 409: while
// slow deploys hold every conductor worker, a power request is refused
// with NoFreeConductorWorker. Without retries each client raises with
// upstream's faultstring; with its default retries each waits the deploys
// out and succeeds. A plain HTTP client checks the nodes.
func TestClientsRetryNoFreeWorker(t *testing.T) {
	requireTool(t, "python3-ironicclient", debianPython, "-c", "import ironicclient")
	requireTool(t, "python3-openstacksdk", debianPython, "-c", "import openstack")
	forEachDeployment(t, clientsRetryNoFreeWorker)
}

func clientsRetryNoFreeWorker(t *testing.T, d deployment) {
	s := d.start(t, busyConf)
	c := newRaw(t, s.URL, "1.81")
	var busy []string
	for i := range poolSize {
		busy = append(busy, availableNode(t, c, fmt.Sprintf("busy-%d", i)))
	}
	a, b := availableNode(t, c, "idle-a"), availableNode(t, c, "idle-b")

	fillPool(t, c, busy, "active", a)
	t.Log(runPython(t, "retry_check.py", s.URL, "fail", "503", a, noFreeWorker, b, noFreeWorker))
	for _, n := range []string{a, b} {
		if got := c.get("/v1/nodes/" + n); got["power_state"] != "power off" || got["target_power_state"] != nil || got["reservation"] != nil {
			t.Fatalf("refused power on left the node changed: %v %v %v", got["power_state"], got["target_power_state"], got["reservation"])
		}
	}
	for _, n := range busy {
		if st := c.get("/v1/nodes/" + n)["provision_state"]; st != "deploying" && st != "wait call-back" {
			t.Fatalf("the workers were freed before the clients ran: %v", st)
		}
	}
	waitIdle(t, c, busy)

	fillPool(t, c, busy, "rebuild", a)
	t.Log(runPython(t, "retry_check.py", s.URL, "retry", "503", a, noFreeWorker, b, noFreeWorker))
	for _, n := range []string{a, b} {
		waitField(t, c, "/v1/nodes/"+n, "power_state", "power on")
	}
	waitIdle(t, c, busy)
	t.Logf("raw client made %d calls", c.calls.n.Load())
}

// availableNode enrols a fake-hardware node called name, makes it
// available and powers it off.
func availableNode(t *testing.T, c *raw, name string) string {
	t.Helper()
	status, n, _ := c.do("POST", "/v1/nodes", map[string]any{
		"driver": "fake-hardware", "name": name,
		"driver_info": map[string]any{"ipmi_address": "192.168.122.1"},
	})
	if status != http.StatusCreated {
		t.Fatalf("create %s: %d %v", name, status, n)
	}
	uuid := n["uuid"].(string)
	provisionRaw(t, c, c, uuid, map[string]any{"target": "manage"}, "manageable")
	provisionRaw(t, c, c, uuid, map[string]any{"target": "provide"}, "available")
	if st, body, _ := c.do("PUT", "/v1/nodes/"+uuid+"/states/power", map[string]any{"target": "power off"}); st != http.StatusAccepted {
		t.Fatalf("power off %s: %d %v", name, st, body)
	}
	waitField(t, c, "/v1/nodes/"+uuid, "power_state", "power off")
	waitField(t, c, "/v1/nodes/"+uuid, "target_power_state", nil)
	// The power task saves its end state while it still holds the lock
	// and lets go just after: a test that locks the node next must not
	// meet that lock (its conductor tries a lock once).
	waitField(t, c, "/v1/nodes/"+uuid, "reservation", nil)
	return uuid
}

// fillPool starts a slow deploy (or rebuild) on every node of busy and
// checks that the conductor now refuses work: a power request for probe
// gets 503 with upstream's faultstring.
func fillPool(t *testing.T, c *raw, busy []string, target, probe string) {
	t.Helper()
	for _, n := range busy {
		if st, body, _ := c.do("PUT", "/v1/nodes/"+n+"/states/provision", map[string]any{"target": target}); st != http.StatusAccepted {
			t.Fatalf("%s %s: %d %v", target, n, st, body)
		}
	}
	st, body, _ := c.do("PUT", "/v1/nodes/"+probe+"/states/power", map[string]any{"target": "power on"})
	if fs := faultstring(t, body); st != http.StatusServiceUnavailable || fs != noFreeWorker {
		t.Fatalf("power on with %d workers busy: %d %q", len(busy), st, fs)
	}
}

// waitIdle waits until every node of busy is active and unlocked.
func waitIdle(t *testing.T, c *raw, busy []string) {
	t.Helper()
	for _, n := range busy {
		waitField(t, c, "/v1/nodes/"+n, "provision_state", "active")
		waitField(t, c, "/v1/nodes/"+n, "reservation", nil)
	}
}
