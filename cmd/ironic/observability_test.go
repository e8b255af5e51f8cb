package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// An all-in-one run with JSON logs: a node enrolled with a BMC password
// and moved to manageable shows up in /metrics, the password appears in
// no log line, and the lines logged for a request carry its id.
func TestMetricsAndLogsOfAFlow(t *testing.T) {
	const secret = "bmc-s3cr3t-pw"
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[DEFAULT]\nuse_json = true\ndebug = true\n[api]\nport = %d\n", port))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, p, base+"/healthcheck")
	c := &apiClient{t: t, base: base, version: "1.80"}

	status, n := c.do("POST", "/v1/nodes", map[string]any{
		"name": "obs-1", "driver": "fake-hardware",
		"driver_info": map[string]any{"ipmi_password": secret, "redfish_password": secret},
	})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, n)
	}
	if status, body := c.do("PUT", "/v1/nodes/obs-1/states/provision", map[string]any{"target": "manage"}); status != http.StatusAccepted {
		t.Fatalf("manage: %d %v", status, body)
	}
	c.waitState("obs-1", "manageable")
	// A request that fails logs an error in its context.
	if status, _ := c.do("PUT", "/v1/nodes/obs-1/states/provision", map[string]any{"target": "active"}); status < 400 {
		t.Fatalf("deploy of a manageable node answered %d", status)
	}

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	found := false
	for _, m := range fams["ironic_nodes"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["provision_state"] == "manageable" && l["maintenance"] == "false" && m.GetGauge().GetValue() == 1 {
			found = true
		}
	}
	if !found {
		t.Errorf("no ironic_nodes{provision_state=manageable} = 1 in %v", fams["ironic_nodes"])
	}
	if len(fams["ironic_api_requests_total"].GetMetric()) == 0 {
		t.Error("no API request series")
	}
	// manage took the node's lock at least once, and nothing else held it.
	for _, m := range fams["ironic_conductor_lock_wait_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "outcome" && l.GetValue() != "ok" {
				t.Errorf("lock acquisition with outcome %s in an uncontended flow", l.GetValue())
			}
			if l.GetName() == "outcome" && l.GetValue() == "ok" && m.GetHistogram().GetSampleCount() == 0 {
				t.Error("no lock acquisition recorded for manage")
			}
		}
	}
	if len(fams["ironic_conductor_lock_wait_seconds"].GetMetric()) == 0 {
		t.Error("no lock wait series")
	}

	terminate(t, p)
	out := p.out.String()
	if strings.Contains(out, secret) {
		t.Fatalf("password in the logs:\n%s", out)
	}
	// The conductor's lines for the manage request are logged in its
	// context: each names the request, and no line names it twice.
	manage := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if n := strings.Count(line, `"request_id"`); n > 1 {
			t.Errorf("request_id %d times in %s", n, line)
		}
		if rec["msg"] == "node moved to a new provision state" && rec["event"] == "manage" {
			manage++
			if id, _ := rec["request_id"].(string); !strings.HasPrefix(id, "req-") {
				t.Errorf("no request id in %s", line)
			}
		}
	}
	if manage != 1 {
		t.Errorf("%d lines for the manage transition, want 1:\n%s", manage, out)
	}
}
