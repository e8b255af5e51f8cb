package ramdisk

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/states"
)

const mac1, mac2 = "52:54:00:12:34:56", "52:54:00:ab:cd:ef"

func TestLookupFindsNodeAndGeneratesTokenOnce(t *testing.T) {
	e := newEnv(t, nil)
	n := e.node(states.DeployWait, []string{mac1}, func(n *model.Node) {
		n.DriverInfo = map[string]any{"ipmi_password": "secret"}
		n.InstanceInfo = map[string]any{"image_url": "http://img", "image_source": "x"}
		n.Properties = map[string]any{"cpus": 4}
	})
	r := e.do("GET", "/v1/lookup?addresses=zz,"+strings.ToUpper(mac1), "1.115", "")
	if r.status != http.StatusOK {
		t.Fatalf("lookup: %d %s", r.status, r.body)
	}
	doc := r.json(t)
	node := doc["node"].(map[string]any)
	if node["uuid"] != n.UUID {
		t.Fatalf("node %v", node)
	}
	var keys []string
	for k := range node {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"driver_internal_info", "instance_info", "links", "properties", "uuid"}; !slices.Equal(keys, want) {
		t.Fatalf("node keys %v, want %v", keys, want)
	}
	if ii := node["instance_info"].(map[string]any); ii["image_url"] != "******" || ii["image_source"] != "x" {
		t.Fatalf("instance_info %v", ii)
	}
	cfg := doc["config"].(map[string]any)
	tok, _ := cfg["agent_token"].(string)
	stored := e.get(n.UUID).DriverInternalInfo["agent_secret_token"]
	if tok == "" || tok == "******" || tok != stored {
		t.Fatalf("first lookup token %q, stored %v", tok, stored)
	}
	if dii := node["driver_internal_info"].(map[string]any); dii["agent_secret_token"] != "******" {
		t.Fatalf("token not masked in the node: %v", dii)
	}
	for _, k := range []string{"agent_token_required", "heartbeat_timeout", "metrics", "metrics_statsd",
		"agent_md5_checksum_enable", "permitted_image_formats", "disable_deep_image_inspection",
		"agent_skip_bmc_detect", "tls_min_version", "tls_cipher_suites", "agent_containers"} {
		if _, ok := cfg[k]; !ok {
			t.Errorf("config lacks %s (seed § 4 keys IPA reads)", k)
		}
	}
	if cfg["heartbeat_timeout"] != float64(300) || cfg["agent_token_required"] != true || cfg["tls_cipher_suites"] != nil {
		t.Fatalf("config %v", cfg)
	}
	if !slices.Equal(e.cond.Calls(), []string{"get_node_with_token " + testTopic}) {
		t.Fatalf("calls %v", e.cond.Calls())
	}
	again := e.do("GET", "/v1/lookup?node_uuid="+n.UUID, "1.115", "").json(t)
	if got := again["config"].(map[string]any)["agent_token"]; got != "******" {
		t.Fatalf("second lookup token %v", got)
	}
}

// The api-ref sample's keys are all present at the oldest lookup version.
func TestLookupShapeMatchesSample(t *testing.T) {
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/lookup-node-response.json", &sample)
	e := newEnv(t, nil)
	n := e.node(states.CleanWait, []string{mac1})
	r := e.do("GET", "/v1/lookup?addresses="+mac1, "1.22", "")
	if r.status != 200 {
		t.Fatalf("lookup at 1.22: %d %s", r.status, r.body)
	}
	doc := r.json(t)
	if len(e.cond.Calls()) != 0 {
		t.Fatalf("no token before 1.62, calls %v", e.cond.Calls())
	}
	var walk func(path string, want, got map[string]any)
	walk = func(path string, want, got map[string]any) {
		for k, v := range want {
			g, ok := got[k]
			if !ok {
				t.Errorf("%s%s missing", path, k)
				continue
			}
			if wm, ok := v.(map[string]any); ok && path+k != "node.driver_internal_info" && path+k != "config.metrics" {
				gm, ok := g.(map[string]any)
				if !ok {
					t.Errorf("%s%s is %T", path, k, g)
					continue
				}
				walk(path+k+".", wm, gm)
			}
		}
	}
	walk("", sample, doc)
	links := doc["node"].(map[string]any)["links"].([]any)
	if links[0].(map[string]any)["href"] != "http://127.0.0.1:6385/v1/nodes/"+n.UUID {
		t.Fatalf("links %v", links)
	}
}

