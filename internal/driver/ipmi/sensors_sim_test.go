package ipmi

import (
	"context"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/metrics"
	"github.com/openkeel/ironic/testing/ipmisim"
)

// simSensors are a processor temperature, a fan and a power supply's
// voltage.
var simSensors = []ipmisim.Sensor{
	{Number: 1, Name: "CPU Temp", Type: ipmisim.SensorTemperature, Entity: ipmisim.EntityProcessor, Instance: 1, Raw: 45},
	{Number: 2, Name: "Fan1A", Type: ipmisim.SensorFan, Entity: ipmisim.EntityFan, Instance: 1, Raw: 24},
	{Number: 3, Name: "PSU1 Voltage", Type: ipmisim.SensorVoltage, Entity: ipmisim.EntityPowerSupply, Instance: 1, Raw: 228},
}

// get_sensors_data parses what the real "ipmitool sdr -v" prints for
// ipmi_sim's sensors, grouped by type and keyed by Sensor ID as upstream,
// follows a reading that changes, and gives the exporter's series.
func TestSensorsDataAgainstIPMISim(t *testing.T) {
	b := ipmisim.Start(t, ipmisim.Options{Sensors: simSensors})
	ifaces, _, logs := simDriver(t, 100*time.Millisecond)
	task := simTask(b, ifaces, logs)
	ctx := context.Background()

	data, err := ifaces.Management.GetSensorsData(ctx, task)
	must(t, err)
	field := func(typ, id, key string) any {
		t.Helper()
		group, ok := data[typ].(map[string]any)
		if !ok {
			t.Fatalf("no %s sensors in %v", typ, data)
		}
		s, ok := group[id].(map[string]any)
		if !ok {
			t.Fatalf("no %s in %v", id, group)
		}
		return s[key]
	}
	for _, c := range []struct{ typ, id, key, want string }{
		{"Temperature", "CPU Temp (0x1)", "Sensor Reading", "45 (+/- 0) degrees C"},
		{"Temperature", "CPU Temp (0x1)", "Entity ID", "3.1 (Processor)"},
		{"Temperature", "CPU Temp (0x1)", "Sensor Type (Threshold)", "Temperature (0x01)"},
		{"Temperature", "CPU Temp (0x1)", "Status", "ok"},
		{"Fan", "Fan1A (0x2)", "Sensor Reading", "2400 (+/- 0) RPM"},
		{"Fan", "Fan1A (0x2)", "Entity ID", "29.1 (Fan Device)"},
		{"Voltage", "PSU1 Voltage (0x3)", "Sensor Reading", "228 (+/- 0) Volts"},
	} {
		if got := field(c.typ, c.id, c.key); got != c.want {
			t.Errorf("%s %s %s = %v, want %q", c.typ, c.id, c.key, got, c.want)
		}
	}
	if len(data) != 3 {
		t.Errorf("sensor types %v", data)
	}

	b.SetSensor(t, 1, 78)
	data, err = ifaces.Management.GetSensorsData(ctx, task)
	must(t, err)
	if got := field("Temperature", "CPU Temp (0x1)", "Sensor Reading"); got != "78 (+/- 0) degrees C" {
		t.Errorf("after the change: %v", got)
	}

	series := map[string]float64{}
	for _, s := range metrics.SensorSeries(metrics.SensorReading{NodeUUID: task.Node.UUID, Driver: "ipmi", Data: data, Time: time.Now()}) {
		series[s.Name] = s.Value
	}
	if series["baremetal_cpu_temp_celsius"] != 78 || series["baremetal_fan_rpm"] != 2400 || series["baremetal_voltage_psu_voltage_volts"] != 228 {
		t.Errorf("exporter series %v", series)
	}
}
