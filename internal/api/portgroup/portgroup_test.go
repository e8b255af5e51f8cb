package portgroup

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/api/apiutil"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
)

func keys(m map[string]any) []string { return apitest.Keys(m) }

func wantFault(t *testing.T, r resp, status int, msg string) {
	t.Helper()
	apitest.WantFault(t, r.Status, r.Body, status, msg)
}

func (e *env) create(version, body string) map[string]any {
	e.t.Helper()
	return e.do("POST", "/v1/portgroups", version, body).Created(e.t, body)
}

func TestCreateFirstAndLatestVersion(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	r := e.do("POST", "/v1/portgroups", "1.23", fmt.Sprintf(`{"address": "AA:BB:CC:DD:EE:01", "node_uuid": "%s", "name": "pg1"}`, n.UUID))
	if r.Status != http.StatusCreated {
		t.Fatalf("1.23 create: %d %s", r.Status, r.Body)
	}
	got := r.JSON(t)
	want := []string{"address", "created_at", "extra", "internal_info", "links", "name", "node_uuid", "ports",
		"standalone_ports_supported", "updated_at", "uuid"}
	if !slices.Equal(keys(got), want) {
		t.Errorf("1.23 keys %v, want %v", keys(got), want)
	}
	if got["address"] != "aa:bb:cc:dd:ee:01" || got["standalone_ports_supported"] != true {
		t.Errorf("1.23 body %v", got)
	}
	if loc := r.Header.Get("Location"); loc != "http://127.0.0.1:6385/v1/portgroups/"+got["uuid"].(string) {
		t.Errorf("Location %q", loc)
	}
	var req, sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/portgroup-create-request.json", &req)
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/portgroup-create-response.json", &sample)
	req["node_uuid"] = n.UUID
	body := fmt.Sprintf(`{"address": "11:11:11:11:11:11", "node_uuid": "%s", "name": "test_portgroup",
		"physical_network": "physnet1", "category": "hypernet", "mode": "802.3ad", "properties": {"miimon": 100}}`, n.UUID)
	got = e.create("1.115", body)
	for _, k := range keys(sample) {
		if _, ok := got[k]; !ok {
			t.Errorf("1.115 response lacks %s of the api-ref sample", k)
		}
	}
	for k := range req {
		if _, ok := got[k]; !ok {
			t.Errorf("request field %s of the api-ref sample not rendered", k)
		}
	}
	if got["mode"] != "802.3ad" || got["physical_network"] != "physnet1" || got["category"] != "hypernet" ||
		got["dynamic_portgroup"] != false || got["properties"].(map[string]any)["miimon"] != float64(100) {
		t.Errorf("1.115 body %v", got)
	}
	links := got["ports"].([]any)
	if links[0].(map[string]any)["href"] != "http://127.0.0.1:6385/v1/portgroups/"+got["uuid"].(string)+"/ports" {
		t.Errorf("ports links %v", links)
	}
	if got := e.create("1.26", fmt.Sprintf(`{"node_uuid": "%s"}`, n.UUID)); got["mode"] != "active-backup" {
		t.Errorf("default mode %v", got["mode"])
	}
}

// TestFieldVisibility derives, from the gates, the first version of each
// versioned portgroup field and checks it is hidden just below and shown
// from it on a single portgroup.
func TestFieldVisibility(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	pg := e.create("1.115", fmt.Sprintf(`{"address": "aa:bb:cc:dd:ee:02", "node_uuid": "%s"}`, n.UUID))
	path := "/v1/portgroups/" + pg["uuid"].(string)
	for field, g := range map[string]microversion.Gate{
		"mode":              microversion.AllowPortgroupModeProperties,
		"properties":        microversion.AllowPortgroupModeProperties,
		"physical_network":  microversion.AllowPortgroupPhysicalNetwork,
		"category":          microversion.AllowPortgroupCategory,
		"dynamic_portgroup": microversion.AllowPortgroupDynamicPortgroup,
	} {
		below, at := fmt.Sprintf("1.%d", g.Min-1), fmt.Sprintf("1.%d", g.Min)
		if _, ok := e.do("GET", path, below, "").JSON(t)[field]; ok {
			t.Errorf("%s present at %s", field, below)
		}
		if _, ok := e.do("GET", path, at, "").JSON(t)[field]; !ok {
			t.Errorf("%s hidden at %s", field, at)
		}
		// Only mode, properties and dynamic_portgroup are refused as
		// ?fields before their versions (check_allowed_portgroup_fields).
		r := e.do("GET", path+"?fields="+field, below, "")
		refused := field != "physical_network" && field != "category"
		if refused && r.Status != http.StatusNotAcceptable || !refused && r.Status != http.StatusOK {
			t.Errorf("?fields=%s at %s: %d %s", field, below, r.Status, r.Body)
		}
	}
	// Observed from upstream 21.4: a listed portgroup keeps mode and
	// properties before 1.26 (sanitize_dict only); the fields added after
	// that release are hidden before their versions (issue #19).
	d := e.do("GET", "/v1/portgroups/detail", "1.23", "").JSON(t)["portgroups"].([]any)[0].(map[string]any)
	for f, want := range map[string]bool{"mode": true, "properties": true, "physical_network": false, "category": false,
		"dynamic_portgroup": false} {
		if _, ok := d[f]; ok != want {
			t.Errorf("detail at 1.23: %s shown %v, want %v", f, ok, want)
		}
	}
}

