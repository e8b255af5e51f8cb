package apiutil

import (
	"encoding/json"
	"os"
	"testing"
)

// TestStepErrorMessages: a step list that fails its schema is reported as
// upstream prints jsonschema's ValidationError (message, failing keyword
// with its sub-schema, instance), byte for byte. The expectations in
// testdata/step_errors.json were written by Python's jsonschema 4.26
// validating the same instances against upstream's step schemas.
func TestStepErrorMessages(t *testing.T) {
	raw, err := os.ReadFile("testdata/step_errors.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Schema, Kind, Instance string
		Want                   *string
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Instance, func(t *testing.T) {
			got := MustSchema(c.Schema).Message(body(t, c.Instance))
			want := ""
			if c.Want != nil {
				want = *c.Want
			}
			if got != "" {
				got = "Invalid " + c.Kind + "_steps: " + got
			}
			if got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}
