package node

import (
	"context"
	"net/http"
	"testing"
)

// A Deps whose wiring forgot the authorization hooks refuses: the node is
// concealed as upstream conceals a node the caller may not get, and no
// write reaches the store.
func TestNilAuthorizeRefuses(t *testing.T) {
	e := newEnvWith(t, func(d *Deps) { d.Authorize, d.AuthorizeRunbook = nil, nil })
	e.create(`{"driver": "fake-hardware", "name": "fc"}`)
	cases := []struct {
		name, method, path, body string
	}{
		{"get", "GET", "/v1/nodes/fc", ""},
		{"patch", "PATCH", "/v1/nodes/fc", `[{"op": "add", "path": "/extra/a", "value": "b"}]`},
		{"provision", "PUT", "/v1/nodes/fc/states/provision", `{"target": "manage"}`},
		{"delete", "DELETE", "/v1/nodes/fc", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, "1.115", c.body)
			if r.status != http.StatusNotFound || r.faultstring(t) != "Node fc could not be found." {
				t.Errorf("%s %s: %d %s, want 404 NodeNotFound", c.method, c.path, r.status, r.body)
			}
		})
	}
	n, err := e.s.GetNodeByName(context.Background(), "fc")
	if err != nil {
		t.Fatalf("node gone: %v", err)
	}
	if n.ProvisionState != "enroll" || len(n.Extra) != 0 {
		t.Errorf("refused requests changed the node: provision_state %s, extra %v", n.ProvisionState, n.Extra)
	}
}
