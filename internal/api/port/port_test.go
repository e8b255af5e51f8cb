package port

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
)

func newUUID() string { return uuid.NewString() }

func keys(m map[string]any) []string { return apitest.Keys(m) }

func (e *env) createPort(version, body string) map[string]any {
	e.t.Helper()
	return e.do("POST", "/v1/ports", version, body).Created(e.t, body)
}

func wantFault(t *testing.T, r resp, status int, msg string) {
	t.Helper()
	apitest.WantFault(t, r.Status, r.Body, status, msg)
}

func TestCreateFirstAndLatestVersion(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	r := e.do("POST", "/v1/ports", "1.1", fmt.Sprintf(`{"address": "AA:BB:CC:DD:EE:01", "node_uuid": "%s"}`, n.UUID))
	if r.Status != http.StatusCreated {
		t.Fatalf("1.1 create: %d %s", r.Status, r.Body)
	}
	got := r.JSON(t)
	if want := []string{"address", "created_at", "extra", "links", "node_uuid", "updated_at", "uuid"}; !slices.Equal(keys(got), want) {
		t.Errorf("1.1 keys %v, want %v", keys(got), want)
	}
	if got["address"] != "aa:bb:cc:dd:ee:01" || got["node_uuid"] != n.UUID {
		t.Errorf("1.1 body %v", got)
	}
	if loc := r.Header.Get("Location"); loc != "http://127.0.0.1:6385/v1/ports/"+got["uuid"].(string) {
		t.Errorf("Location %q", loc)
	}
	pg := e.portgroup(n, "pg1", true)
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/port-create-request.json", &sample)
	body := fmt.Sprintf(`{"address": "11:11:11:11:11:11", "node_uuid": "%s", "portgroup_uuid": "%s", "is_smartnic": true,
		"local_link_connection": {"port_id": "Ethernet3/1", "switch_id": "0A:1B:2C:3D:4E:5F", "switch_info": "switch1", "hostname": "h"},
		"physical_network": "physnet1", "name": "port1", "description": "d", "vendor": "splitrock", "category": "hypernet"}`, n.UUID, pg.UUID)
	got = e.createPort("1.115", body)
	var resp map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/port-create-response.json", &resp)
	for _, k := range keys(resp) {
		if _, ok := got[k]; !ok {
			t.Errorf("1.115 response lacks %s of the api-ref sample", k)
		}
	}
	if got["portgroup_uuid"] != pg.UUID || got["is_smartnic"] != true || got["pxe_enabled"] != true ||
		got["local_link_connection"].(map[string]any)["switch_id"] != "0a:1b:2c:3d:4e:5f" || got["available_for_dynamic_portgroup"] != false {
		t.Errorf("1.115 body %v", got)
	}
	for k := range sample {
		if _, ok := got[k]; !ok && k != "node_uuid" && k != "node_ident" {
			t.Errorf("request field %s not rendered", k)
		}
	}
}

// TestFieldVisibility derives, from the gates, the first version of each
// versioned port field and checks it is hidden just below and shown from it.
func TestFieldVisibility(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	p := e.createPort("1.115", fmt.Sprintf(`{"address": "aa:bb:cc:dd:ee:02", "node_uuid": "%s"}`, n.UUID))
	for field, g := range map[string]microversion.Gate{
		"internal_info":                   microversion.AllowPortInternalInfo,
		"pxe_enabled":                     microversion.AllowPortAdvancedNetFields,
		"local_link_connection":           microversion.AllowPortAdvancedNetFields,
		"portgroup_uuid":                  microversion.AllowPortgroupsSubcontrollers,
		"physical_network":                microversion.AllowPortPhysicalNetwork,
		"is_smartnic":                     microversion.AllowPortIsSmartnic,
		"name":                            microversion.AllowPortName,
		"description":                     microversion.AllowPortDescription,
		"vendor":                          microversion.AllowPortVendor,
		"category":                        microversion.AllowPortCategory,
		"available_for_dynamic_portgroup": microversion.AllowPortAvailableForDynamicPortgroup,
	} {
		below := fmt.Sprintf("1.%d", g.Min-1)
		at := fmt.Sprintf("1.%d", g.Min)
		if got := e.do("GET", "/v1/ports/"+p["uuid"].(string), below, "").JSON(t); got[field] != nil {
			t.Errorf("%s shown at %s", field, below)
		} else if _, ok := got[field]; ok {
			t.Errorf("%s present at %s", field, below)
		}
		if _, ok := e.do("GET", "/v1/ports/"+p["uuid"].(string), at, "").JSON(t)[field]; !ok {
			t.Errorf("%s hidden at %s", field, at)
		}
		if g.Min > microversion.Minor8FetchingSubsetOfFields {
			r := e.do("GET", "/v1/ports/"+p["uuid"].(string)+"?fields="+field, below, "")
			if r.Status != http.StatusNotAcceptable && field != "internal_info" {
				t.Errorf("?fields=%s at %s: %d", field, below, r.Status)
			}
		}
	}
}

