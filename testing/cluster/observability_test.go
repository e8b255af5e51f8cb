package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/openkeel/ironic/internal/metrics"
	"github.com/openkeel/ironic/internal/rpc/hashring"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/await"
)

// observabilityConfig logs JSON at debug level, runs the power sync every
// second so that its series move, makes a deploy hold its node's lock for
// 4 s, and gives up on a held lock after 2 attempts 1 s apart.
const observabilityConfig = `[DEFAULT]
use_json = true
debug = true
[conductor]
sync_power_state_interval = 1
node_locked_retry_attempts = 2
node_locked_retry_interval = 1
workers_pool_size = 40
reserved_workers_pool_percentage = 10
[fake]
deploy_delay = 4
`

// A scripted flow through the API and two conductors, then /metrics of
// each process: requests by route and status, nodes by state, the RPC
// calls each conductor answered (the one the ring gives each node), lock
// waits and the NodeLocked one, the worker pools and the periodic power
// sync. The log lines of each scripted request name its request id, its
// node and the node's conductor in every process.
func TestMetricsAndLogsOfAScriptedFlow(t *testing.T) {
	began := time.Now()
	c := Start(t, Options{Conductors: 2, Database: storetest.MySQLURL(t), Config: observabilityConfig})
	hosts := []string{c.Conductors[0].Host, c.Conductors[1].Host}
	await.UntilReason(t, 30*time.Second, "both conductors on the ring", func() (bool, string) {
		_, body := call(t, c, "GET", "/v1/conductors", nil)
		return strings.Contains(string(body), hosts[0]) && strings.Contains(string(body), hosts[1]), string(body)
	})
	ring, err := hashring.New(hosts, 5, "md5")
	if err != nil {
		t.Fatal(err)
	}

	// flows are the node each scripted request acts on, by request id.
	flows := map[string]string{}
	var uuids [2]string
	for i := range uuids {
		code, body, id := send(t, c, "POST", "/v1/nodes", map[string]any{"name": fmt.Sprintf("obs-%d", i), "driver": "fake-hardware"})
		if code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, body)
		}
		var n struct{ UUID string }
		if err := json.Unmarshal(body, &n); err != nil {
			t.Fatal(err)
		}
		uuids[i] = n.UUID
		flows[id] = n.UUID
	}
	for _, verb := range []struct{ target, state string }{{"manage", "manageable"}, {"provide", "available"}} {
		for _, u := range uuids {
			flows[requestID(t, c, "PUT", "/v1/nodes/"+u+"/states/provision", map[string]any{"target": verb.target}, http.StatusAccepted)] = u
		}
		for _, u := range uuids {
			waitProvisionState(t, c, u, verb.state)
		}
	}
	deployID := requestID(t, c, "PUT", "/v1/nodes/"+uuids[0]+"/states/provision", map[string]any{"target": "active"}, http.StatusAccepted)
	flows[deployID] = uuids[0]
	waitProvisionState(t, c, uuids[0], "deploying")
	// The deploy holds the lock: setting maintenance waits 2 attempts,
	// then answers 409 NodeLocked.
	code, body, id := send(t, c, "PUT", "/v1/nodes/"+uuids[0]+"/maintenance", map[string]any{"reason": "too early"})
	if code != http.StatusConflict || !strings.Contains(string(body), "locked") {
		t.Fatalf("maintenance of a node being deployed: %d %s", code, body)
	}
	flows[id] = uuids[0]
	waitProvisionState(t, c, uuids[0], "active")
	flows[requestID(t, c, "PUT", "/v1/nodes/"+uuids[1]+"/maintenance", map[string]any{"reason": "observability"}, http.StatusAccepted)] = uuids[1]
	if code, _ := call(t, c, "GET", "/v1/nodes/no-such-node", nil); code != http.StatusNotFound {
		t.Fatalf("missing node: %d", code)
	}

	// The API: request counts by route and status, and the node counts
	// as the API itself reports the nodes.
	api := scrape(t, c.URL()+"/metrics")
	for _, want := range []struct {
		method, route, code string
		n                   float64
	}{
		{"POST", "POST /v1/nodes", "201", 2},
		{"PUT", "PUT /v1/nodes/{node_ident}/states/provision", "202", 5},
		{"PUT", "PUT /v1/nodes/{node_ident}/maintenance", "409", 1},
		{"PUT", "PUT /v1/nodes/{node_ident}/maintenance", "202", 1},
		{"GET", "GET /v1/nodes/{node_ident}", "404", 1},
	} {
		m := metric(api, "ironic_api_requests_total", map[string]string{"method": want.method, "route": want.route, "code": want.code})
		if got := m.GetCounter().GetValue(); got != want.n {
			t.Errorf("requests %s %s %s = %v, want %v", want.method, want.route, want.code, got, want.n)
		}
	}
	h := metric(api, "ironic_api_request_duration_seconds", map[string]string{"method": "PUT", "route": "PUT /v1/nodes/{node_ident}/maintenance"}).GetHistogram()
	// The 409 came after the conductor's 1 s wait between attempts.
	if h.GetSampleCount() != 2 || h.GetSampleSum() < 1 {
		t.Errorf("maintenance latency: %d samples, %v s; want 2, at least 1 s in all", h.GetSampleCount(), h.GetSampleSum())
	}
	for i, u := range uuids {
		_, body := call(t, c, "GET", "/v1/nodes/"+u, nil)
		var n struct {
			ProvisionState string `json:"provision_state"`
			PowerState     string `json:"power_state"`
			Maintenance    bool   `json:"maintenance"`
		}
		if err := json.Unmarshal(body, &n); err != nil {
			t.Fatal(err)
		}
		if want := []bool{false, true}[i]; n.Maintenance != want {
			t.Fatalf("node %d maintenance %v", i, n.Maintenance)
		}
		power := n.PowerState
		if power == "" {
			power = metrics.StateNone
		}
		labels := map[string]string{"provision_state": n.ProvisionState, "power_state": power, "maintenance": fmt.Sprint(n.Maintenance)}
		if got := metric(api, "ironic_nodes", labels).GetGauge().GetValue(); got != 1 {
			t.Errorf("ironic_nodes%v = %v, want 1", labels, got)
		}
	}
	if total := sum(api, "ironic_nodes"); total != 2 {
		t.Errorf("ironic_nodes sums to %v, want 2", total)
	}

	// Each conductor: the calls for the nodes the ring gives it, and
	// nothing for the others'.
	owner := map[string]int{}
	for _, u := range uuids {
		o, _ := ring.Primary(u)
		for i, h := range hosts {
			if h == o {
				owner[u] = i
			}
		}
	}
	for i, p := range c.Conductors {
		fams := scrape(t, "http://"+p.Host+"/metrics")
		mine := func(u string) float64 {
			if owner[u] == i {
				return 1
			}
			return 0
		}
		n0, n1 := mine(uuids[0]), mine(uuids[1])
		for _, want := range []struct {
			method, outcome string
			n               float64
		}{
			{"create_node", "ok", n0 + n1},
			{"do_provisioning_action", "ok", 2 * (n0 + n1)},
			{"do_node_deploy", "ok", n0},
			{"update_node", "client_error", n0},
			{"update_node", "ok", n1},
		} {
			got := metric(fams, "ironic_rpc_calls_total", map[string]string{"method": want.method, "outcome": want.outcome}).GetCounter().GetValue()
			if got != want.n {
				t.Errorf("%s: RPC %s %s = %v, want %v", p.Name, want.method, want.outcome, got, want.n)
			}
		}
		if got := metric(fams, "ironic_rpc_call_duration_seconds", map[string]string{"method": "do_node_deploy"}).GetHistogram().GetSampleCount(); got != uint64(n0) {
			t.Errorf("%s: %d do_node_deploy durations, want %v", p.Name, got, n0)
		}
		cond := map[string]string{"conductor": p.Host}
		locked := metric(fams, "ironic_conductor_lock_wait_seconds", map[string]string{"conductor": p.Host, "outcome": "locked"}).GetHistogram()
		conflicts := metric(fams, "ironic_conductor_lock_conflicts_total", cond).GetCounter().GetValue()
		if locked.GetSampleCount() != uint64(n0) || (n0 == 1 && (conflicts < 2 || locked.GetSampleSum() < 1)) || (n0 == 0 && conflicts != 0) {
			t.Errorf("%s: %d NodeLocked after %v s, %v conflicts; want %v NodeLocked after 2 conflicts", p.Name,
				locked.GetSampleCount(), locked.GetSampleSum(), conflicts, n0)
		}
		// manage, provide, then deploy or maintenance, each locked the
		// node once.
		ok := metric(fams, "ironic_conductor_lock_wait_seconds", map[string]string{"conductor": p.Host, "outcome": "ok"}).GetHistogram()
		if want := 3 * (n0 + n1); float64(ok.GetSampleCount()) < want {
			t.Errorf("%s: %d locks taken, want at least %v", p.Name, ok.GetSampleCount(), want)
		}
		if held := metric(fams, "ironic_conductor_node_locks_held", cond).GetGauge().GetValue(); held != 0 {
			t.Errorf("%s: %v locks held after the flow", p.Name, held)
		}
		for share, size := range map[string]float64{"normal": 36, "reserved": 4} {
			l := map[string]string{"conductor": p.Host, "share": share}
			if got := metric(fams, "ironic_conductor_workers_pool_size", l).GetGauge().GetValue(); got != size {
				t.Errorf("%s: %s pool size %v, want %v", p.Name, share, got, size)
			}
		}
		for _, share := range []string{"normal", "reserved"} {
			if got := metric(fams, "ironic_conductor_workers_running", map[string]string{"conductor": p.Host, "share": share}).GetGauge().GetValue(); got != 0 {
				t.Errorf("%s: %v %s workers still running after the flow", p.Name, got, share)
			}
		}
		// manage, provide and deploy ran in workers.
		if got := metric(fams, "ironic_conductor_workers_spawned_total", cond).GetCounter().GetValue(); got < 2*(n0+n1)+n0 {
			t.Errorf("%s: %v works spawned, want at least %v", p.Name, got, 2*(n0+n1)+n0)
		}
		sync := map[string]string{"conductor": p.Host, "task": "_sync_power_states"}
		runs := metric(fams, "ironic_conductor_periodic_runs_total", sync).GetCounter().GetValue()
		d := metric(fams, "ironic_conductor_periodic_duration_seconds", sync).GetHistogram()
		last := metric(fams, "ironic_conductor_periodic_last_run_timestamp_seconds", sync).GetGauge().GetValue()
		if elapsed := time.Since(began).Seconds(); runs < 2 || float64(d.GetSampleCount()) != runs || last < float64(began.Unix()) || last > float64(time.Now().Unix()+1) || runs > elapsed+1 {
			t.Errorf("%s: power sync %v runs in %.0f s, %d durations, last at %v (test began at %d)", p.Name, runs, elapsed, d.GetSampleCount(), last, began.Unix())
		}
	}

	// Every line of each scripted request, in the API and in the
	// conductors, names the request, its node and the node's conductor;
	// no other conductor logs for it (a conductor may log nothing for a
	// call, such as create_node, that has nothing to report).
	seen := map[string]map[string]bool{}
	for _, p := range append([]*Process{c.API}, c.Conductors...) {
		for _, line := range strings.Split(strings.TrimSpace(p.Output()), "\n") {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("%s: log line is not JSON: %q", p.Name, line)
			}
			id, _ := rec["request_id"].(string)
			node, ok := flows[id]
			if !ok {
				continue
			}
			if seen[id] == nil {
				seen[id] = map[string]bool{}
			}
			seen[id][p.Name] = true
			if owner := hosts[owner[node]]; rec["node"] != node || rec["conductor"] != owner {
				t.Errorf("%s: line of request %s without node %s and conductor %s: %s", p.Name, id, node, owner, line)
			}
		}
	}
	for id, node := range flows {
		for name := range seen[id] {
			if name != c.API.Name && name != c.Conductors[owner[node]].Name {
				t.Errorf("request %s for node %s logged by %s, which does not own the node", id, node, name)
			}
		}
		if !seen[id][c.API.Name] {
			t.Errorf("request %s for node %s has no API line", id, node)
		}
	}
	if !seen[deployID][c.Conductors[owner[uuids[0]]].Name] {
		t.Errorf("the deploy request %s has no line in its conductor", deployID)
	}
}

