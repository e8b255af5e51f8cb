package apitest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/allocation"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/api/chassis"
	"github.com/openkeel/ironic/internal/api/conductors"
	"github.com/openkeel/ironic/internal/api/deploytemplate"
	"github.com/openkeel/ironic/internal/api/inspectionrule"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/api/port"
	"github.com/openkeel/ironic/internal/api/portgroup"
	"github.com/openkeel/ironic/internal/api/runbook"
	"github.com/openkeel/ironic/internal/api/volume"
	"github.com/openkeel/ironic/internal/model"
)

// allResources serves every resource package but nodes and drivers over
// one store, without policy.
func allResources(t *testing.T) (http.Handler, *apitest.Env) {
	t.Helper()
	ae := apitest.NewEnv(t, apitest.Options{})
	m := map[string]api.HandlerFunc{}
	allow := apitest.Allow[*model.Node]
	port.Register(m, ae.NodeBound())
	portgroup.Register(m, ae.NodeBound())
	volume.Register(m, volume.Deps{Store: ae.Store, Conductor: ae.Local, Topics: apitest.Topics{}, Authorize: allow, ListProject: apitest.ListAll,
		ViewTargetProperties: func(*http.Request) bool { return true }})
	chassis.Register(m, chassis.Deps{Store: ae.Store})
	allocation.Register(m, allocation.Deps{Store: ae.Store, Conductor: ae.Local, Topics: apitest.Topics{}, Logger: ae.Logger,
		Authorize: apitest.Allow[*string], AuthorizeNode: allow, Check: apitest.AllowCheck, Scope: apitest.SystemScope, ListProject: apitest.ListAll})
	deploytemplate.Register(m, deploytemplate.Deps{Store: ae.Store})
	runbook.Register(m, runbook.Deps{Store: ae.Store, Authorize: apitest.Allow[*model.Runbook], Scope: apitest.SystemScope})
	inspectionrule.Register(m, inspectionrule.Deps{Store: ae.Store})
	conductors.Register(m, conductors.Deps{Store: ae.Store})
	return ae.Handler(m), ae
}

// TestListedFieldsAreShownFields: at every microversion, a resource in a
// detailed listing has the fields its own GET shows, so that a field
// gated by version cannot show early in one of them only (a portgroup's
// physical_network did in listings). Where upstream lists more on
// purpose, the difference is named.
func TestListedFieldsAreShownFields(t *testing.T) {
	h, ae := allResources(t)
	max := microversion.MAX.String()
	node := ae.Node(t, "enroll", nil)
	create := func(path, body string) string {
		t.Helper()
		r := apitest.Do(t, h, "POST", path, max, body)
		if r.Status != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", path, r.Status, r.Body)
		}
		return apitest.JSON(t, r.Body)["uuid"].(string)
	}
	steps := `"steps": [{"interface": "bios", "step": "apply_configuration", "args": {}, "priority": 10}]`
	pg := create("/v1/portgroups", fmt.Sprintf(`{"node_uuid": %q, "address": "52:54:00:00:00:01", "name": "pg"}`, node.UUID))
	resources := []struct {
		name, list, one string
		// listedOnly are the fields upstream lists but does not show
		// at a version.
		listedOnly func(v microversion.Version) []string
	}{
		{name: "port", list: "/v1/ports/detail",
			one: "/v1/ports/" + create("/v1/ports", fmt.Sprintf(`{"node_uuid": %q, "address": "52:54:00:00:00:02"}`, node.UUID))},
		{name: "portgroup", list: "/v1/portgroups/detail", one: "/v1/portgroups/" + pg,
			// Observed from upstream 21.4: GET /v1/portgroups/detail at
			// 1.23 lists mode and properties (sanitize_dict only).
			listedOnly: func(v microversion.Version) []string {
				if !microversion.AllowPortgroupModeProperties.Allows(v) {
					return []string{"mode", "properties"}
				}
				return nil
			}},
		{name: "node portgroup", list: "/v1/nodes/" + node.UUID + "/portgroups/detail", one: "/v1/portgroups/" + pg,
			listedOnly: func(v microversion.Version) []string {
				if !microversion.AllowPortgroupModeProperties.Allows(v) {
					return []string{"mode", "properties"}
				}
				return nil
			}},
		{name: "volume connector", list: "/v1/volume/connectors?detail=True",
			one: "/v1/volume/connectors/" + create("/v1/volume/connectors",
				fmt.Sprintf(`{"node_uuid": %q, "type": "iqn", "connector_id": "iqn.2010-10.org.openstack:x"}`, node.UUID))},
		{name: "volume target", list: "/v1/volume/targets?detail=True",
			one: "/v1/volume/targets/" + create("/v1/volume/targets",
				fmt.Sprintf(`{"node_uuid": %q, "volume_type": "iscsi", "volume_id": "v1", "boot_index": 0}`, node.UUID))},
		{name: "chassis", list: "/v1/chassis/detail", one: "/v1/chassis/" + create("/v1/chassis", `{"description": "c"}`)},
		{name: "allocation", list: "/v1/allocations",
			one: "/v1/allocations/" + create("/v1/allocations", `{"resource_class": "rc", "name": "alloc"}`)},
		{name: "deploy template", list: "/v1/deploy_templates?detail=True",
			one: "/v1/deploy_templates/" + create("/v1/deploy_templates", `{"name": "CUSTOM_DT", `+steps+`}`)},
		{name: "runbook", list: "/v1/runbooks?detail=True",
			one: "/v1/runbooks/" + create("/v1/runbooks",
				`{"name": "CUSTOM_RB", "steps": [{"interface": "bios", "step": "apply_configuration", "args": {}, "order": 1}]}`)},
		{name: "inspection rule", list: "/v1/inspection_rules?detail=True",
			one: "/v1/inspection_rules/" + create("/v1/inspection_rules",
				`{"description": "r", "actions": [{"op": "set-attribute", "args": {"path": "/driver", "value": "fake-hardware"}}]}`)},
		{name: "conductor", list: "/v1/conductors?detail=True", one: "/v1/conductors/" + apitest.Host},
	}
	for _, res := range resources {
		t.Run(res.name, func(t *testing.T) {
			compared := 0
			for minor := microversion.MIN.Minor; minor <= microversion.MAX.Minor; minor++ {
				v := microversion.Version{Major: microversion.MAX.Major, Minor: minor}
				list := apitest.Do(t, h, "GET", res.list, v.String(), "")
				one := apitest.Do(t, h, "GET", res.one, v.String(), "")
				if list.Status != http.StatusOK || one.Status != http.StatusOK {
					continue
				}
				compared++
				var items map[string][]map[string]any
				if err := json.Unmarshal(list.Body, &items); err != nil {
					t.Fatalf("%s: %s", v, list.Body)
				}
				var listed []string
				for _, l := range items {
					if len(l) != 1 {
						t.Fatalf("%s: %d items listed, want 1: %s", v, len(l), list.Body)
					}
					listed = apitest.Keys(l[0])
				}
				shown := apitest.Keys(apitest.JSON(t, one.Body))
				if res.listedOnly != nil {
					shown = append(shown, res.listedOnly(v)...)
					slices.Sort(shown)
				}
				if !slices.Equal(listed, shown) {
					t.Errorf("%s: listed %v, shown %v", v, listed, shown)
				}
			}
			if compared == 0 {
				t.Fatal("no version answered both requests")
			}
		})
	}
}
