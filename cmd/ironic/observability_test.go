package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/ipa"
	"github.com/openkeel/ironic/testing/ipmisim"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// An all-in-one run with JSON logs: a node enrolled with a BMC password
// and moved to manageable shows up in /metrics, the password appears in
// no log line, and the lines logged for a request carry its id.
func TestMetricsAndLogsOfAFlow(t *testing.T) {
	const secret = "bmc-s3cr3t-pw"
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[DEFAULT]\nuse_json = true\ndebug = true\n[api]\nport = %d\n"+
		"[conductor]\ncheck_provision_state_interval = 1\n", port))
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
	// The timeout checks run every second on an idle conductor: each pass
	// starts less than an interval after it was due.
	var lag *dto.Histogram
	var interval float64
	await.UntilReason(t, 10*time.Second, "a timed pass of _check_deploy_timeouts", func() (bool, string) {
		fams := scrapeMetrics(t, base+"/metrics")
		lag, interval = nil, 0
		for _, m := range fams["ironic_conductor_periodic_lag_seconds"].GetMetric() {
			if labels(m)["task"] == "_check_deploy_timeouts" {
				lag = m.GetHistogram()
			}
		}
		for _, m := range fams["ironic_conductor_periodic_interval_seconds"].GetMetric() {
			if labels(m)["task"] == "_check_deploy_timeouts" {
				interval = m.GetGauge().GetValue()
			}
		}
		return lag.GetSampleCount() > 0, fmt.Sprintf("no pass of _check_deploy_timeouts timed: %v", fams["ironic_conductor_periodic_lag_seconds"])
	})
	if interval != 1 || lag.GetSampleSum() < 0 || lag.GetSampleSum() >= float64(lag.GetSampleCount()) {
		t.Errorf("_check_deploy_timeouts: %d passes, lag %v s in all, interval %v s", lag.GetSampleCount(), lag.GetSampleSum(), interval)
	}

	terminate(t, p)
	out := p.out.String()
	if strings.Contains(out, secret) {
		t.Fatalf("password in the logs:\n%s", out)
	}
	// The conductor's lines for the manage request are logged in its
	// context: each names the request, and no line names it twice.
	manage, notes := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if n := strings.Count(line, `"request_id"`); n > 1 {
			t.Errorf("request_id %d times in %s", n, line)
		}
		// The notification is sent through the task's logger, which names
		// the node and the request.
		if payload, _ := rec["payload"].(map[string]any); payload["event"] == "manage" && rec["event_type"] != nil {
			notes++
			if id, _ := rec["request_id"].(string); !strings.HasPrefix(id, "req-") || rec["node"] != n["uuid"] {
				t.Errorf("notification without the request or the node: %s", line)
			}
		}
		if rec["msg"] == "node moved to a new provision state" && rec["event"] == "manage" {
			manage++
			if id, _ := rec["request_id"].(string); !strings.HasPrefix(id, "req-") {
				t.Errorf("no request id in %s", line)
			}
		}
	}
	if notes == 0 {
		t.Errorf("no provision notification for the manage request:\n%s", out)
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
	await.UntilReason(t, 30*time.Second, "rescue wait", func() (bool, string) {
		_, n := c.do("GET", "/v1/nodes/"+uuid, nil)
		return n["provision_state"] == "rescue wait", fmt.Sprintf("never in rescue wait: %v", n["provision_state"])
	})

	ctx := context.Background()
	ironic := &ipa.IronicClient{BaseURL: base}
	// As IPA, retry while the rescue still holds the node's lock.
	await.UntilReason(t, 30*time.Second, "a lookup that hands out the agent token", func() (bool, string) {
		_, err := ironic.Lookup(ctx, []string{mac}, "")
		return err == nil && ironic.Token != "", fmt.Sprintf("lookup: %v (token %q)", err, ironic.Token)
	})
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

// bmcConf enables the redfish and ipmi hardware types for power actions,
// with JSON logs.
const bmcConf = `[DEFAULT]
use_json = true
enabled_hardware_types = redfish,ipmi
enabled_power_interfaces = redfish,ipmitool
enabled_management_interfaces = redfish,ipmitool
enabled_boot_interfaces = redfish-virtual-media,ipxe
enabled_deploy_interfaces = direct
enabled_inspect_interfaces = no-inspect
enabled_console_interfaces = no-console
enabled_vendor_interfaces = no-vendor
enabled_bios_interfaces = no-bios
enabled_raid_interfaces = no-raid
enabled_firmware_interfaces = no-firmware
enabled_rescue_interfaces = no-rescue
enabled_network_interfaces = noop
enabled_storage_interfaces = noop
[ipmi]
min_command_interval = 1
`

// Power actions on a Redfish BMC (one of whose resets fails) and on an
// IPMI BMC: /metrics times every request each BMC answered, by driver and
// by an operation that names no node or resource, and counts the failure.
func TestBMCRequestMetrics(t *testing.T) {
	ipmisim.Require(t)
	const user, password = "admin", "bmc-pw"
	bmc := redfishbmc.New(t).System("sys-1").WithSessionsOnly(user, password)
	sim := ipmisim.Start(t, ipmisim.Options{})
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, bmcConf+fmt.Sprintf("[api]\nport = %d\n", port))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, p, base+"/healthcheck")
	c := &apiClient{t: t, base: base, version: "1.80"}

	create := func(body map[string]any) string {
		status, n := c.do("POST", "/v1/nodes", body)
		if status != http.StatusCreated {
			t.Fatalf("create %v: %d %v", body["name"], status, n)
		}
		return n["uuid"].(string)
	}
	rf := create(map[string]any{"name": "rf", "driver": "redfish", "driver_info": map[string]any{
		"redfish_address": bmc.URL(), "redfish_system_id": redfishbmc.SystemPath("sys-1"),
		"redfish_username": user, "redfish_password": password,
	}})
	ipmi := create(map[string]any{"name": "ipmi", "driver": "ipmi", "driver_info": map[string]any{
		"ipmi_address": sim.Address, "ipmi_port": sim.Port, "ipmi_username": sim.Username,
		"ipmi_password": sim.Password, "ipmi_cipher_suite": ipmisim.CipherSuite,
	}})
	// powerOn asks for power on and waits for the action to end.
	powerOn := func(uuid string) map[string]any {
		if status, body := c.do("PUT", "/v1/nodes/"+uuid+"/states/power", map[string]any{"target": "power on"}); status != http.StatusAccepted {
			t.Fatalf("power on %s: %d %v", uuid, status, body)
		}
		var n map[string]any
		await.UntilReason(t, 60*time.Second, "the power action on "+uuid+" to end", func() (bool, string) {
			_, n = c.do("GET", "/v1/nodes/"+uuid, nil)
			return n["target_power_state"] == nil && n["reservation"] == nil, fmt.Sprintf("power action on %s never ended: %v", uuid, n)
		})
		return n
	}
	bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPost, Path: "ComputerSystem.Reset"}, 1, http.StatusInternalServerError, "")
	if n := powerOn(rf); n["power_state"] == "power on" || n["last_error"] == nil {
		t.Fatalf("power on with a failing reset: %v", n)
	}
	if n := powerOn(rf); n["power_state"] != "power on" {
		t.Fatalf("power on: %v", n)
	}
	// The driver logs the failure without a context; its task's logger
	// still names the request.
	failed := 0
	for _, line := range strings.Split(strings.TrimSpace(p.out.String()), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if msg, _ := rec["msg"].(string); strings.HasPrefix(msg, "Setting power state to power on failed") {
			failed++
			if id, _ := rec["request_id"].(string); !strings.HasPrefix(id, "req-") || rec["node"] != rf {
				t.Errorf("driver line without the request or the node: %s", line)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d lines for the failed reset, want 1", failed)
	}
	if n := powerOn(ipmi); n["power_state"] != "power on" {
		t.Fatalf("ipmi power on: %v", n)
	}

	answered := bmc.Requests()
	fams := scrapeMetrics(t, base+"/metrics")
	if bmc.Requests() != answered {
		t.Fatal("the BMC was asked something while /metrics was read")
	}
	perOp := map[string]uint64{}
	var redfishTimed uint64
	for _, m := range fams["ironic_bmc_request_duration_seconds"].GetMetric() {
		l := labels(m)
		n := m.GetHistogram().GetSampleCount()
		perOp[l["driver"]+" "+l["operation"]] += n
		switch l["driver"] {
		case "redfish":
			redfishTimed += n
			if !slices.Contains([]string{"GET", "POST", "PATCH", "PUT", "DELETE"}, l["operation"]) {
				t.Errorf("redfish operation %q is not an HTTP method", l["operation"])
			}
		case "ipmitool":
			if strings.ContainsAny(l["operation"], "0123456789") {
				t.Errorf("ipmitool operation %q carries arguments", l["operation"])
			}
		default:
			t.Errorf("BMC series of driver %q", l["driver"])
		}
	}
	if redfishTimed != uint64(answered) || answered == 0 {
		t.Errorf("the Redfish BMC answered %d requests, /metrics timed %d: %v", answered, redfishTimed, perOp)
	}
	if n := perOp["redfish POST"]; n != uint64(bmc.Count(http.MethodPost, redfishbmc.SystemPath("sys-1")+"/Actions/ComputerSystem.Reset")+bmc.SessionsCreated()) {
		t.Errorf("%d redfish POSTs timed, want the resets and the session logins: %v", n, perOp)
	}
	sets := 0
	for _, op := range sim.ControlLog(t) {
		if op == "set power 1" {
			sets++
		}
	}
	if perOp["ipmitool power on"] != 1 || sets != 1 || perOp["ipmitool power status"] < 2 {
		t.Errorf("ipmitool runs timed %v, the BMC powered on %d times", perOp, sets)
	}
	errors := map[string]float64{}
	for _, m := range fams["ironic_bmc_request_errors_total"].GetMetric() {
		l := labels(m)
		errors[l["driver"]+" "+l["operation"]] += m.GetCounter().GetValue()
	}
	t.Logf("BMC requests timed %v, failed %v", perOp, errors)
	if errors["redfish POST"] != 1 || errors["ipmitool power on"] != 0 || errors["ipmitool power status"] != 0 {
		t.Errorf("BMC errors %v, want the one failed reset", errors)
	}
	for _, m := range fams["ironic_bmc_request_duration_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if strings.Contains(l.GetValue(), rf) || strings.Contains(l.GetValue(), ipmi) || strings.Contains(l.GetValue(), "/") {
				t.Errorf("label %s=%q names a node or a resource", l.GetName(), l.GetValue())
			}
		}
	}
}