func call(t *testing.T, c *Cluster, method, path string, body any) (int, []byte) {
	t.Helper()
	code, data, _ := send(t, c, method, path, body)
	return code, data
}

// requestID sends a request that must answer want and returns the
// request id the API gave it.
func requestID(t *testing.T, c *Cluster, method, path string, body any, want int) string {
	t.Helper()
	code, data, id := send(t, c, method, path, body)
	if code != want || !strings.HasPrefix(id, "req-") {
		t.Fatalf("%s %s: %d (request id %q) %s", method, path, code, id, data)
	}
	return id
}

func send(t *testing.T, c *Cluster, method, path string, body any) (int, []byte, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data, resp.Header.Get("X-Openstack-Request-Id")
}

func waitProvisionState(t *testing.T, c *Cluster, uuid, want string) {
	t.Helper()
	await.UntilReason(t, 30*time.Second, "node "+uuid+" "+want, func() (bool, string) {
		_, body := call(t, c, "GET", "/v1/nodes/"+uuid, nil)
		var n struct {
			ProvisionState string `json:"provision_state"`
		}
		_ = json.Unmarshal(body, &n)
		return n.ProvisionState == want, string(body)
	})
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// metric is the series of family name with labels (others ignored), or
// an empty one.
func metric(fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	for _, m := range fams[name].GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range labels {
			match = match && got[k] == v
		}
		if match {
			return m
		}
	}
	return &dto.Metric{}
}

func sum(fams map[string]*dto.MetricFamily, name string) float64 {
	total := 0.0
	for _, m := range fams[name].GetMetric() {
		total += m.GetGauge().GetValue() + m.GetCounter().GetValue()
	}
	return total
}
