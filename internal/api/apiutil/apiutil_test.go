package apiutil

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/spectest"
)

// The product's schemas must be the ones upstream applies.
func TestSchemasMatchSpec(t *testing.T) {
	spec := map[string]string{
		"node":                  "ironic/api/schemas/controllers/node/node_schema().json",
		"node_patch":            "ironic/api/schemas/controllers/node/node_patch_schema().json",
		"node_traits":           "ironic/api/schemas/controllers/node/TRAITS_SCHEMA.json",
		"vif":                   "ironic/api/schemas/controllers/node/VIF_VALIDATOR.json",
		"vmedia_attach":         "ironic/api/schemas/controllers/node/VMEDIA_ATTACH_VALIDATOR.json",
		"steps":                 "ironic/api/schemas/controllers/node/_STEPS_SCHEMA.json",
		"deploy_steps":          "ironic/api/schemas/controllers/node/_DEPLOY_STEPS_SCHEMA.json",
		"network_data":          "ironic/api/schemas/controllers/node/network-data-schema.json",
		"trait":                 "ironic/api/schemas/controllers/utils/TRAITS_SCHEMA.json",
		"configdrive":           "ironic/api/schemas/controllers/utils/_CONFIG_DRIVE_SCHEMA.json",
		"runbook_step":          "ironic/api/schemas/controllers/utils/RUNBOOK_STEP_SCHEMA.json",
		"deploy_step":           "ironic/api/schemas/controllers/utils/DEPLOY_STEP_SCHEMA.json",
		"local_link_connection": "ironic/api/schemas/controllers/utils/LOCAL_LINK_CONN_SCHEMA.json",
	}
	for name, rel := range spec {
		t.Run(name, func(t *testing.T) {
			var want any
			spectest.LoadJSON(t, rel, &want)
			raw, err := schemaFiles.ReadFile("schemas/" + name + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("embedded schema %s differs from %s", name, rel)
			}
			if _, err := LoadSchema(name); err != nil {
				t.Errorf("compile: %v", err)
			}
		})
	}
}