func TestCreateErrors(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	other := e.node("n2", nil)
	pgOther := e.portgroup(other, "pgo", true)
	pgNoStandalone := e.portgroup(n, "pgn", false)
	e.createPort("1.115", fmt.Sprintf(`{"address": "aa:bb:cc:dd:ee:03", "node_uuid": "%s"}`, n.UUID))
	missing := newUUID()
	for _, c := range []struct {
		name, version, body string
		status              int
		msg                 string
	}{
		{"duplicate mac", "1.115", `{"address": "AA:BB:CC:DD:EE:03", "node_uuid": "%N"}`, 409, "A port with MAC address aa:bb:cc:dd:ee:03 already exists."},
		{"bad mac", "1.115", `{"address": "zz", "node_uuid": "%N"}`, 400, "Expected valid MAC address for address: zz"},
		{"no address", "1.115", `{"node_uuid": "%N"}`, 400, "Schema error for port: 'address' is a required property"},
		{"extra key", "1.115", `{"address": "aa:bb:cc:dd:ee:04", "node_uuid": "%N", "foo": 1}`, 400, "Schema error for port: Additional properties are not allowed ('foo' was unexpected)"},
		{"node missing", "1.115", `{"address": "aa:bb:cc:dd:ee:04", "node_uuid": "` + missing + `"}`, 400, "Node " + missing + " could not be found."},
		{"node_ident too old", "1.93", `{"address": "aa:bb:cc:dd:ee:04", "node_ident": "n1"}`, 406, "Request not acceptable."},
		{"pxe_enabled too old", "1.18", `{"address": "aa:bb:cc:dd:ee:04", "node_uuid": "%N", "pxe_enabled": true}`, 406, "Request not acceptable."},
		{"name too old", "1.87", `{"address": "aa:bb:cc:dd:ee:04", "node_uuid": "%N", "name": "x"}`, 406, "Request not acceptable."},
		{"bad boolean", "1.115", `{"address": "aa:bb:cc:dd:ee:04", "node_uuid": "%N", "pxe_enabled": "maybe"}`, 400,
			"Invalid pxe_enabled: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"},
		{"bad switch id", "1.115", `{"address": "aa:bb:cc:dd:ee:04", "node_uuid": "%N", "local_link_connection": {"switch_id": "x", "port_id": "p"}}`, 400,
			"Expected a MAC address or OpenFlow datapath ID but received x."},
		{"smartnic", "1.115", `{"address": "aa:bb:cc:dd:ee:04", "node_uuid": "%N", "is_smartnic": true, "local_link_connection": {"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "p"}}`, 400,
			"Smart NIC port must have port_id and hostname in local_link_connection"},
		{"empty physnet", "1.115", `{"address": "aa:bb:cc:dd:ee:04", "node_uuid": "%N", "physical_network": ""}`, 400, "A non-empty value is required when setting physical_network"},
		{"portgroup of other node", "1.115", `{"address": "aa:bb:cc:dd:ee:04", "node_uuid": "%N", "portgroup_uuid": "` + pgOther.UUID + `"}`, 400,
			"Port can not be added to a portgroup belonging to a different node."},
		{"portgroup missing", "1.115", `{"address": "aa:bb:cc:dd:ee:04", "node_uuid": "%N", "portgroup_uuid": "` + missing + `"}`, 400, "Portgroup " + missing + " could not be found."},
		{"no standalone", "1.115", `{"address": "aa:bb:cc:dd:ee:04", "node_uuid": "%N", "portgroup_uuid": "` + pgNoStandalone.UUID + `", "pxe_enabled": true}`, 409,
			"Port group " + pgNoStandalone.UUID + " doesn't support standalone ports. This port cannot be created as a member of that portgroup as the port's 'pxe_enabled' field was set to True."},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantFault(t, e.do("POST", "/v1/ports", c.version, strings.ReplaceAll(c.body, "%N", n.UUID)), c.status, c.msg)
		})
	}
	if r := e.do("POST", "/v1/ports", "1.94", `{"address": "aa:bb:cc:dd:ee:05", "node_ident": "n1"}`); r.Status != http.StatusCreated {
		t.Errorf("node_ident at 1.94: %d %s", r.Status, r.Body)
	}
}

