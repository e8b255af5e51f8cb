package node

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api/microversion"
)

// expectedKeys derives the keys of a full node document at minor from
// VERSIONED_FIELDS and the link gates.
func expectedKeys(minor int) []string {
	v := microversion.Version{Major: 1, Minor: minor}
	keys := []string{"uuid", "created_at", "updated_at", "links", "ports", "chassis_uuid"}
	for _, f := range append(slices.Clone(objectFields), "conductor", "allocation_uuid") {
		if microversion.FieldAllowed(f, v) {
			keys = append(keys, f)
		}
	}
	for _, l := range []struct {
		name string
		gate microversion.Gate
	}{{"states", microversion.AllowLinksNodeStatesAndDriverProperties}, {"portgroups", microversion.AllowPortgroupsSubcontrollers}, {"volume", microversion.AllowVolume}} {
		if l.gate.Allows(v) {
			keys = append(keys, l.name)
		}
	}
	sort.Strings(keys)
	return keys
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestVersionVisibility(t *testing.T) {
	e := newEnv(t)
	n := e.create(`{"driver": "fake-hardware", "name": "vis-1"}`)
	for _, minor := range []int{1, 46, 82, 115} {
		r := e.do("GET", "/v1/nodes/"+n["uuid"].(string), fmt.Sprintf("1.%d", minor), "")
		if r.status != http.StatusOK {
			t.Fatalf("1.%d: %d %s", minor, r.status, r.body)
		}
		got, want := keysOf(r.json(t)), expectedKeys(minor)
		if !slices.Equal(got, want) {
			t.Errorf("1.%d keys\n got  %v\n want %v", minor, got, want)
		}
		d := e.do("GET", "/v1/nodes/detail", fmt.Sprintf("1.%d", minor), "")
		nodes := d.json(t)["nodes"].([]any)
		if len(nodes) != 1 || !slices.Equal(keysOf(nodes[0].(map[string]any)), want) {
			t.Errorf("detail 1.%d: %s", minor, d.body)
		}
	}
}

func TestCreateGetListDelete(t *testing.T) {
	e := newEnv(t)
	r := e.do("POST", "/v1/nodes", "1.115", `{"driver": "fake-hardware", "name": "node-a", "driver_info": {"ipmi_password": "s3cr3t-pw", "ipmi_username": "admin"}, "instance_info": {"configdrive": "H4sI-secret-cd", "image_url": "http://img/secret-url"}}`)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	n := r.json(t)
	id := n["uuid"].(string)
	if loc := r.header.Get("Location"); loc != "http://127.0.0.1:6385/v1/nodes/"+id {
		t.Errorf("Location = %q", loc)
	}
	if n["provision_state"] != "enroll" || n["conductor"] != "test-host" || n["conductor_group"] != "" {
		t.Errorf("created node: %s", r.body)
	}
	di := n["driver_info"].(map[string]any)
	if di["ipmi_password"] != "******" || di["ipmi_username"] != "admin" {
		t.Errorf("driver_info = %v", di)
	}
	ii := n["instance_info"].(map[string]any)
	if ii["configdrive"] != "******" || ii["image_url"] != "******" {
		t.Errorf("instance_info = %v", ii)
	}
	// Before 1.11 a new node starts available, shown as null before 1.2.
	old := e.do("POST", "/v1/nodes", "1.1", `{"driver": "fake-hardware"}`).json(t)
	if _, ok := old["provision_state"]; !ok || old["provision_state"] != nil {
		t.Errorf("1.1 create: provision_state = %v", old["provision_state"])
	}

	byName := e.do("GET", "/v1/nodes/node-a?fields=uuid,name,driver_info", "1.115", "")
	if got := keysOf(byName.json(t)); !slices.Equal(got, []string{"driver_info", "links", "name", "uuid"}) {
		t.Errorf("fields: %s", byName.body)
	}
	list := e.do("GET", "/v1/nodes?limit=1", "1.115", "").json(t)
	items := list["nodes"].([]any)
	if len(items) != 1 || !slices.Equal(keysOf(items[0].(map[string]any)), []string{"instance_uuid", "links", "maintenance", "name", "power_state", "provision_state", "uuid"}) {
		t.Errorf("list: %v", list)
	}
	if next, _ := list["next"].(string); !strings.HasPrefix(next, "http://127.0.0.1:6385/v1/nodes?sort_key=id&sort_dir=asc&fields=instance_uuid,maintenance,power_state,provision_state,uuid,name&limit=1&marker=") {
		t.Errorf("next = %q", next)
	}
	if r := e.do("DELETE", "/v1/nodes/node-a", "1.115", ""); r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/nodes/"+id, "1.115", ""); r.status != 404 || r.faultstring(t) != "Node "+id+" could not be found." {
		t.Errorf("after delete: %d %s", r.status, r.body)
	}
	for _, secret := range []string{"s3cr3t-pw", "H4sI-secret-cd", "secret-url"} {
		if strings.Contains(e.logs.String(), secret) {
			t.Errorf("log contains %q", secret)
		}
		if strings.Contains(string(r.body), secret) || strings.Contains(string(byName.body), secret) {
			t.Errorf("response contains %q", secret)
		}
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t)
	e.create(`{"driver": "fake-hardware", "name": "taken"}`)
	cases := []struct {
		name, method, path, version, body string
		status                            int
		fault                             string
	}{
		{"missing driver", "POST", "/v1/nodes", "1.115", `{}`, 400, "Schema error for node: 'driver' is a required property"},
		{"unknown field", "POST", "/v1/nodes", "1.115", `{"driver": "fake-hardware", "bogus": 1}`, 400, "Schema error for node: Additional properties are not allowed ('bogus' was unexpected)"},
		{"bad uuid", "POST", "/v1/nodes", "1.115", `{"driver": "fake-hardware", "uuid": "nope"}`, 400, "Expected UUID for uuid: nope"},
		{"field too new", "POST", "/v1/nodes", "1.45", `{"driver": "fake-hardware", "conductor_group": "g"}`, 406, "Request not acceptable."},
		{"name before 1.5", "POST", "/v1/nodes", "1.4", `{"driver": "fake-hardware", "name": "n"}`, 406, "Request not acceptable."},
		{"invalid name", "POST", "/v1/nodes", "1.115", `{"driver": "fake-hardware", "name": "a b"}`, 400, "Cannot create node with invalid name 'a b'"},
		{"reserved name", "POST", "/v1/nodes", "1.115", `{"driver": "fake-hardware", "name": "detail"}`, 400, "The word \"detail\" is reserved and can not be used as a node name. Reserved words are: maintenance, management, states, vendor_passthru, detail, validate."},
		{"duplicate name", "POST", "/v1/nodes", "1.115", `{"driver": "fake-hardware", "name": "taken"}`, 409, "A node with name taken already exists."},
		{"not found", "GET", "/v1/nodes/nope", "1.115", "", 404, "Node nope could not be found."},
		{"name before 1.5", "GET", "/v1/nodes/taken", "1.1", "", 404, "Node taken could not be found."},
		{"fields before 1.8", "GET", "/v1/nodes?fields=uuid", "1.7", "", 406, "Request not acceptable."},
		{"versioned field", "GET", "/v1/nodes?fields=shard", "1.81", "", 406, "Request not acceptable."},
		{"unknown field", "GET", "/v1/nodes?fields=bogus", "1.115", "", 400, "Field bogus is not a valid field."},
		{"bad limit", "GET", "/v1/nodes?limit=0", "1.115", "", 400, "Limit must be positive"},
		{"bad sort key", "GET", "/v1/nodes?sort_key=extra", "1.115", "", 400, "The sort_key value extra is an invalid field for sorting"},
		{"bad state", "GET", "/v1/nodes?provision_state=bogus", "1.115", "", 400, "Provision state \"bogus\" is not valid"},
		{"driver filter old", "GET", "/v1/nodes?driver=x", "1.15", "", 406, "Request not acceptable. The minimal required API version should be 1.16"},
		{"bad fault", "GET", "/v1/nodes?fault=x", "1.115", "", 400, "Unrecognized fault \"x\" is specified, allowed faults are ('power failure', 'clean failure', 'rescue abort failure', 'service failure')"},
		{"unexpected arg", "GET", "/v1/nodes?foo=1", "1.115", "", 400, "Unexpected arguments: foo"},
		{"detail and fields", "GET", "/v1/nodes?detail=True&fields=uuid", "1.115", "", 400, "Can not specify ?detail=True and fields in the same request."},
		{"bad marker", "GET", "/v1/nodes?marker=1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "1.115", "", 404, "Node 1be26c0b-03f2-4d2e-ae87-c02d7f33c123 could not be found."},
		{"patch traits", "PATCH", "/v1/nodes/taken", "1.115", `[{"op": "add", "path": "/traits", "value": ["CUSTOM_X"]}]`, 400, "Cannot patch /traits. Only the following can be updated: " + strings.Join(patchAllowedFields, ", ")},
		{"patch root add", "PATCH", "/v1/nodes/taken", "1.115", `[{"op": "add", "path": "/foo", "value": 1}]`, 400, "Cannot patch /foo. Only the following can be updated: " + strings.Join(patchAllowedFields, ", ")},
		{"patch bad op", "PATCH", "/v1/nodes/taken", "1.115", `[{"op": "move", "path": "/name"}]`, 400, "Schema error for patch: 'move' is not one of ['add', 'replace', 'remove']"},
		{"patch missing", "PATCH", "/v1/nodes/taken", "1.115", `[{"op": "remove", "path": "/extra/nope"}]`, 400, "Couldn't apply patch '{'op': 'remove', 'path': '/extra/nope'}'. Reason: can't remove a non-existent object 'nope'"},
		{"patch type", "PATCH", "/v1/nodes/taken", "1.115", `[{"op": "replace", "path": "/extra", "value": "x"}]`, 400, "Schema error for patch: 'x' is not of type 'object', 'null'"},
		{"patch reset without driver", "PATCH", "/v1/nodes/taken?reset_interfaces=true", "1.115", `[{"op": "add", "path": "/extra/a", "value": 1}]`, 400, "The reset_interfaces parameter can only be used when changing the node's driver."},
		{"patch reset old", "PATCH", "/v1/nodes/taken?reset_interfaces=true", "1.44", `[{"op": "add", "path": "/extra/a", "value": 1}]`, 406, "Request not acceptable."},
		{"power bad target", "PUT", "/v1/nodes/taken/states/power", "1.115", `{"target": "sideways"}`, 400, "The requested action \"sideways\" can not be performed on node \"taken\" while it is in state \"None\"."},
		{"soft power old", "PUT", "/v1/nodes/taken/states/power", "1.26", `{"target": "soft power off"}`, 406, "Request not acceptable."},
		{"power timeout", "PUT", "/v1/nodes/taken/states/power", "1.115", `{"target": "power on", "timeout": 0}`, 400, "timeout has to be positive integer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, c.version, c.body)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if got := r.faultstring(t); got != c.fault {
				t.Errorf("faultstring\n got  %q\n want %q", got, c.fault)
			}
		})
	}
}

