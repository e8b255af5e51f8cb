package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/metrics"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/prometheus/client_golang/prometheus"
)

func serve(t *testing.T, reg *prometheus.Registry, next http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(metrics.Mount(metrics.Handler(reg), next))
	t.Cleanup(srv.Close)
	return srv
}

func TestPeriodicSeries(t *testing.T) {
	reg := metrics.NewRegistry()
	p, err := metrics.NewPeriodic(reg, "cond-1")
	if err != nil {
		t.Fatal(err)
	}
	due := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// On time, then 3 s late after an overrun; a start a little before
	// the tick (clock steps) counts as no lag.
	p.Observe("_sync_power_states", time.Minute, due, due, 2*time.Second)
	p.Observe("_sync_power_states", time.Minute, due.Add(time.Minute), due.Add(time.Minute+3*time.Second), 4*time.Second)
	p.Observe("_check_deploy_timeouts", time.Second, due, due.Add(-time.Millisecond), 30*time.Millisecond)
	fams := scrape(t, serve(t, reg, http.NotFoundHandler()))

	sync := map[string]string{"task": "_sync_power_states", "conductor": "cond-1"}
	if m := find(fams, "ironic_conductor_periodic_runs_total", sync); m.GetCounter().GetValue() != 2 {
		t.Errorf("sync runs = %v, want 2", m)
	}
	h := find(fams, "ironic_conductor_periodic_duration_seconds", sync).GetHistogram()
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 6 {
		t.Errorf("sync duration count %d sum %v, want 2 and 6", h.GetSampleCount(), h.GetSampleSum())
	}
	lag := find(fams, "ironic_conductor_periodic_lag_seconds", sync).GetHistogram()
	if lag.GetSampleCount() != 2 || lag.GetSampleSum() != 3 {
		t.Errorf("sync lag count %d sum %v, want 2 and 3", lag.GetSampleCount(), lag.GetSampleSum())
	}
	if v := find(fams, "ironic_conductor_periodic_interval_seconds", sync).GetGauge().GetValue(); v != 60 {
		t.Errorf("sync interval %v, want 60", v)
	}
	deploy := map[string]string{"task": "_check_deploy_timeouts"}
	if m := find(fams, "ironic_conductor_periodic_runs_total", deploy); m.GetCounter().GetValue() != 1 {
		t.Errorf("deploy timeout runs = %v, want 1", m)
	}
	if l := find(fams, "ironic_conductor_periodic_lag_seconds", deploy).GetHistogram(); l.GetSampleCount() != 1 || l.GetSampleSum() != 0 {
		t.Errorf("deploy timeout lag count %d sum %v, want 1 and 0", l.GetSampleCount(), l.GetSampleSum())
	}
	wantLast := float64(due.Add(time.Minute + 7*time.Second).Unix())
	if last := find(fams, "ironic_conductor_periodic_last_run_timestamp_seconds", sync).GetGauge().GetValue(); last != wantLast {
		t.Errorf("last run ended at %v, want %v", last, wantLast)
	}
}

// rpcStub answers as the JSON-RPC server does for a few methods.
func rpcStub(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "Only POST method can be used", http.StatusMethodNotAllowed)
		return
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(r.Body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	body := b.String()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case !strings.Contains(body, `"id"`):
		w.WriteHeader(http.StatusNoContent)
	case strings.Contains(body, `"get_node"`):
		w.Write([]byte(`{"jsonrpc":"2.0","id":"1","result":{"uuid":"x"}}`))
	case strings.Contains(body, `"do_node_deploy"`):
		w.Write([]byte(`{"jsonrpc":"2.0","id":"1","error":{"code":409,"message":"locked","data":{"class":"ironic.common.exception.NodeLocked"}}}`))
	case strings.Contains(body, `"vendor_passthru"`):
		w.Write([]byte(`{"jsonrpc":"2.0","id":"1","error":{"code":500,"message":"boom","data":{"class":"ironic.common.exception.IronicException"}}}`))
	default:
		w.Write([]byte(`{"jsonrpc":"2.0","id":"1","error":{"code":-32601,"message":"Method not found"}}`))
	}
}