// Observed from upstream 21.4 (fake-hardware node, one portgroup): the
// detailed listings at 1.31 show exactly these fields, in this order.
func TestDetailListAt131(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	e.create("1.115", fmt.Sprintf(`{"address": "52:54:00:00:01:01", "node_uuid": "%s", "name": "cmppg"}`, n.UUID))
	want := []string{"uuid", "created_at", "updated_at", "address", "extra", "internal_info", "mode", "name", "properties",
		"standalone_ports_supported", "node_uuid", "links", "ports"}
	for _, path := range []string{"/v1/portgroups/detail", "/v1/nodes/" + n.UUID + "/portgroups/detail"} {
		r := e.do("GET", path, "1.31", "")
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		var body struct {
			Portgroups []json.RawMessage `json:"portgroups"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Portgroups) != 1 {
			t.Fatalf("%s: %s", path, r.Body)
		}
		d, err := apiutil.DecodeOrdered(body.Portgroups[0])
		if err != nil {
			t.Fatal(err)
		}
		if got := d.(*apiutil.Dict).Keys(); !slices.Equal(got, want) {
			t.Errorf("%s at 1.31: %v\nwant %v", path, got, want)
		}
	}
}

func TestCreateErrors(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	e.create("1.115", fmt.Sprintf(`{"address": "aa:bb:cc:dd:ee:03", "node_uuid": "%s", "name": "taken"}`, n.UUID))
	missing := uuid.NewString()
	for _, c := range []struct {
		name, version, body string
		status              int
		msg                 string
	}{
		{"duplicate mac", "1.115", `{"address": "AA:BB:CC:DD:EE:03", "node_uuid": "%N"}`, 409, "A portgroup with MAC address aa:bb:cc:dd:ee:03 already exists."},
		{"duplicate name", "1.115", `{"node_uuid": "%N", "name": "taken"}`, 409, "A portgroup with name taken already exists."},
		{"bad mac", "1.115", `{"address": "zz", "node_uuid": "%N"}`, 400, "Expected valid MAC address for address: zz"},
		{"no node", "1.115", `{"address": "aa:bb:cc:dd:ee:04"}`, 400, "Schema error for portgroup: 'node_uuid' is a required property"},
		{"extra key", "1.115", `{"node_uuid": "%N", "foo": 1}`, 400, "Schema error for portgroup: Additional properties are not allowed ('foo' was unexpected)"},
		{"node missing", "1.115", `{"node_uuid": "` + missing + `"}`, 400, "Node " + missing + " could not be found."},
		{"node not uuid", "1.115", `{"node_uuid": "n1"}`, 400, "Expected UUID for node_uuid: n1"},
		{"mode too old", "1.25", `{"node_uuid": "%N", "mode": "802.3ad"}`, 406, "Request not acceptable."},
		{"properties too old", "1.25", `{"node_uuid": "%N", "properties": {"a": 1}}`, 406, "Request not acceptable."},
		{"bad name", "1.115", `{"node_uuid": "%N", "name": "a b"}`, 400, "Cannot create portgroup with invalid name 'a b'"},
		{"bad boolean", "1.115", `{"node_uuid": "%N", "standalone_ports_supported": "maybe"}`, 400,
			"Invalid standalone_ports_supported: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"},
		{"long physnet", "1.115", `{"node_uuid": "%N", "physical_network": "` + strings.Repeat("p", 65) + `"}`, 400,
			"Schema error for portgroup: '" + strings.Repeat("p", 65) + "' is too long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantFault(t, e.do("POST", "/v1/portgroups", c.version, strings.ReplaceAll(c.body, "%N", n.UUID)), c.status, c.msg)
		})
	}
	if r := e.do("POST", "/v1/portgroups", "1.22", fmt.Sprintf(`{"node_uuid": "%s"}`, n.UUID)); r.Status != http.StatusNotFound {
		t.Errorf("create at 1.22: %d %s", r.Status, r.Body)
	}
}

func TestListAndShow(t *testing.T) {
	e := newEnv(t)
	n1 := e.node("n1", func(n *model.Node) { n.Shard = model.Ptr("s1") })
	n2 := e.node("n2", nil)
	var uuids []string
	for i, n := range []*model.Node{n1, n1, n2} {
		pg := e.create("1.115", fmt.Sprintf(`{"address": "aa:bb:cc:dd:ee:1%d", "node_uuid": "%s", "name": "pg%d"}`, i, n.UUID, i))
		uuids = append(uuids, pg["uuid"].(string))
	}
	list := func(path, version string) []any {
		t.Helper()
		r := e.do("GET", path, version, "")
		if r.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		return r.JSON(t)["portgroups"].([]any)
	}
	pgs := list("/v1/portgroups", "1.23")
	if len(pgs) != 3 || !slices.Equal(keys(pgs[0].(map[string]any)), []string{"address", "links", "name", "uuid"}) {
		t.Errorf("list 1.23: %v", pgs)
	}
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/portgroup-list-detail-response.json", &sample)
	want := keys(sample["portgroups"].([]any)[0].(map[string]any))
	if d := list("/v1/portgroups/detail", "1.115"); len(d) != 3 {
		t.Errorf("detail: %v", d)
	} else {
		for _, k := range want {
			if _, ok := d[0].(map[string]any)[k]; !ok {
				t.Errorf("detail lacks %s of the api-ref sample", k)
			}
		}
	}
	if got := list("/v1/portgroups?node="+n2.UUID, "1.115"); len(got) != 1 || got[0].(map[string]any)["uuid"] != uuids[2] {
		t.Errorf("node filter: %v", got)
	}
	if got := list("/v1/portgroups?node=n1", "1.115"); len(got) != 2 {
		t.Errorf("node name filter: %v", got)
	}
	if got := list("/v1/portgroups?address=aa:bb:cc:dd:ee:11", "1.115"); len(got) != 1 || got[0].(map[string]any)["uuid"] != uuids[1] {
		t.Errorf("address filter: %v", got)
	}
	// Upstream looks the address up as given: no normalization.
	if got := list("/v1/portgroups?address=AA:BB:CC:DD:EE:11", "1.115"); len(got) != 0 {
		t.Errorf("upper-case address filter: %v", got)
	}
	if got := list("/v1/portgroups?shard=s1", "1.106"); len(got) != 2 {
		t.Errorf("shard filter: %v", got)
	}
	if got := list("/v1/nodes/"+n1.UUID+"/portgroups", "1.24"); len(got) != 2 {
		t.Errorf("node portgroups: %v", got)
	}
	if got := list("/v1/nodes/"+n1.UUID+"/portgroups/detail", "1.115"); len(got) != 2 || got[0].(map[string]any)["node_uuid"] != n1.UUID {
		t.Errorf("node portgroups detail: %v", got)
	}
	if r := e.do("GET", "/v1/nodes/"+n1.UUID+"/portgroups", "1.23", ""); r.Status != http.StatusNotFound {
		t.Errorf("node portgroups at 1.23: %d", r.Status)
	}
	page := e.do("GET", "/v1/portgroups?limit=2&fields=uuid,name", "1.115", "").JSON(t)
	if next, _ := page["next"].(string); !strings.Contains(next, "marker="+uuids[1]) || !strings.Contains(next, "limit=2") {
		t.Errorf("next %v", page["next"])
	}
	if got := list("/v1/portgroups?marker="+uuids[1], "1.115"); len(got) != 1 {
		t.Errorf("after marker: %v", got)
	}
	if got := e.do("GET", "/v1/portgroups/pg1", "1.23", "").JSON(t); got["uuid"] != uuids[1] {
		t.Errorf("show by name: %v", got)
	}
	if got := e.do("GET", "/v1/portgroups/"+uuids[0]+"?fields=address,extra", "1.115", "").JSON(t); !slices.Equal(keys(got), []string{"address", "extra", "links"}) {
		t.Errorf("show fields: %v", keys(got))
	}
	missing := uuid.NewString()
	for _, c := range []struct {
		path, version string
		status        int
		msg           string
	}{
		{"/v1/portgroups?sort_key=properties", "1.115", 400, "The sort_key value properties is an invalid field for sorting"},
		{"/v1/portgroups?sort_key=mode", "1.25", 406, "Request not acceptable."},
		{"/v1/portgroups?marker=" + missing, "1.115", 404, "Portgroup " + missing + " could not be found."},
		{"/v1/portgroups?node=n1&address=aa:bb:cc:dd:ee:10", "1.115", 400, "Filtering by node, address, or shard simultaneously is not supported."},
		{"/v1/portgroups?shard=a", "1.105", 406, "Request not acceptable. The minimal required API version should be 1.106"},
		{"/v1/portgroups?fields=mode", "1.25", 406, "Request not acceptable."},
		{"/v1/portgroups?fields=bogus", "1.115", 400, `Field(s) "bogus" are not valid`},
		{"/v1/portgroups?detail=true&fields=name", "1.115", 400, "Can not specify ?detail=True and fields in the same request."},
		{"/v1/portgroups?foo=1", "1.115", 400, "Unexpected arguments: foo"},
		{"/v1/portgroups?node=" + missing, "1.115", 404, "Node " + missing + " could not be found."},
		{"/v1/nodes/n1/portgroups", "1.115", 404, "Portgroup None could not be found."},
		{"/v1/portgroups/" + missing, "1.115", 404, "Portgroup " + missing + " could not be found."},
		{"/v1/portgroups/" + uuids[0], "1.22", 404, ""},
	} {
		t.Run(c.path, func(t *testing.T) {
			r := e.do("GET", c.path, c.version, "")
			if c.msg == "" {
				if r.Status != c.status {
					t.Errorf("%d %s", r.Status, r.Body)
				}
				return
			}
			wantFault(t, r, c.status, c.msg)
		})
	}
}

func TestPatchAndDelete(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	other := e.node("n2", nil)
	owned := e.node("n3", func(n *model.Node) { n.Owner = model.Ptr("someone") })
	missingNode := uuid.NewString()
	pg := e.create("1.115", fmt.Sprintf(`{"address": "aa:bb:cc:dd:ee:21", "node_uuid": "%s", "name": "pg1"}`, n.UUID))
	e.create("1.115", fmt.Sprintf(`{"address": "aa:bb:cc:dd:ee:22", "node_uuid": "%s", "name": "pg2"}`, n.UUID))
	path := "/v1/portgroups/" + pg["uuid"].(string)
	r := e.do("PATCH", path, "1.23", `[{"op": "replace", "path": "/address", "value": "AA:BB:CC:DD:EE:23"}, {"op": "add", "path": "/extra/foo", "value": "bar"}]`)
	if r.Status != 200 {
		t.Fatalf("patch 1.23: %d %s", r.Status, r.Body)
	}
	if got := r.JSON(t); got["address"] != "aa:bb:cc:dd:ee:23" || got["extra"].(map[string]any)["foo"] != "bar" {
		t.Errorf("patched %v", got)
	}
	// A member port takes the portgroup's new physical network.
	pr := e.do("POST", "/v1/ports", "1.115", fmt.Sprintf(`{"address": "aa:bb:cc:dd:ee:31", "node_uuid": "%s", "portgroup_uuid": "%s"}`, n.UUID, pg["uuid"]))
	if pr.Status != http.StatusCreated {
		t.Fatalf("port: %d %s", pr.Status, pr.Body)
	}
	r = e.do("PATCH", path, "1.115", `[{"op": "replace", "path": "/physical_network", "value": "physnet2"}, {"op": "replace", "path": "/mode", "value": "balance-rr"}]`)
	if got := r.JSON(t); r.Status != 200 || got["physical_network"] != "physnet2" || got["mode"] != "balance-rr" {
		t.Errorf("patch 1.115: %d %s", r.Status, r.Body)
	}
	if p := e.do("GET", "/v1/ports/"+pr.JSON(t)["uuid"].(string), "1.115", "").JSON(t); p["physical_network"] != "physnet2" {
		t.Errorf("member port physical_network %v", p["physical_network"])
	}
	for _, c := range []struct {
		name, version, patch string
		status               int
		msg                  string
	}{
		{"duplicate mac", "1.115", `[{"op": "replace", "path": "/address", "value": "aa:bb:cc:dd:ee:22"}]`, 409, ""},
		{"uuid", "1.115", `[{"op": "replace", "path": "/uuid", "value": "x"}]`, 400,
			"Cannot patch /uuid. Only the following can be updated: address, extra, mode, name, node_uuid, properties, standalone_ports_supported, physical_network, category"},
		{"mode removed", "1.115", `[{"op": "remove", "path": "/mode"}]`, 400, "'mode' is a mandatory attribute and can not be removed"},
		{"mode too old", "1.25", `[{"op": "replace", "path": "/mode", "value": "x"}]`, 406, "Request not acceptable."},
		{"bad name", "1.115", `[{"op": "replace", "path": "/name", "value": "a b"}]`, 400, "Portgroup " + pg["uuid"].(string) + ": Cannot change name to invalid name 'a b'"},
		{"bad mac", "1.115", `[{"op": "replace", "path": "/address", "value": "zz"}]`, 400, "Expected valid MAC address for address: zz"},
		// authorize_node_link looks the node up by UUID or name.
		{"node by name", "1.115", `[{"op": "replace", "path": "/node_uuid", "value": "n2"}]`, 400,
			"Portgroup " + pg["uuid"].(string) + " can not be associated with node " + other.UUID + " because there are ports associated with this portgroup."},
		{"missing node", "1.115", `[{"op": "replace", "path": "/node_uuid", "value": "` + missingNode + `"}]`, 400,
			"Unable to apply the requested node_uuid '" + missingNode + "'. Requested value was invalid."},
		{"node of another owner", "1.115", `[{"op": "replace", "path": "/node_uuid", "value": "` + owned.UUID + `"}]`, 400,
			"Unable to apply the requested node_uuid '" + owned.UUID + "'. Requested value was invalid."},
		{"node not a string", "1.115", `[{"op": "replace", "path": "/node_uuid", "value": 5}]`, 400,
			"Unable to apply the requested node_uuid '5'. Requested value was invalid."},
		{"node with ports", "1.115", `[{"op": "replace", "path": "/node_uuid", "value": "` + other.UUID + `"}]`, 400,
			"Portgroup " + pg["uuid"].(string) + " can not be associated with node " + other.UUID + " because there are ports associated with this portgroup."},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("PATCH", path, c.version, c.patch)
			if c.msg == "" {
				if r.Status != c.status {
					t.Errorf("%d %s", r.Status, r.Body)
				}
				return
			}
			wantFault(t, r, c.status, c.msg)
		})
	}
	inspecting := *n
	inspecting.ProvisionState = "inspecting"
	if _, err := e.s.UpdateNode(context.Background(), &inspecting); err != nil {
		t.Fatal(err)
	}
	wantFault(t, e.do("PATCH", path, "1.39", `[{"op": "add", "path": "/extra/x", "value": 1}]`), 409,
		fmt.Sprintf("Cannot update portgroup \"%s\" on node \"%s\" while it is in state \"inspecting\".", pg["uuid"], n.UUID))
	if r := e.do("DELETE", "/v1/ports/"+pr.JSON(t)["uuid"].(string), "1.115", ""); r.Status != http.StatusNoContent {
		t.Fatalf("delete port: %d %s", r.Status, r.Body)
	}
	if r := e.do("DELETE", path, "1.23", ""); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	wantFault(t, e.do("GET", path, "1.23", ""), 404, fmt.Sprintf("Portgroup %s could not be found.", pg["uuid"]))
	for _, m := range []string{"GET", "PATCH", "DELETE"} {
		r := e.do(m, "/v1/portgroups/a%20b", "1.115", `[{"op": "add", "path": "/extra/a", "value": 1}]`)
		if want := `{"error_message": "{\"code\": 400, \"title\": \"Bad Request\", \"description\": \"Expected UUID or name for portgroup: a b\"}"}`; r.Status != 400 || string(r.Body) != want || r.Header.Get("X-OpenStack-Ironic-API-Version") != "" {
			t.Errorf("%s bad ident: %d %s\nwant %s", m, r.Status, r.Body, want)
		}
	}
	wantFault(t, e.do("DELETE", path, "1.115", ""), 404, fmt.Sprintf("Portgroup %s could not be found.", pg["uuid"]))
}