// Nova's calls: instance_uuid reservation, instance_info patch, the
// fields query, power actions.
func TestNovaPatterns(t *testing.T) {
	e := newEnv(t)
	a := e.create(`{"driver": "fake-hardware", "name": "nova-a"}`)
	b := e.create(`{"driver": "fake-hardware", "name": "nova-b"}`)
	inst := "9f2ce2a6-2f0a-4d4e-9d6b-3c1b8f0f4c11"
	reserve := `[{"op": "add", "path": "/instance_uuid", "value": "` + inst + `"}, {"op": "add", "path": "/instance_info", "value": {"image_source": "glance://img", "root_gb": 10, "display_name": "vm-1"}}]`
	r := e.do("PATCH", "/v1/nodes/"+a["uuid"].(string), "1.115", reserve)
	if r.status != 200 {
		t.Fatalf("reserve: %d %s", r.status, r.body)
	}
	got := r.json(t)
	if got["instance_uuid"] != inst || got["instance_name"] != "vm-1" || got["instance_info"].(map[string]any)["root_gb"] != float64(10) {
		t.Errorf("patched: %s", r.body)
	}
	r = e.do("PATCH", "/v1/nodes/"+b["uuid"].(string), "1.115", `[{"op": "add", "path": "/instance_uuid", "value": "`+inst+`"}]`)
	if r.status != http.StatusConflict || !strings.HasPrefix(r.faultstring(t), "Instance "+inst+" is already associated with a node") {
		t.Errorf("second reservation: %d %s", r.status, r.body)
	}
	fields := "/v1/nodes?fields=uuid,power_state,target_power_state,provision_state,target_provision_state,last_error,maintenance,properties,instance_uuid,traits,resource_class&limit=1000"
	r = e.do("GET", fields, "1.115", "")
	if r.status != 200 || len(r.json(t)["nodes"].([]any)) != 2 {
		t.Errorf("nova fields query: %d %s", r.status, r.body)
	}
	r = e.do("GET", "/v1/nodes/detail?instance_uuid="+inst, "1.115", "")
	if nodes := r.json(t)["nodes"].([]any); len(nodes) != 1 || nodes[0].(map[string]any)["uuid"] != a["uuid"] {
		t.Errorf("instance lookup: %s", r.body)
	}
	r = e.do("PATCH", "/v1/nodes/"+a["uuid"].(string), "1.115", `[{"op": "remove", "path": "/instance_uuid"}]`)
	if r.status != 200 || r.json(t)["instance_uuid"] != nil {
		t.Errorf("unreserve: %d %s", r.status, r.body)
	}
	for _, target := range []string{"power on", "rebooting", "power off"} {
		r = e.do("PUT", "/v1/nodes/nova-a/states/power", "1.115", `{"target": "`+target+`"}`)
		if r.status != http.StatusAccepted || r.header.Get("Location") != "http://127.0.0.1:6385/v1/nodes/nova-a/states" {
			t.Errorf("power %s: %d %s", target, r.status, r.body)
		}
	}
	st := e.do("GET", "/v1/nodes/nova-a/states", "1.115", "").json(t)
	if got := keysOf(st); !slices.Equal(got, []string{"boot_mode", "console_enabled", "last_error", "power_state", "provision_state", "provision_updated_at", "raid_config", "secure_boot", "target_power_state", "target_provision_state", "target_raid_config"}) {
		t.Errorf("states keys %v", got)
	}
}

func TestMaintenance(t *testing.T) {
	e := newEnv(t)
	e.create(`{"driver": "fake-hardware", "name": "m1"}`)
	if r := e.do("PUT", "/v1/nodes/m1/maintenance", "1.115", `{"reason": "broken"}`); r.status != 202 {
		t.Fatalf("set: %d %s", r.status, r.body)
	}
	n := e.do("GET", "/v1/nodes/m1", "1.115", "").json(t)
	if n["maintenance"] != true || n["maintenance_reason"] != "broken" {
		t.Errorf("after set: %v %v", n["maintenance"], n["maintenance_reason"])
	}
	if r := e.do("DELETE", "/v1/nodes/m1/maintenance", "1.115", ""); r.status != 202 {
		t.Fatalf("clear: %d %s", r.status, r.body)
	}
	n = e.do("GET", "/v1/nodes/m1", "1.115", "").json(t)
	if n["maintenance"] != false || n["maintenance_reason"] != nil {
		t.Errorf("after clear: %v %v", n["maintenance"], n["maintenance_reason"])
	}
}
