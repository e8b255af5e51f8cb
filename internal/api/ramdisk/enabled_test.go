package ramdisk

import (
	"testing"

	"github.com/openkeel/ironic/internal/states"
)

// Issue 23: with [api]/enable_ramdisk_endpoints = False the agent's
// lookup, heartbeat and continue_inspection answer upstream's 403
// HTTPForbidden naming the path, and nothing is changed.
func TestRamdiskEndpointsDisabled(t *testing.T) {
	e := newEnv(t, map[string]map[string]string{"api": {"enable_ramdisk_endpoints": "false"}})
	n := e.node(states.DeployWait, []string{"52:54:00:12:34:56"})
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/v1/lookup?node_uuid=" + n.UUID, ""},
		{"POST", "/v1/heartbeat/" + n.UUID, `{"callback_url": "http://127.0.0.1:9999", "agent_token": "x"}`},
		{"POST", "/v1/continue_inspection", `{"inventory": {}}`},
	} {
		path := tc.path
		if i := len("/v1/lookup"); len(path) > i && path[:i] == "/v1/lookup" {
			path = "/v1/lookup"
		}
		r := e.do(tc.method, tc.path, "1.115", tc.body)
		if want := "Access was denied to the following resource: " + path; r.status != 403 || r.faultstring(t) != want {
			t.Errorf("%s %s: %d %s, want 403 %q", tc.method, tc.path, r.status, r.body, want)
		}
	}
	if got := e.get(n.UUID); got.DriverInternalInfo["agent_secret_token"] != nil || got.DriverInternalInfo["agent_url"] != nil {
		t.Errorf("a refused request changed the node: %v", got.DriverInternalInfo)
	}
}
