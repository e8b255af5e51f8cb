package node

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/model"
)

// TestChassisNodes drives GET /v1/chassis/{chassis_id}/nodes[/detail]:
// the list is the chassis's nodes only, with get_all's and detail's
// rules.
func TestChassisNodes(t *testing.T) {
	e := newEnv(t)
	ch, err := e.s.CreateChassis(context.Background(), &model.Chassis{UUID: "5c3f1c6e-8b0a-4b8e-9d43-2f4b8f0e7a11"})
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]bool{}
	for _, name := range []string{"in-a", "in-b"} {
		n := e.create(`{"driver": "fake-hardware", "name": "` + name + `", "chassis_uuid": "` + ch.UUID + `"}`)
		in[n["uuid"].(string)] = true
	}
	e.create(`{"driver": "fake-hardware", "name": "outside"}`)
	base := "/v1/chassis/" + ch.UUID + "/nodes"

	for _, version := range []string{"1.1", "1.115"} {
		for _, path := range []string{base, base + "/detail"} {
			r := e.do("GET", path, version, "")
			if r.status != http.StatusOK {
				t.Fatalf("%s at %s: %d %s", path, version, r.status, r.body)
			}
			items := r.json(t)["nodes"].([]any)
			if len(items) != 2 {
				t.Fatalf("%s at %s: %s", path, version, r.body)
			}
			for _, it := range items {
				if !in[it.(map[string]any)["uuid"].(string)] {
					t.Errorf("%s at %s: node outside the chassis: %v", path, version, it)
				}
			}
			_, hasDriver := items[0].(map[string]any)["driver"]
			if wantDetail := strings.HasSuffix(path, "/detail"); hasDriver != wantDetail {
				t.Errorf("%s at %s: detail fields shown = %v", path, version, hasDriver)
			}
		}
	}

	list := e.do("GET", base+"?limit=1&fields=uuid,name", "1.115", "").json(t)
	if items := list["nodes"].([]any); len(items) != 1 || !slices.Equal(keysOf(items[0].(map[string]any)), []string{"links", "name", "uuid"}) {
		t.Errorf("fields and limit: %v", list)
	}
	next, _ := list["next"].(string)
	if !strings.HasPrefix(next, "http://127.0.0.1:6385/v1/nodes?sort_key=id&sort_dir=asc&fields=uuid,name&limit=1&marker=") {
		t.Errorf("next = %q", next)
	}
	detail := e.do("GET", base+"/detail?limit=1", "1.115", "").json(t)
	if next, _ := detail["next"].(string); !strings.HasPrefix(next, "http://127.0.0.1:6385/v1/nodes/detail?sort_key=id&sort_dir=asc&limit=1&marker=") {
		t.Errorf("detail next = %q", next)
	}
	if r := e.do("GET", base+"?detail=True", "1.115", ""); r.status != 200 {
		t.Errorf("?detail=True: %d %s", r.status, r.body)
	} else if _, ok := r.json(t)["nodes"].([]any)[0].(map[string]any)["driver_info"]; !ok {
		t.Errorf("?detail=True shows no detail: %s", r.body)
	}
	if r := e.do("GET", base+"?maintenance=true", "1.115", ""); r.status != 200 || len(r.json(t)["nodes"].([]any)) != 0 {
		t.Errorf("filters combine with the chassis: %d %s", r.status, r.body)
	}

	missing := "eeeeeeee-cccc-aaaa-bbbb-cccccccccccc"
	cases := []struct {
		name, path, version string
		status              int
		fault               string
	}{
		{"unknown chassis", "/v1/chassis/" + missing + "/nodes", "1.115", 404, "Chassis " + missing + " could not be found."},
		{"unknown chassis detail", "/v1/chassis/" + missing + "/nodes/detail", "1.115", 404, "Chassis " + missing + " could not be found."},
		{"chassis not a uuid", "/v1/chassis/nope/nodes", "1.115", 400, "Expected UUID for chassis_uuid: nope"},
		{"chassis_uuid in query", base + "?chassis_uuid=" + ch.UUID, "1.115", 400, "Unexpected arguments: chassis_uuid"},
		{"chassis_uuid in detail query", base + "/detail?chassis_uuid=" + ch.UUID, "1.115", 400, "Unexpected arguments: chassis_uuid"},
		{"fields on detail", base + "/detail?fields=uuid", "1.115", 400, "Unexpected arguments: fields"},
		{"fields before 1.8", base + "?fields=uuid", "1.7", 406, "Request not acceptable."},
		{"detail before 1.43", base + "?detail=True", "1.42", 400, "Invalid query parameter ?detail=True received."},
		{"driver filter old", base + "/detail?driver=x", "1.15", 406, "Request not acceptable. The minimal required API version should be 1.16"},
		{"bad sort key", base + "?sort_key=extra", "1.115", 400, "The sort_key value extra is an invalid field for sorting"},
		{"bad marker", base + "?marker=" + missing, "1.115", 404, "Node " + missing + " could not be found."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("GET", c.path, c.version, "")
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if got := r.faultstring(t); got != c.fault {
				t.Errorf("faultstring\n got  %q\n want %q", got, c.fault)
			}
		})
	}
}