func TestListAndShow(t *testing.T) {
	e := newEnv(t)
	n1 := e.node("n1", nil)
	n2 := e.node("n2", nil)
	pg := e.portgroup(n1, "pg1", true)
	var uuids []string
	for i, n := range []*model.Node{n1, n1, n2} {
		body := fmt.Sprintf(`{"address": "aa:bb:cc:dd:ee:1%d", "node_uuid": "%s", "name": "p%d"}`, i, n.UUID, i)
		if i == 0 {
			body = fmt.Sprintf(`{"address": "aa:bb:cc:dd:ee:1%d", "node_uuid": "%s", "name": "p%d", "portgroup_uuid": "%s"}`, i, n.UUID, i, pg.UUID)
		}
		uuids = append(uuids, e.createPort("1.115", body)["uuid"].(string))
	}
	list := func(path, version string) []any {
		t.Helper()
		r := e.do("GET", path, version, "")
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		return r.JSON(t)["ports"].([]any)
	}
	ports := list("/v1/ports", "1.1")
	if len(ports) != 3 || !slices.Equal(keys(ports[0].(map[string]any)), []string{"address", "links", "uuid"}) {
		t.Errorf("list 1.1: %v", ports)
	}
	if d := list("/v1/ports/detail", "1.115"); len(d) != 3 || len(keys(d[0].(map[string]any))) < 18 {
		t.Errorf("detail: %v", d)
	}
	if got := list("/v1/ports?node="+n2.UUID, "1.115"); len(got) != 1 || got[0].(map[string]any)["uuid"] != uuids[2] {
		t.Errorf("node filter: %v", got)
	}
	if got := list("/v1/ports?node=n1", "1.115"); len(got) != 2 {
		t.Errorf("node name filter: %v", got)
	}
	if got := list("/v1/ports?address=AA:BB:CC:DD:EE:11", "1.115"); len(got) != 1 || got[0].(map[string]any)["uuid"] != uuids[1] {
		t.Errorf("address filter: %v", got)
	}
	if got := list("/v1/ports?portgroup=pg1", "1.115"); len(got) != 1 || got[0].(map[string]any)["uuid"] != uuids[0] {
		t.Errorf("portgroup filter: %v", got)
	}
	if got := list("/v1/nodes/"+n1.UUID+"/ports", "1.1"); len(got) != 2 {
		t.Errorf("node ports: %v", got)
	}
	if got := list("/v1/portgroups/"+pg.UUID+"/ports/detail", "1.24"); len(got) != 1 || got[0].(map[string]any)["portgroup_uuid"] != pg.UUID {
		t.Errorf("portgroup ports: %v", got)
	}
	if r := e.do("GET", "/v1/portgroups/"+pg.UUID+"/ports", "1.23", ""); r.Status != http.StatusNotFound {
		t.Errorf("portgroup ports at 1.23: %d", r.Status)
	}
	r := e.do("GET", "/v1/ports?limit=2&fields=uuid,name", "1.115", "")
	page := r.JSON(t)
	if next, _ := page["next"].(string); !strings.Contains(next, "marker="+uuids[1]) || !strings.Contains(next, "limit=2") || !strings.Contains(next, "fields=uuid,name") {
		t.Errorf("next %v", page["next"])
	}
	if got := list("/v1/ports?marker="+uuids[1], "1.115"); len(got) != 1 {
		t.Errorf("after marker: %v", got)
	}
	missing := newUUID()
	for _, c := range []struct {
		path, version string
		status        int
		msg           string
	}{
		{"/v1/ports?sort_key=extra", "1.115", 400, "The sort_key value extra is an invalid field for sorting"},
		{"/v1/ports?marker=" + missing, "1.115", 404, "Port " + missing + " could not be found."},
		{"/v1/ports?node=n1&portgroup=pg1", "1.115", 403, "Operation not permitted."},
		{"/v1/ports?shard=a", "1.81", 406, "Request not acceptable. The minimal required API version should be 1.82"},
		{"/v1/ports?fields=name", "1.87", 406, "Request not acceptable."},
		{"/v1/ports?fields=bogus", "1.115", 400, `Field(s) "bogus" are not valid`},
		{"/v1/ports?address=zz", "1.115", 400, "Expected valid MAC address for address: zz"},
		{"/v1/ports?conductor_groups=a&node=n1", "1.115", 400, "Filtering by conductor_groups cannot be combined with node_ident, portgroup_ident, or node address filters."},
		{"/v1/ports?foo=1", "1.115", 400, "Unexpected arguments: foo"},
		{"/v1/ports/" + missing, "1.115", 404, "Port " + missing + " could not be found."},
		{"/v1/ports/p1", "1.115", 200, ""},
	} {
		r := e.do("GET", c.path, c.version, "")
		if c.status == 200 {
			if r.Status != 200 || r.JSON(t)["uuid"] != uuids[1] {
				t.Errorf("%s: %d %s", c.path, r.Status, r.Body)
			}
			continue
		}
		t.Run(c.path, func(t *testing.T) { wantFault(t, r, c.status, c.msg) })
	}
}

