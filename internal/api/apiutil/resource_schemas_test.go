package apiutil

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
)

// TestResourceSchemasMatchSpec checks the body schemas of ports,
// portgroups, chassis and volume records against upstream's.
func TestResourceSchemasMatchSpec(t *testing.T) {
	for name, rel := range map[string]string{
		"port":             "ironic/api/schemas/controllers/port/PORT_SCHEMA.json",
		"portgroup":        "ironic/api/schemas/controllers/portgroup/PORTGROUP_SCHEMA.json",
		"chassis":          "ironic/api/schemas/controllers/chassis/CHASSIS_SCHEMA.json",
		"volume_connector": "ironic/api/schemas/controllers/volume_connector/CONNECTOR_SCHEMA.json",
		"volume_target":    "ironic/api/schemas/controllers/volume_target/TARGET_SCHEMA.json",
	} {
		t.Run(name, func(t *testing.T) {
			var want, got any
			spectest.LoadJSON(t, rel, &want)
			raw, err := schemaFiles.ReadFile("schemas/" + name + ".json")
			if err != nil {
				t.Fatal(err)
			}
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

func TestMACAndSwitchID(t *testing.T) {
	for in, want := range map[string]string{"AA:bb:CC:dd:ee:FF": "aa:bb:cc:dd:ee:ff", "aa:bb:cc:dd:ee:ff\n": "aa:bb:cc:dd:ee:ff\n"} {
		if got, err := MACAddress("address", in); err != nil || got != want {
			t.Errorf("MACAddress(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []any{"aa-bb-cc-dd-ee-ff", "aa:bb:cc:dd:ee", "", 5.0} {
		if _, err := MACAddress("address", in); err == nil {
			t.Errorf("MACAddress(%v) accepted", in)
		}
	}
	if _, err := MACAddress("address", "zz"); err == nil || err.Error() != "Expected valid MAC address for address: zz" {
		t.Errorf("message: %v", err)
	}
	llc := map[string]any{"switch_id": "0A:1B:2C:3D:4E:5F", "port_id": "p"}
	if err := LocalLinkConnection("local_link_connection", llc); err != nil || llc["switch_id"] != "0a:1b:2c:3d:4e:5f" {
		t.Errorf("llc mac: %v %v", err, llc)
	}
	llc = map[string]any{"switch_id": "00000000000000AB", "port_id": "p"}
	if err := LocalLinkConnection("local_link_connection", llc); err != nil || llc["switch_id"] != "00000000000000ab" {
		t.Errorf("llc datapath: %v %v", err, llc)
	}
	err := LocalLinkConnection("local_link_connection", map[string]any{"switch_id": "bad", "port_id": "p"})
	if err == nil || err.Error() != "Expected a MAC address or OpenFlow datapath ID but received bad." {
		t.Errorf("llc bad switch: %v", err)
	}
}
