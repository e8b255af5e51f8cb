package node

import (
	"net/http"
	"testing"
)

// TestNullMandatoryArguments: upstream's args.validate refuses only an
// absent mandatory argument; an explicit null reaches the method as None
// and fails its own check, which prints "None" (observed from upstream
// 21.4; read from master ironic/common/args.py and
// ironic/api/controllers/v1/node.py, unchanged).
func TestNullMandatoryArguments(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"driver": "fake-hardware", "name": "nul"}`)["uuid"].(string)
	e.run(t, []check{
		{"power null", "PUT", "/v1/nodes/nul/states/power", "1.82", `{"target": null}`, 400,
			`The requested action "None" can not be performed on node "nul" while it is in state "None".`},
		{"power absent", "PUT", "/v1/nodes/nul/states/power", "1.82", `{}`, 400, "Missing mandatory parameter: target"},
		{"provision null", "PUT", "/v1/nodes/nul/states/provision", "1.82", `{"target": null}`, 400,
			`The requested action "None" can not be performed on node "` + id + `" while it is in state "enroll".`},
		{"boot mode null", "PUT", "/v1/nodes/nul/states/boot_mode", "1.82", `{"target": null}`, 400,
			"Invalid boot mode None requested for node. Allowed boot modes are: bios, uefi"},
		{"boot mode absent", "PUT", "/v1/nodes/nul/states/boot_mode", "1.82", `{}`, 400, "Missing mandatory parameter: target"},
	})
}

// TestJSONSuffixRetry: below 1.91 upstream's middleware strips ".json"
// from the path and get_one, patch and delete look the stripped name up,
// then the name with the suffix back (observed from upstream 21.4; read
// from master ironic/api/middleware/json_ext.py and
// api/controllers/v1/utils.py _get_with_suffix). Other node routes do not
// retry.
func TestJSONSuffixRetry(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"driver": "fake-hardware", "name": "nj.json"}`)["uuid"].(string)
	for _, v := range []string{"1.82", "1.90", "1.91", "1.115"} {
		r := e.do("GET", "/v1/nodes/nj.json", v, "")
		if r.status != http.StatusOK || r.json(t)["uuid"] != id {
			t.Fatalf("get at %s: %d %s", v, r.status, r.body)
		}
	}
	e.run(t, []check{
		{"states do not retry", "GET", "/v1/nodes/nj/states.json", "1.82", "", 404, "Node nj could not be found."},
		{"patch", "PATCH", "/v1/nodes/nj.json", "1.82", `[{"op": "add", "path": "/extra/a", "value": 1}]`, 200, ""},
		{"delete", "DELETE", "/v1/nodes/nj.json", "1.82", "", 204, ""},
	})
	// A node named without the suffix wins: it is looked up first.
	plain := e.create(`{"driver": "fake-hardware", "name": "nk"}`)["uuid"].(string)
	e.create(`{"driver": "fake-hardware", "name": "nk.json"}`)
	if r := e.do("GET", "/v1/nodes/nk.json", "1.90", ""); r.json(t)["uuid"] != plain {
		t.Fatalf("stripped name first: %s", r.body)
	}
}

// TestValidateArguments: NodesController.validate(node, node_uuid) takes
// the node from the path or from ?node_uuid= (which wins), refuses other
// arguments, and a ?node= beside the path one (upstream's TypeError, a 500
// there) is a client error (observed from upstream 21.4; read from master
// ironic/api/controllers/v1/node.py).
func TestValidateArguments(t *testing.T) {
	e := newEnv(t)
	id := e.create(`{"driver": "fake-hardware", "name": "va"}`)["uuid"].(string)
	e.run(t, []check{
		{"path", "GET", "/v1/nodes/va/validate", "1.82", "", 200, ""},
		{"node_uuid wins", "GET", "/v1/nodes/nope/validate?node_uuid=" + id, "1.82", "", 200, ""},
		{"bad node_uuid", "GET", "/v1/nodes/va/validate?node_uuid=va", "1.82", "", 400, "Expected UUID for node_uuid: va"},
		{"node twice", "GET", "/v1/nodes/va/validate?node=va", "1.82", "", 400, "NodesController.validate() got multiple values for argument 'node'"},
		{"unexpected", "GET", "/v1/nodes/va/validate?foo=1", "1.82", "", 400, "Unexpected arguments: foo"},
		{"name too old", "GET", "/v1/nodes/va/validate", "1.4", "", 406, ""},
	})
}
