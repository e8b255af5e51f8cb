package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/ipmisim"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// sensorValue is the value of the series name of node, and whether it is
// there.
func sensorValue(fams map[string]*dto.MetricFamily, name, node string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		if labels(m)["node_uuid"] == node {
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// The all-in-one service with [sensor_data] reads a Redfish emulator's and
// an ipmi_sim's sensors on its own schedule and shows them on /metrics
// under ironic-prometheus-exporter's names, following the BMCs' readings;
// the emulator's system health reaches the API's 1.109 health field.
func TestSensorSeriesOnMetrics(t *testing.T) {
	ipmisim.Require(t)
	const user, password = "admin", "bmc-pw"
	bmc := redfishbmc.New(t).System("sys-1").WithBasicAuth(user, password)
	sim := ipmisim.Start(t, ipmisim.Options{Sensors: []ipmisim.Sensor{
		{Number: 1, Name: "CPU Temp", Type: ipmisim.SensorTemperature, Entity: ipmisim.EntityProcessor, Instance: 1, Raw: 52},
	}})
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, bmcConf+fmt.Sprintf("[api]\nport = %d\n", port)+
		"[sensor_data]\nsend_sensor_data = true\ninterval = 1\nenable_for_undeployed_nodes = true\nenable_for_conductor = false\n"+
		"[conductor]\nsync_power_state_interval = 1\n")
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

	expect := func(rfTemp, ipmiTemp float64) {
		t.Helper()
		await.UntilReason(t, 60*time.Second, "sensor series on /metrics", func() (bool, string) {
			fams := scrapeMetrics(t, base+"/metrics")
			r, rok := sensorValue(fams, "baremetal_temp_cpu_celsius", rf)
			i, iok := sensorValue(fams, "baremetal_cpu_temp_celsius", ipmi)
			_, fan := sensorValue(fams, "baremetal_fan_status", rf)
			_, stamp := sensorValue(fams, "baremetal_last_payload_timestamp_seconds", ipmi)
			return rok && iok && fan && stamp && r == rfTemp && i == ipmiTemp,
				fmt.Sprintf("redfish %v (%v), ipmi %v (%v), fan %v, timestamp %v", r, rok, i, iok, fan, stamp)
		})
	}
	expect(45, 52)
	bmc.SetSensors(redfishbmc.Sensors{CPUCelsius: 66, FanRPM: 1800, PSUOutputWatts: 250, CPUHealth: "OK", FanHealth: "OK", PSUHealth: "OK"})
	sim.SetSensor(t, 1, 70)
	expect(66, 70)

	// The power sync carries the BMC's health to the 1.109 health field
	// (the node must leave enroll for the sync to look at it).
	bmc.SetSystemHealth("sys-1", "Critical")
	if status, body := c.do("PUT", "/v1/nodes/"+rf+"/states/provision", map[string]any{"target": "manage"}); status != http.StatusAccepted {
		t.Fatalf("manage: %d %v", status, body)
	}
	c109 := &apiClient{t: t, base: base, version: "1.109"}
	await.UntilReason(t, 60*time.Second, "health from the BMC", func() (bool, string) {
		_, n := c109.do("GET", "/v1/nodes/"+rf, nil)
		return n["provision_state"] == "manageable" && n["health"] == "Critical", fmt.Sprintf("%v %v", n["provision_state"], n["health"])
	})
	if _, n := c.do("GET", "/v1/nodes/"+rf, nil); n["health"] != nil {
		t.Errorf("health shown at 1.80: %v", n["health"])
	}
	if strings.Contains(p.out.String(), password) || strings.Contains(p.out.String(), sim.Password) {
		t.Error("a BMC password is in the service's log")
	}
}
