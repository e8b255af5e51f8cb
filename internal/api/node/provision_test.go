package node

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/testing/await"
)

// waitState polls the node until its provision state is want and no
// transition is under way.
func (e *env) waitState(ident, want string) map[string]any {
	e.t.Helper()
	var n map[string]any
	await.UntilReason(e.t, 10*time.Second, "node "+ident+" in "+want, func() (bool, string) {
		n = e.do("GET", "/v1/nodes/"+ident, "1.115", "").json(e.t)
		return n["provision_state"] == want && n["reservation"] == nil && (n["target_provision_state"] == nil || strings.HasSuffix(want, "failed")),
			fmt.Sprintf("node %s: provision state %v (target %v, last_error %v), want %s",
				ident, n["provision_state"], n["target_provision_state"], n["last_error"], want)
	})
	return n
}

// provision sends PUT .../states/provision and checks the 202.
func (e *env) provision(ident, version, body string) {
	e.t.Helper()
	r := e.do("PUT", "/v1/nodes/"+ident+"/states/provision", version, body)
	if r.status != http.StatusAccepted || len(r.body) != 0 {
		e.t.Fatalf("provision %s at %s: %d %s", body, version, r.status, r.body)
	}
	if loc := r.header.Get("Location"); loc != "http://127.0.0.1:6385/v1/nodes/"+ident+"/states" {
		e.t.Fatalf("Location = %q", loc)
	}
}

// The verbs at the first microversion that knows them, walking the state
// machine through the real conductor.
func TestProvisionVerbsFirstVersion(t *testing.T) {
	e := newEnv(t)
	pv := e.create(`{"driver": "fake-hardware", "name": "pv"}`)["uuid"].(string)
	e.provision(pv, "1.4", `{"target": "manage"}`)
	e.waitState("pv", "manageable")
	e.provision("pv", "1.6", `{"target": "inspect"}`)
	e.waitState("pv", "manageable")
	e.provision("pv", "1.15", `{"target": "clean", "clean_steps": [{"interface": "bios", "step": "factory_reset"}]}`)
	e.waitState("pv", "manageable")
	e.provision(pv, "1.4", `{"target": "provide"}`)
	e.waitState("pv", "available")
	e.provision(pv, "1.1", `{"target": "active", "configdrive": "H4sIAAAAAAAAA+3BMQEAAADCoPVPbQ0PoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`)
	e.waitState("pv", "active")
	e.provision("pv", "1.35", `{"target": "rebuild", "configdrive": "http://cd.example/secret-rebuild-cd"}`)
	e.waitState("pv", "active")
	e.provision("pv", "1.38", `{"target": "rescue", "rescue_password": "pa55-rescue"}`)
	e.waitState("pv", "rescue")
	e.provision("pv", "1.38", `{"target": "unrescue"}`)
	e.waitState("pv", "active")
	e.provision(pv, "1.1", `{"target": "deleted"}`)
	e.waitState("pv", "available")
	e.provision("pv", "1.73", `{"target": "deploy"}`)
	e.waitState("pv", "active")
	e.provision("pv", "1.73", `{"target": "undeploy"}`)
	e.waitState("pv", "available")
	e.provision(pv, "1.4", `{"target": "manage"}`)
	e.waitState("pv", "manageable")
	e.provision("pv", "1.17", `{"target": "adopt"}`)
	e.waitState("pv", "active")
	e.provision("pv", "1.87", `{"target": "service", "service_steps": [{"interface": "deploy", "step": "write_image"}]}`)
	for _, secret := range []string{"pa55-rescue", "secret-rebuild-cd", "H4sIAAAAAAAAA"} {
		if strings.Contains(e.logs.String(), secret) {
			t.Errorf("log holds %q", secret)
		}
	}
}

