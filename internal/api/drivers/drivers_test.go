package drivers

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/spectest"
)

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestListAndShow(t *testing.T) {
	e := newEnv(t, nil)
	r := e.do("GET", "/v1/drivers", "1.1", "")
	if r.status != 200 || string(r.body) != `{"drivers": [{"name": "fake-hardware", "hosts": ["test-host"], "links": [{"href": "http://127.0.0.1:6385/v1/drivers/fake-hardware", "rel": "self"}, {"href": "http://127.0.0.1:6385/drivers/fake-hardware", "rel": "bookmark"}]}]}` {
		t.Fatalf("1.1: %d %s", r.status, r.body)
	}
	r = e.do("GET", "/v1/drivers?detail=true", "1.115", "")
	d := r.json(t)["drivers"].([]any)[0].(map[string]any)
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/driver-get-response.json", &sample)
	// The sample misspells enabled_firmware_interfaces; upstream's code
	// writes the plural like every other kind.
	delete(sample, "enabled_firmware_interface")
	sample["enabled_firmware_interfaces"] = nil
	if !slices.Equal(keys(d), keys(sample)) {
		t.Fatalf("detail keys %v\nsample %v", keys(d), keys(sample))
	}
	if d["default_power_interface"] != "fake" || d["type"] != "dynamic" {
		t.Fatalf("detail %v", d)
	}
	one := e.do("GET", "/v1/drivers/fake-hardware", "1.39", "").json(t)
	for _, k := range []string{"default_bios_interface", "enabled_firmware_interfaces"} {
		if _, ok := one[k]; ok {
			t.Fatalf("%s shown at 1.39", k)
		}
	}
	if _, ok := one["default_rescue_interface"]; !ok {
		t.Fatalf("rescue hidden at 1.39: %v", one)
	}
	f := e.do("GET", "/v1/drivers/fake-hardware?fields=name,enabled_power_interfaces", "1.77", "")
	if f.status != 200 || !slices.Equal(keys(f.json(t)), []string{"enabled_power_interfaces", "links", "name"}) {
		t.Fatalf("fields: %d %s", f.status, f.body)
	}
	if got := e.do("GET", "/v1/drivers?type=classic", "1.30", "").json(t)["drivers"].([]any); len(got) != 0 {
		t.Fatalf("classic %v", got)
	}
}

func TestPropertiesAndPassthru(t *testing.T) {
	e := newEnv(t, nil)
	r := e.do("GET", "/v1/drivers/fake-hardware/properties", "1.1", "")
	if r.status != 200 || len(r.json(t)) == 0 {
		t.Fatalf("properties: %d %s", r.status, r.body)
	}
	r = e.do("GET", "/v1/drivers/fake-hardware/vendor_passthru/methods", "1.1", "")
	if r.status != 200 {
		t.Fatalf("methods: %d %s", r.status, r.body)
	}
	methods := r.json(t)
	for name := range methods {
		r := e.do("POST", "/v1/drivers/fake-hardware/vendor_passthru/"+name, "1.115", `{}`)
		if r.status >= 500 {
			t.Fatalf("passthru %s: %d %s", name, r.status, r.body)
		}
	}
	wantFault(t, e.do("POST", "/v1/drivers/fake-hardware/vendor_passthru?method=nope", "1.115", `{}`), 400, "No handler for method nope")
	// Observed from upstream 21.4: without ?method= wsme refuses the
	// missing argument; an empty one reaches the method's own check.
	wantFault(t, e.do("POST", "/v1/drivers/fake-hardware/vendor_passthru", "1.115", `{}`), 400, "Missing mandatory parameter: method")
	wantFault(t, e.do("POST", "/v1/drivers/fake-hardware/vendor_passthru/", "1.115", `{}`), 400, "Missing mandatory parameter: method")
	wantFault(t, e.do("POST", "/v1/drivers/fake-hardware/vendor_passthru?method=", "1.115", `{}`), 400, "Method not specified")
	wantFault(t, e.do("POST", "/v1/drivers/fake-hardware/vendor_passthru/m", "1.115", `[1]`), 400, "Expected a JSON object for the vendor passthru data")
}

