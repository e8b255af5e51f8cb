package portgroup

import (
	"strings"
	"testing"
)

// FuzzCreate posts arbitrary bodies: never a server error.
func FuzzCreate(f *testing.F) {
	for _, s := range []string{
		`{"address": "aa:bb:cc:dd:ee:ff", "node_uuid": "%N"}`,
		`{"node_uuid": "%N", "mode": "802.3ad", "properties": {"a": 1}, "standalone_ports_supported": "yes"}`,
		`{"address": 1, "node_uuid": null, "name": "a b"}`,
		`null`, `[]`, `{"node_uuid": "%N", "uuid": "%N", "physical_network": ""}`,
	} {
		f.Add(s, "1.115")
		f.Add(s, "1.23")
	}
	e := newEnv(f)
	n := e.node("n1", nil)
	f.Fuzz(func(t *testing.T, body, version string) {
		e.t = t
		r := e.do("POST", "/v1/portgroups", version, strings.ReplaceAll(body, "%N", n.UUID))
		if r.Status >= 500 {
			t.Fatalf("%s at %q: %d %s", body, version, r.Status, r.Body)
		}
	})
}