// The same walk at the newest microversion, with a configdrive document
// and deploy steps, checking the secrets stay masked on the node.
func TestProvisionLatest(t *testing.T) {
	e := newEnv(t)
	e.create(`{"driver": "fake-hardware", "name": "pl"}`)
	e.provision("pl", "1.115", `{"target": "manage"}`)
	e.waitState("pl", "manageable")
	e.provision("pl", "1.115", `{"target": "clean", "disable_ramdisk": false, "clean_steps": [{"interface": "bios", "step": "cache_bios_settings", "args": {}}]}`)
	e.waitState("pl", "manageable")
	e.provision("pl", "1.115", `{"target": "provide"}`)
	e.waitState("pl", "available")
	e.provision("pl", "1.115", `{"target": "active", "configdrive": {"meta_data": {"hostname": "vm"}, "user_data": "#cloud-config secret-user-data", "vendor_data": {"k": "v"}}}`)
	n := e.waitState("pl", "active")
	ii := n["instance_info"].(map[string]any)
	if cd, ok := ii["configdrive"]; ok && cd != "******" {
		t.Errorf("configdrive shown: %v", cd)
	}
	e.provision("pl", "1.115", `{"target": "rescue", "rescue_password": "s3cret-rescue"}`)
	n = e.waitState("pl", "rescue")
	if pw := n["instance_info"].(map[string]any)["rescue_password"]; pw != "******" {
		t.Errorf("rescue_password shown as %v", pw)
	}
	// Observed from upstream 21.4 (read from master conductor/manager.py
	// do_node_rescue): the conductor stores the crypt(3) SHA-256 hash
	// beside the password whatever the rescue interface, and the API
	// masks it too.
	if h := n["instance_info"].(map[string]any)["hashed_rescue_password"]; h != "******" {
		t.Errorf("hashed_rescue_password shown as %v", h)
	}
	if stored, err := e.s.GetNodeByName(context.Background(), "pl"); err != nil || !strings.HasPrefix(fmt.Sprint(stored.InstanceInfo["hashed_rescue_password"]), "$5$") {
		t.Errorf("stored hash: %v %v", stored, err)
	}
	e.provision("pl", "1.115", `{"target": "unrescue"}`)
	e.waitState("pl", "active")
	r := e.do("PUT", "/v1/nodes/pl/states/provision", "1.86", `{"target": "service", "service_steps": [{"interface": "deploy", "step": "x"}]}`)
	if r.status != http.StatusNotAcceptable {
		t.Errorf("service at 1.86: %d %s", r.status, r.body)
	}
	e.provision("pl", "1.115", `{"target": "undeploy"}`)
	e.waitState("pl", "available")
	// Deploy steps reach the conductor, whose do_node_deploy validates
	// them before anything starts, as upstream: overriding a core step is
	// a 400 and the node stays available.
	r = e.do("PUT", "/v1/nodes/pl/states/provision", "1.115", `{"target": "active", "deploy_steps": [{"interface": "deploy", "step": "deploy", "args": {}, "priority": 100}]}`)
	if r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "deploy step deploy on interface deploy is a core step") {
		t.Errorf("deploy overriding a core step: %d %s", r.status, r.body)
	}
	if n = e.waitState("pl", "available"); n["last_error"] != nil {
		t.Errorf("refused deploy steps left last_error %v", n["last_error"])
	}
	for _, body := range []string{e.logs.String(), string(e.do("GET", "/v1/nodes/pl", "1.115", "").body), string(e.do("GET", "/v1/nodes/detail", "1.115", "").body)} {
		for _, secret := range []string{"s3cret-rescue", "secret-user-data"} {
			if strings.Contains(body, secret) {
				t.Errorf("secret %q leaked", secret)
			}
		}
	}
}

