package allocation

import (
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// FuzzCreate posts arbitrary creation bodies at several versions: never a
// server error.
func FuzzCreate(f *testing.F) {
	for _, s := range []string{
		`{"resource_class": "fz"}`, `{"resource_class": "fz", "name": "n", "traits": ["CUSTOM_A"]}`,
		`{"node": "fz-node"}`, `{"resource_class": "fz", "candidate_nodes": ["fz-node", "x y"]}`,
		`{"resource_class": "fz", "uuid": "5344a3e2-978a-444e-990a-cbf47c62ef88", "extra": {"a": [1]}}`,
		`{"resource_class": null, "owner": 1}`, `[]`, `"x"`, `{"resource_class": "` + "\u00e9" + `"}`, `{`, ``,
	} {
		f.Add(s, "1.115")
		f.Add(s, "1.52")
		f.Add(s, "1.58")
	}
	e := newEnv(f, nil)
	e.node(states.Active, nil, rc("fz"), func(n *model.Node) { n.Name = strPtr("fz-node") })
	f.Fuzz(func(t *testing.T, body, version string) {
		e.t = t
		r := e.do("POST", "/v1/allocations", version, body)
		if r.Status >= 500 {
			t.Fatalf("POST %q at %s: %d %s", body, version, r.Status, r.Body)
		}
	})
}

func strPtr(s string) *string { return &s }
