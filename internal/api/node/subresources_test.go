package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/testing/await"
)

// check is one request and the status (and, for errors, faultstring) it
// must get.
type check struct {
	name, method, path, version, body string
	status                            int
	fault                             string
}

func (e *env) run(t *testing.T, cases []check) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(c.method, c.path, c.version, c.body)
			if r.status != c.status {
				t.Fatalf("%s %s at %s: status %d, want %d: %s", c.method, c.path, c.version, r.status, c.status, r.body)
			}
			if c.fault != "" {
				if got := r.faultstring(t); got != c.fault {
					t.Errorf("faultstring\n got  %q\n want %q", got, c.fault)
				}
			}
		})
	}
}

func TestTraits(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"driver": "fake-hardware", "name": "tr"}`)["uuid"].(string)
	r := e.do("PUT", "/v1/nodes/tr/traits/CUSTOM_ONE", "1.37", "")
	if r.status != http.StatusNoContent || r.header.Get("Location") != "http://127.0.0.1:6385/v1/nodes/tr/traits/CUSTOM_ONE" {
		t.Fatalf("put one: %d %v %s", r.status, r.header, r.body)
	}
	if got := e.do("GET", "/v1/nodes/tr/traits", "1.37", "").json(t)["traits"]; !slices.Equal(toStrings(got), []string{"CUSTOM_ONE"}) {
		t.Errorf("after put one: %v", got)
	}
	if r := e.do("PUT", "/v1/nodes/tr/traits", "1.115", `{"traits": ["CUSTOM_B", "HW_CPU_X86_AVX2", "CUSTOM_A"]}`); r.status != 204 || r.header.Get("Location") != "" {
		t.Fatalf("put all: %d %s", r.status, r.body)
	}
	got := toStrings(e.do("GET", "/v1/nodes/tr/traits", "1.115", "").json(t)["traits"])
	slices.Sort(got)
	if !slices.Equal(got, []string{"CUSTOM_A", "CUSTOM_B", "HW_CPU_X86_AVX2"}) {
		t.Errorf("after put all: %v", got)
	}
	if n := e.do("GET", "/v1/nodes/tr?fields=traits", "1.115", "").json(t); len(toStrings(n["traits"])) != 3 {
		t.Errorf("node traits field: %v", n)
	}
	e.run(t, []check{
		{"delete one", "DELETE", "/v1/nodes/tr/traits/CUSTOM_A", "1.115", "", 204, ""},
		{"delete missing", "DELETE", "/v1/nodes/tr/traits/CUSTOM_A", "1.115", "", 404, "Node " + id + " doesn't have a trait 'CUSTOM_A'"},
		{"bad name", "PUT", "/v1/nodes/tr/traits/bad", "1.115", "", 400, "Schema error for trait: 'bad' is not valid under any of the given schemas. Possible root cause: 'bad' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{"bad name in list", "PUT", "/v1/nodes/tr/traits", "1.115", `{"traits": ["CUSTOM_A", "lower"]}`, 400, "Schema error for body: 'lower' is not valid under any of the given schemas. Possible root cause: 'lower' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{"body with one", "PUT", "/v1/nodes/tr/traits/CUSTOM_X", "1.115", `{"a": 1}`, 400, "Schema error for body: Additional properties are not allowed ('a' was unexpected)"},
		{"both", "PUT", "/v1/nodes/tr/traits/CUSTOM_X", "1.115", `{"traits": []}`, 400, traitsUsage},
		{"neither", "PUT", "/v1/nodes/tr/traits", "1.115", "", 400, traitsUsage},
		{"too old", "GET", "/v1/nodes/tr/traits", "1.36", "", 406, "Request not acceptable."},
		{"delete all", "DELETE", "/v1/nodes/tr/traits", "1.37", "", 204, ""},
	})
	if got := e.do("GET", "/v1/nodes/tr/traits", "1.115", "").json(t)["traits"]; len(toStrings(got)) != 0 {
		t.Errorf("after delete all: %v", got)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestVIFs(t *testing.T) {
	e := newEnv(t)
	e.create(`{"driver": "fake-hardware", "name": "v1"}`)
	vif := "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	e.run(t, []check{
		{"list empty", "GET", "/v1/nodes/v1/vifs", "1.28", "", 200, ""},
		{"attach", "POST", "/v1/nodes/v1/vifs", "1.28", `{"id": "` + vif + `"}`, 204, ""},
		{"attach no id", "POST", "/v1/nodes/v1/vifs", "1.115", `{}`, 400, "Schema error for vif: 'id' is a required property"},
		{"attach bad id", "POST", "/v1/nodes/v1/vifs", "1.115", `{"id": "a b"}`, 400, "Expected UUID or name for id: a b"},
		{"attach both", "POST", "/v1/nodes/v1/vifs", "1.115", `{"id": "x", "port_uuid": "a", "portgroup_uuid": "b"}`, 400, "Cannot specify both port_uuid and portgroup_uuid"},
		{"too old", "GET", "/v1/nodes/v1/vifs", "1.27", "", 404, ""},
		{"detach", "DELETE", "/v1/nodes/v1/vifs/" + vif, "1.115", "", 204, ""},
	})
	if got := e.do("GET", "/v1/nodes/v1/vifs", "1.115", "").json(t)["vifs"]; len(got.([]any)) != 0 {
		t.Errorf("vifs: %v", got)
	}
}

func TestManagement(t *testing.T) {
	e := newEnv(t)
	mg := e.create(`{"driver": "fake-hardware", "name": "mg"}`)["uuid"].(string)
	bd := e.do("GET", "/v1/nodes/"+mg+"/management/boot_device", "1.1", "").json(t)
	if !slices.Equal(keysOf(bd), []string{"boot_device", "persistent"}) {
		t.Errorf("boot device: %v", bd)
	}
	sup := e.do("GET", "/v1/nodes/mg/management/boot_device/supported", "1.115", "").json(t)
	devs := toStrings(sup["supported_boot_devices"])
	if len(devs) == 0 {
		t.Fatalf("supported: %v", sup)
	}
	e.run(t, []check{
		{"set boot device", "PUT", "/v1/nodes/" + mg + "/management/boot_device", "1.1", `{"boot_device": "` + devs[0] + `", "persistent": true}`, 204, ""},
		{"set missing", "PUT", "/v1/nodes/mg/management/boot_device", "1.115", `{}`, 400, "Missing mandatory parameter: boot_device"},
		{"set bad persistent", "PUT", "/v1/nodes/mg/management/boot_device", "1.115", `{"boot_device": "pxe", "persistent": "x"}`, 400, "Invalid persistent: Unrecognized value 'x', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"},
		{"nmi unsupported", "PUT", "/v1/nodes/mg/management/inject_nmi", "1.29", "", 400, "Driver fake-hardware does not support inject_nmi (disabled or not implemented)."},
		{"nmi too old", "PUT", "/v1/nodes/mg/management/inject_nmi", "1.28", "", 404, ""},
		{"indicator get", "GET", "/v1/nodes/mg/management/indicators/led@system", "1.63", "", 200, ""},
		{"indicator set unsupported", "PUT", "/v1/nodes/mg/management/indicators/led@system", "1.115", `{"state": "blinking"}`, 400, "Driver fake-hardware does not support set_indicator_state (disabled or not implemented)."},
		{"indicator set missing", "PUT", "/v1/nodes/mg/management/indicators/led@system", "1.115", `{}`, 400, "Missing mandatory parameter: state"},
		{"indicator get malformed", "GET", "/v1/nodes/mg/management/indicators/led", "1.115", "", 400, `Malformed indicator name "led"`},
		{"indicator set malformed", "PUT", "/v1/nodes/mg/management/indicators/led", "1.115", `{"state": "ON"}`, 400, `Malformed indicator name "led"`},
		{"indicator set state in path", "PUT", "/v1/nodes/mg/management/indicators/led-0@chassis/OFF", "1.115", "", 400, "Driver fake-hardware does not support set_indicator_state (disabled or not implemented)."},
		{"indicator set state in path and body", "PUT", "/v1/nodes/mg/management/indicators/led-0@chassis/OFF", "1.115", `{"state": "OFF"}`, 500, ""},
		{"indicators before 1.63", "GET", "/v1/nodes/mg/management/indicators", "1.62", "", 200, ""},
	})
	// The fake management interface always reads back pxe, not
	// persistent, as upstream's does.
	if got := e.do("GET", "/v1/nodes/mg/management/boot_device", "1.115", "").json(t); got["boot_device"] != "pxe" || got["persistent"] != false {
		t.Errorf("after set: %v", got)
	}
	ind := e.do("GET", "/v1/nodes/mg/management/indicators", "1.115", "").json(t)["indicators"].([]any)
	if len(ind) != 2 {
		t.Fatalf("indicators: %v", ind)
	}
	first := ind[0].(map[string]any)
	if first["name"] != "led-0@chassis" || first["component"] != "chassis" || first["readonly"] != true ||
		!slices.Equal(keysOfOrdered(t, e, "/v1/nodes/mg/management/indicators"), []string{"name", "component", "readonly", "states", "links"}) {
		t.Errorf("indicator: %v", first)
	}
	if href := first["links"].([]any)[0].(map[string]any)["href"]; href != "http://127.0.0.1:6385/v1/nodes/mg/management/indicators/led-0@chassis" {
		t.Errorf("indicator link %v", href)
	}
}

// keysOfOrdered returns the key order of the first indicator as sent.
func keysOfOrdered(t *testing.T, e *env, path string) []string {
	t.Helper()
	body := e.do("GET", path, "1.115", "").body
	var doc struct {
		Indicators []json.RawMessage `json:"indicators"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || len(doc.Indicators) == 0 {
		t.Fatalf("indicators %s: %v", body, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(doc.Indicators[0])))
	var keys []string
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		_ = dec.Decode(&skip)
	}
	return keys
}

