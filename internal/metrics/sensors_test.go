package metrics_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openkeel/ironic/internal/metrics"
)

func strp(s string) *string { return &s }

// TestSensorSeriesRedfish reads a redfish payload as the driver builds
// it (pointer fields, nulls) into the exporter's series.
func TestSensorSeriesRedfish(t *testing.T) {
	reading, maxTemp := 41.5, 100.0
	enabled, ok, warn := strp("Enabled"), strp("OK"), strp("Warning")
	r := metrics.SensorReading{
		NodeUUID: "n-1", NodeName: "rack1-u3", Driver: "redfish", Time: time.Unix(1700000000, 500),
		Data: map[string]any{
			"Extra": map[string]any{"Manufacturer": "Contoso", "Model": "3500", "UUID": "sys-uuid"},
			"Temperature": map[string]any{
				"0@1U": map[string]any{"identity": strp("0"), "reading_celsius": &reading, "max_reading_range_temp": &maxTemp,
					"min_reading_range_temp": nil, "physical_context": strp("CPU"), "state": enabled, "health": ok},
				"1@1U": map[string]any{"identity": strp("1"), "reading_celsius": &reading, "physical_context": strp("Intake"),
					"state": strp("Absent"), "health": ok},
			},
			"Fan": map[string]any{
				"0@1U": map[string]any{"identity": strp("0"), "reading": &reading, "reading_units": strp("RPM"), "state": enabled, "health": warn},
			},
			"Power": map[string]any{
				"0:Power@1U": map[string]any{"line_input_voltage": &reading, "state": enabled, "health": strp("Critical")},
			},
			"Drive": map[string]any{
				"d1:1@sys": map[string]any{"name": strp("d1"), "state": enabled, "health": nil},
			},
		},
	}
	reg := metrics.NewRegistry()
	s, err := metrics.NewSensors(reg, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Observe(r)
	body := exposition(t, reg)
	for _, want := range []string{
		`baremetal_temp_cpu_celsius{health="OK",identity="0",instance_uuid="n-1",manufacturer="Contoso",max_reading_range_temp="100",model="3500",node_name="rack1-u3",node_uuid="n-1",physical_context="CPU",redfish_system_uuid="sys-uuid",sensor_id="0@1U",state="Enabled"} 41.5`,
		`baremetal_temperature_status{health="OK",identity="0",`,
		`baremetal_fan_status{health="Warning",identity="0",instance_uuid="n-1",manufacturer="Contoso",model="3500",node_name="rack1-u3",node_uuid="n-1",redfish_system_uuid="sys-uuid",sensor_id="0@1U",state="Enabled"} 1`,
		`baremetal_power_status{health="Critical",instance_uuid="n-1",manufacturer="Contoso",model="3500",node_name="rack1-u3",node_uuid="n-1",redfish_system_uuid="sys-uuid",sensor_id="0:Power@1U",state="Enabled"} 2`,
		`baremetal_last_payload_timestamp_seconds{instance_uuid="n-1",node_name="rack1-u3",node_uuid="n-1"} 1.7e+09`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %s in\n%s", want, body)
		}
	}
	for _, absent := range []string{"baremetal_temp_intake_celsius", "baremetal_drive_status"} {
		if strings.Contains(body, absent) {
			t.Errorf("%s present (absent sensor or no health)", absent)
		}
	}
}

// TestSensorSeriesIPMI names IPMI sensors as the exporter does.
func TestSensorSeriesIPMI(t *testing.T) {
	sensor := func(id, entity, reading, status string) map[string]any {
		m := map[string]any{"Sensor ID": id, "Entity ID": entity, "Sensor Reading": reading}
		if status != "" {
			m["Status"] = status
		}
		return m
	}
	r := metrics.SensorReading{
		NodeUUID: "n-2", InstanceUUID: "i-2", Driver: "ipmi", Time: time.Unix(1700000000, 0),
		Data: map[string]any{
			"Temperature": map[string]any{
				"Temp (0x1)":       sensor("Temp (0x1)", "3.1 (Processor)", "45 (+/- 1) degrees C", "ok"),
				"Inlet Temp (0x5)": sensor("Inlet Temp (0x5)", "7.1 (System Board)", "21 (+/- 1) degrees C", "ok"),
				"Temp (0x2)":       sensor("Temp (0x2)", "3.2 (Processor)", "No Reading", ""),
			},
			"Fan": map[string]any{
				"Fan4B (0x43)":          sensor("Fan4B (0x43)", "7.1 (System Board)", "5040 (+/- 120) RPM", "ok"),
				"Fan Redundancy (0x78)": sensor("Fan Redundancy (0x78)", "7.1 (System Board)", "0h", ""),
			},
			"Voltage": map[string]any{
				"3.3V B PG (0x15)": sensor("3.3V B PG (0x15)", "7.1 (System Board)", "1h", ""),
				"Voltage 1 (0x6d)": sensor("Voltage 1 (0x6d)", "10.1 (Power Supply)", "228 (+/- 0) Volts", "ok"),
			},
			"Memory": map[string]any{
				"ECC Corr Err (0x1)": sensor("ECC Corr Err (0x1)", "32.1 (Memory Device)", "0h", ""),
			},
			"Chassis": map[string]any{"Intrusion (0x1)": sensor("Intrusion (0x1)", "7.1", "0h", "")},
		},
	}
	got := map[string]float64{}
	for _, s := range metrics.SensorSeries(r) {
		if s.Labels["instance_uuid"] != "i-2" || s.Labels["node_uuid"] != "n-2" {
			t.Errorf("%s labels %v", s.Name, s.Labels)
		}
		if _, named := s.Labels["node_name"]; named {
			t.Errorf("%s has a node_name label for a node without a name", s.Name)
		}
		got[s.Name+"|"+s.Labels["sensor_id"]] = s.Value
	}
	want := map[string]float64{
		"baremetal_last_payload_timestamp_seconds|":        1700000000,
		"baremetal_temp_celsius|Temp (0x1)":                45,
		"baremetal_inlet_temp_celsius|Inlet Temp (0x5)":    21,
		"baremetal_fan_rpm|Fan4B (0x43)":                   5040,
		"baremetal_fan_redundancy|Fan Redundancy (0x78)":   0,
		"baremetal_voltage_b_pg|3.3V B PG (0x15)":          1,
		"baremetal_voltage_volts|Voltage 1 (0x6d)":         228,
		"baremetal_memory_ecc_corr_err|ECC Corr Err (0x1)": 0,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("series %v, want exactly %v", got, want)
	}
}

// TestSensorsForgetStaleNodes drops a node whose readings stopped.
func TestSensorsForgetStaleNodes(t *testing.T) {
	reg := metrics.NewRegistry()
	s, err := metrics.NewSensors(reg, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	s.Observe(metrics.SensorReading{NodeUUID: "old", Driver: "fake-hardware", Time: time.Now().Add(-2 * time.Minute)})
	s.Observe(metrics.SensorReading{NodeUUID: "new", Driver: "fake-hardware", Time: time.Now()})
	body := exposition(t, reg)
	if strings.Contains(body, `node_uuid="old"`) || !strings.Contains(body, `node_uuid="new"`) {
		t.Errorf("stale node kept or fresh one lost:\n%s", body)
	}
}

// exposition is reg's text exposition, as a scraper reads it.
func exposition(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", metrics.Path, nil))
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}
