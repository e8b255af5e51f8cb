package node

import (
	"context"
	"net/http"
	"testing"
)

// The 1.109 health field, filled by the power sync's health monitoring
// from fake-hardware's management (driver_info fake_health): shown from
// 1.109 on, by itself or in a list's fields, refused as a field before.
func TestHealthField(t *testing.T) {
	e := newEnv(t)
	n := e.create(`{"driver": "fake-hardware", "name": "healthy", "driver_info": {"fake_health": "Warning"}}`)
	id := n["uuid"].(string)
	e.provision(id, "1.115", `{"target": "manage"}`)
	e.waitState(id, "manageable")
	if got := e.do("GET", "/v1/nodes/"+id, "1.109", "").json(t); got["health"] != nil {
		t.Fatalf("health before any sync: %v", got["health"])
	}
	e.cond.SyncPowerStates(context.Background())

	for _, tc := range []struct {
		name, path, version string
		status              int
		health              any
		present             bool
	}{
		{"node at 1.109", "/v1/nodes/" + id, "1.109", http.StatusOK, "Warning", true},
		{"node at 1.108", "/v1/nodes/" + id, "1.108", http.StatusOK, nil, false},
		{"fields=health", "/v1/nodes/" + id + "?fields=uuid,health", "1.109", http.StatusOK, "Warning", true},
		{"fields=health at 1.108", "/v1/nodes/" + id + "?fields=uuid,health", "1.108", http.StatusNotAcceptable, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("GET", tc.path, tc.version, "")
			if r.status != tc.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tc.status)
			}
			if r.status != http.StatusOK {
				return
			}
			got := r.json(t)
			h, ok := got["health"]
			if ok != tc.present || h != tc.health {
				t.Errorf("health %v (present %v), want %v (present %v)", h, ok, tc.health, tc.present)
			}
		})
	}
	list := e.do("GET", "/v1/nodes?fields=uuid,health", "1.109", "").json(t)
	nodes, _ := list["nodes"].([]any)
	if len(nodes) != 1 || nodes[0].(map[string]any)["health"] != "Warning" {
		t.Errorf("list with fields=health: %v", list)
	}
	detail := e.do("GET", "/v1/nodes/detail", "1.109", "").json(t)
	if nodes, _ := detail["nodes"].([]any); len(nodes) != 1 || nodes[0].(map[string]any)["health"] != "Warning" {
		t.Errorf("detail: %v", detail)
	}
}
