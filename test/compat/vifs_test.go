package compat

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/testing/neutron"
)

// Nova's VIF calls on a node with the flat network interface and a real
// Neutron API (the fixture, reached without Keystone as a standalone
// deployment does): attach, the 409 for a VIF already attached that Nova
// handles, the 400 when no port is free, detach, and the 400 for a VIF
// not attached that Nova ignores. The port's record and the VIF list are
// read by a second client.
func TestNovaVIFs(t *testing.T) {
	const cleaning = "3f1c25a5-3a8c-4d52-8a0b-3a0e6bb3b8a1"
	fx := neutron.New(t).Network(cleaning, "cleaning")
	conf := fmt.Sprintf("[DEFAULT]\nenabled_network_interfaces = noop,flat\n"+
		"[neutron]\nauth_type = none\nendpoint_override = %s\ncleaning_network = %s\n", fx.URL(), cleaning)
	eachServer(t, conf, func(t *testing.T, s *server) { novaVIFs(t, s, fx) })
}

func novaVIFs(t *testing.T, s *server, fx *neutron.Fixture) {
	nova := newRaw(t, s.URL, "1.46")
	check := newRaw(t, s.URL, "1.109")
	// Each deployment gets its own tenant network and VIFs in the shared
	// Neutron.
	tenant, vif, spare := uuid.NewString(), uuid.NewString(), uuid.NewString()
	fx.Network(tenant, "tenant").
		Port(map[string]any{"id": vif, "network_id": tenant, "mac_address": "fa:16:3e:00:00:01"}).
		Port(map[string]any{"id": spare, "network_id": tenant, "mac_address": "fa:16:3e:00:00:02"})

	st, n, _ := check.do("POST", "/v1/nodes", map[string]any{
		"name": "vif-0", "driver": "fake-hardware", "network_interface": "flat",
		"driver_info": map[string]any{"ipmi_address": "192.168.122.1"},
	})
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, n)
	}
	node := n["uuid"].(string)
	path := "/v1/nodes/" + node
	st, port, _ := check.do("POST", "/v1/ports", map[string]any{"node_uuid": node, "address": "52:54:00:dd:00:01"})
	if st != http.StatusCreated {
		t.Fatalf("port: %d %v", st, port)
	}

	if st, b, _ := nova.do("POST", path+"/vifs", map[string]any{"id": vif}); st != http.StatusNoContent {
		t.Fatalf("attach: %d %v", st, b)
	}
	vifs := check.get(path + "/vifs")["vifs"].([]any)
	if len(vifs) != 1 || vifs[0].(map[string]any)["id"] != vif {
		t.Fatalf("vifs seen by raw client: %v", vifs)
	}
	if ii := check.get("/v1/ports/" + port["uuid"].(string))["internal_info"].(map[string]any); ii["tenant_vif_port_id"] != vif {
		t.Fatalf("port internal_info: %v", ii)
	}
	// The attach read the VIF from Neutron for its physical networks.
	read := false
	for _, r := range fx.Requests() {
		read = read || (r.Method == "GET" && strings.HasSuffix(r.Path, "/ports/"+vif))
	}
	if !read {
		t.Fatalf("no Neutron read of the VIF: %v", fx.Requests())
	}

	st, b, _ := nova.do("POST", path+"/vifs", map[string]any{"id": vif})
	if fs := faultstring(t, b); st != http.StatusConflict ||
		fs != fmt.Sprintf("Unable to attach VIF because VIF %s is already attached to Ironic Port %s", vif, port["uuid"]) {
		t.Fatalf("second attach: %d %q", st, fs)
	}
	st, b, _ = nova.do("POST", path+"/vifs", map[string]any{"id": spare})
	if fs := faultstring(t, b); st != http.StatusBadRequest || fs != fmt.Sprintf("Unable to attach VIF %s, not enough free physical ports.", spare) {
		t.Fatalf("attach without a free port: %d %q", st, fs)
	}

	if st, b, _ := nova.do("DELETE", path+"/vifs/"+vif, nil); st != http.StatusNoContent {
		t.Fatalf("detach: %d %v", st, b)
	}
	if vifs := check.get(path + "/vifs")["vifs"].([]any); len(vifs) != 0 {
		t.Fatalf("vifs after detach: %v", vifs)
	}
	st, b, _ = nova.do("DELETE", path+"/vifs/"+vif, nil)
	if fs := faultstring(t, b); st != http.StatusBadRequest || fs != fmt.Sprintf("Unable to detach VIF %s from node %s because it is not attached to it.", vif, node) {
		t.Fatalf("second detach: %d %q", st, fs)
	}
	if st, b, _ := check.do("DELETE", path, nil); st != http.StatusNoContent {
		t.Fatalf("node delete: %d %v", st, b)
	}
	t.Logf("nova VIF calls %d, raw checks %d; Neutron has served %d requests (it serves both deployments)", nova.calls.n.Load(), check.calls.n.Load(), len(fx.Requests()))
}
