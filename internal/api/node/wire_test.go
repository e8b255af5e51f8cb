package node

import "testing"

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
