package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/conductor/workers"
	"github.com/openkeel/ironic/internal/metrics"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches /metrics from srv and parses it.
func scrape(t *testing.T, srv *httptest.Server) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(srv.URL + metrics.Path)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape: status %d: %s", resp.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse scrape: %v", err)
	}
	return fams
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// find returns the metric of family name whose labels include want.
func find(fams map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	for _, m := range fams[name].GetMetric() {
		got := labels(m)
		ok := true
		for k, v := range want {
			if got[k] != v {
				ok = false
			}
		}
		if ok {
			return m
		}
	}
	return nil
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func apiServer(t *testing.T) *httptest.Server {
	t.Helper()
	reg := metrics.NewRegistry()
	a, err := metrics.NewAPI(reg, api.Routes)
	if err != nil {
		t.Fatal(err)
	}
	h := api.New(api.Deps{Authorize: api.AllowAll, Logger: slog.New(slog.DiscardHandler), Handlers: map[string]api.HandlerFunc{
		"GET /v1/nodes": func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
			return api.WriteJSON(w, http.StatusOK, map[string]any{"nodes": []any{}})
		},
		"GET /v1/nodes/{node_ident}": func(w http.ResponseWriter, r *http.Request, rc *api.RequestContext) error {
			return api.WriteJSON(w, http.StatusOK, map[string]any{"uuid": rc.Param("node_ident")})
		},
	}})
	srv := httptest.NewServer(metrics.Mount(metrics.Handler(reg), a.Middleware(h)))
	t.Cleanup(srv.Close)
	return srv
}

func TestAPIRequestsByRouteAndStatus(t *testing.T) {
	srv := apiServer(t)
	for range 3 {
		if st := get(t, srv.URL+"/v1/nodes"); st != http.StatusOK {
			t.Fatalf("GET /v1/nodes: %d", st)
		}
	}
	// Two different idents, one series: the route, not the path.
	get(t, srv.URL+"/v1/nodes/node-a")
	get(t, srv.URL+"/v1/nodes/node-b")
	// A route without a handler answers 501.
	if st := get(t, srv.URL+"/v1/chassis"); st != http.StatusNotImplemented {
		t.Fatalf("GET /v1/chassis: %d", st)
	}
	fams := scrape(t, srv)

	cases := []struct {
		route, code string
		count       float64
	}{
		{"GET /v1/nodes", "200", 3},
		{"GET /v1/nodes/{node_ident}", "200", 2},
		{"GET /v1/chassis", "501", 1},
	}
	for _, c := range cases {
		m := find(fams, "ironic_api_requests_total", map[string]string{"method": "GET", "route": c.route, "code": c.code})
		if m == nil {
			t.Fatalf("no ironic_api_requests_total for %s %s; have %v", c.route, c.code, fams["ironic_api_requests_total"])
		}
		if got := m.GetCounter().GetValue(); got != c.count {
			t.Errorf("%s %s: count %v, want %v", c.route, c.code, got, c.count)
		}
		h := find(fams, "ironic_api_request_duration_seconds", map[string]string{"method": "GET", "route": c.route})
		if h == nil || h.GetHistogram().GetSampleCount() != uint64(c.count) {
			t.Errorf("%s: histogram %v, want %v samples", c.route, h, c.count)
		}
	}
	// The scrape itself is not an API request.
	for _, m := range fams["ironic_api_requests_total"].GetMetric() {
		if l := labels(m); l["route"] == metrics.Path {
			t.Errorf("scrape counted as a request: %v", l)
		}
	}
	if fams["go_goroutines"] == nil || fams["process_cpu_seconds_total"] == nil && fams["process_start_time_seconds"] == nil {
		t.Errorf("runtime collectors missing")
	}
}

func TestAPIRandomPathsShareOneSeries(t *testing.T) {
	srv := apiServer(t)
	const n = 40
	for i := range n {
		if st := get(t, fmt.Sprintf("%s/v1/no-such-thing-%d/x", srv.URL, i)); st != http.StatusNotFound {
			t.Fatalf("random path %d: status %d", i, st)
		}
	}
	req, _ := http.NewRequest("FROBNICATE", srv.URL+"/v1/nodes", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	fams := scrape(t, srv)
	series := fams["ironic_api_requests_total"].GetMetric()
	var unmatched404 float64
	for _, m := range series {
		l := labels(m)
		if strings.Contains(l["route"], "no-such-thing") {
			t.Fatalf("raw path leaked into a label: %v", l)
		}
		if l["route"] == metrics.RouteUnmatched && l["code"] == "404" {
			unmatched404 += m.GetCounter().GetValue()
		}
	}
	if unmatched404 != n {
		t.Errorf("unmatched 404s: %v, want %d", unmatched404, n)
	}
	if len(series) != 2 {
		t.Errorf("series: %d, want 2 (unmatched 404, OTHER method): %v", len(series), series)
	}
	if find(fams, "ironic_api_requests_total", map[string]string{"method": metrics.MethodOther, "route": metrics.RouteUnmatched}) == nil {
		t.Errorf("unknown method not labelled %s", metrics.MethodOther)
	}
}

func TestRouteLabel(t *testing.T) {
	a, err := metrics.NewAPI(metrics.NewRegistry(), api.Routes)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ method, path, want string }{
		{"GET", "/v1/nodes/detail", "GET /v1/nodes/detail"},
		{"GET", "/v1/nodes/abc", "GET /v1/nodes/{node_ident}"},
		{"GET", "/nodes/abc/", "GET /v1/nodes/{node_ident}"},
		{"GET", "/v1/nodes.json", "GET /v1/nodes"},
		{"GET", "/", "GET /"},
		{"GET", "/v1", "GET /v1"},
		{"GET", "/v1/", "GET /v1"},
		{"PUT", "/v1/nodes/n1/management/indicators/led@system", "PUT /v1/nodes/{node_ident}/management/indicators/{ind_ident}@{component}"},
		{"PUT", "/v1/nodes/n1/management/indicators/led", metrics.RouteUnmatched},
		{"DELETE", "/v1/nodes/detail/x/y/z", metrics.RouteUnmatched},
		{"PATCH", "/v1/nodes", metrics.RouteUnmatched},
		{"GET", "/healthcheck", metrics.RouteHealthcheck},
	}
	for _, c := range cases {
		if got := a.Route(c.method, c.path); got != c.want {
			t.Errorf("Route(%s %s) = %q, want %q", c.method, c.path, got, c.want)
		}
	}
	// Every route's own path labels it, so no table entry is unreachable.
	for _, r := range api.Routes {
		path := strings.NewReplacer("{ind_ident}@{component}", "a@b").Replace(r.Path)
		path = strings.NewReplacer("{", "x", "}", "x").Replace(path)
		if got := a.Route(r.Method, path); got != r.ID {
			// A literal route beside a parameter one wins the literal
			// path; the parameter route is then not what this path hits.
			if !strings.Contains(r.Path, "{") {
				t.Errorf("Route(%s %s) = %q, want %q", r.Method, path, got, r.ID)
			}
		}
	}
}

