package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/authz"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/testing/await"
)

// oneConductor routes every node and driver to the harness's conductor.
type oneConductor struct{}

func (oneConductor) GetTopicFor(context.Context, *model.Node) (string, error) {
	return apitest.Topic, nil
}
func (oneConductor) GetConductorFor(context.Context, *model.Node) (string, error) {
	return apitest.Host, nil
}
func (oneConductor) GetRandomTopic(context.Context) (string, error) { return apitest.Topic, nil }
func (oneConductor) GetTopicForDriver(context.Context, string) (string, error) {
	return apitest.Topic, nil
}

// oddBodies are the JSON documents no route takes as a whole body, bar
// the few in acceptedBodies.
var oddBodies = []string{"null", "[]", "{}", `"x"`, "1", "true"}

// acceptedBodies are the route and body pairs upstream accepts (checked
// against Ironic 21.4), with the status it answers; every other pair is
// a 4xx that changes nothing.
var acceptedBodies = map[string]int{
	// An empty patch changes nothing and shows the object.
	"PATCH /v1/nodes/{node_ident} []":                    200,
	"PATCH /v1/ports/{port_id} []":                       200,
	"PATCH /v1/portgroups/{portgroup_ident} []":          200,
	"PATCH /v1/chassis/{chassis_id} []":                  200,
	"PATCH /v1/allocations/{allocation_id} []":           200,
	"PATCH /v1/deploy_templates/{deploy_template_id} []": 200,
	"PATCH /v1/runbooks/{runbook_id} []":                 200,
	"PATCH /v1/inspection_rules/{rule_id} []":            200,
	"POST /v1/chassis {}":                                201,
	"PUT /v1/nodes/{node_ident}/states/raid {}":          204,
	"PUT /v1/nodes/{node_ident}/traits/{trait} null":     204,
	"PUT /v1/nodes/{node_ident}/traits/{trait} {}":       204,
	"PUT /v1/runbooks/{runbook_id}/traits/{trait} null":  204,
	"PUT /v1/runbooks/{runbook_id}/traits/{trait} {}":    204,
	"PUT /v1/nodes/{node_ident}/maintenance {}":          202,
	"PUT /v1/nodes/{node_ident}/maintenance null":        202,
	"PUT /v1/nodes/{node_ident}/maintenance []":          202,
	"PUT /v1/nodes/{node_ident}/maintenance \"x\"":       202,
	"PUT /v1/nodes/{node_ident}/maintenance 1":           202,
	"PUT /v1/nodes/{node_ident}/maintenance true":        202,
}

// bodyWords are upstream's messages for some of the pairs, where
// upstream answers a 4xx, or where it fails with a 500 on null and the
// schema's own message stands in.
var bodyWords = map[string]string{
	"POST /v1/nodes null":                                   "Schema error for node: None is not of type 'object'",
	"PATCH /v1/nodes/{node_ident} null":                     "Schema error for patch: None is not of type 'array'",
	"PATCH /v1/nodes/{node_ident} {}":                       "Schema error for patch: {} is not of type 'array'",
	"PATCH /v1/ports/{port_id} null":                        "Schema error for patch: None is not of type 'array'",
	"PATCH /v1/chassis/{chassis_id} true":                   "Schema error for patch: True is not of type 'array'",
	"PATCH /v1/deploy_templates/{deploy_template_id} null":  "Schema error for patch: None is not of type 'array'",
	"PATCH /v1/volume/targets/{volume_target_id} null":      "Schema error for patch: None is not of type 'array'",
	"POST /v1/nodes/{node_ident}/vifs null":                 "Schema error for vif: None is not of type 'object'",
	"POST /v1/nodes/{node_ident}/vmedia null":               "Schema error for vmedia: None is not of type 'object'",
	"POST /v1/continue_inspection null":                     "Schema error for data: None is not of type 'object'",
	"POST /v1/ports null":                                   "Schema error for port: None is not of type 'object'",
	"PUT /v1/nodes/{node_ident}/states/power null":          "Missing mandatory parameter: target",
	"PUT /v1/nodes/{node_ident}/states/provision \"x\"":     "Missing mandatory parameter: target",
	"PUT /v1/nodes/{node_ident}/states/console []":          "Missing mandatory parameter: enabled",
	"PUT /v1/nodes/{node_ident}/management/boot_device 1":   "Missing mandatory parameter: boot_device",
	"PUT /v1/nodes/{node_ident}/traits/{trait} []":          "Schema error for body: [] is not of type 'object'",
	"PUT /v1/nodes/{node_ident}/states/raid null":           "Expected types <class 'dict'> for target_raid_config: None",
	"POST /v1/nodes/{node_ident}/vendor_passthru true":      "Missing mandatory parameter: method",
	"POST /v1/heartbeat/{node_ident} null":                  "Missing mandatory parameter: callback_url",
	"POST /v1/deploy_templates {}":                          "Schema error for template: 'steps' is a required property",
	"PATCH /v1/inspection_rules/{rule_id} \"x\"":            "Schema error for patch: 'x' is not of type 'array'",
	"PATCH /v1/volume/connectors/{volume_connector_id} 1":   "Schema error for patch: 1 is not of type 'array'",
	"PATCH /v1/portgroups/{portgroup_ident} null":           "Schema error for patch: None is not of type 'array'",
	"PATCH /v1/runbooks/{runbook_id} null":                  "Schema error for patch: None is not of type 'array'",
	"PUT /v1/nodes/{node_ident}/management/inject_nmi null": "Driver fake-hardware does not support inject_nmi (disabled or not implemented).",
}