func TestLookupErrors(t *testing.T) {
	e := newEnv(t, nil)
	e.node(states.Active, []string{mac1})
	e.node(states.DeployWait, []string{mac2})
	e.node(states.DeployWait, []string{"52:54:00:00:00:01"})
	cases := []struct {
		name, query string
		status      int
		msg         string
	}{
		{"nothing", "", 400, "At least one of 'addresses' and 'node_uuid' parameters is required"},
		{"invalid macs only", "addresses=zz,11", 400, "At least one of 'addresses' and 'node_uuid' parameters is required"},
		{"bad uuid", "addresses=" + mac1 + "&node_uuid=abc", 400, "Expected UUID for node_uuid: abc"},
		{"unknown arg", "foo=1", 400, "Unexpected arguments: foo"},
		{"unknown mac", "addresses=11:22:33:44:55:66", 404, "Resource could not be found."},
		{"unknown uuid", "node_uuid=1be26c0b-03f2-4d2e-ae87-c02d7f33c123", 404, "Resource could not be found."},
		{"state not allowed", "addresses=" + mac1, 404, "Resource could not be found."},
		{"several nodes", "addresses=" + mac2 + ",52:54:00:00:00:01", 404, "Resource could not be found."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantFault(t, e.do("GET", "/v1/lookup?"+c.query, "1.115", ""), c.status, c.msg)
		})
	}
	t.Run("too old", func(t *testing.T) {
		wantFault(t, e.do("GET", "/v1/lookup?addresses="+mac2, "1.21", ""), 404, "Resource could not be found.")
	})
	t.Run("no conductor", func(t *testing.T) {
		e.topics.down = true
		defer func() { e.topics.down = false }()
		r := e.do("GET", "/v1/lookup?addresses="+mac2, "1.115", "")
		if r.status != 400 || !strings.HasPrefix(r.faultstring(t), "No valid host was found.") {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
}

func TestLookupRestrictAndFastTrack(t *testing.T) {
	cases := []struct {
		name     string
		conf     map[string]map[string]string
		state    string
		info     map[string]any
		status   int
		faultMsg string
	}{
		{"available refused", nil, states.Available, nil, 404, "Resource could not be found."},
		{"unrestricted", map[string]map[string]string{"api": {"restrict_lookup": "false"}}, states.Active, nil, 200, ""},
		{"fast track option", map[string]map[string]string{"deploy": {"fast_track": "true"}}, states.Available, nil, 200, ""},
		{"fast track per node", nil, states.Manageable, map[string]any{"fast_track": "yes"}, 200, ""},
		{"fast track off per node", map[string]map[string]string{"deploy": {"fast_track": "true"}}, states.Manageable, map[string]any{"fast_track": false}, 404, "Resource could not be found."},
		{"fast track active", map[string]map[string]string{"deploy": {"fast_track": "true"}}, states.Active, nil, 404, "Resource could not be found."},
		{"fast track invalid", nil, states.Available, map[string]any{"fast_track": "maybe"}, 400,
			"Invalid value of fast_track: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.conf)
			e.node(c.state, []string{mac1}, func(n *model.Node) { n.DriverInfo = c.info })
			r := e.do("GET", "/v1/lookup?addresses="+mac1, "1.115", "")
			if c.status == 200 {
				if r.status != 200 {
					t.Fatalf("%d %s", r.status, r.body)
				}
				return
			}
			wantFault(t, r, c.status, c.faultMsg)
		})
	}
}

func TestLookupSkipsBMCDetectForRedfish(t *testing.T) {
	e := newEnv(t, nil)
	n := e.node(states.DeployWait, nil)
	// The stored interface name is what counts, not its availability.
	n.ManagementInterface = "redfish"
	if _, err := e.s.UpdateNode(t.Context(), n, "management_interface"); err != nil {
		t.Fatal(err)
	}
	cfg := e.do("GET", "/v1/lookup?node_uuid="+n.UUID, "1.61", "").json(t)["config"].(map[string]any)
	if cfg["agent_skip_bmc_detect"] != true {
		t.Fatalf("config %v", cfg)
	}
}

func TestHeartbeatRelaysArgumentsByVersion(t *testing.T) {
	e := newEnv(t, nil)
	n := e.node(states.DeployWait, nil, func(n *model.Node) {
		n.Name = ptr("hb-node")
	})
	tok := e.do("GET", "/v1/lookup?node_uuid="+n.UUID, "1.115", "").json(t)["config"].(map[string]any)["agent_token"].(string)
	body := fmt.Sprintf(`{"callback_url": "HTTP://10.0.0.2:9999", "agent_token": %q, "agent_version": "9.1", "agent_verify_ca": "CA", "agent_status": "start", "agent_status_message": "m"}`, tok)
	r := e.do("POST", "/v1/heartbeat/hb-node", "1.115", body)
	if r.status != http.StatusAccepted || len(r.body) != 0 {
		t.Fatalf("heartbeat: %d %s", r.status, r.body)
	}
	got := e.cond.hb[0]
	if got.NodeID != n.UUID || got.CallbackURL != "http://10.0.0.2:9999" || got.AgentToken != tok ||
		got.AgentVersion != "9.1" || got.AgentVerifyCA != "CA" || got.AgentStatus != "start" || got.AgentStatusMessage != "m" {
		t.Fatalf("relayed %+v", got)
	}
	// The conductor's refusal reaches the agent as upstream maps it.
	r = e.do("POST", "/v1/heartbeat/"+n.UUID, "1.115", `{"callback_url": "http://10.0.0.2:9999", "agent_token": "wrong", "agent_version": "9"}`)
	wantFault(t, r, 400, "Invalid or missing agent token received.")
	e.cond.fail["heartbeat "+testTopic] = errs.NodeLocked(n.UUID, "other-host")
	r = e.do("POST", "/v1/heartbeat/"+n.UUID, "1.115", `{"callback_url": "http://10.0.0.2:9999", "agent_token": "t"}`)
	if r.status != http.StatusConflict {
		t.Fatalf("locked: %d %s", r.status, r.body)
	}
}

func TestHeartbeatErrors(t *testing.T) {
	e := newEnv(t, nil)
	n := e.node(states.DeployWait, nil, func(n *model.Node) {
		n.DriverInternalInfo = map[string]any{"agent_url": "http://10.0.0.2:9999"}
	})
	u := "/v1/heartbeat/" + n.UUID
	cases := []struct {
		name, path, version, body string
		status                    int
		msg                       string
	}{
		{"unexpected", u, "1.115", `{"callback_url": "http://x", "bogus": 1}`, 400, "Unexpected arguments: bogus"},
		{"bad ident", "/v1/heartbeat/foo%20bar", "1.115", `{}`, 400, "Expected UUID or name for node_ident: foo bar"},
		{"missing url", u, "1.115", `{}`, 400, "Missing mandatory parameter: callback_url"},
		{"not a string", u, "1.115", `{"callback_url": 5}`, 400, "Expected string for callback_url: 5"},
		{"version before 1.36", u, "1.35", `{"callback_url": "http://x", "agent_version": "5"}`, 400, `Field "agent_version" not recognised`},
		{"status before 1.72", u, "1.71", `{"callback_url": "http://x", "agent_status": "start"}`, 400, `Fields "agent_status" and "agent_status_message" not recognised.`},
		{"verify_ca before 1.68", u, "1.67", `{"callback_url": "http://x", "agent_verify_ca": "x"}`, 400, `Field "agent_verify_ca" not recognised in this version`},
		{"unknown node", "/v1/heartbeat/nope", "1.115", `{"callback_url": "http://x"}`, 404, "Node nope could not be found."},
		{"bad url", u, "1.115", `{"callback_url": "ftp://x"}`, 400, `An issue with the supplied "callback_url" has been detected.`},
		{"changed url", u, "1.115", `{"callback_url": "http://10.0.0.3:9999", "agent_token": "t"}`, 400, `Detected change in ramdisk provided "callback_url"`},
		{"no token", u, "1.115", `{"callback_url": "http://10.0.0.2:9999"}`, 400, "Agent token is required for heartbeat processing."},
		{"bad status", u, "1.115", `{"callback_url": "http://10.0.0.2:9999", "agent_token": "t", "agent_status": "x"}`, 400, "Agent status is invalid. Valid states are start,end,error."},
		{"too old", u, "1.21", `{"callback_url": "http://x"}`, 404, "Resource could not be found."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantFault(t, e.do("POST", c.path, c.version, c.body), c.status, c.msg)
		})
	}
	if calls := e.cond.Calls(); len(calls) != 0 {
		t.Fatalf("refused heartbeats reached the conductor: %v", calls)
	}
}