func TestNewAPITwiceOnOneRegistryFails(t *testing.T) {
	reg := metrics.NewRegistry()
	if _, err := metrics.NewAPI(reg, api.Routes); err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.NewAPI(reg, api.Routes); err == nil {
		t.Fatal("second registration succeeded")
	}
}

func TestConductorSeries(t *testing.T) {
	pool, err := workers.New(workers.Settings{Size: 4, ReservedPercentage: 50}, workers.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{}, 3)
	for range 3 {
		if err := pool.Spawn(context.Background(), func(context.Context) { started <- struct{}{}; <-release }, true); err != nil {
			t.Fatal(err)
		}
	}
	// The normal share (2) and one reserved worker run; periodic work
	// (no reserved share) is refused.
	if err := pool.Spawn(context.Background(), func(context.Context) {}, false); err == nil {
		t.Fatal("spawn beyond the normal share succeeded")
	}
	for range 3 {
		<-started
	}
	t.Cleanup(func() {
		close(release)
		if err := pool.Wait(context.Background()); err != nil {
			t.Error(err)
		}
	})

	locks, lockErr := 7, error(nil)
	reg := metrics.NewRegistry()
	if err := metrics.RegisterConductor(reg, metrics.ConductorSource{
		Host:       "cond-0.ironic",
		Workers:    pool.Stats,
		LocksHeld:  func(context.Context) (int, error) { return locks, lockErr },
		PushEvents: func() (int64, int64) { return 5, 2 },
	}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(metrics.Mount(metrics.Handler(reg), http.NotFoundHandler()))
	t.Cleanup(srv.Close)

	fams := scrape(t, srv)
	gauge := func(name string, l map[string]string) float64 {
		t.Helper()
		l["conductor"] = "cond-0.ironic"
		m := find(fams, name, l)
		if m == nil {
			t.Fatalf("no %s %v", name, l)
		}
		if m.GetCounter() != nil {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	want := []struct {
		name   string
		labels map[string]string
		value  float64
	}{
		{"ironic_conductor_workers_pool_size", map[string]string{"share": "normal"}, 2},
		{"ironic_conductor_workers_pool_size", map[string]string{"share": "reserved"}, 2},
		{"ironic_conductor_workers_running", map[string]string{"share": "normal"}, 2},
		{"ironic_conductor_workers_running", map[string]string{"share": "reserved"}, 1},
		{"ironic_conductor_workers_spawned_total", map[string]string{}, 3},
		{"ironic_conductor_workers_rejected_total", map[string]string{}, 1},
		{"ironic_conductor_node_locks_held", map[string]string{}, 7},
		{"openkeel_conductor_push_events_total", map[string]string{"outcome": "accepted"}, 5},
		{"openkeel_conductor_push_events_total", map[string]string{"outcome": "rejected"}, 2},
	}
	for _, w := range want {
		if got := gauge(w.name, w.labels); got != w.value {
			t.Errorf("%s %v = %v, want %v", w.name, w.labels, got, w.value)
		}
	}

	// A failing lock count drops that series only.
	lockErr = errors.New("database down")
	fams = scrape(t, srv)
	if fams["ironic_conductor_node_locks_held"] != nil {
		t.Errorf("lock series present despite the error")
	}
	if fams["ironic_conductor_workers_running"] == nil {
		t.Errorf("pool series lost with the lock count")
	}
}

func TestMountPassesOtherPaths(t *testing.T) {
	h := metrics.Mount(metrics.Handler(metrics.NewRegistry()), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	for path, want := range map[string]int{"/metrics": 200, "/": http.StatusTeapot, "/metrics/x": http.StatusTeapot} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != want {
			t.Errorf("%s: %d, want %d", path, rec.Code, want)
		}
	}
}
