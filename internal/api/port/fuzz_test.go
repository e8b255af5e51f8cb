package port

import (
	"strings"
	"testing"
)

// FuzzCreate posts arbitrary bodies: never a server error.
func FuzzCreate(f *testing.F) {
	for _, s := range []string{
		`{"address": "aa:bb:cc:dd:ee:ff", "node_uuid": "%N"}`,
		`{"address": "aa:bb:cc:dd:ee:ff", "node_ident": "n1", "local_link_connection": {"switch_id": "x"}}`,
		`{"address": 1, "node_uuid": null, "pxe_enabled": "yes", "is_smartnic": true}`,
		`null`, `[]`, `{"address": "aa:bb:cc:dd:ee:ff", "node_uuid": "%N", "portgroup_uuid": "%N"}`,
	} {
		f.Add(s, "1.115")
	}
	e := newEnv(f)
	n := e.node("n1", nil)
	f.Fuzz(func(t *testing.T, body, version string) {
		e.t = t
		r := e.do("POST", "/v1/ports", version, strings.ReplaceAll(body, "%N", n.UUID))
		if r.Status >= 500 {
			t.Fatalf("%s at %q: %d %s", body, version, r.Status, r.Body)
		}
	})
}