// Every route that takes a body answers the odd bodies with upstream's
// 4xx and changes nothing, or accepts them where upstream does; none
// answers 5xx and no handler panics (the harness fails the test on one).
func TestOddBodies(t *testing.T) {
	e := apitest.NewEnv(t, apitest.Options{Config: map[string]map[string]string{"DEFAULT": {"auth_strategy": "noauth"}}})
	az, err := authz.New(e.Config)
	if err != nil {
		t.Fatalf("authz: %v", err)
	}
	h := apitest.New(t, api.Deps{Config: e.Config,
		Handlers: Handlers(e.Store, e.Local, oneConductor{}, e.Config, e.Logger, az), Authorize: az.Route})
	params := bodyFixtures(t, h)
	sent := 0
	for _, rt := range api.Routes {
		if rt.Method != http.MethodPost && rt.Method != http.MethodPut && rt.Method != http.MethodPatch {
			continue
		}
		path := rt.Path
		for k, v := range params {
			path = strings.ReplaceAll(path, k, v)
		}
		if strings.Contains(path, "{") {
			t.Errorf("%s: no fixture for a path parameter of %s", rt.ID, path)
			continue
		}
		for _, body := range oddBodies {
			key := rt.ID + " " + body
			before := snapshot(t, h, params)
			r := apitest.Do(t, h, rt.Method, path, "latest", body)
			sent++
			if want, ok := acceptedBodies[key]; ok {
				if r.Status != want {
					t.Errorf("%s: %d %s, want %d as upstream", key, r.Status, r.Body, want)
				}
				continue
			}
			if r.Status < 400 || r.Status >= 500 {
				t.Errorf("%s: %d %s, want a 4xx", key, r.Status, r.Body)
				continue
			}
			msg := clientFault(t, key, r.Body)
			if want, ok := bodyWords[key]; ok && msg != want {
				t.Errorf("%s: %q, want %q", key, msg, want)
			}
			if after := snapshot(t, h, params); after != before {
				t.Errorf("%s answered %d but changed the objects:\nbefore %s\nafter  %s", key, r.Status, before, after)
			}
		}
	}
	for key := range bodyWords {
		if _, ok := acceptedBodies[key]; ok {
			t.Errorf("%s is both accepted and refused", key)
		}
	}
	t.Logf("%d requests", sent)
}

// clientFault checks an error answer is upstream's envelope of a client
// fault and returns its message.
func clientFault(t *testing.T, key string, body []byte) string {
	t.Helper()
	var outer map[string]json.RawMessage
	if err := json.Unmarshal(body, &outer); err != nil || len(outer) != 1 {
		t.Errorf("%s: envelope %s is not {\"error_message\": ...}", key, body)
		return ""
	}
	var em string
	if err := json.Unmarshal(outer["error_message"], &em); err != nil {
		t.Errorf("%s: error_message of %s is not a string", key, body)
		return ""
	}
	var inner struct {
		Faultcode   string          `json:"faultcode"`
		Faultstring string          `json:"faultstring"`
		Debuginfo   json.RawMessage `json:"debuginfo"`
	}
	if err := json.Unmarshal([]byte(em), &inner); err != nil || inner.Faultcode != "Client" ||
		inner.Faultstring == "" || inner.Debuginfo == nil {
		t.Errorf("%s: fault %s is not a client fault with a message and debuginfo", key, em)
	}
	return inner.Faultstring
}

