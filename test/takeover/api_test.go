package takeover

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// apiVersion is Ironic 21.4's newest microversion: both services answer at
// it, so that ours shows what 21.4 showed and no field added since.
const apiVersion = "1.82"

// client speaks to one service's API.
type client struct {
	t    *testing.T
	base string
}

// do sends a request and decodes the JSON answer (nil when there is none);
// an answer with a code other than want fails the test.
func (c client) do(method, path string, body any, want int) any {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", apiVersion)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: %s, want %d\n%s", method, path, resp.Status, want, b)
	}
	if len(b) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		c.t.Fatalf("%s %s: %v\n%s", method, path, err, b)
	}
	return v
}

func (c client) get(path string) map[string]any {
	c.t.Helper()
	m, _ := c.do(http.MethodGet, path, nil, http.StatusOK).(map[string]any)
	return m
}

func (c client) create(path string, body any) string {
	c.t.Helper()
	m, _ := c.do(http.MethodPost, path, body, http.StatusCreated).(map[string]any)
	uuid, _ := m["uuid"].(string)
	if uuid == "" {
		c.t.Fatalf("POST %s answered no uuid: %v", path, m)
	}
	return uuid
}

// provision asks for a provision state change and waits for the node to
// reach want (a stable state, or a failure, which keeps its target),
// whatever it passes through.
func (c client) provision(node string, body map[string]any, want string) {
	c.t.Helper()
	c.do(http.MethodPut, "/v1/nodes/"+node+"/states/provision", body, http.StatusAccepted)
	await.UntilReason(c.t, 60*time.Second, fmt.Sprintf("node %s to reach %s", node, want), func() (bool, string) {
		n := c.get("/v1/nodes/" + node)
		return n["provision_state"] == want && (n["target_provision_state"] == nil || strings.HasSuffix(want, " failed")),
			fmt.Sprintf("%v -> %v (%v)", n["provision_state"], n["target_provision_state"], n["last_error"])
	})
}

