package main

// Distinctive values for the round-trip test, by Go type as api.go spells
// it; $name is the argument's (or, for results, the method's) name, so
// that a value sent to the wrong argument shows. They are written for
// package jsonrpc's test, whose helpers (sampleNode…) live in
// jsonrpc_test.go. Floats only: a JSON-RPC server decodes numbers in
// free-form values as float64.
var argSamples = map[string]string{
	"string":            `"$name-value"`,
	"bool":              `true`,
	"int":               `42`,
	"any":               `map[string]any{"$name": "blob", "gzip": true}`,
	"[]string":          `[]string{"$name-1", "$name-2"}`,
	"map[string]any":    `map[string]any{"$name": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}}`,
	"map[string]string": `map[string]string{"$name": "desc"}`,
	"[]map[string]any":  `[]map[string]any{{"interface": "deploy", "step": "$name", "priority": 50.0, "args": map[string]any{"a": "b"}}}`,

	"*model.Node":            `sampleNode()`,
	"*model.NodeUpdate":      `sampleNodeUpdate()`,
	"*model.Port":            `samplePort()`,
	"*model.Portgroup":       `samplePortgroup()`,
	"*model.VolumeConnector": `sampleConnector()`,
	"*model.VolumeTarget":    `sampleTarget()`,
	"*model.Allocation":      `sampleAllocation()`,

	"VendorPassthruArgs":            `rpc.VendorPassthruArgs{NodeID: "node-1", DriverMethod: "do_it", HTTPMethod: "POST", Info: map[string]any{"k": "v"}}`,
	"DriverVendorPassthruArgs":      `rpc.DriverVendorPassthruArgs{DriverName: "fake-hardware", DriverMethod: "do_it", HTTPMethod: "PUT", Info: map[string]any{"k": "v"}}`,
	"AttachVirtualMediaArgs":        `rpc.AttachVirtualMediaArgs{NodeID: "node-1", DeviceType: "cdrom", ImageURL: "https://images/x.iso", ImageDownloadSource: "local"}`,
	"HeartbeatArgs":                 `rpc.HeartbeatArgs{NodeID: "node-1", CallbackURL: "https://10.0.0.5:9999", AgentVersion: "10.0.0", AgentToken: "tok", AgentVerifyCA: "-----BEGIN CERTIFICATE-----", AgentStatus: "start", AgentStatusMessage: "booted"}`,
	"ObjectClassActionVersionsArgs": `rpc.ObjectClassActionVersionsArgs{ObjName: "Node", ObjMethod: "get", ObjectVersions: map[string]string{"Node": "1.41"}, Args: []any{"a"}, Kwargs: map[string]any{"k": "v"}}`,
	"ObjectActionArgs":              `rpc.ObjectActionArgs{ObjInst: map[string]any{"ironic_object.name": "Node"}, ObjMethod: "save", Args: []any{}, Kwargs: map[string]any{}}`,
}

var resultSamples = map[string]string{
	"string":                    `"on"`,
	"any":                       `map[string]any{"ironic_object.name": "Node", "changes": []any{"name"}}`,
	"[]string":                  `[]string{"$name-1", "$name-2"}`,
	"map[string]any":            `map[string]any{"$name": "x", "nested": map[string]any{"n": 1.5}, "list": []any{"a", true}}`,
	"map[string]string":         `map[string]string{"$name": "desc"}`,
	"[]map[string]any":          `[]map[string]any{{"id": "vif-1"}, {"id": "vif-2"}}`,
	"map[string]map[string]any": `map[string]map[string]any{"do_it": {"async": true, "http_methods": []any{"POST"}, "description": "d"}}`,

	"*model.Node":            `sampleNode()`,
	"*model.Port":            `samplePort()`,
	"*model.Portgroup":       `samplePortgroup()`,
	"*model.VolumeConnector": `sampleConnector()`,
	"*model.VolumeTarget":    `sampleTarget()`,
	"*model.Allocation":      `sampleAllocation()`,

	"map[string]InterfaceValidation": `map[string]rpc.InterfaceValidation{"power": {Result: model.Ptr(true)}, "console": {Result: model.Ptr(false), Reason: "not supported"}, "rescue": {Result: nil, Reason: "missing"}}`,
	"*VendorPassthruResult":          `&rpc.VendorPassthruResult{Return: map[string]any{"x": "y"}, Async: false, Attach: true}`,
	"*BootDevice":                    `&rpc.BootDevice{BootDevice: "pxe", Persistent: model.Ptr(true)}`,
}
