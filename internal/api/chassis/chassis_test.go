package chassis

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

type env struct {
	t testing.TB
	h http.Handler
	s store.Store
}

func newEnv(t testing.TB) *env {
	s := store.New(storetest.Backends(t)[0].DB)
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: s})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return &env{t: t, h: apitest.New(t, api.Deps{Logger: log, Handlers: handlers}), s: s}
}

func (e *env) do(method, path, version, body string) (int, http.Header, map[string]any) {
	e.t.Helper()
	r := apitest.Do(e.t, e.h, method, path, version, body)
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return r.Status, r.Header, m
}

func fault(m map[string]any) string {
	var inner struct {
		Faultstring string `json:"faultstring"`
	}
	s, _ := m["error_message"].(string)
	_ = json.Unmarshal([]byte(s), &inner)
	return inner.Faultstring
}

func TestChassisCRUD(t *testing.T) {
	e := newEnv(t)
	var req map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/chassis-create-request.json", &req)
	raw, _ := json.Marshal(req)
	for _, v := range []string{"1.1", "1.115"} {
		st, hdr, c := e.do("POST", "/v1/chassis", v, string(raw))
		if st != 201 || c["description"] != req["description"] || hdr.Get("Location") != "http://127.0.0.1:6385/v1/chassis/"+c["uuid"].(string) {
			t.Fatalf("create at %s: %d %v", v, st, c)
		}
		var sample map[string]any
		spectest.LoadJSON(t, "ironic/api/api-ref/samples/chassis-show-response.json", &sample)
		for k := range sample {
			if _, ok := c[k]; !ok {
				t.Errorf("create response lacks %s", k)
			}
		}
		if links := c["nodes"].([]any)[0].([]any); len(links) != 2 {
			t.Errorf("nodes links %v", c["nodes"])
		}
	}
	st, _, list := e.do("GET", "/v1/chassis", "1.1", "")
	items := list["chassis"].([]any)
	if st != 200 || len(items) != 2 || len(items[0].(map[string]any)) != 3 {
		t.Fatalf("list: %d %v", st, list)
	}
	id := items[0].(map[string]any)["uuid"].(string)
	if st, _, d := e.do("GET", "/v1/chassis/detail?limit=1", "1.115", ""); st != 200 || len(d["chassis"].([]any)) != 1 ||
		!strings.HasPrefix(d["next"].(string), "http://127.0.0.1:6385/v1/chassis/detail?") || !strings.Contains(d["next"].(string), "limit=1") ||
		!strings.Contains(d["next"].(string), "marker=") {
		t.Errorf("detail: %d %v", st, d)
	}
	st, _, p := e.do("PATCH", "/v1/chassis/"+id, "1.1", `[{"op": "replace", "path": "/description", "value": "new"}, {"op": "add", "path": "/extra/a", "value": 1}]`)
	if st != 200 || p["description"] != "new" || p["extra"].(map[string]any)["a"] != 1.0 || p["updated_at"] == nil {
		t.Errorf("patch: %d %v", st, p)
	}
	ctx := context.Background()
	c, _ := e.s.GetChassisByUUID(ctx, id)
	name := "n"
	if _, err := e.s.CreateNode(ctx, &model.Node{UUID: uuid.NewString(), Driver: "fake-hardware", ChassisID: &c.ID, Name: &name}); err != nil {
		t.Fatal(err)
	}
	missing := uuid.NewString()
	for _, tc := range []struct {
		method, path, body string
		status             int
		msg                string
	}{
		{"DELETE", "/v1/chassis/" + id, "", 400, "Cannot complete the requested action because chassis " + id + " contains nodes."},
		{"GET", "/v1/chassis/" + missing, "", 404, "Chassis " + missing + " could not be found."},
		{"GET", "/v1/chassis/abc", "", 400, "Expected UUID for chassis_uuid: abc"},
		{"GET", "/v1/chassis?sort_key=extra", "", 400, "The sort_key value extra is an invalid field for sorting"},
		{"GET", "/v1/chassis?fields=bogus", "", 400, `Field(s) "bogus" are not valid`},
		{"GET", "/v1/chassis?marker=" + missing, "", 404, "Chassis " + missing + " could not be found."},
		{"POST", "/v1/chassis", `{"foo": 1}`, 400, "Schema error for chassis: Additional properties are not allowed ('foo' was unexpected)"},
		{"POST", "/v1/chassis", `{"uuid": "x"}`, 400, "Expected UUID for uuid: x"},
		{"POST", "/v1/chassis", `{"uuid": "` + id + `"}`, 409, "A chassis with UUID " + id + " already exists."},
		{"PATCH", "/v1/chassis/" + id, `[{"op": "add", "path": "/foo", "value": 1}]`, 400, "Cannot patch /foo. Only the following can be updated: uuid, extra, description"},
		{"PATCH", "/v1/chassis/" + id, `[{"op": "replace", "path": "/uuid", "value": "` + missing + `"}]`, 400, "Cannot overwrite UUID for an existing Chassis."},
	} {
		st, _, m := e.do(tc.method, tc.path, "1.115", tc.body)
		if st != tc.status || fault(m) != tc.msg {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, st, fault(m), tc.status, tc.msg)
		}
	}
	id2 := items[1].(map[string]any)["uuid"].(string)
	if st, _, _ := e.do("DELETE", "/v1/chassis/"+id2, "1.1", ""); st != 204 {
		t.Errorf("delete: %d", st)
	}
	if st, _, _ := e.do("GET", "/v1/chassis/"+id2, "1.1", ""); st != 404 {
		t.Errorf("after delete: %d", st)
	}
}

func FuzzCreate(f *testing.F) {
	for _, s := range []string{`{}`, `{"uuid": null, "extra": {"a": [1]}, "description": "x"}`, `null`, `[1]`, `{"uuid": "0000"}`} {
		f.Add(s)
	}
	fe := newEnv(f)
	f.Fuzz(func(t *testing.T, body string) {
		// Requests report to the fuzz run's T, not the F.
		e := &env{t: t, h: fe.h, s: fe.s}
		if st, _, m := e.do("POST", "/v1/chassis", "1.115", body); st >= 500 {
			t.Fatalf("%s: %d %v", body, st, m)
		}
	})
}
