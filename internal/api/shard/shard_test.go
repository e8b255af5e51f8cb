package shard

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

func TestShards(t *testing.T) {
	s := store.New(storetest.Backends(t)[0].DB)
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: s})
	h := apitest.New(t, api.Deps{Handlers: m, Logger: slog.New(slog.DiscardHandler)})
	get := func(path, version string) (int, string) {
		req := httptest.NewRequest("GET", "http://127.0.0.1:6385"+path, nil)
		req.Header.Set("X-OpenStack-Ironic-API-Version", version)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		b, _ := io.ReadAll(w.Body)
		return w.Code, string(b)
	}
	if st, body := get("/v1/shards", "1.82"); st != 200 || body != `{"shards": []}` {
		t.Fatalf("empty: %d %s", st, body)
	}
	for _, sh := range []string{"b", "a", "b", "", "", "a", "b"} {
		n := &model.Node{Driver: "fake-hardware"}
		if sh != "" {
			n.Shard = &sh
		}
		if _, err := s.CreateNode(t.Context(), n); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"shards": [{"name": "b", "count": 3}, {"name": "None", "count": 2}, {"name": "a", "count": 2}]}`
	if st, body := get("/v1/shards", "1.115"); st != 200 || body != want {
		t.Fatalf("shards: %d %s\nwant %s", st, body, want)
	}
	for _, c := range []struct{ path, version, body string }{
		{"/v1/shards", "1.81", `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"The API version does not allow shards\", \"debuginfo\": null}"}`},
		{"/v1/shards?x=1", "1.115", `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Unexpected arguments: x\", \"debuginfo\": null}"}`},
		// get_one refuses every name, at every version with its own gate.
		{"/v1/shards/b", "1.115", `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"The resource could not be found.\", \"debuginfo\": null}"}`},
		{"/v1/shards/b", "1.81", `{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"The API version does not allow shards\", \"debuginfo\": null}"}`},
	} {
		st, body := get(c.path, c.version)
		if st/100 != 4 || body != c.body {
			t.Errorf("%s at %s: %d %s", c.path, c.version, st, body)
		}
	}
}
