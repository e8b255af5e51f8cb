package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/testing/await"
)

const samplesDir = "ironic/api/api-ref/samples/"

// shape compares the key sets of a sample and an answer: at the top, and
// within the first object of every list of objects both hold.
func shape(t *testing.T, name string, sample, got any) {
	t.Helper()
	sm, ok1 := sample.(map[string]any)
	gm, ok2 := got.(map[string]any)
	if ok1 != ok2 {
		t.Errorf("%s: sample %T, answer %T", name, sample, got)
		return
	}
	if !ok1 {
		sl, ok1 := sample.([]any)
		gl, ok2 := got.([]any)
		if ok1 && ok2 && len(sl) > 0 && len(gl) > 0 {
			if _, isObj := sl[0].(map[string]any); isObj {
				shape(t, name+"[0]", sl[0], gl[0])
			}
		}
		return
	}
	if sk, gk := keysOf(sm), keysOf(gm); !slices.Equal(sk, gk) {
		t.Errorf("%s keys\n sample %v\n answer %v", name, sk, gk)
		return
	}
	for k, v := range sm {
		if _, isList := v.([]any); isList {
			shape(t, name+"."+k, v, gm[k])
		}
	}
}

// TestResponseSamples answers each api-ref response sample's request and
// compares the body's shape with the sample.
func TestResponseSamples(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"driver": "fake-hardware", "name": "sm"}`)["uuid"].(string)
	ctx := context.Background()
	n, err := e.s.GetNodeByUUID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	val, typ := "Enabled", "Enumeration"
	if _, err := e.s.CreateBIOSSettings(ctx, n.ID, []model.BIOSSetting{{Name: "virtualization", Value: &val, AttributeType: &typ}}, "1.1"); err != nil {
		t.Fatal(err)
	}
	cur := "v1.0.0"
	if _, err := e.s.CreateFirmwareComponent(ctx, &model.FirmwareComponent{NodeID: n.ID, Component: "BMC", InitialVersion: "v1.0.0", CurrentVersion: &cur}); err != nil {
		t.Fatal(err)
	}
	ev, sev := "Something is wrong", "ERROR"
	if _, err := e.s.CreateNodeHistory(ctx, &model.NodeHistory{NodeID: &n.ID, Event: &ev, Severity: &sev}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.CreateNodeInventory(ctx, &model.NodeInventory{NodeID: &n.ID, InventoryData: map[string]any{}, PluginData: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if r := e.do("PUT", "/v1/nodes/sm/traits", "1.115", `{"traits": ["CUSTOM_TRAIT1"]}`); r.status != 204 {
		t.Fatalf("traits: %d %s", r.status, r.body)
	}
	for _, c := range []struct{ sample, path, version string }{
		{"node-get-state-response.json", "/v1/nodes/sm/states", "1.115"},
		{"node-get-boot-device-response.json", "/v1/nodes/sm/management/boot_device", "1.115"},
		{"node-get-supported-boot-devices-response.json", "/v1/nodes/sm/management/boot_device/supported", "1.115"},
		{"node-traits-list-response.json", "/v1/nodes/sm/traits", "1.115"},
		{"node-vif-list-response.json", "/v1/nodes/sm/vifs", "1.115"},
		{"node-history-list-response.json", "/v1/nodes/sm/history", "1.115"},
		{"node-bios-list-response.json", "/v1/nodes/sm/bios", "1.73"},
		{"node-bios-list-details-response.json", "/v1/nodes/sm/bios?detail=True", "1.115"},
		{"node-bios-detail-response.json", "/v1/nodes/sm/bios/virtualization", "1.115"},
		{"node-firmware-components-list-response.json", "/v1/nodes/sm/firmware", "1.115"},
		{"node-inventory-response.json", "/v1/nodes/sm/inventory", "1.115"},
		{"node-indicators-get-state-response.json", "/v1/nodes/sm/management/indicators/led@system", "1.115"},
	} {
		t.Run(c.sample, func(t *testing.T) {
			var sample any
			spectest.LoadJSON(t, samplesDir+c.sample, &sample)
			r := e.do("GET", c.path, c.version, "")
			if r.status != http.StatusOK {
				t.Fatalf("%s: %d %s", c.path, r.status, r.body)
			}
			var got any
			if err := json.Unmarshal(r.body, &got); err != nil {
				t.Fatal(err)
			}
			shape(t, c.sample, sample, got)
		})
	}
	// The validate sample predates the firmware interface: every
	// interface it shows is answered, each as {result[, reason]}.
	var sample map[string]any
	spectest.LoadJSON(t, samplesDir+"node-validate-response.json", &sample)
	got := e.do("GET", "/v1/nodes/sm/validate", "1.115", "").json(t)
	for k := range sample {
		entry, ok := got[k].(map[string]any)
		if !ok {
			t.Errorf("validate: no %s in %v", k, got)
			continue
		}
		for ek := range entry {
			if ek != "result" && ek != "reason" {
				t.Errorf("validate %s: %v", k, entry)
			}
		}
	}
}

// TestRequestSamples sends the api-ref request samples the fake hardware
// can serve and checks they are accepted.
func TestRequestSamples(t *testing.T) {
	e := newEnv(t)
	e.create(`{"driver": "fake-hardware", "name": "rq"}`)
	for _, c := range []struct {
		sample, method, path, version string
		status                        int
		waitFor                       string
	}{
		{"node-set-manage-state.json", "PUT", "/v1/nodes/rq/states/provision", "1.115", 202, "manageable"},
		// The sample's step does not exist on fake hardware: cleaning
		// fails after the request was accepted, and the node is managed
		// again.
		{"node-set-clean-state.json", "PUT", "/v1/nodes/rq/states/provision", "1.115", 202, "clean failed"},
		{"node-set-manage-state.json", "PUT", "/v1/nodes/rq/states/provision", "1.115", 202, "manageable"},
		{"node-set-available-state.json", "PUT", "/v1/nodes/rq/states/provision", "1.115", 202, ""},
		{"node-set-power-off.json", "PUT", "/v1/nodes/rq/states/power", "1.115", 202, ""},
		{"node-set-soft-power-off.json", "PUT", "/v1/nodes/rq/states/power", "1.115", 202, ""},
		{"node-set-boot-device.json", "PUT", "/v1/nodes/rq/management/boot_device", "1.115", 204, ""},
		{"node-set-boot-mode-bios.json", "PUT", "/v1/nodes/rq/states/boot_mode", "1.115", 202, ""},
		{"node-set-boot-mode-uefi.json", "PUT", "/v1/nodes/rq/states/boot_mode", "1.115", 202, ""},
		{"node-set-secure-boot-on.json", "PUT", "/v1/nodes/rq/states/secure_boot", "1.115", 202, ""},
		{"node-set-secure-boot-off.json", "PUT", "/v1/nodes/rq/states/secure_boot", "1.115", 202, ""},
		{"node-set-raid-request.json", "PUT", "/v1/nodes/rq/states/raid", "1.115", 204, ""},
		{"node-set-traits-request.json", "PUT", "/v1/nodes/rq/traits", "1.115", 204, ""},
		{"node-vif-attach-request.json", "POST", "/v1/nodes/rq/vifs", "1.115", 204, ""},
		{"node-maintenance-request.json", "PUT", "/v1/nodes/rq/maintenance", "1.115", 202, ""},
	} {
		body := spectest.ReadFile(t, samplesDir+c.sample)
		r := e.do(c.method, c.path, c.version, string(body))
		if r.status != c.status {
			t.Fatalf("%s: %d %s", c.sample, r.status, r.body)
		}
		if c.waitFor != "" {
			e.waitState("rq", c.waitFor)
		}
		e.waitIdle("rq")
	}
}

// waitIdle waits until no conductor holds the node.
func (e *env) waitIdle(ident string) {
	e.t.Helper()
	// 2000 checks 5ms apart, as the loop this replaced.
	await.UntilReason(e.t, 10*time.Second, "node "+ident+" idle", func() (bool, string) {
		n := e.do("GET", "/v1/nodes/"+ident, "1.115", "").json(e.t)
		return n["reservation"] == nil && n["target_power_state"] == nil,
			fmt.Sprintf("node %s stays busy: %v %v", ident, n["provision_state"], n["target_provision_state"])
	})
}