func TestPatchAndDelete(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	p := e.createPort("1.115", fmt.Sprintf(`{"address": "aa:bb:cc:dd:ee:21", "node_uuid": "%s"}`, n.UUID))
	e.createPort("1.115", fmt.Sprintf(`{"address": "aa:bb:cc:dd:ee:22", "node_uuid": "%s"}`, n.UUID))
	path := "/v1/ports/" + p["uuid"].(string)
	r := e.do("PATCH", path, "1.1", `[{"op": "replace", "path": "/address", "value": "AA:BB:CC:DD:EE:23"}, {"op": "add", "path": "/extra/foo", "value": "bar"}]`)
	if r.Status != 200 {
		t.Fatalf("patch 1.1: %d %s", r.Status, r.Body)
	}
	got := r.JSON(t)
	if got["address"] != "aa:bb:cc:dd:ee:23" || got["extra"].(map[string]any)["foo"] != "bar" {
		t.Errorf("patched %v", got)
	}
	if r := e.do("PATCH", path, "1.115", `[{"op": "replace", "path": "/physical_network", "value": "physnet2"}]`); r.Status != 200 || r.JSON(t)["physical_network"] != "physnet2" {
		t.Errorf("patch 1.115: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct {
		name, version, patch string
		status               int
		msg                  string
	}{
		{"duplicate mac", "1.115", `[{"op": "replace", "path": "/address", "value": "aa:bb:cc:dd:ee:22"}]`, 409, "A port with MAC address aa:bb:cc:dd:ee:22 already exists."},
		{"uuid", "1.115", `[{"op": "replace", "path": "/uuid", "value": "x"}]`, 400,
			"Cannot patch /uuid. Only the following can be updated: address, extra, is_smartnic, local_link_connection, node_ident, node_uuid, physical_network, portgroup_uuid, pxe_enabled, name, description, vendor, category, available_for_dynamic_portgroup"},
		{"empty physnet", "1.115", `[{"op": "replace", "path": "/physical_network", "value": ""}]`, 400, "A non-empty value is required when setting physical_network"},
		{"pxe too old", "1.18", `[{"op": "replace", "path": "/pxe_enabled", "value": false}]`, 406, "Request not acceptable."},
		{"bad mac", "1.115", `[{"op": "replace", "path": "/address", "value": "zz"}]`, 400, "Expected valid MAC address for address: zz"},
		{"other node", "1.115", `[{"op": "replace", "path": "/node_uuid", "value": "` + newUUID() + `"}]`, 400, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("PATCH", path, c.version, c.patch)
			if c.msg == "" {
				if r.Status != c.status || !strings.HasPrefix(r.Faultstring(t), "Unable to apply the requested node_uuid") {
					t.Errorf("%d %s", r.Status, r.Body)
				}
				return
			}
			wantFault(t, r, c.status, c.msg)
		})
	}
	if _, err := e.s.UpdateNode(context.Background(), withState(n, "inspecting")); err != nil {
		t.Fatal(err)
	}
	wantFault(t, e.do("PATCH", path, "1.39", `[{"op": "add", "path": "/extra/x", "value": 1}]`), 409,
		fmt.Sprintf("Cannot update port \"%s\" on \"%s\" while it is in state \"inspecting\".", p["uuid"], n.UUID))
	if r := e.do("DELETE", path, "1.1", ""); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	wantFault(t, e.do("GET", path, "1.1", ""), 404, fmt.Sprintf("Port %s could not be found.", p["uuid"]))
	wantFault(t, e.do("DELETE", "/v1/ports/p1", "1.115", ""), 400, "Expected UUID for port_uuid: p1")
	if !slices.Contains(e.cond.calls, "destroy_port") || !slices.Contains(e.cond.calls, "update_port") {
		t.Errorf("conductor calls %v", e.cond.calls)
	}
}

