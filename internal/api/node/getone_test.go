package node

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// modelPathStore finds no row for GetNodeRow, so that GET one node takes
// the model path (GetNode, convert, api.WriteJSON): the reference the row
// path is held to.
type modelPathStore struct{ store.Store }

func (modelPathStore) GetNodeRow(_ context.Context, uuid string, _ []string) (*store.NodeRow, error) {
	return nil, &store.NotFoundError{Kind: store.KindNode, Ident: uuid}
}

// TestGetOneRowSameBytes holds GET /v1/nodes/{uuid} read as a row and
// written as a page writes its nodes to the bytes of the model path, for
// versions, field lists, secrets shown or masked and fields redacted below
// the filter threshold.
func TestGetOneRowSameBytes(t *testing.T) {
	for _, policy := range []struct {
		name string
		show func(r *http.Request, rule string, n *model.Node) bool
	}{
		{"secrets shown", func(*http.Request, string, *model.Node) bool { return true }},
		{"secrets masked", nil},
		{"below the filter threshold", func(_ *http.Request, rule string, _ *model.Node) bool {
			return rule == "show_instance_secrets" || rule == "baremetal:node:get:reservation"
		}},
	} {
		t.Run(policy.name, func(t *testing.T) {
			var deps Deps
			e := newEnvWith(t, func(d *Deps) { d.Show = policy.show; deps = *d })
			for i := range 3 {
				e.create(benchNodeBody(i))
			}
			r := e.do("PATCH", "/v1/nodes/bench-000001", "1.115", `[{"op": "add", "path": "/instance_uuid", "value": "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"}, {"op": "add", "path": "/maintenance", "value": true}, {"op": "add", "path": "/instance_info", "value": {"configdrive": "x", "image_source": "http://a/b"}}]`)
			if r.status != http.StatusOK {
				t.Fatalf("patch: %d %s", r.status, r.body)
			}
			if r := e.do("PUT", "/v1/nodes/bench-000001/traits/CUSTOM_GOLD", "1.115", ""); r.status != http.StatusNoContent {
				t.Fatalf("trait: %d %s", r.status, r.body)
			}
			uuid := e.do("GET", "/v1/nodes/bench-000001", "1.115", "").json(t)["uuid"].(string)
			deps.Store = modelPathStore{deps.Store}
			handlers := map[string]api.HandlerFunc{}
			Register(handlers, deps)
			ref := apitest.New(t, api.Deps{Logger: deps.Logger, Handlers: handlers})
			for _, c := range []struct{ path, version string }{
				{"/v1/nodes/" + uuid, "1.115"},
				{"/v1/nodes/" + uuid, "1.78"},
				{"/v1/nodes/" + uuid, "1.1"},
				{"/v1/nodes/" + uuid, "1.31"},
				{"/v1/nodes/" + uuid + "?fields=" + novaFields, "1.46"},
				{"/v1/nodes/" + uuid + "?fields=uuid,driver_info,instance_info,last_error,reservation", "1.115"},
				{"/v1/nodes/" + uuid + "?fields=uuid,chassis_uuid,allocation_uuid,conductor,traits", "1.115"},
				{"/v1/nodes/" + uuid + "?fields=uuid,bogus", "1.115"},
				{"/v1/nodes/" + uuid + "?fields=uuid,conductor", "1.48"},
				{"/v1/nodes/" + uuid + "?fields=uuid", "1.7"},
				{"/v1/nodes/" + uuid + ".json", "1.78"},
				{"/v1/nodes/1be26c0b-03f2-4d2e-ae87-c02d7f33c000", "1.115"},
			} {
				got := e.do("GET", c.path, c.version, "")
				req := httptest.NewRequest("GET", "http://127.0.0.1:6385"+c.path, nil)
				req.Header.Set("X-OpenStack-Ironic-API-Version", c.version)
				w := httptest.NewRecorder()
				ref.ServeHTTP(w, req)
				if got.status != w.Code || !bytes.Equal(got.body, w.Body.Bytes()) ||
					got.header.Get("Content-Length") != w.Header().Get("Content-Length") ||
					got.header.Get("Content-Type") != w.Header().Get("Content-Type") {
					t.Errorf("%s at %s:\n got %d %v %s\nwant %d %v %s", c.path, c.version, got.status, got.header, got.body, w.Code, w.Header(), w.Body.Bytes())
				}
			}
		})
	}
}