func ptr(s string) *string { return &s }

func inventory(macs ...string) string {
	var ifaces []string
	for _, m := range macs {
		ifaces = append(ifaces, fmt.Sprintf(`{"name": "eth", "mac_address": %q}`, m))
	}
	return `{"inventory": {"interfaces": [` + strings.Join(ifaces, ", ") + `], "bmc_address": null}, "extra_key": 1}`
}

func TestContinueInspection(t *testing.T) {
	e := newEnv(t, nil)
	e.cond.accept = true
	n := e.node(states.InspectWait, []string{mac1})
	r := e.do("POST", "/v1/continue_inspection", "1.115", inventory(mac1))
	if r.status != http.StatusAccepted {
		t.Fatalf("continue: %d %s", r.status, r.body)
	}
	doc := r.json(t)
	if doc["node"].(map[string]any)["uuid"] != n.UUID || doc["config"].(map[string]any)["agent_token"] == nil {
		t.Fatalf("answer %v", doc)
	}
	if want := []string{"get_node_with_token " + testTopic, "continue_inspection " + testTopic}; !slices.Equal(e.cond.Calls(), want) {
		t.Fatalf("calls %v want %v", e.cond.Calls(), want)
	}
	got := e.cond.insp[0]
	if fmt.Sprint(got["plugin_data"].(map[string]any)["extra_key"]) != "1" {
		t.Fatalf("plugin data %v", got["plugin_data"])
	}
	if _, ok := got["plugin_data"].(map[string]any)["inventory"]; ok {
		t.Fatal("inventory left in plugin data")
	}
	// The legacy (ironic-inspector) answer at 1.1.
	n2 := e.node(states.InspectWait, []string{mac2})
	r = e.do("POST", "/v1/continue_inspection", "1.1", inventory(mac2))
	if r.status != http.StatusAccepted || string(r.body) != fmt.Sprintf(`{"uuid": %q}`, n2.UUID) {
		t.Fatalf("legacy: %d %s", r.status, r.body)
	}
}

