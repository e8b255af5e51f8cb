package volume

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
)

func keys(m map[string]any) []string { return apitest.Keys(m) }

func wantFault(t *testing.T, r resp, status int, msg string) {
	t.Helper()
	apitest.WantFault(t, r.Status, r.Body, status, msg)
}

func (e *env) create(path, body string) map[string]any {
	e.t.Helper()
	return e.do("POST", path, "1.32", body).Created(e.t, body)
}

func TestRoot(t *testing.T) {
	e := newEnv(t)
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/volume-list-response.json", &sample)
	for _, v := range []string{"1.32", "1.115"} {
		r := e.do("GET", "/v1/volume", v, "")
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", v, r.Status, r.Body)
		}
		if got := r.JSON(t); fmt.Sprint(got) != fmt.Sprint(sample) {
			t.Errorf("root at %s:\n%v\nwant %v", v, got, sample)
		}
	}
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/node-volume-list-response.json", &sample)
	ident := "6d85703a-565d-469a-96ce-30b6de53079d"
	if got := e.do("GET", "/v1/nodes/"+ident+"/volume", "1.32", "").JSON(t); fmt.Sprint(got) != fmt.Sprint(sample) {
		t.Errorf("node root:\n%v\nwant %v", got, sample)
	}
	for _, p := range []string{"/v1/volume", "/v1/volume/connectors", "/v1/volume/targets", "/v1/nodes/" + ident + "/volume"} {
		if r := e.do("GET", p, "1.31", ""); r.Status != http.StatusNotFound {
			t.Errorf("%s at 1.31: %d", p, r.Status)
		}
	}
}

func TestConnectors(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	other := e.node("n2", nil)
	var req map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/volume-connector-create-request.json", &req)
	body := fmt.Sprintf(`{"node_uuid": "%s", "type": "%s", "connector_id": "%s"}`, n.UUID, req["type"], req["connector_id"])
	r := e.do("POST", "/v1/volume/connectors", "1.32", body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	c := r.JSON(t)
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/volume-connector-create-response.json", &sample)
	if !slices.Equal(keys(c), keys(sample)) || c["node_uuid"] != n.UUID || c["type"] != req["type"] {
		t.Errorf("create body %v, sample keys %v", c, keys(sample))
	}
	if loc := r.Header.Get("Location"); loc != "http://127.0.0.1:6385/v1/volume/connectors/"+c["uuid"].(string) {
		t.Errorf("Location %q", loc)
	}
	e.create("/v1/volume/connectors", fmt.Sprintf(`{"node_uuid": "%s", "type": "ip", "connector_id": "10.0.0.1"}`, other.UUID))
	path := "/v1/volume/connectors/" + c["uuid"].(string)
	list := func(p string) []any {
		t.Helper()
		r := e.do("GET", p, "1.115", "")
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", p, r.Status, r.Body)
		}
		return r.JSON(t)["connectors"].([]any)
	}
	if got := list("/v1/volume/connectors"); len(got) != 2 || !slices.Equal(keys(got[0].(map[string]any)), []string{"connector_id", "links", "node_uuid", "type", "uuid"}) {
		t.Errorf("list %v", got)
	}
	if got := list("/v1/volume/connectors?detail=true"); len(got) != 2 || len(got[0].(map[string]any)) != 8 {
		t.Errorf("detail %v", got)
	}
	if got := list("/v1/volume/connectors?node=n2"); len(got) != 1 || got[0].(map[string]any)["node_uuid"] != other.UUID {
		t.Errorf("node filter %v", got)
	}
	if got := list("/v1/nodes/" + n.UUID + "/volume/connectors"); len(got) != 1 || got[0].(map[string]any)["uuid"] != c["uuid"] {
		t.Errorf("node connectors %v", got)
	}
	if got := e.do("GET", path+"?fields=type", "1.32", "").JSON(t); !slices.Equal(keys(got), []string{"links", "type"}) {
		t.Errorf("show fields %v", got)
	}
	r = e.do("PATCH", path, "1.32", `[{"op": "replace", "path": "/connector_id", "value": "iqn.new"}, {"op": "add", "path": "/extra/a", "value": 1}]`)
	if got := r.JSON(t); r.Status != 200 || got["connector_id"] != "iqn.new" {
		t.Errorf("patch: %d %s", r.Status, r.Body)
	}
	missing := uuid.NewString()
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		msg                      string
	}{
		{"duplicate", "POST", "/v1/volume/connectors", `{"node_uuid": "` + n.UUID + `", "type": "ip", "connector_id": "10.0.0.1"}`, 409,
			"A volume connector with type ip and connector ID 10.0.0.1 already exists."},
		{"missing node", "POST", "/v1/volume/connectors", `{"node_uuid": "` + missing + `", "type": "ip", "connector_id": "x"}`, 400,
			"Invalid input for field/attribute node_uuid. Value: '" + missing + "'. "},
		{"no type", "POST", "/v1/volume/connectors", `{"node_uuid": "` + n.UUID + `", "connector_id": "x"}`, 400,
			"Schema error for connector: 'type' is a required property"},
		{"bad uuid", "POST", "/v1/volume/connectors", `{"node_uuid": "n1", "type": "ip", "connector_id": "x"}`, 400, "Expected UUID for node_uuid: n1"},
		{"show missing", "GET", "/v1/volume/connectors/" + missing, "", 404, "Volume connector " + missing + " could not be found."},
		{"show not uuid", "GET", "/v1/volume/connectors/abc", "", 400, "Expected UUID for connector_uuid: abc"},
		{"bad sort", "GET", "/v1/volume/connectors?sort_key=extra", "", 400, "The sort_key value extra is an invalid field for sorting"},
		{"fields and detail", "GET", "/v1/volume/connectors?fields=uuid&detail=true", "", 400, "Can't fetch a subset of fields with 'detail' set"},
		{"parent missing", "GET", "/v1/nodes/" + missing + "/volume/connectors", "", 404, "Node " + missing + " could not be found."},
		{"patch uuid", "PATCH", path, `[{"op": "replace", "path": "/uuid", "value": "x"}]`, 400,
			"Cannot patch /uuid. Only the following can be updated: connector_id, extra, node_uuid, type"},
		{"patch node not uuid", "PATCH", path, `[{"op": "replace", "path": "/node_uuid", "value": "n2"}]`, 400,
			"Expected a UUID for node_uuid, but received n2."},
		{"patch node missing", "PATCH", path, `[{"op": "replace", "path": "/node_uuid", "value": "` + missing + `"}]`, 400,
			"Unable to apply the requested node_uuid '" + missing + "'. Requested value was invalid."},
	} {
		t.Run(c.name, func(t *testing.T) { wantFault(t, e.do(c.method, c.path, "1.115", c.body), c.status, c.msg) })
	}
	setPower(t, e, n, "power on")
	wantFault(t, e.do("PATCH", path, "1.32", `[{"op": "add", "path": "/extra/b", "value": 1}]`), 400,
		fmt.Sprintf("The requested action \"volume connector update\" can not be performed on node \"%s\" while it is in state \"power on\".", n.UUID))
	// Deletion only needs the power off outside DELETE_ALLOWED_STATES:
	// an enrolled node may be on.
	if r := e.do("DELETE", path, "1.32", ""); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	wantFault(t, e.do("DELETE", path, "1.32", ""), 404, fmt.Sprintf("Volume connector %s could not be found.", c["uuid"]))
}