func body(t *testing.T, s string) any {
	t.Helper()
	v, err := DecodeOrdered([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func TestValidateMessages(t *testing.T) {
	// Messages as Python's jsonschema writes them (checked against the
	// reference service).
	cases := []struct{ name, schema, body, want string }{
		{"required", "node", `{}`, "Schema error for node: 'driver' is a required property"},
		{"extra", "node", `{"driver": "fake-hardware", "foo": 1}`, "Schema error for node: Additional properties are not allowed ('foo' was unexpected)"},
		{"extras ordered", "node", `{"driver": "x", "zz": 1, "aa": 2}`, "Schema error for node: Additional properties are not allowed ('zz', 'aa' were unexpected)"},
		{"type", "node", `{"driver": 5}`, "Schema error for node: 5 is not of type 'string'"},
		{"nullable type", "node", `{"driver": "x", "name": true}`, "Schema error for node: True is not of type 'string', 'null'"},
		{"max length", "node", `{"driver": "x", "resource_class": "` + string(make([]byte, 0)) + `aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`,
			"Schema error for node: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' is too long"},
		{"patch op", "patch", `[{"op": "move", "path": "/a"}]`, "Schema error for patch: 'move' is not one of ['add', 'replace', 'remove']"},
		{"patch required", "patch", `[{"path": "/a"}]`, "Schema error for patch: 'op' is a required property"},
		{"patch not list", "patch", `{}`, "Schema error for patch: {} is not of type 'array'"},
		// jsonschema prints the oneOf branches that all matched, the
		// later ones first (checked with Python's jsonschema 4.26).
		{"one of both", "port", `{"address": "x", "node_uuid": "a", "node_ident": "b"}`,
			"Schema error for port: {'address': 'x', 'node_uuid': 'a', 'node_ident': 'b'} is valid under each of {'required': ['node_uuid']}, {'required': ['node_ident']}"},
		{"one of none", "port", `{"address": "x"}`,
			"Schema error for port: {'address': 'x'} is not valid under any of the given schemas. Possible root cause: 'node_ident' is a required property"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := MustSchema(c.schema).Validate(c.schema, body(t, c.body))
			e, ok := errs.As(err)
			if !ok || e.Class != errs.ClassInvalidParameterValue || e.Message != c.want {
				t.Errorf("got %v, want InvalidParameterValue %q", err, c.want)
			}
		})
	}
}

func TestApplyPatchReasons(t *testing.T) {
	doc := func() map[string]any {
		return map[string]any{"extra": map[string]any{"a": "b"}, "name": nil, "list": []any{"x"}}
	}
	cases := []struct{ patch, want string }{
		{`[{"op": "remove", "path": "/extra/foo"}]`, "Couldn't apply patch '{'op': 'remove', 'path': '/extra/foo'}'. Reason: can't remove a non-existent object 'foo'"},
		{`[{"path": "/extra/x", "op": "replace", "value": 1}]`, "Couldn't apply patch '{'path': '/extra/x', 'op': 'replace', 'value': 1}'. Reason: can't replace a non-existent object 'x'"},
		{`[{"op": "add", "path": "/name/x", "value": 1}]`, "Couldn't apply patch '{'op': 'add', 'path': '/name/x', 'value': 1}'. Reason: Document '<class 'NoneType'>' does not support indexing, must be mapping/sequence or support __getitem__"},
		{`[{"op": "add", "path": "/extra/q/r", "value": 1}]`, "Couldn't apply patch '{'op': 'add', 'path': '/extra/q/r', 'value': 1}'. Reason: member 'q' not found in {'a': 'b'}"},
		{`[{"op": "add", "path": "/list/5", "value": 1}]`, "Couldn't apply patch '{'op': 'add', 'path': '/list/5', 'value': 1}'. Reason: can't insert outside of list"},
		{`[{"op": "replace", "path": "/extra"}]`, "Couldn't apply patch '{'op': 'replace', 'path': '/extra'}'. Reason: The operation does not contain a 'value' member"},
		{`[{"op": "add", "path": "/foo", "value": 1}]`, "Adding a new attribute (/foo) to the root of the resource is not allowed"},
	}
	for _, c := range cases {
		ops, err := DecodePatch(body(t, c.patch))
		if err != nil {
			t.Fatalf("%s: %v", c.patch, err)
		}
		d := doc()
		_, err = ApplyPatch(d, ops)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got  %v\n want %s", c.patch, err, c.want)
		}
		if errs.Status(err) != 400 {
			t.Errorf("%s: status %d, want 400", c.patch, errs.Status(err))
		}
	}
	ops, err := DecodePatch(body(t, `[{"op": "add", "path": "/extra/new", "value": {"k": [1, 2]}}, {"op": "remove", "path": "/extra/a"}, {"op": "add", "path": "/list/-", "value": "y"}]`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ApplyPatch(doc(), ops)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if want := `{"extra":{"new":{"k":[1,2]}},"list":["x","y"],"name":null}`; string(b) != want {
		t.Errorf("patched = %s, want %s", b, want)
	}
}

func TestPatchPathPatternMessage(t *testing.T) {
	_, err := DecodePatch(body(t, `[{"op": "add", "path": "/a b", "value": 1}]`))
	want := `Schema error for patch: '/a b' does not match '^(/[\\w-]+)+$'`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestValidateAllowedFields(t *testing.T) {
	ops, _ := DecodePatch(body(t, `[{"op": "add", "path": "/uuid", "value": "x"}]`))
	_, err := ValidateAllowedFields(ops, []string{"name", "extra"}, microversion.Version{Major: 1, Minor: 1})
	if err == nil || err.Error() != "Cannot patch /uuid. Only the following can be updated: name, extra" || errs.Status(err) != 400 {
		t.Errorf("got %v", err)
	}
}

func TestMaskDict(t *testing.T) {
	in := map[string]any{
		"ipmi_password": "secret1",
		"ipmi_username": "admin",
		"redfish_Token": "abc",
		"nested":        map[string]any{"auth_password": "p", "x": 1},
		"cmdline":       "--password hunter2 --user u",
		"ipmi_address":  "1.2.3.4",
		"snmp_auth_key": "kk",
	}
	got := MaskDict(in)
	MaskFields(got, "snmp_auth_key")
	want := map[string]any{
		"ipmi_password": Secret, "ipmi_username": "admin", "redfish_Token": Secret,
		"nested": map[string]any{"auth_password": Secret, "x": 1}, "cmdline": "--password ****** --user u",
		"ipmi_address": "1.2.3.4", "snmp_auth_key": Secret,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MaskDict = %v\nwant %v", got, want)
	}
	if in["ipmi_password"] != "secret1" {
		t.Error("MaskDict changed its input")
	}
}

func TestNames(t *testing.T) {
	v1, v10 := microversion.Version{Major: 1, Minor: 5}, microversion.Version{Major: 1, Minor: 10}
	for _, c := range []struct {
		name  string
		v     microversion.Version
		valid bool
	}{
		{"node-1", v1, true}, {"Node_1", v1, false}, {"Node_1", v10, true}, {"a~b.c", v10, true},
		{"a b", v10, false}, {"1be26c0b-03f2-4d2e-ae87-c02d7f33c123", v10, false}, {"", v10, false},
	} {
		if got := IsValidNodeName(c.name, c.v); got != c.valid {
			t.Errorf("IsValidNodeName(%q, %v) = %v", c.name, c.v, got)
		}
	}
	if err := UUIDOrName("node_ident", "a b"); err == nil || err.Error() != "Expected UUID or name for node_ident: a b" {
		t.Errorf("UUIDOrName: %v", err)
	}
}