func TestContinueInspectionErrors(t *testing.T) {
	e := newEnv(t, nil)
	active := e.node(states.Active, []string{mac1})
	e.node(states.InspectWait, []string{mac2})
	cases := []struct {
		name, query, version, body string
		status                     int
		msg                        string
	}{
		{"no inventory", "", "1.115", `{}`, 400, "Schema error for data: 'inventory' is a required property"},
		{"no interfaces", "", "1.115", `{"inventory": {"interfaces": []}}`, 400, "Schema error for data: [] should be non-empty"},
		{"no lookup data", "", "1.115", `{"inventory": {"interfaces": [{"mac_address": "zz"}]}}`, 400, "No lookup information provided"},
		{"node_uuid at 1.1", "?node_uuid=" + active.UUID, "1.1", inventory(mac1), 404, "API version 1.84 or newer is required"},
		{"too old", "", "1.83", inventory(mac1), 404, "API version 1.84 or newer is required"},
		{"wrong state", "", "1.115", inventory(mac1), 404, "Resource could not be found."},
		{"macs of two nodes", "?node_uuid=" + active.UUID, "1.115", inventory(mac2), 404, "Resource could not be found."},
		{"unknown, no discovery", "", "1.115", inventory("52:54:00:99:99:99"), 404, "Resource could not be found."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantFault(t, e.do("POST", "/v1/continue_inspection"+c.query, c.version, c.body), c.status, c.msg)
		})
	}
}

func TestContinueInspectionByBMCAndAutoEnroll(t *testing.T) {
	e := newEnv(t, map[string]map[string]string{"auto_discovery": {"enabled": "true", "driver": "fake-hardware"}})
	e.cond.accept = true
	n := e.node(states.InspectWait, nil, func(n *model.Node) {
		n.DriverInternalInfo = map[string]any{"lookup_bmc_addresses": []any{"192.0.2.9"}}
	})
	r := e.do("POST", "/v1/continue_inspection", "1.115", `{"inventory": {"interfaces": [{"mac_address": "52:54:00:99:99:99"}], "bmc_address": "192.0.2.9"}}`)
	if r.status != 202 || r.json(t)["node"].(map[string]any)["uuid"] != n.UUID {
		t.Fatalf("by BMC: %d %s", r.status, r.body)
	}
	r = e.do("POST", "/v1/continue_inspection", "1.115", inventory("52:54:00:77:77:77"))
	if r.status != 202 {
		t.Fatalf("auto enrolment: %d %s", r.status, r.body)
	}
	calls := e.cond.Calls()
	if !slices.Contains(calls, "create_node "+testTopic) {
		t.Fatalf("no enrolment: %v", calls)
	}
	nodes, err := e.s.ListNodes(t.Context(), storeFilterAll(), storeAll())
	if err != nil || len(nodes) != 2 {
		t.Fatalf("nodes %d %v", len(nodes), err)
	}
	var created *model.Node
	for _, x := range nodes {
		if x.UUID != n.UUID {
			created = x
		}
	}
	if created.Driver != "fake-hardware" || created.ProvisionState != states.Enroll {
		t.Fatalf("enrolled %+v", created)
	}
	if plugin := e.cond.insp[len(e.cond.insp)-1]["plugin_data"].(map[string]any); plugin["auto_discovered"] != true {
		t.Fatalf("plugin data %v", plugin)
	}
}

