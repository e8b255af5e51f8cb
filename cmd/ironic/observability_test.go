package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/openkeel/ironic/testing/ipa"
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

// An all-in-one rescue through the agent rescue interface: the fake
// ramdisk looks the node up and heartbeats, the conductor asks it to
// finalize the rescue, and /metrics times that command under its name.
func TestAgentCommandLatencies(t *testing.T) {
	const mac = "52:54:00:12:34:56"
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[DEFAULT]\nenabled_rescue_interfaces = agent,no-rescue\nenabled_deploy_interfaces = fake,direct\n[agent]\nrequire_tls = false\n[api]\nport = %d\n", port))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, p, base+"/healthcheck")
	c := &apiClient{t: t, base: base, version: "1.80"}

	status, n := c.do("POST", "/v1/nodes", map[string]any{"name": "rescue-1", "driver": "fake-hardware", "rescue_interface": "agent"})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, n)
	}
	uuid := n["uuid"].(string)
	if status, body := c.do("POST", "/v1/ports", map[string]any{"node_uuid": uuid, "address": mac}); status != http.StatusCreated {
		t.Fatalf("port: %d %v", status, body)
	}
	for _, step := range []struct{ target, state string }{{"manage", "manageable"}, {"provide", "available"}, {"active", "active"}} {
		if status, body := c.do("PUT", "/v1/nodes/"+uuid+"/states/provision", map[string]any{"target": step.target}); status != http.StatusAccepted {
			t.Fatalf("%s: %d %v", step.target, status, body)
		}
		c.waitState(uuid, step.state)
	}
	// Heartbeats are the deploy interface's: the node was deployed with
	// the fake one and is handed to the agent's (in maintenance, where
	// interfaces may change) for the rescue.
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{"PUT", "/maintenance", map[string]any{"reason": "switch to the agent"}},
		{"PATCH", "", []map[string]any{{"op": "replace", "path": "/deploy_interface", "value": "direct"}}},
		{"DELETE", "/maintenance", nil},
	} {
		if status, body := c.do(req.method, "/v1/nodes/"+uuid+req.path, req.body); status >= 300 {
			t.Fatalf("%s %s: %d %v", req.method, req.path, status, body)
		}
	}
	if status, body := c.do("PUT", "/v1/nodes/"+uuid+"/states/provision", map[string]any{"target": "rescue", "rescue_password": "pw"}); status != http.StatusAccepted {
		t.Fatalf("rescue: %d %v", status, body)
	}
	// A wait state keeps its target: waitState waits for none.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, n := c.do("GET", "/v1/nodes/"+uuid, nil); n["provision_state"] == "rescue wait" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("never in rescue wait: %v", n["provision_state"])
		}
	}

	ctx := context.Background()
	ironic := &ipa.IronicClient{BaseURL: base}
	// As IPA, retry while the rescue still holds the node's lock.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, err := ironic.Lookup(ctx, []string{mac}, "")
		if err == nil && ironic.Token != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lookup: %v (token %q)", err, ironic.Token)
		}
	}
	agent := ipa.New(t).WithToken(ironic.Token)
	if err := ironic.Heartbeat(ctx, uuid, agent.URL(), ""); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	c.waitState(uuid, "rescue")

	fams := scrapeMetrics(t, base+"/metrics")
	ran := agent.Count("rescue.finalize_rescue")
	var timed uint64
	var failed bool
	for _, m := range fams["ironic_agent_command_duration_seconds"].GetMetric() {
		l := labels(m)
		if l["command"] == "rescue.finalize_rescue" && l["outcome"] == "ok" {
			timed = m.GetHistogram().GetSampleCount()
		}
		failed = failed || l["outcome"] != "ok"
	}
	if ran != 1 || timed != uint64(ran) || failed {
		t.Errorf("agent ran finalize_rescue %d times, /metrics timed %d (failures recorded: %v):\n%v",
			ran, timed, failed, fams["ironic_agent_command_duration_seconds"])
	}
}

func scrapeMetrics(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

func labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}
