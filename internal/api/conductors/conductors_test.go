package conductors

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

type env struct {
	t   *testing.T
	h   http.Handler
	s   store.Store
	now time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, s: store.New(storetest.Backends(t)[0].DB), now: time.Now()}
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: e.s, Now: func() time.Time { return e.now }})
	e.h = apitest.New(t, api.Deps{Handlers: m, Logger: slog.New(slog.DiscardHandler)})
	return e
}

func (e *env) get(path, version string) (int, map[string]any) {
	e.t.Helper()
	r := apitest.Do(e.t, e.h, "GET", path, version, "")
	m := r.JSON(e.t)
	if s, ok := m["error_message"].(string); ok {
		var inner map[string]any
		_ = json.Unmarshal([]byte(s), &inner)
		return r.Status, inner
	}
	return r.Status, m
}

func keys(m map[string]any) []string { return apitest.Keys(m) }

func (e *env) register(host, group string) {
	e.t.Helper()
	if _, err := e.s.RegisterConductor(e.t.Context(), host, group, []model.ConductorHardwareInterface{}, false); err != nil {
		e.t.Fatal(err)
	}
}

func TestListAndShow(t *testing.T) {
	e := newEnv(t)
	e.register("c1.example", "")
	e.register("c2.example", "grp")
	st, doc := e.get("/v1/conductors", "1.49")
	if st != 200 {
		t.Fatalf("%d %v", st, doc)
	}
	items := doc["conductors"].([]any)
	if len(items) != 2 {
		t.Fatalf("%v", doc)
	}
	first := items[0].(map[string]any)
	if !slices.Equal(keys(first), []string{"alive", "conductor_group", "hostname", "links"}) || first["alive"] != true {
		t.Fatalf("default fields %v", first)
	}
	var sample map[string]any
	spectest.LoadJSON(t, "ironic/api/api-ref/samples/conductor-show-response.json", &sample)
	if st, at49 := e.get("/v1/conductors/c2.example", "1.49"); st != 200 || at49["hostname"] != "c2.example" {
		t.Fatalf("show at 1.49: %d %v", st, at49)
	}
	_, one := e.get("/v1/conductors/c2.example", "1.115")
	if !slices.Equal(keys(one), keys(sample)) || one["conductor_group"] != "grp" {
		t.Fatalf("show %v, sample keys %v", one, keys(sample))
	}
	_, det := e.get("/v1/conductors?detail=True&limit=1", "1.115")
	if d := det["conductors"].([]any)[0].(map[string]any); !slices.Equal(keys(d), keys(sample)) {
		t.Fatalf("detail %v", d)
	}
	if det["next"] != "http://127.0.0.1:6385/v1/conductors?sort_key=id&sort_dir=asc&detail=True&limit=1&marker=c1.example" {
		t.Fatalf("next %v", det["next"])
	}
	_, page := e.get("/v1/conductors?marker=c1.example&fields=hostname", "1.115")
	if got := page["conductors"].([]any); len(got) != 1 || got[0].(map[string]any)["hostname"] != "c2.example" {
		t.Fatalf("page %v", page)
	}
	e.now = e.now.Add(2 * time.Minute)
	if _, one := e.get("/v1/conductors/c1.example?fields=alive", "1.115"); one["alive"] != false {
		t.Fatalf("stale conductor alive: %v", one)
	}
}

func TestErrors(t *testing.T) {
	e := newEnv(t)
	e.register("c1", "")
	cases := []struct {
		name, path, version string
		status              int
		msg                 string
	}{
		{"too old", "/v1/conductors", "1.48", 404, "The API is not supported for this version"},
		{"show too old", "/v1/conductors/c1", "1.48", 404, "The API is not supported for this version"},
		{"unknown", "/v1/conductors/nope", "1.115", 404, "Conductor nope could not be found."},
		{"unknown marker", "/v1/conductors?marker=nope", "1.115", 404, "Conductor nope could not be found."},
		{"bad marker port", "/v1/conductors?marker=h:x", "1.115", 400, "marker: invalid literal for int() with base 10: 'x'"},
		{"no host", "/v1/conductors?marker=:80", "1.115", 400, "Missing host in marker"},
		{"bad field", "/v1/conductors?fields=foo", "1.115", 400, "Schema error: 'foo' is not one of ['alive', 'conductor_group', 'created_at', 'drivers', 'hostname', 'links', 'updated_at']"},
		{"sort alive", "/v1/conductors?sort_key=alive", "1.115", 400, "The sort_key value alive is an invalid field for sorting"},
		{"detail and fields", "/v1/conductors?detail=true&fields=hostname", "1.115", 400, "Can not specify ?detail=True and fields in the same request."},
		{"bad detail", "/v1/conductors?detail=maybe", "1.115", 400, "Invalid detail: Unrecognized value 'maybe', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'"},
		{"unexpected", "/v1/conductors?x=1", "1.115", 400, "Unexpected arguments: x"},
		{"bad limit", "/v1/conductors?limit=0", "1.115", 400, "Limit must be positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, doc := e.get(c.path, c.version)
			if st != c.status || doc["faultstring"] != c.msg {
				t.Fatalf("%d %v", st, doc)
			}
		})
	}
}