// The conductor's refusal is relayed with its status and message.
func TestContinueInspectionConductorError(t *testing.T) {
	e := newEnv(t, nil)
	e.node(states.InspectWait, []string{mac1})
	r := e.do("POST", "/v1/continue_inspection", "1.115", inventory(mac1))
	wantFault(t, r, 400, "Driver fake-hardware does not support inspect (disabled or not implemented).")
}

// The inspection body limit is the middleware's; it applies to this route.
func TestContinueInspectionBodyLimit(t *testing.T) {
	e := newEnv(t, map[string]map[string]string{"api": {"max_json_body_size_inspection": "4"}})
	big := `{"inventory": {"interfaces": [{"mac_address": "` + mac1 + `"}]}, "logs": "` + strings.Repeat("a", 5000) + `"}`
	r := e.do("POST", "/v1/continue_inspection", "1.115", big)
	if r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var doc map[string]any
	_ = json.Unmarshal(r.body, &doc)
	if doc["faultstring"] != "Request body is too large. Please contact the service administrator." {
		t.Fatalf("%s", r.body)
	}
}

// Agents older than 1.62 never receive a token another agent was given.
func TestLookupBefore162MasksToken(t *testing.T) {
	e := newEnv(t, nil)
	n := e.node(states.DeployWait, []string{mac1})
	if r := e.do("GET", "/v1/lookup?addresses="+mac1, "1.115", ""); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if e.get(n.UUID).DriverInternalInfo["agent_secret_token"] == nil {
		t.Fatal("no token generated")
	}
	cfg := e.do("GET", "/v1/lookup?addresses="+mac1, "1.61", "").json(t)["config"].(map[string]any)
	if cfg["agent_token"] != "******" {
		t.Fatalf("token at 1.61: %v", cfg["agent_token"])
	}
}

// At the first heartbeat version the arguments reach the conductor, whose
// refusal of a heartbeat without agent version is relayed.
func TestHeartbeatAt122(t *testing.T) {
	e := newEnv(t, nil)
	n := e.node(states.DeployWait, nil)
	r := e.do("POST", "/v1/heartbeat/"+n.UUID, "1.22", `{"callback_url": "http://10.0.0.2:9999", "agent_token": "t"}`)
	wantFault(t, r, 400, "Agent did not transmit a version, and a version is required. Please update the agent being used.")
	if len(e.cond.hb) != 1 || e.cond.hb[0].CallbackURL != "http://10.0.0.2:9999" || e.cond.hb[0].AgentVersion != "" {
		t.Fatalf("relayed %+v", e.cond.hb)
	}
}

// TestHeartbeatJSONSuffix: below 1.91 the heartbeat of a node whose name
// ends in ".json" finds it after the middleware stripped the suffix
// (read from master ironic/api/controllers/v1/ramdisk.py,
// get_rpc_node_with_suffix).
func TestHeartbeatJSONSuffix(t *testing.T) {
	e := newEnv(t, nil)
	n := e.node(states.DeployWait, nil, func(n *model.Node) {
		n.Name = ptr("hb.json")
	})
	tok := e.do("GET", "/v1/lookup?node_uuid="+n.UUID, "1.90", "").json(t)["config"].(map[string]any)["agent_token"].(string)
	body := fmt.Sprintf(`{"callback_url": "http://10.0.0.2:9999", "agent_token": %q, "agent_version": "9"}`, tok)
	r := e.do("POST", "/v1/heartbeat/hb.json", "1.90", body)
	if r.status != http.StatusAccepted || len(e.cond.hb) != 1 || e.cond.hb[0].NodeID != n.UUID {
		t.Fatalf("heartbeat: %d %s %+v", r.status, r.body, e.cond.hb)
	}
}
