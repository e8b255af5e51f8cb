package compat

import (
	"fmt"
	"net/http"
	"testing"
)

// temporaryFailure is upstream's TemporaryFailure faultstring: the hash
// ring is empty because no conductor is alive.
const temporaryFailure = "Resource temporarily unavailable, please retry."

// noConductorConf lets a dead conductor drop out of the API's hash ring
// within seconds rather than the default 60 s heartbeat timeout and 15 s
// ring cache.
const noConductorConf = "[DEFAULT]\nhash_ring_reset_interval = 1\n[conductor]\nheartbeat_interval = 1\nheartbeat_timeout = 3\n"

// With its only conductor gone, the API has no conductor to send a node's
// work to and answers 503 TemporaryFailure, as upstream's empty hash ring
// does. Without retries python-ironicclient and openstacksdk raise with
// that faultstring; with their default retries they get through once the
// conductor is back. Only the api + conductor deployment can lose its
// conductor.
func TestClientsRetryNoConductor(t *testing.T) {
	requireTool(t, "python3-ironicclient", debianPython, "-c", "import ironicclient")
	requireTool(t, "python3-openstacksdk", debianPython, "-c", "import openstack")
	s := startAPIConductor(t, noConductorConf)
	c := newRaw(t, s.URL, "1.81")
	a, b := availableNode(t, c, "orphan-a"), availableNode(t, c, "orphan-b")

	conductor := s.cluster.Conductors[0]
	conductor.Kill()
	// Until its heartbeat is stale and the ring rebuilt, the API still
	// calls the dead conductor.
	eventually(t, func() (bool, string) {
		st, body, _ := c.do("PUT", "/v1/nodes/"+a+"/states/power", map[string]any{"target": "power on"})
		if st != http.StatusServiceUnavailable {
			return false, fmt.Sprint(st, body)
		}
		fs := faultstring(t, body)
		return fs == temporaryFailure, fs
	})
	t.Log(runPython(t, "retry_check.py", s.URL, "fail", "503", a, temporaryFailure, b, temporaryFailure))

	// The clients retry while the conductor is down; it comes back once
	// each has been refused.
	refused := 0
	t.Log(runRetryCheck(t, s.URL, "503", a, temporaryFailure, b, temporaryFailure, func(string) {
		if refused++; refused == 2 {
			conductor.Restart(t)
		}
	}))
	for _, n := range []string{a, b} {
		waitField(t, c, "/v1/nodes/"+n, "power_state", "power on")
	}
	t.Logf("raw client made %d calls", c.calls.n.Load())
}
