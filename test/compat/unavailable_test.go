package compat

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/openkeel/ironic/testing/redfishbmc"
)

// noFreeWorker is upstream's NoFreeConductorWorker faultstring.
const noFreeWorker = "Requested action cannot be performed due to lack of free conductor workers."

// busyConf leaves the conductor exactly poolSize workers (none reserved)
// and lets nodes use the redfish power interface beside fake-hardware's:
// a power change of such a node holds its worker while its BMC call is
// unanswered, and the test's BMC answers only when the test says so. The
// BMC's read timeout is far beyond any hold.
const poolSize = 6

var busyConf = fmt.Sprintf("[DEFAULT]\nenabled_power_interfaces = fake,redfish\n"+
	"[conductor]\nworkers_pool_size = %d\nreserved_workers_pool_percentage = 0\n"+
	"sync_power_state_workers = 1\nperiodic_max_workers = 1\n[redfish]\nread_timeout = 600\n", poolSize)

// python-ironicclient and openstacksdk retry 503 as they retry 409: while
// power changes held at the BMC occupy every conductor worker, a power
// request is refused with NoFreeConductorWorker. Without retries each
// client raises with upstream's faultstring; with its default retries each
// is refused at least once and gets through once the test lets the BMC
// answer, which it does only after both clients have been refused. A plain
// HTTP client checks the nodes.
func TestClientsRetryNoFreeWorker(t *testing.T) {
	requireTool(t, "python3-ironicclient", debianPython, "-c", "import ironicclient")
	requireTool(t, "python3-openstacksdk", debianPython, "-c", "import openstack")
	forEachDeployment(t, clientsRetryNoFreeWorker)
}

func clientsRetryNoFreeWorker(t *testing.T, d deployment) {
	bmc := redfishbmc.New(t)
	for i := range poolSize {
		bmc.System(fmt.Sprintf("busy-%d", i))
	}
	s := d.start(t, busyConf)
	c := newRaw(t, s.URL, "1.81")
	var busy []string
	for i := range poolSize {
		busy = append(busy, busyNode(t, c, bmc, i))
	}
	a, b := availableNode(t, c, "idle-a"), availableNode(t, c, "idle-b")

	release := fillPool(t, c, bmc, busy, "power on", a)
	t.Log(runPython(t, "retry_check.py", s.URL, "fail", "503", a, noFreeWorker, b, noFreeWorker))
	for _, n := range []string{a, b} {
		if got := c.get("/v1/nodes/" + n); got["power_state"] != "power off" || got["target_power_state"] != nil || got["reservation"] != nil {
			t.Fatalf("refused power on left the node changed: %v %v %v", got["power_state"], got["target_power_state"], got["reservation"])
		}
	}
	for _, n := range busy {
		if got := c.get("/v1/nodes/" + n)["target_power_state"]; got != "power on" {
			t.Fatalf("a held power change ended before the clients ran: target %v", got)
		}
	}
	release()
	waitPower(t, c, busy, "power on")

	release = fillPool(t, c, bmc, busy, "power off", a)
	refused := 0
	t.Log(runRetryCheck(t, s.URL, "503", a, noFreeWorker, b, noFreeWorker, func(string) {
		if refused++; refused == 2 {
			release()
		}
	}))
	for _, n := range []string{a, b} {
		waitField(t, c, "/v1/nodes/"+n, "power_state", "power on")
	}
	waitPower(t, c, busy, "power off")
	t.Logf("raw client made %d calls", c.calls.n.Load())
}

// busyNode enrols the fake-hardware node busy-i with the redfish power
// interface on system busy-i of bmc and makes it manageable (powered off,
// as the system starts).
func busyNode(t *testing.T, c *raw, bmc *redfishbmc.BMC, i int) string {
	t.Helper()
	id := fmt.Sprintf("busy-%d", i)
	status, n, _ := c.do("POST", "/v1/nodes", map[string]any{
		"driver": "fake-hardware", "name": id, "power_interface": "redfish",
		"driver_info": map[string]any{"redfish_address": bmc.URL(), "redfish_system_id": redfishbmc.SystemPath(id)},
	})
	if status != http.StatusCreated {
		t.Fatalf("create %s: %d %v", id, status, n)
	}
	uuid := n["uuid"].(string)
	provisionRaw(t, c, c, uuid, map[string]any{"target": "manage"}, "manageable")
	waitField(t, c, "/v1/nodes/"+uuid, "power_state", "power off")
	return uuid
}

// fillPool starts a power change to target on every node of busy, with
// the BMC holding each reset until the returned release is called, waits
// until every conductor worker is at the BMC, and checks that the
// conductor now refuses work: a power request for probe gets 503 with
// upstream's faultstring.
func fillPool(t *testing.T, c *raw, bmc *redfishbmc.BMC, busy []string, target, probe string) (release func()) {
	t.Helper()
	hold := bmc.Hold(redfishbmc.Match{Method: http.MethodPost, Path: "/Actions/ComputerSystem.Reset"})
	for _, n := range busy {
		if st, body, _ := c.do("PUT", "/v1/nodes/"+n+"/states/power", map[string]any{"target": target}); st != http.StatusAccepted {
			t.Fatalf("%s %s: %d %v", target, n, st, body)
		}
	}
	if !hold.WaitFor(len(busy), t.Context().Done()) {
		t.Fatalf("only %d of %d power changes reached the BMC", hold.Waiting(), len(busy))
	}
	st, body, _ := c.do("PUT", "/v1/nodes/"+probe+"/states/power", map[string]any{"target": "power on"})
	if fs := faultstring(t, body); st != http.StatusServiceUnavailable || fs != noFreeWorker {
		hold.Release()
		t.Fatalf("power on with %d workers busy: %d %q", len(busy), st, fs)
	}
	return hold.Release
}

// waitPower waits until every node of busy is in power state want and
// unlocked.
func waitPower(t *testing.T, c *raw, busy []string, want string) {
	t.Helper()
	for _, n := range busy {
		waitField(t, c, "/v1/nodes/"+n, "power_state", want)
		waitField(t, c, "/v1/nodes/"+n, "reservation", nil)
	}
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