// bodyFixtures creates one object of every kind a body route's path
// names, through the API, and returns the path parameters naming them.
func bodyFixtures(t *testing.T, h http.Handler) map[string]string {
	t.Helper()
	create := func(path, body string) string {
		t.Helper()
		r := apitest.Do(t, h, http.MethodPost, path, "latest", body)
		if r.Status != http.StatusCreated {
			t.Fatalf("create %s: %d %s", path, r.Status, r.Body)
		}
		return apitest.JSON(t, r.Body)["uuid"].(string)
	}
	node := create("/v1/nodes", `{"driver": "fake-hardware", "name": "n1"}`)
	p := map[string]string{
		"{node_ident}":          node,
		"{chassis_id}":          create("/v1/chassis", `{"description": "c"}`),
		"{port_id}":             create("/v1/ports", fmt.Sprintf(`{"address": "52:54:00:00:00:01", "node_uuid": %q}`, node)),
		"{portgroup_ident}":     create("/v1/portgroups", fmt.Sprintf(`{"address": "52:54:00:00:00:02", "node_uuid": %q, "name": "pg1"}`, node)),
		"{volume_connector_id}": create("/v1/volume/connectors", fmt.Sprintf(`{"node_uuid": %q, "type": "iqn", "connector_id": "iqn.2010-10.org.openstack:1"}`, node)),
		"{volume_target_id}":    create("/v1/volume/targets", fmt.Sprintf(`{"node_uuid": %q, "volume_type": "iscsi", "boot_index": 0, "volume_id": "v1"}`, node)),
		"{allocation_id}":       create("/v1/allocations", `{"resource_class": "rc1", "name": "a1"}`),
		"{deploy_template_id}":  create("/v1/deploy_templates", `{"name": "CUSTOM_DT", "steps": [{"interface": "bios", "step": "apply_configuration", "args": {}, "priority": 10}]}`),
		"{runbook_id}":          create("/v1/runbooks", `{"name": "CUSTOM_RB", "steps": [{"interface": "bios", "step": "apply_configuration", "args": {}, "order": 1}]}`),
		"{rule_id}":             create("/v1/inspection_rules", `{"actions": [{"op": "set-attribute", "args": {"path": "/properties/x", "value": 1}}]}`),
		"{driver_name}":         "fake-hardware",
		"{trait}":               "CUSTOM_T",
		"{ind_ident}":           "led",
		"{component}":           "system",
	}
	// The conductor fails the allocation in the background (no node has
	// its resource class): wait for that, so that it is not taken for a
	// change made by a request.
	await.Until(t, time.Minute, "the allocation to leave allocating", func() bool {
		r := apitest.Do(t, h, http.MethodGet, "/v1/allocations/"+p["{allocation_id}"], "latest", "")
		return apitest.JSON(t, r.Body)["state"] != "allocating"
	})
	return p
}

// snapshot is every object the fixtures made, as the API shows them.
func snapshot(t *testing.T, h http.Handler, params map[string]string) string {
	t.Helper()
	var b strings.Builder
	for _, path := range []string{"/v1/nodes/detail", "/v1/ports/detail", "/v1/portgroups/detail", "/v1/chassis/detail",
		"/v1/volume/connectors?detail=True", "/v1/volume/targets?detail=True", "/v1/allocations",
		"/v1/deploy_templates?detail=True", "/v1/runbooks?detail=True", "/v1/inspection_rules?detail=True",
		"/v1/nodes/" + params["{node_ident}"] + "/vifs", "/v1/nodes/" + params["{node_ident}"] + "/traits"} {
		r := apitest.Do(t, h, http.MethodGet, path, "latest", "")
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		body := r.Body
		if path == "/v1/nodes/detail" {
			body = withoutLockStamps(t, body)
		}
		b.Write(body)
		b.WriteByte('\n')
	}
	return b.String()
}

// withoutLockStamps blanks the nodes' updated_at: taking and releasing a
// node's lock stamps it (oslo.db's onupdate does so upstream), and a
// request refused by the conductor has taken the lock, so upstream moves it
// too. Every other field must stay as it was.
func withoutLockStamps(t *testing.T, body []byte) []byte {
	t.Helper()
	var list struct {
		Nodes []map[string]any `json:"nodes"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("node list %s: %v", body, err)
	}
	for _, n := range list.Nodes {
		delete(n, "updated_at")
	}
	out, err := json.Marshal(list)
	if err != nil {
		t.Fatalf("node list: %v", err)
	}
	return out
}
