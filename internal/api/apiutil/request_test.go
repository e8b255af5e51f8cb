package apiutil

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
)

// The request schemas the product embeds are upstream's, unchanged.
func TestEmbeddedRequestSchemasMatchSpec(t *testing.T) {
	for name, rel := range map[string]string{
		"allocation":                          "ironic/api/schemas/controllers/allocation/ALLOCATION_SCHEMA.json",
		"inspection_data":                     "ironic/api/schemas/controllers/ramdisk/DATA_VALIDATOR.json",
		"allocation_create_request_body":      "ironic/api/schemas/v1/allocation/create_request_body.json",
		"allocation_create_request_body_v58":  "ironic/api/schemas/v1/allocation/create_request_body_v58.json",
		"allocation_index_request_query":      "ironic/api/schemas/v1/allocation/index_request_query.json",
		"allocation_index_request_query_v60":  "ironic/api/schemas/v1/allocation/index_request_query_v60.json",
		"allocation_show_request_query":       "ironic/api/schemas/v1/allocation/show_request_query.json",
		"allocation_show_request_query_v60":   "ironic/api/schemas/v1/allocation/show_request_query_v60.json",
		"allocation_update_request_body":      "ironic/api/schemas/v1/allocation/update_request_body.json",
		"allocation_update_request_body_v60":  "ironic/api/schemas/v1/allocation/update_request_body_v60.json",
		"conductor_index_request_query":       "ironic/api/schemas/v1/conductor/index_request_query.json",
		"conductor_show_request_query":        "ironic/api/schemas/v1/conductor/show_request_query.json",
		"deploy_template":                     "ironic/api/schemas/controllers/deploy_template/TEMPLATE_SCHEMA.json",
		"deploy_step":                         "ironic/api/schemas/controllers/utils/DEPLOY_STEP_SCHEMA.json",
		"deploy_template_index_request_query": "ironic/api/schemas/v1/deploy_template/index_request_query.json",
		"deploy_template_show_request_query":  "ironic/api/schemas/v1/deploy_template/show_request_query.json",
		"driver_index_request_query":          "ironic/api/schemas/v1/driver/index_request_query.json",
		"driver_index_request_query_v77":      "ironic/api/schemas/v1/driver/index_request_query_v77.json",
		"driver_index_request_query_v86":      "ironic/api/schemas/v1/driver/index_request_query_v86.json",
		"driver_show_request_query":           "ironic/api/schemas/v1/driver/show_request_query.json",
		"driver_show_request_query_v77":       "ironic/api/schemas/v1/driver/show_request_query_v77.json",
		"driver_show_request_query_v86":       "ironic/api/schemas/v1/driver/show_request_query_v86.json",
		"runbook":                             "ironic/api/schemas/controllers/runbook/RUNBOOK_SCHEMA.json",
		"runbook_mutation_v112":               "ironic/api/schemas/controllers/runbook/RUNBOOK_MUTATION_SCHEMA_V112.json",
		"runbook_traits":                      "ironic/api/schemas/controllers/runbook/RUNBOOK_TRAITS_SCHEMA.json",
		"runbook_step":                        "ironic/api/schemas/controllers/utils/RUNBOOK_STEP_SCHEMA.json",
		"trait":                               "ironic/api/schemas/controllers/utils/TRAITS_SCHEMA.json",
		"inspection_rule_index_request_query": "ironic/api/schemas/v1/inspection_rule/index_request_query.json",
		"inspection_rule_show_request_query":  "ironic/api/schemas/v1/inspection_rule/show_request_query.json",
		"inspection_rule_create_request_body": "ironic/api/schemas/v1/inspection_rule/create_request_body.json",
		"inspection_rule_update_request_body": "ironic/api/schemas/v1/inspection_rule/update_request_body.json",
		"inspection_rule_request_parameter":   "ironic/api/schemas/v1/inspection_rule/_inspection_rule_request_parameter.json",
	} {
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
			t.Errorf("schema %s differs from %s", name, rel)
		}
	}
}

func TestRequestSchemaMessages(t *testing.T) {
	s := MustRequestSchema("allocation_create_request_body_v58")
	cases := []struct {
		name string
		body string
		want string
	}{
		{"valid", `{"resource_class": "x", "traits": ["CUSTOM_X", "HW_CPU_X86_AVX"]}`, ""},
		{"null", `null`, "Schema error: None is not of type 'object'"},
		{"extra", `{"a": 1, "b": 2}`, "Schema error: Additional properties are not allowed ('a', 'b' were unexpected)"},
		{"type", `{"name": 1}`, "Schema error: 1 is not of type 'string', 'null'"},
		{"branches", `{"traits": ["x"]}`, "Schema error: 'x' is not valid under any of the given schemas. Possible root cause: 'x' does not match '^CUSTOM_[A-Z0-9_]+$'"},
		{"candidate branches", `{"candidate_nodes": ["a b"]}`, "Schema error: 'a b' is not valid under any of the given schemas. Possible root cause: 'a b' is not a 'uuid'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := DecodeOrdered([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			err = s.Validate(v)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Fatalf("got %q want %q", got, c.want)
			}
		})
	}
}