func TestStateSubresources(t *testing.T) {
	e := newEnv(t)
	ss := e.create(`{"driver": "fake-hardware", "name": "ss"}`)["uuid"].(string)
	con := e.do("GET", "/v1/nodes/"+ss+"/states/console", "1.1", "").json(t)
	if con["console_enabled"] != false || con["console_info"] != nil {
		t.Errorf("console: %v", con)
	}
	r := e.do("PUT", "/v1/nodes/"+ss+"/states/console", "1.1", `{"enabled": true}`)
	if r.status != 202 || r.header.Get("Location") != "http://127.0.0.1:6385/v1/nodes/"+ss+"/states/console" {
		t.Fatalf("console on: %d %s", r.status, r.body)
	}
	await.UntilReason(t, 5*time.Second, "console_enabled", func() (bool, string) {
		return e.do("GET", "/v1/nodes/ss/states/console", "1.115", "").json(t)["console_enabled"] == true, "console never enabled"
	})
	e.run(t, []check{
		{"console missing", "PUT", "/v1/nodes/ss/states/console", "1.115", `{}`, 400, "Missing mandatory parameter: enabled"},
		{"console off", "PUT", "/v1/nodes/ss/states/console", "1.115", `{"enabled": "false"}`, 202, ""},
		{"raid", "PUT", "/v1/nodes/ss/states/raid", "1.12", `{"logical_disks": [{"size_gb": 10, "raid_level": "1", "is_root_volume": true}]}`, 204, ""},
		{"raid latest", "PUT", "/v1/nodes/ss/states/raid", "1.115", `{}`, 204, ""},
		{"raid not dict", "PUT", "/v1/nodes/ss/states/raid", "1.115", `[]`, 400, "Expected types <class 'dict'> for target_raid_config: []"},
		{"raid old", "PUT", "/v1/nodes/ss/states/raid", "1.11", `{}`, 406, ""},
		{"boot mode", "PUT", "/v1/nodes/ss/states/boot_mode", "1.76", `{"target": "uefi"}`, 202, ""},
		{"boot mode bad", "PUT", "/v1/nodes/ss/states/boot_mode", "1.115", `{"target": "efi"}`, 400, "Invalid boot mode efi requested for node. Allowed boot modes are: bios, uefi"},
		{"boot mode old", "PUT", "/v1/nodes/ss/states/boot_mode", "1.75", `{"target": "uefi"}`, 404, ""},
		{"secure boot", "PUT", "/v1/nodes/ss/states/secure_boot", "1.115", `{"target": true}`, 202, ""},
		{"secure boot bad", "PUT", "/v1/nodes/ss/states/secure_boot", "1.115", `{"target": "maybe"}`, 400, "Invalid target: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"},
	})
	st := e.do("GET", "/v1/nodes/ss/states", "1.115", "").json(t)
	if tr, ok := st["target_raid_config"].(map[string]any); !ok || len(tr) != 0 {
		t.Errorf("target raid config after reset: %v", st["target_raid_config"])
	}
}