// fill makes, through Ironic 21.4's own API, one of everything its database
// holds that our API serves, and returns the paths to read them back by.
func fill(c client) []string {
	c.t.Helper()
	chassis := c.create("/v1/chassis", map[string]any{"description": "rack 12", "extra": map[string]any{"row": "b"}})
	template := c.create("/v1/deploy_templates", map[string]any{
		"name":  "CUSTOM_HYPERTHREADING_ON",
		"extra": map[string]any{"team": "compute"},
		"steps": []any{map[string]any{"interface": "bios", "step": "apply_configuration", "priority": 150,
			"args": map[string]any{"settings": []any{map[string]any{"name": "LogicalProc", "value": "Enabled"}}}}},
	})
	node := func(name string, extra map[string]any) string {
		body := map[string]any{"name": name, "driver": "fake-hardware", "resource_class": "baremetal.gold",
			"properties":  map[string]any{"cpus": 8, "memory_mb": 16384, "local_gb": 100, "capabilities": "boot_mode:uefi"},
			"driver_info": map[string]any{"deploy_kernel": "http://images/k", "deploy_ramdisk": "http://images/r"},
		}
		for k, v := range extra {
			body[k] = v
		}
		return c.create("/v1/nodes", body)
	}
	enroll := node("n-enroll", map[string]any{"chassis_uuid": chassis, "description": "new in rack 12",
		"shard": "shard-1", "extra": map[string]any{"asset": 4711}})
	// Upstream refuses an owner on creation to a caller without a project.
	c.do(http.MethodPatch, "/v1/nodes/"+enroll, []any{
		map[string]any{"op": "add", "path": "/owner", "value": "project-a"},
		map[string]any{"op": "add", "path": "/lessee", "value": "project-b"},
	}, http.StatusOK)
	maint := node("n-maintenance", nil)
	c.do(http.MethodPut, "/v1/nodes/"+maint+"/maintenance", map[string]any{"reason": "fan 2 failed"}, http.StatusAccepted)
	manageable := node("n-manageable", nil)
	c.provision(manageable, map[string]any{"target": "manage"}, "manageable")
	cleanFailed := node("n-clean-failed", nil)
	c.provision(cleanFailed, map[string]any{"target": "manage"}, "manageable")
	// A step the driver does not have fails the cleaning and leaves a
	// history event.
	c.provision(cleanFailed, map[string]any{"target": "clean",
		"clean_steps": []any{map[string]any{"interface": "deploy", "step": "no_such_step"}}}, "clean failed")
	available := node("n-available", nil)
	c.provision(available, map[string]any{"target": "manage"}, "manageable")
	c.provision(available, map[string]any{"target": "provide"}, "available")
	c.do(http.MethodPut, "/v1/nodes/"+available+"/traits", map[string]any{"traits": []any{"CUSTOM_GOLD", "CUSTOM_RACK_12"}}, http.StatusNoContent)
	active := node("n-active", map[string]any{"instance_info": map[string]any{"image_source": "http://images/os.qcow2", "root_gb": 10}})
	c.provision(active, map[string]any{"target": "manage"}, "manageable")
	c.provision(active, map[string]any{"target": "provide"}, "available")
	c.provision(active, map[string]any{"target": "active"}, "active")
	allocated := node("n-allocated", nil)
	c.provision(allocated, map[string]any{"target": "manage"}, "manageable")
	c.provision(allocated, map[string]any{"target": "provide"}, "available")
	c.do(http.MethodPut, "/v1/nodes/"+allocated+"/traits/CUSTOM_FAST", nil, http.StatusNoContent)
	// Allocations take only nodes whose power state is known; the test
	// turns the periodic power sync off, so the power is set here.
	c.do(http.MethodPut, "/v1/nodes/"+allocated+"/states/power", map[string]any{"target": "power off"}, http.StatusAccepted)
	await.UntilReason(c.t, 60*time.Second, "node n-allocated to be powered off", func() (bool, string) {
		n := c.get("/v1/nodes/" + allocated)
		return n["power_state"] == "power off" && n["target_power_state"] == nil, fmt.Sprint(n["power_state"])
	})
	allocation := c.create("/v1/allocations", map[string]any{"name": "alloc-1", "resource_class": "baremetal.gold",
		"traits": []any{"CUSTOM_FAST"}, "extra": map[string]any{"ticket": "T-1"}})
	await.UntilReason(c.t, 60*time.Second, "allocation alloc-1 to be active", func() (bool, string) {
		a := c.get("/v1/allocations/" + allocation)
		return a["state"] == "active", fmt.Sprintf("%v (%v)", a["state"], a["last_error"])
	})

	portgroup := c.create("/v1/portgroups", map[string]any{"node_uuid": active, "name": "bond0", "address": "52:54:00:aa:00:01",
		"mode": "802.3ad", "properties": map[string]any{"miimon": "100"}, "standalone_ports_supported": true, "extra": map[string]any{"lag": 1}})
	ports := []string{
		c.create("/v1/ports", map[string]any{"node_uuid": active, "address": "52:54:00:aa:00:02", "portgroup_uuid": portgroup,
			"local_link_connection": map[string]any{"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Ethernet1/2", "switch_info": "tor-12"},
			"physical_network":      "physnet1", "pxe_enabled": true, "extra": map[string]any{"cable": "c-2"}}),
		c.create("/v1/ports", map[string]any{"node_uuid": active, "address": "52:54:00:aa:00:03", "pxe_enabled": false}),
		c.create("/v1/ports", map[string]any{"node_uuid": enroll, "address": "52:54:00:aa:00:04", "is_smartnic": false}),
	}
	connector := c.create("/v1/volume/connectors", map[string]any{"node_uuid": manageable, "type": "iqn",
		"connector_id": "iqn.2017-07.org.openstack:01:d9a51732c3f", "extra": map[string]any{"k": "v"}})
	target := c.create("/v1/volume/targets", map[string]any{"node_uuid": manageable, "volume_type": "iscsi", "boot_index": 0,
		"volume_id": "04452bed-5367-4202-8bf5-de4335ac56d2", "properties": map[string]any{"target_iqn": "iqn.2010-10.org.openstack:volume-1"}})

	paths := []string{
		"/v1/nodes?detail=True", "/v1/ports?detail=True", "/v1/portgroups?detail=True", "/v1/chassis?detail=True",
		"/v1/allocations", "/v1/deploy_templates?detail=True", "/v1/volume/connectors?detail=True",
		"/v1/volume/targets?detail=True",
		"/v1/chassis/" + chassis, "/v1/deploy_templates/" + template, "/v1/allocations/" + allocation,
		"/v1/portgroups/" + portgroup, "/v1/volume/connectors/" + connector, "/v1/volume/targets/" + target,
	}
	for _, n := range []string{enroll, maint, manageable, cleanFailed, available, active, allocated} {
		paths = append(paths, "/v1/nodes/"+n, "/v1/nodes/"+n+"/traits", "/v1/nodes/"+n+"/history", "/v1/nodes/"+n+"/states")
	}
	for _, p := range ports {
		paths = append(paths, "/v1/ports/"+p)
	}
	return paths
}

// record reads every path, with each link's address made relative to the
// service, so that two services' answers compare.
func record(c client, paths []string) map[string]any {
	c.t.Helper()
	out := map[string]any{}
	for _, p := range paths {
		out[p] = relativeLinks(c.get(p), c.base)
	}
	return out
}

func relativeLinks(v any, base string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = relativeLinks(e, base)
		}
	case []any:
		for i, e := range x {
			x[i] = relativeLinks(e, base)
		}
	case string:
		return strings.Replace(x, base, "", 1)
	}
	return v
}

// differences lists where got differs from want, by JSON path. A field of
// got that want lacks is one a newer version added, and no difference.
func differences(path string, want, got any) []string {
	wm, ok := want.(map[string]any)
	if gm, ok2 := got.(map[string]any); ok && ok2 {
		var out []string
		keys := make([]string, 0, len(wm))
		for k := range wm {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			g, present := gm[k]
			if !present {
				out = append(out, fmt.Sprintf("%s.%s: missing, upstream served %s", path, k, show(wm[k])))
				continue
			}
			out = append(out, differences(path+"."+k, wm[k], g)...)
		}
		return out
	}
	wl, ok := want.([]any)
	if gl, ok2 := got.([]any); ok && ok2 && len(wl) == len(gl) {
		var out []string
		for i := range wl {
			out = append(out, differences(fmt.Sprintf("%s[%d]", path, i), wl[i], gl[i])...)
		}
		return out
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: %s, upstream served %s", path, show(got), show(want))}
	}
	return nil
}

func show(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