func TestProvisionErrors(t *testing.T) {
	e := newEnv(t)
	enroll := e.create(`{"driver": "fake-hardware", "name": "pe"}`)["uuid"].(string)
	avail := e.create(`{"driver": "fake-hardware", "name": "pa"}`)["uuid"].(string)
	e.provision("pa", "1.115", `{"target": "manage"}`)
	e.waitState("pa", "manageable")
	e.provision("pa", "1.115", `{"target": "provide"}`)
	e.waitState("pa", "available")
	e.create(`{"driver": "fake-hardware", "name": "pm", "maintenance": true}`)
	e.create(`{"driver": "fake-hardware", "name": "pg"}`)
	e.provision("pg", "1.115", `{"target": "manage"}`)
	e.waitState("pg", "manageable")
	cases := []struct {
		name, node, version, body string
		status                    int
		fault                     string
	}{
		{"missing target", "pe", "1.115", `{}`, 400, "Missing mandatory parameter: target"},
		{"unexpected", "pe", "1.115", `{"target": "manage", "bogus": 1}`, 400, "Unexpected arguments: bogus"},
		{"target type", "pe", "1.115", `{"target": 5}`, 400, "Expected string for target: 5"},
		{"configdrive type", "pe", "1.115", `{"target": "active", "configdrive": 5}`, 400, "Expected types <class 'NoneType'>, <class 'dict'>, <class 'str'> for configdrive: 5"},
		{"clean_steps type", "pe", "1.115", `{"target": "clean", "clean_steps": {}}`, 400, "Expected types <class 'NoneType'>, <class 'list'> for clean_steps: {}"},
		{"disable_ramdisk value", "pe", "1.115", `{"target": "clean", "disable_ramdisk": "maybe"}`, 400, "Invalid disable_ramdisk: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"},
		{"manage too old", enroll, "1.3", `{"target": "manage"}`, 406, "Request not acceptable."},
		{"deploy verb too old", "pa", "1.72", `{"target": "deploy"}`, 406, "Request not acceptable."},
		{"rescue too old", "pa", "1.37", `{"target": "rescue", "rescue_password": "x"}`, 406, "Request not acceptable."},
		{"unknown verb", "pe", "1.115", `{"target": "bogus"}`, 400, `The requested action "bogus" can not be performed on node "` + enroll + `" while it is in state "enroll".`},
		{"invalid transition", "pa", "1.115", `{"target": "provide"}`, 400, `The requested action "provide" can not be performed on node "` + avail + `" while it is in state "available".`},
		{"maintenance", "pm", "1.115", `{"target": "active"}`, 400, "The provisioning operation can't be performed on node " + e.do("GET", "/v1/nodes/pm", "1.115", "").json(t)["uuid"].(string) + " because it's in maintenance mode."},
		{"configdrive on provide", "pe", "1.115", `{"target": "manage", "configdrive": "abc"}`, 400, "Adding a config drive is only supported when setting provision state to active, rebuild"},
		{"configdrive rebuild old", "pa", "1.34", `{"target": "active", "configdrive": "a%b"}`, 400, "Invalid configdrive format: it is neither a JSON, nor a URL, nor a base64 string"},
		{"configdrive dict old", "pa", "1.55", `{"target": "active", "configdrive": {"meta_data": {}}}`, 400, "Providing a JSON object for configdrive is only supported starting with API version 1.56"},
		{"configdrive vendor old", "pa", "1.58", `{"target": "active", "configdrive": {"vendor_data": {}}}`, 400, "Providing vendor_data in configdrive is only supported starting with API version 1.59"},
		{"configdrive bad key", "pa", "1.115", `{"target": "active", "configdrive": {"bogus": {}}}`, 400, "Invalid configdrive format: Additional properties are not allowed ('bogus' was unexpected)"},
		{"clean_steps bad interface", "pa", "1.115", `{"target": "clean", "clean_steps": [{"interface": "foo", "step": "x"}]}`, 400, `The requested action "clean" can not be performed on node "` + avail + `" while it is in state "available".`},
		{"disable_ramdisk elsewhere", "pe", "1.115", `{"target": "manage", "disable_ramdisk": true}`, 400, "disable_ramdisk is supported only with manual cleaning or servicing"},
		{"disable_ramdisk old", "pa", "1.69", `{"target": "deleted", "disable_ramdisk": true}`, 400, `The requested action "deleted" can not be performed on node "` + avail + `" while it is in state "available".`},
		{"clean_steps elsewhere", "pa", "1.115", `{"target": "active", "clean_steps": [{"interface": "deploy", "step": "x"}]}`, 400, "\"clean_steps\" is only valid when setting target provision state to clean"},
		{"deploy_steps old", "pa", "1.68", `{"target": "active", "deploy_steps": [{"interface": "deploy", "step": "x", "args": {}, "priority": 1}]}`, 406, "Request not acceptable. The minimal required API version should be 1.69"},
		{"deploy_steps bad", "pa", "1.115", `{"target": "active", "deploy_steps": [{"interface": "deploy", "step": "x"}]}`, 400, "Invalid deploy_steps: 'args' is a required property"},
		{"rescue_password elsewhere", "pa", "1.115", `{"target": "active", "rescue_password": "x"}`, 400, "\"rescue_password\" is only valid when setting target provision state to rescue"},
		{"service_steps elsewhere", "pa", "1.115", `{"target": "active", "service_steps": [{"interface": "deploy", "step": "x"}]}`, 400, "\"service_steps\" is only valid when setting target provision state to service"},
		{"clean without steps", "pg", "1.115", `{"target": "clean", "clean_steps": []}`, 400, "\"clean_steps\" is required when setting target provision state to clean"},
		{"clean bad interface", "pg", "1.115", `{"target": "clean", "clean_steps": [{"interface": "foo", "step": "x"}]}`, 400, "Invalid clean_steps: 'foo' is not one of ['vendor', 'power', 'management', 'firmware', 'deploy', 'bios', 'raid']"},
		{"clean step missing", "pg", "1.115", `{"target": "clean", "clean_steps": [{"interface": "deploy"}]}`, 400, "Invalid clean_steps: 'step' is a required property"},
		{"disable_ramdisk clean old", "pg", "1.69", `{"target": "clean", "disable_ramdisk": true, "clean_steps": [{"interface": "deploy", "step": "x"}]}`, 406, "disable_ramdisk is not acceptable in this API version"},
		{"runbook old", "pa", "1.91", `{"target": "active", "runbook": "CUSTOM_RB"}`, 406, "Request not acceptable."},
		{"runbook missing", "pa", "1.115", `{"target": "active", "runbook": "CUSTOM_RB"}`, 404, "Runbook CUSTOM_RB could not be found."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("PUT", "/v1/nodes/"+c.node+"/states/provision", c.version, c.body)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			// A schema error goes on with jsonschema's detail (the
			// failing sub-schema and instance), which apiutil's
			// TestStepErrorMessages checks; its first paragraph is
			// compared here.
			got, _, _ := strings.Cut(r.faultstring(t), "\n\n")
			if got != c.fault {
				t.Errorf("faultstring\n got  %q\n want %q", got, c.fault)
			}
		})
	}
}