func setPower(t *testing.T, e *env, n *model.Node, state string) {
	t.Helper()
	cur, err := e.s.GetNodeByUUID(context.Background(), n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	cur.PowerState = state
	if _, err := e.s.UpdateNode(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
}

func TestTargets(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	var req, sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/volume-target-create-request.json", &req)
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/volume-target-create-response.json", &sample)
	body := fmt.Sprintf(`{"node_uuid": "%s", "volume_type": "iscsi", "volume_id": "v1", "boot_index": 0,
		"properties": {"target_iqn": "iqn.x", "auth_password": "s3cret"}}`, n.UUID)
	tg := e.create("/v1/volume/targets", body)
	if !slices.Equal(keys(tg), keys(sample)) || tg["boot_index"] != float64(0) {
		t.Errorf("create %v, sample keys %v", tg, keys(sample))
	}
	if p := tg["properties"].(map[string]any); p["auth_password"] != "******" || p["target_iqn"] != "iqn.x" {
		t.Errorf("properties not masked: %v", p)
	}
	path := "/v1/volume/targets/" + tg["uuid"].(string)
	if got := e.do("GET", "/v1/volume/targets", "1.115", "").JSON(t)["targets"].([]any); len(got) != 1 ||
		!slices.Equal(keys(got[0].(map[string]any)), []string{"boot_index", "links", "node_uuid", "uuid", "volume_id", "volume_type"}) {
		t.Errorf("list %v", got)
	}
	if got := e.do("GET", "/v1/nodes/"+n.UUID+"/volume/targets?detail=true", "1.32", "").JSON(t)["targets"].([]any); len(got) != 1 ||
		got[0].(map[string]any)["properties"].(map[string]any)["auth_password"] != "******" {
		t.Errorf("node targets %v", got)
	}
	r := e.do("PATCH", path, "1.32", `[{"op": "replace", "path": "/boot_index", "value": 1}]`)
	if got := r.JSON(t); r.Status != 200 || got["boot_index"] != float64(1) {
		t.Errorf("patch %d %s", r.Status, r.Body)
	}
	e.create("/v1/volume/targets", fmt.Sprintf(`{"node_uuid": "%s", "volume_type": "iscsi", "volume_id": "v2", "boot_index": 0}`, n.UUID))
	missing := uuid.NewString()
	for _, c := range []struct {
		name, method, path, body string
		status                   int
		msg                      string
	}{
		{"duplicate boot index", "POST", "/v1/volume/targets", `{"node_uuid": "` + n.UUID + `", "volume_type": "iscsi", "volume_id": "v3", "boot_index": 1}`, 409,
			"A volume target with boot index '1' for the same node already exists."},
		{"boot index type", "POST", "/v1/volume/targets", `{"node_uuid": "` + n.UUID + `", "volume_type": "iscsi", "volume_id": "v3", "boot_index": "x"}`, 400,
			"Schema error for target: 'x' is not of type 'integer'"},
		{"missing node", "POST", "/v1/volume/targets", `{"node_uuid": "` + missing + `", "volume_type": "iscsi", "volume_id": "v3", "boot_index": 5}`, 400,
			"Invalid input for field/attribute node_uuid. Value: '" + missing + "'. "},
		{"show missing", "GET", "/v1/volume/targets/" + missing, "", 404, "Volume target " + missing + " could not be found."},
		{"bad sort", "GET", "/v1/volume/targets?sort_key=properties", "", 400, "The sort_key value properties is an invalid field for sorting"},
		{"patch field", "PATCH", path, `[{"op": "replace", "path": "/uuid", "value": "x"}]`, 400,
			"Cannot patch /uuid. Only the following can be updated: boot_index, extra, node_uuid, properties, volume_id, volume_type"},
	} {
		t.Run(c.name, func(t *testing.T) { wantFault(t, e.do(c.method, c.path, "1.115", c.body), c.status, c.msg) })
	}
	setPower(t, e, n, "power on")
	wantFault(t, e.do("PATCH", path, "1.32", `[{"op": "add", "path": "/extra/b", "value": 1}]`), 400,
		fmt.Sprintf("The requested action \"volume target update\" can not be performed on node \"%s\" while it is in state \"power on\".", n.UUID))
	active := func(n *model.Node) { n.ProvisionState = "active" }
	cur, _ := e.s.GetNodeByUUID(context.Background(), n.UUID)
	active(cur)
	if _, err := e.s.UpdateNode(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	wantFault(t, e.do("DELETE", path, "1.32", ""), 400,
		fmt.Sprintf("The requested action \"volume target deletion\" can not be performed on node \"%s\" while it is in state \"power on\".", n.UUID))
	setPower(t, e, n, "power off")
	if r := e.do("DELETE", path, "1.32", ""); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if !strings.Contains(string(e.do("GET", path, "1.32", "").Body), "could not be found") {
		t.Error("target still there")
	}
}

func TestTargetPropertiesRedacted(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", nil)
	tg := e.create("/v1/volume/targets", fmt.Sprintf(`{"node_uuid": "%s", "volume_type": "iscsi", "volume_id": "v1", "boot_index": 0, "properties": {"a": "b"}}`, n.UUID))
	e.h = newHandlerDenyingProperties(t, e)
	got := e.do("GET", "/v1/volume/targets/"+tg["uuid"].(string), "1.32", "").JSON(t)
	if p := got["properties"].(map[string]any); !strings.HasPrefix(fmt.Sprint(p["redacted_contents"]), "** Value redacted: Requires permission baremetal:volume:view_target_properties") {
		t.Errorf("properties %v", p)
	}
}

// Observed from upstream 21.4: a node that never reported a power state
// (None) refuses changes of its volume records, naming the state as
// Python prints it.
func TestChangesWithoutPowerState(t *testing.T) {
	e := newEnv(t)
	n := e.node("n1", func(n *model.Node) { n.PowerState = "" })
	c := e.create("/v1/volume/connectors", fmt.Sprintf(`{"node_uuid": "%s", "type": "iqn", "connector_id": "iqn.x"}`, n.UUID))
	tg := e.create("/v1/volume/targets", fmt.Sprintf(`{"node_uuid": "%s", "volume_type": "iscsi", "volume_id": "v1", "boot_index": 0}`, n.UUID))
	patch := `[{"op": "add", "path": "/extra/foo", "value": "x"}]`
	msg := `The requested action "%s" can not be performed on node "` + n.UUID + `" while it is in state "None".`
	wantFault(t, e.do("PATCH", "/v1/volume/connectors/"+c["uuid"].(string), "1.82", patch), 400, fmt.Sprintf(msg, "volume connector update"))
	wantFault(t, e.do("PATCH", "/v1/volume/targets/"+tg["uuid"].(string), "1.82", patch), 400, fmt.Sprintf(msg, "volume target update"))
	// Master lets a node that may be deleted (enroll) lose them whatever
	// its power state; an available one may not.
	cur, err := e.s.GetNodeByUUID(context.Background(), n.UUID)
	if err != nil {
		t.Fatal(err)
	}
	cur.ProvisionState = "available"
	if _, err := e.s.UpdateNode(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
	wantFault(t, e.do("DELETE", "/v1/volume/connectors/"+c["uuid"].(string), "1.82", ""), 400, fmt.Sprintf(msg, "volume connector deletion"))
	wantFault(t, e.do("DELETE", "/v1/volume/targets/"+tg["uuid"].(string), "1.82", ""), 400, fmt.Sprintf(msg, "volume target deletion"))
}