func TestHistoryInventoryBIOSFirmware(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"driver": "fake-hardware", "name": "hb"}`)["uuid"].(string)
	ctx := context.Background()
	n, err := e.s.GetNodeByUUID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 300)
	sev, typ := "ERROR", "deployment"
	var uuids []string
	for i := 0; i < 3; i++ {
		ev := long
		if i > 0 {
			ev = "short event"
		}
		h, err := e.s.CreateNodeHistory(ctx, &model.NodeHistory{NodeID: &n.ID, Event: &ev, Severity: &sev, EventType: &typ})
		if err != nil {
			t.Fatal(err)
		}
		uuids = append(uuids, h.UUID)
	}
	hist := e.do("GET", "/v1/nodes/hb/history?limit=2", "1.78", "").json(t)
	items := hist["history"].([]any)
	if len(items) != 2 {
		t.Fatalf("history: %v", hist)
	}
	first := items[0].(map[string]any)
	if !slices.Equal(keysOf(first), []string{"created_at", "event", "links", "severity", "uuid"}) || len([]rune(first["event"].(string))) != 254 || !strings.HasSuffix(first["event"].(string), "...") {
		t.Errorf("history item: %v", first)
	}
	if next, _ := hist["next"].(string); !strings.HasPrefix(next, "http://127.0.0.1:6385/v1/nodes/hb/history?marker=None&sort_key=created_at&sort_dir=asc&fields=uuid,created_at,severity,event&limit=2&marker=") {
		t.Errorf("next = %q", next)
	}
	one := e.do("GET", "/v1/nodes/hb/history/"+uuids[0], "1.78", "").json(t)
	if !slices.Equal(keysOf(one), []string{"conductor", "created_at", "event", "event_type", "links", "severity", "user", "uuid"}) || one["event"] != long {
		t.Errorf("history 1.78: %v", keysOf(one))
	}
	one = e.do("GET", "/v1/nodes/hb/history/"+uuids[0], "1.115", "").json(t)
	if !slices.Equal(keysOf(one), []string{"conductor", "created_at", "duration_seconds", "event", "event_type", "links", "project", "severity", "state", "target_provision_state", "user", "uuid"}) {
		t.Errorf("history 1.115: %v", keysOf(one))
	}
	e.run(t, []check{
		{"history missing", "GET", "/v1/nodes/hb/history/1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "1.115", "", 404, "Node history record 1be26c0b-03f2-4d2e-ae87-c02d7f33c123 could not be found."},
		{"history old", "GET", "/v1/nodes/hb/history", "1.77", "", 404, ""},
		{"history detail", "GET", "/v1/nodes/hb/history?detail=True", "1.115", "", 200, ""},
		{"inventory missing", "GET", "/v1/nodes/hb/inventory", "1.81", "", 404, "Node inventory record for node " + strconv.FormatInt(n.ID, 10) + " could not be found."},
		{"inventory old", "GET", "/v1/nodes/hb/inventory", "1.80", "", 404, ""},
		{"bios", "GET", "/v1/nodes/hb/bios", "1.40", "", 200, ""},
		{"bios missing", "GET", "/v1/nodes/hb/bios/nope", "1.115", "", 404, "Node " + id + " doesn't have a BIOS setting 'nope'"},
		{"bios detail old", "GET", "/v1/nodes/hb/bios?detail=True", "1.73", "", 400, "Schema error: Additional properties are not allowed ('detail' was unexpected)"},
		{"bios fields old", "GET", "/v1/nodes/hb/bios?fields=name", "1.73", "", 400, "Schema error: Additional properties are not allowed ('fields' was unexpected)"},
		{"bios bad field", "GET", "/v1/nodes/hb/bios?fields=name,bogus", "1.115", "", 400, "Schema error: 'bogus' is not one of ['allowable_values', 'attribute_type', 'created_at', 'lower_bound', 'links', 'max_length', 'min_length', 'name', 'node_uuid', 'read_only', 'reset_required', 'unique', 'updated_at', 'value']"},
		{"bios unexpected", "GET", "/v1/nodes/hb/bios?foo=1", "1.115", "", 400, "Unexpected arguments: foo"},
		{"bios one query", "GET", "/v1/nodes/hb/bios/nope?foo=1", "1.115", "", 400, "Schema error: Additional properties are not allowed ('foo' was unexpected)"},
		{"firmware detail", "GET", "/v1/nodes/hb/firmware?detail=True", "1.115", "", 400, "Schema error: 'True' is not of type 'boolean'"},
		{"firmware bad field", "GET", "/v1/nodes/hb/firmware?fields=bogus", "1.115", "", 400, ""},
		{"bios old", "GET", "/v1/nodes/hb/bios", "1.39", "", 404, ""},
		{"firmware", "GET", "/v1/nodes/hb/firmware", "1.86", "", 200, ""},
		{"firmware identity old", "GET", "/v1/nodes/hb/firmware?fields=component,vendor", "1.113", "", 400, "Fields vendor are not allowed in this API version. They require at least API version 1.114."},
		{"firmware old", "GET", "/v1/nodes/hb/firmware", "1.85", "", 404, ""},
	})
	if _, err := e.s.CreateNodeInventory(ctx, &model.NodeInventory{NodeID: &n.ID,
		InventoryData: map[string]any{"cpu": map[string]any{"count": 4}}, PluginData: map[string]any{"root_disk": "sda"}}); err != nil {
		t.Fatal(err)
	}
	inv := e.do("GET", "/v1/nodes/hb/inventory", "1.115", "").json(t)
	if !slices.Equal(keysOf(inv), []string{"inventory", "plugin_data"}) || inv["plugin_data"].(map[string]any)["root_disk"] != "sda" {
		t.Errorf("inventory: %v", inv)
	}
	val, typ2 := "Enabled", "Enumeration"
	if _, err := e.s.CreateBIOSSettings(ctx, n.ID, []model.BIOSSetting{{Name: "ProcVirtualization", Value: &val, AttributeType: &typ2, AllowableValues: []string{"Enabled", "Disabled"}}}, "1.1"); err != nil {
		t.Fatal(err)
	}
	bios := e.do("GET", "/v1/nodes/hb/bios", "1.40", "").json(t)["bios"].([]any)
	if len(bios) != 1 || !slices.Equal(keysOf(bios[0].(map[string]any)), []string{"created_at", "links", "name", "updated_at", "value"}) {
		t.Errorf("bios 1.40: %v", bios)
	}
	b := e.do("GET", "/v1/nodes/hb/bios?detail=True", "1.115", "").json(t)["bios"].([]any)[0].(map[string]any)
	if len(keysOf(b)) != 14 || b["attribute_type"] != "Enumeration" || b["allowable_values"].([]any)[1] != "Disabled" {
		t.Errorf("bios detail: %v", b)
	}
	one = e.do("GET", "/v1/nodes/hb/bios/ProcVirtualization", "1.115", "").json(t)
	if s, ok := one["ProcVirtualization"].(map[string]any); !ok || s["value"] != "Enabled" {
		t.Errorf("bios one: %v", one)
	}
	old := e.do("GET", "/v1/nodes/hb/bios/ProcVirtualization", "1.73", "").json(t)["ProcVirtualization"].(map[string]any)
	if !slices.Equal(keysOf(old), []string{"created_at", "links", "name", "updated_at", "value"}) {
		t.Errorf("bios one at 1.73: %v", old)
	}
	cur := "1.0"
	if _, err := e.s.CreateFirmwareComponent(ctx, &model.FirmwareComponent{NodeID: n.ID, Component: "bios", InitialVersion: "0.9", CurrentVersion: &cur}); err != nil {
		t.Fatal(err)
	}
	fw := e.do("GET", "/v1/nodes/hb/firmware", "1.86", "").json(t)["firmware"].([]any)
	if len(fw) != 1 || !slices.Equal(keysOf(fw[0].(map[string]any)), []string{"component", "created_at", "current_version", "initial_version", "last_version_flashed", "updated_at"}) {
		t.Errorf("firmware 1.86: %v", fw)
	}
	fw = e.do("GET", "/v1/nodes/hb/firmware", "1.115", "").json(t)["firmware"].([]any)
	if len(keysOf(fw[0].(map[string]any))) != 9 {
		t.Errorf("firmware 1.115: %v", fw)
	}
}

func TestChildrenAndVendor(t *testing.T) {
	e := newEnv(t)
	parent := e.create(`{"driver": "fake-hardware", "name": "parent"}`)["uuid"].(string)
	child := e.create(`{"driver": "fake-hardware", "name": "child", "parent_node": "parent"}`)["uuid"].(string)
	ch := e.do("GET", "/v1/nodes/parent/children", "1.83", "").json(t)
	if !slices.Equal(toStrings(ch["children"]), []string{child}) ||
		ch["links"].(map[string]any)["href"] != "http://127.0.0.1:6385/v1/nodes?parent_node="+parent {
		t.Errorf("children: %v", ch)
	}
	methods := e.do("GET", "/v1/nodes/parent/vendor_passthru/methods", "1.115", "").json(t)
	if len(methods) == 0 {
		t.Fatalf("vendor methods: %v", methods)
	}
	e.run(t, []check{
		{"children old", "GET", "/v1/nodes/parent/children", "1.82", "", 404, ""},
		{"vendor no method", "POST", "/v1/nodes/parent/vendor_passthru", "1.115", `{}`, 400, "Missing mandatory parameter: method"},
	})
	for name, meta := range methods {
		m := meta.(map[string]any)
		r := e.do("POST", "/v1/nodes/"+parent+"/vendor_passthru?method="+name, "1.1", `{"bar": "x"}`)
		want := http.StatusOK
		if m["async"] == true {
			want = http.StatusAccepted
		}
		if r.status != want && r.status != http.StatusBadRequest {
			t.Errorf("vendor %s: %d %s", name, r.status, r.body)
		}
	}
}

func TestVmedia(t *testing.T) {
	e := newEnv(t)
	e.create(`{"driver": "fake-hardware", "name": "vm"}`)
	e.run(t, []check{
		{"attach bad scheme", "POST", "/v1/nodes/vm/vmedia", "1.115", `{"device_type": "cdrom", "image_url": "ftp://img/x.iso"}`, 400, "Unsupported or missing URL scheme: ftp"},
		{"attach no scheme", "POST", "/v1/nodes/vm/vmedia", "1.115", `{"device_type": "cdrom", "image_url": "x.iso"}`, 400, "Unsupported or missing URL scheme: "},
		{"attach bad device", "POST", "/v1/nodes/vm/vmedia", "1.115", `{"device_type": "CDROM", "image_url": "http://img/x.iso"}`, 400, "Schema error for vmedia: 'CDROM' is not one of ['disk', 'cdrom', 'floppy']"},
		{"attach missing url", "POST", "/v1/nodes/vm/vmedia", "1.115", `{"device_type": "cdrom"}`, 400, "Schema error for vmedia: 'image_url' is a required property"},
		{"detach bad type", "DELETE", "/v1/nodes/vm/vmedia?device_types=cdrom,tape", "1.115", "", 400, "Invalid device type(s) tape (valid are disk, cdrom, floppy)"},
		{"attach old", "POST", "/v1/nodes/vm/vmedia", "1.88", `{"device_type": "cdrom", "image_url": "http://img/x.iso"}`, 404, ""},
		{"get old", "GET", "/v1/nodes/vm/vmedia", "1.92", "", 404, ""},
	})
	// Fake hardware has no virtual media. Reading it is refused at once;
	// attach and detach are accepted and fail in the conductor's worker,
	// which records why in last_error, as upstream's spawn_after does.
	r := e.do("GET", "/v1/nodes/vm/vmedia", "1.93", "")
	if r.status != http.StatusBadRequest || r.faultstring(t) != "Driver fake-hardware does not support get_virtual_media (disabled or not implemented)." {
		t.Errorf("GET vmedia: %d %s", r.status, r.body)
	}
	uuid := e.do("GET", "/v1/nodes/vm", "1.115", "").json(t)["uuid"].(string)
	for _, c := range []struct{ method, version, body, lastError string }{
		{"POST", "1.89", `{"device_type": "cdrom", "image_url": "http://127.0.0.1:9/x.iso"}`,
			"Could not attach device cdrom to node " + uuid + ": Publishing images is not supported for driver fake-hardware"},
		{"DELETE", "1.115", "", "Could not detach device(s) None from node " + uuid + ": Driver fake-hardware does not support detach_virtual_media (disabled or not implemented)."},
	} {
		if r := e.do(c.method, "/v1/nodes/vm/vmedia", c.version, c.body); r.status != http.StatusNoContent {
			t.Fatalf("%s vmedia: %d %s", c.method, r.status, r.body)
		}
		await.UntilReason(t, 10*time.Second, c.method+" vmedia's last_error", func() (bool, string) {
			n := e.do("GET", "/v1/nodes/vm", "1.115", "").json(t)
			return n["last_error"] == c.lastError && n["reservation"] == nil,
				fmt.Sprintf("%s vmedia: last_error %v, want %q", c.method, n["last_error"], c.lastError)
		})
	}
}

// TestQuerySchemasMatchSpec checks the embedded query schemas of the node
// sub-resources against upstream's.
func TestQuerySchemasMatchSpec(t *testing.T) {
	for name, rel := range map[string]string{
		"bios_index_request_query":     "ironic/api/schemas/v1/bios/index_request_query.json",
		"bios_index_request_query_v74": "ironic/api/schemas/v1/bios/index_request_query_v74.json",
		"bios_show_request_query":      "ironic/api/schemas/v1/bios/show_request_query.json",
		"firmware_index_request_query": "ironic/api/schemas/v1/firmware/index_request_query.json",
	} {
		var want any
		spectest.LoadJSON(t, rel, &want)
		got, err := apiutil.SchemaDocument(name)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normalizeJSON(t, got), normalizeJSON(t, want)) {
			t.Errorf("embedded schema %s differs from %s", name, rel)
		}
	}
}

// normalizeJSON round-trips v through encoding/json so numbers compare
// alike.
func normalizeJSON(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