func withState(n *model.Node, state string) *model.Node {
	c := *n
	c.ProvisionState = state
	return &c
}

// Observed from upstream 21.4: an unknown local_link_connection key is
// refused quoting the dict in the order it was sent, with the unexpected
// key as the root cause (upstream's schema lists additionalProperties
// before required).
func TestLocalLinkConnectionUnknownKey(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	p := e.createPort("1.82", fmt.Sprintf(`{"address": "52:54:00:00:01:02", "node_uuid": "%s"}`, n.UUID))
	path := "/v1/ports/" + p["uuid"].(string)
	for _, c := range []struct {
		name, method, path, body, msg string
	}{
		{"create", "POST", "/v1/ports",
			fmt.Sprintf(`{"node_uuid": "%s", "address": "52:54:00:00:00:03", "local_link_connection": {"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "p1", "bogus": 1}}`, n.UUID),
			"Schema error for local_link_connection: {'switch_id': 'aa:bb:cc:dd:ee:ff', 'port_id': 'p1', 'bogus': 1} is not valid under any of the given schemas. Possible root cause: Additional properties are not allowed ('bogus' was unexpected)"},
		{"create, only unknown keys", "POST", "/v1/ports",
			fmt.Sprintf(`{"node_uuid": "%s", "address": "52:54:00:00:00:03", "local_link_connection": {"zz": 2, "bogus": 1}}`, n.UUID),
			"Schema error for local_link_connection: {'zz': 2, 'bogus': 1} is not valid under any of the given schemas. Possible root cause: Additional properties are not allowed ('zz', 'bogus' were unexpected)"},
		{"patch whole", "PATCH", path,
			`[{"op": "add", "path": "/local_link_connection", "value": {"switch_id": "aa:bb:cc:dd:ee:ff", "port_id": "p1", "bogus": 1}}]`,
			"Schema error for local_link_connection: {'switch_id': 'aa:bb:cc:dd:ee:ff', 'port_id': 'p1', 'bogus': 1} is not valid under any of the given schemas. Possible root cause: Additional properties are not allowed ('bogus' was unexpected)"},
		{"patch key", "PATCH", path, `[{"op": "add", "path": "/local_link_connection/bogus", "value": "x"}]`,
			"Schema error for local_link_connection: {'bogus': 'x'} is not valid under any of the given schemas. Possible root cause: Additional properties are not allowed ('bogus' was unexpected)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantFault(t, e.do(c.method, c.path, "1.82", c.body), http.StatusBadRequest, c.msg)
		})
	}
}