func TestErrors(t *testing.T) {
	e := newEnv(t, nil)
	cases := []struct {
		name, path, version string
		status              int
		msg                 string
	}{
		{"show unknown", "/v1/drivers/nope", "1.115", 404, "Could not find the following driver(s) or hardware type(s): nope."},
		{"properties unknown", "/v1/drivers/nope/properties", "1.115", 404, "The driver 'nope' is unknown."},
		{"raid too old", "/v1/drivers/fake-hardware/raid/logical_disk_properties", "1.11", 406, "Request not acceptable."},
		{"methods unknown", "/v1/drivers/nope/vendor_passthru/methods", "1.115", 404, "The driver 'nope' is unknown."},
		{"bad type", "/v1/drivers?type=x", "1.115", 400, `"type" filter must be one of "classic" or "dynamic", if specified.`},
		// Observed from upstream 21.4 (check_allow_driver_detail and
		// check_allow_filter_driver_type name the version).
		{"type too old", "/v1/drivers?type=dynamic", "1.29", 406, "Request not acceptable. The minimal required API version should be 1.30"},
		{"detail too old", "/v1/drivers?detail=true", "1.29", 406, "Request not acceptable. The minimal required API version should be 1.30"},
		{"detail false too old", "/v1/drivers?detail=false", "1.29", 406, "Request not acceptable. The minimal required API version should be 1.30"},
		{"fields too old", "/v1/drivers?fields=name", "1.76", 406, "Request not acceptable."},
		{"detail and fields", "/v1/drivers?detail=true&fields=name", "1.115", 400, "Can not specify ?detail=True and fields in the same request."},
		{"bad field", "/v1/drivers?fields=foo", "1.115", 400, "Schema error: 'foo' is not one of ['hosts', 'links', 'name', 'default_boot_interface', 'enabled_boot_interfaces', 'default_console_interface', 'enabled_console_interfaces', 'default_deploy_interface', 'enabled_deploy_interfaces', 'default_inspect_interface', 'enabled_inspect_interfaces', 'default_management_interface', 'enabled_management_interfaces', 'default_network_interface', 'enabled_network_interfaces', 'default_power_interface', 'enabled_power_interfaces', 'default_raid_interface', 'enabled_raid_interfaces', 'default_vendor_interface', 'enabled_vendor_interfaces', 'default_storage_interface', 'enabled_storage_interfaces', 'default_rescue_interface', 'enabled_rescue_interfaces', 'default_bios_interface', 'enabled_bios_interfaces', 'default_firmware_interface', 'enabled_firmware_interfaces', 'properties', 'type']"},
		{"interface field without detail", "/v1/drivers?fields=default_power_interface", "1.115", 400, `Field(s) "default_power_interface" are not valid`},
		{"unexpected", "/v1/drivers?foo=1", "1.115", 400, "Unexpected arguments: foo"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantFault(t, e.do("GET", c.path, c.version, ""), c.status, c.msg)
		})
	}
	if r := e.do("GET", "/v1/drivers/nope/properties", "1.115", ""); !strings.Contains(string(r.body), "unknown") || r.status != http.StatusNotFound {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

// TestRAIDProperties: fake-hardware's default RAID interface answers the
// RAID schema's logical disk properties (observed from upstream 21.4 at
// 1.12; master's get_raid_logical_disk_properties is unchanged). Unknown
// drivers are not found.
func TestRAIDProperties(t *testing.T) {
	e := newEnv(t, nil)
	for _, v := range []string{"1.12", "1.115"} {
		r := e.do("GET", "/v1/drivers/fake-hardware/raid/logical_disk_properties", v, "")
		var got map[string]string
		if r.status != http.StatusOK || json.Unmarshal(r.body, &got) != nil || !maps.Equal(got, driver.RAIDLogicalDiskProperties()) {
			t.Fatalf("%s: %d %s", v, r.status, r.body)
		}
	}
	r := e.do("GET", "/v1/drivers/nope/raid/logical_disk_properties", "1.12", "")
	wantFault(t, r, http.StatusNotFound, "The driver 'nope' is unknown.")
}