// A node busy in a transition (locked by a conductor) answers 409
// NodeLocked where the verb is not actionable, 400 otherwise.
func TestProvisionLockedVersusInvalid(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"driver": "fake-hardware", "name": "pk"}`)["uuid"].(string)
	n, err := e.s.GetNodeByUUID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	host := "other-conductor"
	n.Reservation = &host
	if _, err := e.s.UpdateNode(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	r := e.do("PUT", "/v1/nodes/pk/states/provision", "1.115", `{"target": "provide"}`)
	if r.status != http.StatusConflict || r.faultstring(t) != "Node "+id+" is locked by host other-conductor, please retry after the current operation is completed." {
		t.Errorf("locked: %d %s", r.status, r.body)
	}
	n.Reservation = nil
	if _, err := e.s.UpdateNode(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	r = e.do("PUT", "/v1/nodes/pk/states/provision", "1.115", `{"target": "provide"}`)
	if r.status != http.StatusBadRequest {
		t.Errorf("unlocked: %d %s", r.status, r.body)
	}
}

// Runbooks: the node must carry the runbook's name (before 1.112) or one
// of its traits (from 1.112); the runbook's steps replace clean_steps.
func TestProvisionRunbook(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"driver": "fake-hardware", "name": "rb"}`)["uuid"].(string)
	e.provision("rb", "1.115", `{"target": "manage"}`)
	e.waitState("rb", "manageable")
	ctx := context.Background()
	rb, err := e.s.CreateRunbook(ctx, &model.Runbook{Name: "CUSTOM_RB_RESET",
		Steps: []model.RunbookStep{{Interface: "bios", Step: "factory_reset", Args: map[string]any{}, Order: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := e.s.CreateRunbook(ctx, &model.Runbook{Name: "CUSTOM_RB_EMPTY",
		Steps: []model.RunbookStep{{Interface: "bios", Step: "factory_reset", Args: map[string]any{}, Order: 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.SetRunbookTraits(ctx, rb.ID, []string{"CUSTOM_RESET_OK"}, "1.0"); err != nil {
		t.Fatal(err)
	}
	cases := []check{
		{"legacy name not a trait", "PUT", "/v1/nodes/rb/states/provision", "1.92", `{"target": "clean", "runbook": "CUSTOM_RB_RESET"}`, 400,
			"This runbook has not been approved for use on this node " + id + ". Please ask an administrator to add it to your node traits."},
		{"no runbook traits", "PUT", "/v1/nodes/rb/states/provision", "1.115", `{"target": "clean", "runbook": "` + empty.UUID + `"}`, 400,
			"Runbook " + empty.UUID + " has no traits configured. Please ask an administrator to add traits to the runbook."},
		{"no matching trait", "PUT", "/v1/nodes/rb/states/provision", "1.115", `{"target": "clean", "runbook": "CUSTOM_RB_RESET"}`, 400,
			"This runbook has not been approved for use on this node " + id + ". The node does not have any of the runbook's traits ['CUSTOM_RESET_OK']. Please ask an administrator to add a matching trait to your node."},
	}
	e.run(t, cases)
	if r := e.do("PUT", "/v1/nodes/rb/traits", "1.115", `{"traits": ["CUSTOM_RESET_OK", "CUSTOM_RB_RESET"]}`); r.status != 204 {
		t.Fatalf("traits: %d %s", r.status, r.body)
	}
	e.run(t, []check{
		{"steps and runbook", "PUT", "/v1/nodes/rb/states/provision", "1.115", `{"target": "clean", "runbook": "CUSTOM_RB_RESET", "clean_steps": [{"interface": "bios", "step": "factory_reset"}]}`, 400,
			"Please provide either \"clean_steps\" or a runbook, but not both."},
		// The runbook's disable_ramdisk (false) is then checked against
		// the target, as upstream does: a 400 for any other verb.
		{"runbook on inspect", "PUT", "/v1/nodes/rb/states/provision", "1.115", `{"target": "inspect", "runbook": "CUSTOM_RB_RESET"}`, 400,
			"disable_ramdisk is supported only with manual cleaning or servicing"},
	})
	e.provision("rb", "1.92", `{"target": "clean", "runbook": "CUSTOM_RB_RESET"}`)
	e.waitState("rb", "manageable")
	e.provision("rb", "1.115", `{"target": "clean", "runbook": "`+rb.UUID+`"}`)
	e.waitState("rb", "manageable")
}

// The secondary policy checks of user steps: the owner rule of clean
// steps, then the operator's per-step rules, every refusal reported.
func TestProvisionStepPolicy(t *testing.T) {
	denied := map[string]bool{}
	e := newEnvWith(t, func(d *Deps) {
		d.Authorize = func(_ *http.Request, rule string, _ *model.Node) error {
			if denied[rule] {
				return errs.NewMessage(errs.ClassHTTPForbidden, "Access was denied to the following resource: "+rule)
			}
			return nil
		}
		d.HasRule = func(rule string) bool { return strings.HasPrefix(rule, "baremetal:step:execute:bios.") }
	})
	e.create(`{"driver": "fake-hardware", "name": "sp"}`)
	e.provision("sp", "1.115", `{"target": "manage"}`)
	e.waitState("sp", "manageable")
	steps := `{"target": "clean", "clean_steps": [{"interface": "bios", "step": "factory_reset"}, {"interface": "bios", "step": "cache_bios_settings"}, {"interface": "deploy", "step": "erase_devices"}]}`
	denied["baremetal:step:execute:bios.factory_reset"] = true
	denied["baremetal:step:execute:bios.cache_bios_settings"] = true
	r := e.do("PUT", "/v1/nodes/sp/states/provision", "1.115", steps)
	if r.status != http.StatusForbidden || r.faultstring(t) != "insufficient privileges to execute step factory_reset on interface bios; insufficient privileges to execute step cache_bios_settings on interface bios" {
		t.Errorf("step rules: %d %s", r.status, r.body)
	}
	denied["baremetal:node:set_provision_state:clean_steps"] = true
	r = e.do("PUT", "/v1/nodes/sp/states/provision", "1.115", steps)
	if r.status != http.StatusForbidden || !strings.Contains(r.faultstring(t), "set_provision_state:clean_steps") {
		t.Errorf("owner rule: %d %s", r.status, r.body)
	}
}
