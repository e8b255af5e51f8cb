package compat

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// configdrive is a gzipped, base64-encoded image, the form Nova sends.
const configdrive = "H4sIAAAAAAAAA+3BAQ0AAADCoPdPbQ43oAAAAAAAAAAAAAAAAAAAAAAAAAAA"

// novaFields is the field list Nova's ironic driver asks for when it
// lists nodes.
var novaFields = []string{"uuid", "power_state", "target_power_state", "provision_state",
	"target_provision_state", "last_error", "maintenance", "properties", "instance_uuid",
	"traits", "resource_class"}

// Nova's ironic driver call sequence replayed as raw HTTP at its minimum
// microversion 1.46: list with its fields, reserve the node, patch
// instance_info, validate, deploy with a configdrive, power, VIFs, rescue,
// rebuild, console, boot-from-volume targets, tear down. A second client
// checks the results. The conductor serves a conductor group, as the one a
// nova-compute service is configured for.
func TestNovaCallSequence(t *testing.T) {
	eachServer(t, "[conductor]\nconductor_group = rack1\n", novaCallSequence)
}

func novaCallSequence(t *testing.T, s *server) {
	nova := newRaw(t, s.URL, "1.46")
	check := newRaw(t, s.URL, "1.115")

	st, n, _ := nova.do("POST", "/v1/nodes", map[string]any{
		"name": "nova-0", "driver": "fake-hardware", "resource_class": "baremetal",
		"rescue_interface": "fake", "console_interface": "fake", "conductor_group": "Rack1",
		"driver_info": map[string]any{"ipmi_address": "192.168.122.1"},
		"properties":  map[string]any{"cpu_arch": "x86_64"},
	})
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, n)
	}
	uuid := n["uuid"].(string)
	path := "/v1/nodes/" + uuid
	provisionRaw(t, nova, check, uuid, map[string]any{"target": "manage"}, "manageable")
	provisionRaw(t, nova, check, uuid, map[string]any{"target": "provide"}, "available")
	if st, b, _ := nova.do("PUT", path+"/states/power", map[string]any{"target": "power off"}); st != http.StatusAccepted {
		t.Fatalf("power off: %d %v", st, b)
	}
	waitField(t, check, path, "power_state", "power off")

	// Groups are case-insensitive: upstream keeps them lower case.
	if g := check.get(path)["conductor_group"]; g != "rack1" {
		t.Fatalf("conductor_group: %v", g)
	}
	// Shards (1.82) are the operator's to set; Nova filters on them
	// once the SDK negotiates past 1.82.
	if st, b, _ := check.do("PATCH", path, []map[string]any{{"op": "add", "path": "/shard", "value": "s1"}}); st != http.StatusOK {
		t.Fatalf("shard: %d %v", st, b)
	}
	const sdkMax = "1.109"
	fields := "/v1/nodes?fields=" + strings.Join(novaFields, ",")
	for _, q := range []struct {
		version, filter string
		want            int
	}{
		{"1.46", "&conductor_group=rack1", 1},
		{"1.46", "&conductor_group=rack2", 0},
		{sdkMax, "&conductor_group=rack1&shard=s1", 1},
		{sdkMax, "&shard=s2", 0},
		{sdkMax, "&instance_uuid=3a6a9fe2-0000-4000-8000-000000000001", 0},
	} {
		if got := newRaw(t, s.URL, q.version).get(fields + q.filter)["nodes"].([]any); len(got) != q.want {
			t.Fatalf("list at %s with %s: %d nodes, want %d", q.version, q.filter, len(got), q.want)
		}
	}
	// Shard filters are newer than Nova's minimum: upstream's 406.
	st, b, _ := nova.do("GET", fields+"&shard=s1", nil)
	if fs := faultstring(t, b); st != http.StatusNotAcceptable || fs != "Request not acceptable. The minimal required API version should be 1.82" {
		t.Fatalf("shard filter at 1.46: want 406, got %d %q", st, fs)
	}

	// The node list with Nova's fields, at 1.46 and at the SDK's maximum.
	for _, v := range []string{"1.46", sdkMax} {
		lister := newRaw(t, s.URL, v)
		list := lister.get(fields + "&resource_class=baremetal")
		items := list["nodes"].([]any)
		if len(items) != 1 {
			t.Fatalf("list at %s: %v", v, list)
		}
		item := items[0].(map[string]any)
		for _, f := range novaFields {
			if _, ok := item[f]; !ok {
				t.Fatalf("list at %s lacks %s: %v", v, f, item)
			}
		}
		for k := range item {
			if !slices.Contains(novaFields, k) && k != "links" {
				t.Fatalf("list at %s has unrequested field %s: %v", v, k, item)
			}
		}
	}

	// Reservation: a second instance gets 409, the first keeps the node.
	inst1, inst2 := "3a6a9fe2-0000-4000-8000-000000000001", "3a6a9fe2-0000-4000-8000-000000000002"
	if st, b, _ := nova.do("PATCH", path, []map[string]any{{"op": "add", "path": "/instance_uuid", "value": inst1}}); st != http.StatusOK {
		t.Fatalf("reserve: %d %v", st, b)
	}
	st, b, _ = nova.do("PATCH", path, []map[string]any{{"op": "add", "path": "/instance_uuid", "value": inst2}})
	if st != http.StatusConflict {
		t.Fatalf("second reservation: want 409, got %d %v", st, b)
	}
	if fs := faultstring(t, b); fs != fmt.Sprintf("Node %s is associated with instance %s.", uuid, inst1) {
		t.Fatalf("second reservation faultstring: %q", fs)
	}
	if got := check.get(path)["instance_uuid"]; got != inst1 {
		t.Fatalf("instance_uuid: %v", got)
	}
	list := check.get("/v1/nodes?instance_uuid=" + inst1)["nodes"].([]any)
	if len(list) != 1 {
		t.Fatalf("list by instance_uuid: %v", list)
	}

	// instance_info patches, free-form values included; instance traits
	// must be a subset of the node's (deploy validation says so).
	if st, b, _ := check.do("PUT", path+"/traits", map[string]any{"traits": []string{"CUSTOM_X"}}); st != http.StatusNoContent {
		t.Fatalf("node traits: %d %v", st, b)
	}
	patch := []map[string]any{
		{"op": "add", "path": "/instance_info/image_source", "value": "http://127.0.0.1/image.qcow2"},
		{"op": "add", "path": "/instance_info/root_gb", "value": "10"},
		{"op": "add", "path": "/instance_info/swap_mb", "value": "0"},
		{"op": "add", "path": "/instance_info/capabilities", "value": `{"boot_mode": "uefi"}`},
		{"op": "add", "path": "/instance_info/traits", "value": []string{"CUSTOM_X"}},
	}
	if st, b, _ := nova.do("PATCH", path, patch); st != http.StatusOK {
		t.Fatalf("instance_info patch: %d %v", st, b)
	}
	ii := check.get(path)["instance_info"].(map[string]any)
	if ii["root_gb"] != "10" || ii["capabilities"] != `{"boot_mode": "uefi"}` || ii["image_source"] != "http://127.0.0.1/image.qcow2" {
		t.Fatalf("instance_info: %v", ii)
	}

	v := nova.get(path + "/validate")
	for _, iface := range []string{"deploy", "power", "boot", "management"} {
		r, _ := v[iface].(map[string]any)
		if r == nil || r["result"] != true {
			t.Fatalf("validate %s: %v", iface, v)
		}
	}

	// Boot from volume: the operator enrolled the node's connector; Nova
	// reads the connectors and records the volume's target.
	const iqn = "iqn.2010-10.org.openstack:nova-0"
	if st, b, _ := check.do("POST", "/v1/volume/connectors", map[string]any{"node_uuid": uuid, "type": "iqn", "connector_id": iqn}); st != http.StatusCreated {
		t.Fatalf("volume connector: %d %v", st, b)
	}
	conns := nova.get("/v1/volume/connectors?detail=True&node=" + uuid)["connectors"].([]any)
	if len(conns) != 1 || conns[0].(map[string]any)["connector_id"] != iqn || conns[0].(map[string]any)["type"] != "iqn" {
		t.Fatalf("volume connectors: %v", conns)
	}
	st, vt, _ := nova.do("POST", "/v1/volume/targets", map[string]any{
		"node_uuid": uuid, "volume_type": "iscsi", "boot_index": 0, "volume_id": "04452bed-5367-4202-8bf5-de4335ac56d2",
		"properties": map[string]any{"target_iqn": "iqn.2010-10.org.openstack:volume-1", "target_lun": 0, "target_portal": "192.0.2.20:3260"},
	})
	if st != http.StatusCreated {
		t.Fatalf("volume target: %d %v", st, vt)
	}
	// A second target at the same boot index is refused: Nova fails the
	// deploy on this 409.
	st, b, _ = nova.do("POST", "/v1/volume/targets", map[string]any{
		"node_uuid": uuid, "volume_type": "iscsi", "boot_index": 0, "volume_id": "04452bed-5367-4202-8bf5-de4335ac56d3",
	})
	if st != http.StatusConflict {
		t.Fatalf("second target at boot index 0: want 409, got %d %v", st, b)
	}
	if got := check.get("/v1/nodes/" + uuid + "/volume/targets?detail=True")["targets"].([]any); len(got) != 1 || got[0].(map[string]any)["uuid"] != vt["uuid"] {
		t.Fatalf("volume targets seen by raw client: %v", got)
	}

	// VIFs before deploy (noop network keeps no record, as upstream's).
	if st, b, _ := nova.do("POST", path+"/vifs", map[string]any{"id": "port-1"}); st != http.StatusNoContent {
		t.Fatalf("vif attach: %d %v", st, b)
	}

	provisionRaw(t, nova, check, uuid, map[string]any{"target": "active", "configdrive": configdrive}, "active")

	for _, target := range []string{"power on", "rebooting", "power off", "power on"} {
		if st, b, _ := nova.do("PUT", path+"/states/power", map[string]any{"target": target}); st != http.StatusAccepted {
			t.Fatalf("power %s: %d %v", target, st, b)
		}
		want := target
		if target == "rebooting" {
			want = "power on"
		}
		waitField(t, check, path, "target_power_state", nil)
		if got := check.get(path)["power_state"]; got != want {
			t.Fatalf("after %s: power_state %v", target, got)
		}
	}

	// Soft reboot and soft power off (1.27, with a timeout): the fake
	// power interface supports both, ending on and off.
	for _, p := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"target": "soft rebooting"}, "power on"},
		{map[string]any{"target": "soft power off", "timeout": 30}, "power off"},
		{map[string]any{"target": "power on"}, "power on"},
	} {
		if st, b, _ := nova.do("PUT", path+"/states/power", p.body); st != http.StatusAccepted {
			t.Fatalf("power %v: %d %v", p.body, st, b)
		}
		waitField(t, check, path, "target_power_state", nil)
		if got := check.get(path)["power_state"]; got != p.want {
			t.Fatalf("after %v: power_state %v", p.body["target"], got)
		}
	}
	// A timeout must be a positive integer.
	st, b, _ = nova.do("PUT", path+"/states/power", map[string]any{"target": "soft power off", "timeout": 0})
	if fs := faultstring(t, b); st != http.StatusBadRequest || fs != "timeout has to be positive integer" {
		t.Fatalf("soft power off timeout 0: %d %q", st, fs)
	}

	// The serial console: Nova resets it, enabling it again, and waits
	// for console_enabled before reading console_info.
	if c := nova.get(path + "/states/console"); c["console_enabled"] != false || c["console_info"] != nil {
		t.Fatalf("console before enabling: %v", c)
	}
	for _, enabled := range []bool{true, false, true} {
		if st, b, _ := nova.do("PUT", path+"/states/console", map[string]any{"enabled": enabled}); st != http.StatusAccepted {
			t.Fatalf("console enabled=%v: %d %v", enabled, st, b)
		}
		waitField(t, check, path, "console_enabled", enabled)
	}
	if c := nova.get(path + "/states/console"); c["console_enabled"] != true || fmt.Sprint(c["console_info"]) != "map[]" {
		t.Fatalf("console after enabling: %v", c)
	}
	if st, b, _ := nova.do("PUT", path+"/states/console", map[string]any{"enabled": false}); st != http.StatusAccepted {
		t.Fatalf("console disable: %d %v", st, b)
	}
	waitField(t, check, path, "console_enabled", false)

	// Rebuild with a new configdrive, as nova rebuild does.
	provisionRaw(t, nova, check, uuid, map[string]any{"target": "rebuild", "configdrive": configdrive}, "active")

	// Rescue (1.38) and unrescue.
	provisionRaw(t, nova, check, uuid, map[string]any{"target": "rescue", "rescue_password": "pw"}, "rescue")
	provisionRaw(t, nova, check, uuid, map[string]any{"target": "unrescue"}, "active")

	if st, b, _ := nova.do("DELETE", path+"/vifs/port-1", nil); st != http.StatusNoContent {
		t.Fatalf("vif detach: %d %v", st, b)
	}
	provisionRaw(t, nova, check, uuid, map[string]any{"target": "deleted"}, "available")
	// Nova drops the volume targets it made. An available node still
	// powered on keeps them (Nova logs the refusal and goes on); once off
	// they go.
	targets := nova.get("/v1/volume/targets?detail=True&node=" + uuid)["targets"].([]any)
	if len(targets) != 1 {
		t.Fatalf("volume targets: %v", targets)
	}
	target := "/v1/volume/targets/" + targets[0].(map[string]any)["uuid"].(string)
	st, b, _ = nova.do("DELETE", target, nil)
	if fs := faultstring(t, b); st != http.StatusBadRequest ||
		fs != fmt.Sprintf(`The requested action "volume target deletion" can not be performed on node "%s" while it is in state "power on".`, uuid) {
		t.Fatalf("volume target deletion while powered on: %d %q", st, fs)
	}
	if st, b, _ := nova.do("PUT", path+"/states/power", map[string]any{"target": "power off"}); st != http.StatusAccepted {
		t.Fatalf("power off: %d %v", st, b)
	}
	waitField(t, check, path, "power_state", "power off")
	waitField(t, check, path, "reservation", nil)
	if st, b, _ := nova.do("DELETE", target, nil); st != http.StatusNoContent {
		t.Fatalf("delete volume target: %d %v", st, b)
	}
	if got := check.get("/v1/volume/targets?node=" + uuid)["targets"].([]any); len(got) != 0 {
		t.Fatalf("volume targets after tear down: %v", got)
	}
	// Tearing down an already clean node: 400, which Nova tolerates.
	st, b, _ = nova.do("PUT", path+"/states/provision", map[string]any{"target": "deleted"})
	if st != http.StatusBadRequest {
		t.Fatalf("second tear down: want 400, got %d %v", st, b)
	}
	if fs := faultstring(t, b); fs != fmt.Sprintf(`The requested action "deleted" can not be performed on node "%s" while it is in state "available".`, uuid) {
		t.Fatalf("second tear down faultstring: %q", fs)
	}
	// Nova clears instance_uuid and instance_info after tear down.
	if st, b, _ := nova.do("PATCH", path, []map[string]any{{"op": "remove", "path": "/instance_uuid"}, {"op": "remove", "path": "/instance_info"}}); st != http.StatusOK {
		t.Fatalf("unreserve: %d %v", st, b)
	}
	if got := check.get(path); got["instance_uuid"] != nil || len(got["instance_info"].(map[string]any)) != 0 {
		t.Fatalf("after unreserve: %v %v", got["instance_uuid"], got["instance_info"])
	}
	t.Logf("nova sequence made %d calls, checks %d", nova.calls.n.Load(), check.calls.n.Load())
}

func provisionRaw(t *testing.T, c, check *raw, uuid string, body map[string]any, want string) {
	t.Helper()
	if st, b, _ := c.do("PUT", "/v1/nodes/"+uuid+"/states/provision", body); st != http.StatusAccepted {
		t.Fatalf("provision %v: %d %v", body["target"], st, b)
	}
	waitField(t, check, "/v1/nodes/"+uuid, "provision_state", want)
	// The state is saved before the worker lets go of the node: the next
	// request would meet NodeLocked (409, which Nova retries).
	waitField(t, check, "/v1/nodes/"+uuid, "reservation", nil)
	if n := check.get("/v1/nodes/" + uuid); n["last_error"] != nil || n["target_provision_state"] != nil {
		t.Fatalf("after %v: last_error %v target %v", body["target"], n["last_error"], n["target_provision_state"])
	}
}

func waitField(t *testing.T, check *raw, path, field string, want any) {
	t.Helper()
	await.UntilReason(t, 30*time.Second, fmt.Sprintf("%s %s = %v", path, field, want), func() (bool, string) {
		got := check.get(path)[field]
		return got == want, fmt.Sprint(got)
	})
}
