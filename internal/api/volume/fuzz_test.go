package volume

import (
	"strings"
	"testing"
)

// FuzzCreate posts arbitrary bodies to both create routes: never a server
// error.
func FuzzCreate(f *testing.F) {
	for _, s := range []string{
		`{"node_uuid": "%N", "type": "iqn", "connector_id": "iqn.x"}`,
		`{"node_uuid": "%N", "volume_type": "iscsi", "volume_id": "v", "boot_index": 0, "properties": {"password": "x"}}`,
		`{"node_uuid": "%N", "volume_type": "iscsi", "volume_id": "v", "boot_index": 1e400}`,
		`{"node_uuid": "%N", "volume_type": "iscsi", "volume_id": "v", "boot_index": 2.5}`,
		`null`, `[]`, `{"node_uuid": null, "uuid": "x"}`,
	} {
		f.Add(s, "1.115")
	}
	e := newEnv(f)
	n := e.node("n1", nil)
	f.Fuzz(func(t *testing.T, body, version string) {
		e.t = t
		for _, p := range []string{"/v1/volume/connectors", "/v1/volume/targets"} {
			r := e.do("POST", p, version, strings.ReplaceAll(body, "%N", n.UUID))
			if r.Status >= 500 {
				t.Fatalf("%s %s at %q: %d %s", p, body, version, r.Status, r.Body)
			}
		}
	})
}
