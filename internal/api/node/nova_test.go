package node

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// gzipB64 is what Nova sends as a configdrive: a gzipped, base64-encoded
// image.
func gzipB64(t *testing.T, payload string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(payload)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// waitPower polls until the node's power state is want and no power
// action is pending.
func (e *env) waitPower(ident, want string) {
	e.t.Helper()
	await.UntilReason(e.t, 10*time.Second, "node "+ident+" in "+want, func() (bool, string) {
		n := e.do("GET", "/v1/nodes/"+ident+"/states", "1.46", "").json(e.t)
		return n["power_state"] == want && n["target_power_state"] == nil,
			fmt.Sprintf("node %s: power state %v (target %v), want %s", ident, n["power_state"], n["target_power_state"], want)
	})
}

// TestNovaDeploySequence walks the Nova ironic driver's calls (seed § 4)
// through the API and the real conductor with fake-hardware: enrol,
// make available, reserve, validate, plug VIFs, deploy with a configdrive,
// power actions, tear down, unplug and release.
func TestNovaDeploySequence(t *testing.T) {
	e := newEnv(t)
	const v = "1.46"
	node := e.create(`{"driver": "fake-hardware", "name": "nova-node", "resource_class": "baremetal",
		"driver_info": {"fake_password": "bmc-secret-pw"}, "properties": {"cpus": 4, "memory_mb": 8192, "local_gb": 40}}`)
	id := node["uuid"].(string)
	e.provision(id, v, `{"target": "manage"}`)
	e.waitState(id, "manageable")
	e.provision(id, v, `{"target": "provide"}`)
	e.waitState(id, "available")

	// The resource tracker's listing.
	list := e.do("GET", "/v1/nodes?fields=uuid,power_state,target_power_state,provision_state,target_provision_state,last_error,maintenance,properties,instance_uuid,traits,resource_class&limit=1000", v, "")
	if list.status != http.StatusOK || !strings.Contains(string(list.body), id) {
		t.Fatalf("listing: %d %s", list.status, list.body)
	}

	inst := "3f0a5c8e-8a1b-4c57-9d8e-2f8b3c1d0e11"
	r := e.do("PATCH", "/v1/nodes/"+id, v, `[
		{"op": "add", "path": "/instance_uuid", "value": "`+inst+`"},
		{"op": "add", "path": "/instance_info/image_source", "value": "6b2c7e3e-3d4f-4b8a-9c1d-0e2f3a4b5c6d"},
		{"op": "add", "path": "/instance_info/root_gb", "value": "40"},
		{"op": "add", "path": "/instance_info/capabilities", "value": "{\"boot_option\": \"local\"}"},
		{"op": "add", "path": "/instance_info/image_url", "value": "http://glance.example/secret-image-url"}]`)
	if r.status != http.StatusOK {
		t.Fatalf("reserve: %d %s", r.status, r.body)
	}
	if got := r.json(t); got["instance_uuid"] != inst || got["instance_info"].(map[string]any)["image_url"] != "******" {
		t.Errorf("reserved node: %s", r.body)
	}

	val := e.do("GET", "/v1/nodes/"+id+"/validate", v, "").json(t)
	for _, iface := range []string{"boot", "deploy", "power", "management", "console", "inspect", "network", "raid", "storage"} {
		res, ok := val[iface].(map[string]any)
		if !ok {
			t.Errorf("validate: no %s in %v", iface, val)
			continue
		}
		if _, ok := res["result"]; !ok {
			t.Errorf("validate %s: %v", iface, res)
		}
	}
	for _, iface := range []string{"deploy", "power"} {
		if val[iface].(map[string]any)["result"] != true {
			t.Errorf("validate %s: %v", iface, val[iface])
		}
	}

	vif := "9d2a6c1e-5b4f-4e3a-8c7d-6f5e4d3c2b1a"
	if r := e.do("POST", "/v1/nodes/"+id+"/vifs", v, `{"id": "`+vif+`"}`); r.status != http.StatusNoContent {
		t.Fatalf("plug vif: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/nodes/"+id+"/vifs", v, ""); r.status != http.StatusOK {
		t.Fatalf("list vifs: %d %s", r.status, r.body)
	}

	cd := gzipB64(t, "nova-configdrive-secret-content")
	e.provision(id, v, `{"target": "active", "configdrive": "`+cd+`"}`)
	deployed := e.waitState(id, "active")
	if ii := deployed["instance_info"].(map[string]any); ii["configdrive"] != nil && ii["configdrive"] != "******" {
		t.Errorf("configdrive shown after deploy: %v", ii["configdrive"])
	}
	// The fake deploy never touches power: upstream leaves power_state
	// unset after a fake deployment too.
	if deployed["power_state"] != nil {
		t.Errorf("power after deploy: %v", deployed["power_state"])
	}

	for _, p := range []struct{ target, want string }{
		{"rebooting", "power on"}, {"power off", "power off"}, {"power on", "power on"},
		{"soft rebooting", "power on"}, {"soft power off", "power off"}, {"power on", "power on"},
	} {
		r := e.do("PUT", "/v1/nodes/"+id+"/states/power", v, `{"target": "`+p.target+`"}`)
		if r.status != http.StatusAccepted {
			t.Fatalf("power %s: %d %s", p.target, r.status, r.body)
		}
		e.waitPower(id, p.want)
	}
	r = e.do("PUT", "/v1/nodes/"+id+"/states/power", v, `{"target": "soft power off", "timeout": 30}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("soft power off with timeout: %d %s", r.status, r.body)
	}
	e.waitPower(id, "power off")

	// Nova rebuilds with a fresh configdrive, then tears down.
	e.provision(id, v, `{"target": "rebuild", "configdrive": "`+cd+`"}`)
	e.waitState(id, "active")
	e.provision(id, v, `{"target": "deleted"}`)
	e.waitState(id, "available")
	// Tearing down a clean node again is a 400 Nova tolerates.
	if r := e.do("PUT", "/v1/nodes/"+id+"/states/provision", v, `{"target": "deleted"}`); r.status != http.StatusBadRequest {
		t.Errorf("second tear down: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", "/v1/nodes/"+id+"/vifs/"+vif, v, ""); r.status != http.StatusNoContent {
		t.Fatalf("unplug vif: %d %s", r.status, r.body)
	}
	r = e.do("PATCH", "/v1/nodes/"+id, v, `[{"op": "remove", "path": "/instance_uuid"}, {"op": "remove", "path": "/instance_info"}]`)
	if r.status != http.StatusOK {
		t.Fatalf("release: %d %s", r.status, r.body)
	}
	if got := r.json(t); got["instance_uuid"] != nil || len(got["instance_info"].(map[string]any)) != 0 {
		t.Errorf("released node: %s", r.body)
	}
	final := e.do("GET", "/v1/nodes/"+id, "1.115", "")
	for _, secret := range []string{"bmc-secret-pw", "secret-image-url", cd, "nova-configdrive-secret-content"} {
		if strings.Contains(e.logs.String(), secret) {
			t.Errorf("log holds %q", secret)
		}
		if strings.Contains(string(final.body), secret) {
			t.Errorf("node holds %q", secret)
		}
	}
}
