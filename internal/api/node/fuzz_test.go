package node

import (
	"bytes"
	"net/http"
	"testing"
)

// FuzzPatch sends arbitrary PATCH documents: never a server error, and a
// refused document leaves the node exactly as it was.
func FuzzPatch(f *testing.F) {
	for _, s := range []string{
		`[{"op": "add", "path": "/extra/a", "value": 1}]`,
		`[{"op": "remove", "path": "/instance_uuid"}]`,
		`[{"op": "replace", "path": "/name", "value": "x y"}]`,
		`[{"op": "add", "path": "/extra/a", "value": 1}, {"op": "remove", "path": "/extra/zz"}]`,
		`[{"op": "add", "path": "/properties/-", "value": 1}]`,
		`{}`, `[]`, `[1]`, `"x"`,
	} {
		f.Add(s)
	}
	e := newEnv(f)
	uuid := e.create(`{"driver": "fake-hardware", "name": "fuzz"}`)["uuid"].(string)
	f.Fuzz(func(t *testing.T, doc string) {
		e.t = t
		before := e.do("GET", "/v1/nodes/"+uuid, "1.115", "")
		r := e.do("PATCH", "/v1/nodes/"+uuid, "1.115", doc)
		if r.status >= 500 {
			t.Fatalf("PATCH %q: %d %s", doc, r.status, r.body)
		}
		if r.status != http.StatusOK {
			after := e.do("GET", "/v1/nodes/"+uuid, "1.115", "")
			if !bytes.Equal(before.body, after.body) {
				t.Fatalf("refused PATCH %q changed the node", doc)
			}
		}
	})
}
