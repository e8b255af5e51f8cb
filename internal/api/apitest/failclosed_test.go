package apitest_test

import (
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/allocation"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/api/port"
	"github.com/openkeel/ironic/internal/api/portgroup"
	"github.com/openkeel/ironic/internal/api/runbook"
	"github.com/openkeel/ironic/internal/api/volume"
	"github.com/openkeel/ironic/internal/model"
)

// TestNilListScopeRefuses: wiring that sets the authorization hooks but
// forgets a list-scope hook (ListProject, Scope) refuses the listings and
// creations that depend on it with the policy 403 upstream sends, rather
// than letting every caller see every record.
func TestNilListScopeRefuses(t *testing.T) {
	ae := apitest.NewEnv(t, apitest.Options{})
	m := map[string]api.HandlerFunc{}
	allow := apitest.Allow[*model.Node]
	bound := ae.NodeBound()
	bound.ListProject = nil
	port.Register(m, bound)
	portgroup.Register(m, bound)
	volume.Register(m, volume.Deps{Store: ae.Store, Conductor: ae.Local, Topics: apitest.Topics{}, Authorize: allow})
	allocation.Register(m, allocation.Deps{Store: ae.Store, Conductor: ae.Local, Topics: apitest.Topics{}, Logger: ae.Logger,
		Authorize: apitest.Allow[*string], AuthorizeNode: allow, Check: apitest.AllowCheck})
	runbook.Register(m, runbook.Deps{Store: ae.Store, Authorize: apitest.Allow[*model.Runbook]})
	h := ae.Handler(m)
	for _, c := range []struct {
		name, method, path, body, rule string
	}{
		{"ports", "GET", "/v1/ports", "", "baremetal:port:list_all"},
		{"ports detail", "GET", "/v1/ports/detail", "", "baremetal:port:list_all"},
		{"portgroups", "GET", "/v1/portgroups", "", "baremetal:portgroup:list_all"},
		{"volume connectors", "GET", "/v1/volume/connectors", "", "baremetal:volume:list_all"},
		{"volume targets", "GET", "/v1/volume/targets", "", "baremetal:volume:list_all"},
		{"allocations", "GET", "/v1/allocations", "", "baremetal:allocation:list_all"},
		{"allocation create", "POST", "/v1/allocations", `{"resource_class": "x"}`, "baremetal:allocation:create"},
		{"runbook create", "POST", "/v1/runbooks", `{"name": "CUSTOM_RB", "steps": [{"interface": "bios", "step": "apply_configuration", "args": {}, "order": 1}]}`, "baremetal:runbook:create"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := apitest.Do(t, h, c.method, c.path, "1.115", c.body)
			want := "Access was denied to the following resource: " + c.rule
			if r.Status != http.StatusForbidden || r.Faultstring(t) != want {
				t.Errorf("%s %s: %d %s, want 403 %q", c.method, c.path, r.Status, r.Body, want)
			}
		})
	}
}