func TestRPCCallsByMethodAndOutcome(t *testing.T) {
	reg := metrics.NewRegistry()
	m, err := metrics.NewRPC(reg)
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, reg, m.Middleware(http.HandlerFunc(rpcStub)))
	post := func(frame string) {
		t.Helper()
		resp, err := http.Post(srv.URL+"/", "application/json", strings.NewReader(frame))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	post(`{"jsonrpc":"2.0","id":"1","method":"get_node","params":{}}`)
	post(`{"jsonrpc":"2.0","id":"2","method":"get_node","params":{}}`)
	post(`{"jsonrpc":"2.0","id":"3","method":"do_node_deploy","params":{}}`)
	post(`{"jsonrpc":"2.0","id":"4","method":"vendor_passthru","params":{}}`)
	post(`{"jsonrpc":"2.0","method":"heartbeat","params":{}}`)
	post(`{"jsonrpc":"2.0","id":"5","method":"made_up_1","params":{}}`)
	post(`{"jsonrpc":"2.0","id":"6","method":"made_up_2","params":{}}`)
	post(`not json`)
	if code := get(t, srv.URL+"/"); code != http.StatusMethodNotAllowed {
		t.Fatalf("GET / = %d", code)
	}
	fams := scrape(t, srv)
	for _, c := range []struct {
		method, outcome string
		want            float64
	}{
		{"get_node", metrics.RPCOutcomeOK, 2},
		{"do_node_deploy", metrics.RPCOutcomeClientError, 1},
		{"vendor_passthru", metrics.RPCOutcomeServerError, 1},
		{"heartbeat", metrics.RPCOutcomeCast, 1},
		{metrics.RPCMethodInvalid, metrics.RPCOutcomeInvalid, 4},
	} {
		m := find(fams, "ironic_rpc_calls_total", map[string]string{"method": c.method, "outcome": c.outcome})
		if got := m.GetCounter().GetValue(); got != c.want {
			t.Errorf("calls{%s,%s} = %v, want %v", c.method, c.outcome, got, c.want)
		}
	}
	if n := len(fams["ironic_rpc_calls_total"].GetMetric()); n != 5 {
		t.Errorf("%d call series, want 5 (unknown methods must share one)", n)
	}
	h := find(fams, "ironic_rpc_call_duration_seconds", map[string]string{"method": "get_node"}).GetHistogram()
	if h.GetSampleCount() != 2 {
		t.Errorf("get_node duration count = %d, want 2", h.GetSampleCount())
	}
}

// TestRPCBodyPassedOn checks that the middleware hands the server the
// body it read.
func TestRPCBodyPassedOn(t *testing.T) {
	m, err := metrics.NewRPC(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var got string
	h := m.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		got = b.String()
		w.Write([]byte(`{"jsonrpc":"2.0","id":"1","result":null}`))
	}))
	frame := `{"jsonrpc":"2.0","id":"1","method":"get_node","params":{"node_id":"abc"}}`
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/", strings.NewReader(frame)))
	if got != frame {
		t.Errorf("server read %q, want %q", got, frame)
	}
}

func TestNodeCounts(t *testing.T) {
	nodes := []*model.Node{
		{ProvisionState: states.Available, PowerState: states.PowerOff},
		{ProvisionState: states.Available, PowerState: states.PowerOff},
		{ProvisionState: states.Active, PowerState: states.PowerOn},
		{ProvisionState: states.Active, PowerState: states.PowerOn, Maintenance: true},
		{ProvisionState: states.Enroll, PowerState: states.NoState},
		{ProvisionState: "hand edited", PowerState: "weird"},
		{ProvisionState: "also hand edited", PowerState: "strange"},
	}
	var fail error
	var deadline bool
	reg := metrics.NewRegistry()
	err := metrics.RegisterNodes(reg, func(ctx context.Context) ([]metrics.NodeCount, error) {
		_, deadline = ctx.Deadline()
		// As the database's GROUP BY counts them.
		var counts []metrics.NodeCount
		for _, n := range nodes {
			i := slices.IndexFunc(counts, func(c metrics.NodeCount) bool {
				return c.ProvisionState == n.ProvisionState && c.PowerState == n.PowerState && c.Maintenance == n.Maintenance
			})
			if i < 0 {
				counts = append(counts, metrics.NodeCount{ProvisionState: n.ProvisionState, PowerState: n.PowerState, Maintenance: n.Maintenance})
				i = len(counts) - 1
			}
			counts[i].Count++
		}
		return counts, fail
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, reg, http.NotFoundHandler())
	fams := scrape(t, srv)
	if !deadline {
		t.Error("node query ran without a timeout")
	}
	for _, c := range []struct {
		prov, power, maint string
		want               float64
	}{
		{states.Available, states.PowerOff, "false", 2},
		{states.Active, states.PowerOn, "false", 1},
		{states.Active, states.PowerOn, "true", 1},
		{states.Enroll, metrics.StateNone, "false", 1},
		{metrics.StateOther, metrics.StateOther, "false", 2},
	} {
		m := find(fams, "ironic_nodes", map[string]string{"provision_state": c.prov, "power_state": c.power, "maintenance": c.maint})
		if got := m.GetGauge().GetValue(); got != c.want {
			t.Errorf("nodes{%s,%s,%s} = %v, want %v", c.prov, c.power, c.maint, got, c.want)
		}
	}
	if n := len(fams["ironic_nodes"].GetMetric()); n != 5 {
		t.Errorf("%d node series, want 5", n)
	}

	fail = errors.New("database down")
	fams = scrape(t, srv)
	if _, ok := fams["ironic_nodes"]; ok {
		t.Error("node series served while the database is down")
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("runtime series lost with the node query")
	}
}
