package driver

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/spectest"
)

// TestRAIDConfigSchemaMessages checks the violation reported for each
// document against what upstream's jsonschema 4.26 reports for it with
// raid_config_schema.json: the violation best_match picks (shallowest,
// then the later sibling, anyOf branches descended into) and its wording.
func TestRAIDConfigSchemaMessages(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"logical_disks": [{"size_gb": 100, "raid_level": "7"}]}`, "'7' is not one of ['JBOD', '0', '1', '2', '5', '6', '1+0', '5+0', '6+0']"},
		{`{"logical_disks": [{"size_gb": 100, "raid_level": 7}]}`, "7 is not of type 'string'"},
		{`{"logical_disks": [{"size_gb": "big", "raid_level": "1"}]}`, "'big' is not one of ['MAX']"},
		{`{"logical_disks": [{"size_gb": -1, "raid_level": "1"}]}`, "-1 is less than the minimum of 0"},
		{`{"logical_disks": [{"size_gb": 1.5, "raid_level": "1"}]}`, "1.5 is not valid under any of the given schemas"},
		{`{"logical_disks": [{"size_gb": true, "raid_level": "1"}]}`, "True is not valid under any of the given schemas"},
		{`{"logical_disks": [{"size_gb": "big", "raid_level": "1", "disk_type": "x"}]}`, "'big' is not one of ['MAX']"},
		{`{"logical_disks": [{"size_gb": 10, "raid_level": "1", "physical_disks": [{}], "controller": "c"}]}`, "{} is not of type 'string'"},
		{`{"logical_disks": [{"size_gb": 10, "raid_level": "1", "physical_disks": ["a", 1], "controller": "c"}]}`, "'a' is not of type 'object'"},
		{`{"logical_disks": [{"size_gb": 10, "raid_level": "1", "physical_disks": "a", "controller": "c"}]}`, "'a' is not valid under any of the given schemas"},
		{`{"logical_disks": [{"size_gb": 10, "raid_level": "1", "number_of_physical_disks": 0}]}`, "0 is less than or equal to the minimum of 0"},
		{`{"logical_disks": [{"size_gb": 10, "raid_level": "1", "number_of_physical_disks": "x"}]}`, "'x' is not of type 'integer'"},
		{`{"logical_disks": [{"size_gb": 10, "raid_level": "1", "physical_disks": ["a"]}]}`, "'controller' is a dependency of 'physical_disks'"},
		{`{"logical_disks": []}`, "[] should be non-empty"},
		{`{}`, "'logical_disks' is a required property"},
		{`{"logical_disks": "x", "foo": 1}`, "Additional properties are not allowed ('foo' was unexpected)"},
		{`{"foo": 1, "bar": 2, "logical_disks": []}`, "Additional properties are not allowed ('bar', 'foo' were unexpected)"},
		{`{"logical_disks": [1]}`, "1 is not of type 'object'"},
		{`{"logical_disks": [{}]}`, "'raid_level' is a required property"},
		{`{"logical_disks": [{"raid_level": "1", "size_gb": 1, "x": 1, "y": 2}]}`, "Additional properties are not allowed ('x', 'y' were unexpected)"},
		{`{"logical_disks": [{"raid_level": "9", "size_gb": 1}, {"size_gb": 1}]}`, "'raid_level' is a required property"},
		{`{"logical_disks": [{"raid_level": null, "size_gb": null}]}`, "None is not valid under any of the given schemas"},
		{`{"logical_disks": [{"raid_level": "1", "size_gb": 10, "disk_type": "x"}, {"raid_level": "7", "size_gb": 1}]}`, "'7' is not one of ['JBOD', '0', '1', '2', '5', '6', '1+0', '5+0', '6+0']"},
		{`{"logical_disks": [{"size_gb": 1}, {"raid_level": "1"}]}`, "'size_gb' is a required property"},
		{`{"logical_disks": [{"size_gb": 1, "x": 1}, {"raid_level": "1", "size_gb": 1, "disk_type": "q"}]}`, "'raid_level' is a required property"},
		{`{"logical_disks": [{"raid_level": "1", "size_gb": -1.5, "number_of_physical_disks": -1.5}]}`, "-1.5 is not valid under any of the given schemas"},
		{`{"logical_disks": [{"raid_level": "1", "size_gb": 1, "number_of_physical_disks": -1.5}]}`, "-1.5 is not of type 'integer'"},
		{`{"logical_disks": [{"raid_level": "1", "size_gb": 1, "physical_disks": [1], "controller": "c"}]}`, "[1] is not valid under any of the given schemas"},
		{`{"logical_disks": [{"raid_level": "1", "size_gb": 1, "physical_disks": [{}, "a"], "controller": "c"}]}`, "{} is not of type 'string'"},
		{`{"logical_disks": null}`, "None is not of type 'array'"},
		{`{"logical_disks": [{"raid_level": "1", "size_gb": 1}], "z": 1, "a": 2}`, "Additional properties are not allowed ('a', 'z' were unexpected)"},
		{`{"logical_disks": [{"raid_level": 1, "size_gb": "MAX"}, {"raid_level": "5", "size_gb": "max"}]}`, "'max' is not one of ['MAX']"},
	} {
		var cfg map[string]any
		if err := json.Unmarshal([]byte(tc.doc), &cfg); err != nil {
			t.Fatal(err)
		}
		err := ValidateRAIDConfig(cfg)
		if err == nil {
			t.Errorf("%s: accepted, want %q", tc.doc, tc.want)
			continue
		}
		if want := "RAID config validation error: " + tc.want; err.Error() != want || !IsClass(err, errs.ClassInvalidParameterValue) {
			t.Errorf("%s:\n got %v\nwant InvalidParameterValue %q", tc.doc, err, want)
		}
	}
}

func TestRAIDConfigValidAndRootVolumes(t *testing.T) {
	for _, doc := range []string{
		`{"logical_disks": [{"raid_level": "1", "size_gb": 100, "is_root_volume": true}, {"raid_level": "0", "size_gb": "MAX", "disk_type": "ssd"}]}`,
		`{"logical_disks": [{"raid_level": "JBOD", "size_gb": 0, "controller": "RAID.1", "physical_disks": ["d0", "d1"], "number_of_physical_disks": 2,
		  "volume_name": "v", "share_physical_disks": false, "interface_type": "sas"}]}`,
		`{"logical_disks": [{"raid_level": "5+0", "size_gb": 10, "controller": "c", "physical_disks": [{"size": ">= 100"}, {"size": ">= 100"}]}]}`,
	} {
		var cfg map[string]any
		if err := json.Unmarshal([]byte(doc), &cfg); err != nil {
			t.Fatal(err)
		}
		if err := ValidateRAIDConfig(cfg); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
	}
	two := map[string]any{"logical_disks": []any{
		map[string]any{"raid_level": "1", "size_gb": 10.0, "is_root_volume": true},
		map[string]any{"raid_level": "1", "size_gb": 10.0, "is_root_volume": false},
		map[string]any{"raid_level": "0", "size_gb": 10.0, "is_root_volume": true},
	}}
	want := "Raid config cannot have more than one root volume. 2 root volumes were specified"
	if err := ValidateRAIDConfig(two); err == nil || err.Error() != want || !IsClass(err, errs.ClassInvalidParameterValue) {
		t.Errorf("two root volumes: %v", err)
	}
	if err := ValidateRAIDConfig(nil); err == nil || err.Error() != "RAID config validation error: None is not of type 'object'" {
		t.Errorf("nil config: %v", err)
	}
}

// TestRAIDLogicalDiskProperties checks the descriptions against the
// api-ref sample of GET /v1/drivers/{driver}/raid/logical_disk_properties
// (the same text upstream 21.4 and master answer).
func TestRAIDLogicalDiskProperties(t *testing.T) {
	var want map[string]string
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/driver-logical-disk-properties-response.json", &want)
	if got := RAIDLogicalDiskProperties(); !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
