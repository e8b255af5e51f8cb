package conductor_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/openkeel/ironic/internal/conductor"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/builtin"
	"github.com/openkeel/ironic/internal/metrics"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/notify/notifytest"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/fakeclock"
	"github.com/openkeel/ironic/testing/ipmisim"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// newSensorEnv runs a conductor with the shipped redfish drivers and
// fake-hardware, [sensor_data] as given, sending sensor notifications
// through drivers and the readings to a /metrics registry it returns.
func newSensorEnv(t *testing.T, db *sqldb.DB, sensorConf map[string]string, drivers ...notify.Driver) (*env, *metrics.Sensors, func() string) {
	t.Helper()
	return newSensorEnvWith(t, db, sensorConf, false, drivers...)
}

// newSensorEnvWith is newSensorEnv with the ipmi hardware type (the real
// ipmitool, throttle shortened) enabled too when ipmi is set.
func newSensorEnvWith(t *testing.T, db *sqldb.DB, sensorConf map[string]string, ipmi bool, drivers ...notify.Driver) (*env, *metrics.Sensors, func() string) {
	t.Helper()
	defaults := map[string]string{}
	for k, v := range redfishShipped {
		defaults[k] = v
	}
	defaults["enabled_hardware_types"] = "redfish,fake-hardware"
	defaults["enabled_management_interfaces"] = "redfish,fake"
	defaults["enabled_power_interfaces"] = "redfish,fake"
	for kind, no := range map[string]string{"bios": "no-bios", "raid": "no-raid", "firmware": "no-firmware", "vendor": "no-vendor"} {
		defaults["enabled_"+kind+"_interfaces"] += "," + no
	}
	defaults["enabled_boot_interfaces"] += ",fake"
	defaults["enabled_deploy_interfaces"] += ",fake"
	defaults["enabled_inspect_interfaces"] += ",no-inspect"
	if ipmi {
		ipmisim.Require(t)
		defaults["enabled_hardware_types"] += ",ipmi"
		defaults["enabled_power_interfaces"] += ",ipmitool"
		defaults["enabled_management_interfaces"] += ",ipmitool"
		defaults["enabled_boot_interfaces"] += ",ipxe"
	}
	cfg := testConfig(t, map[string]map[string]string{"DEFAULT": defaults,
		"sensor_data": mergeConf(map[string]string{"send_sensor_data": "true"}, sensorConf)})
	e := newStoreEnv(t, db, cfg)
	o, err := builtin.OptionsFromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.Ports = e.st
	o.Redfish.Clock = fakeclock.NewWallInstant()
	if o.IPMI != nil {
		o.IPMI.TempDir = t.TempDir()
		o.IPMI.MinCommandInterval = 200 * time.Millisecond
		o.IPMI.CommandRetryTimeout = 10 * time.Second
	}
	r, err := builtin.Registry(o)
	if err != nil {
		t.Fatal(err)
	}
	if e.drivers, err = r.Build(driver.SettingsFromConfig(cfg)); err != nil {
		t.Fatal(err)
	}
	reg := metrics.NewRegistry()
	series, err := metrics.NewSensors(reg, 0)
	if err != nil {
		t.Fatal(err)
	}
	e.run(conductor.Options{
		Host:    "sensor-host",
		Sensors: notify.NewSensorNotifier(notify.SensorOptions{Host: "sensor-host", Drivers: drivers}),
		ObserveSensors: func(r conductor.SensorReport) {
			series.Observe(metrics.SensorReading{NodeUUID: r.NodeUUID, NodeName: r.NodeName, InstanceUUID: r.InstanceUUID,
				Driver: r.Driver, Data: r.Data, Time: r.Time})
		},
	})
	scrape := func() string {
		rec := httptest.NewRecorder()
		metrics.Handler(reg).ServeHTTP(rec, httptest.NewRequest("GET", metrics.Path, nil))
		return rec.Body.String()
	}
	return e, series, scrape
}

func mergeConf(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// redfishNode is an active redfish node on bmc's sys-1.
func (e *env) redfishNode(bmc *redfishbmc.BMC, state string, mut ...func(*model.Node)) *model.Node {
	e.t.Helper()
	return e.node(state, append([]func(*model.Node){func(n *model.Node) {
		n.Driver = "redfish"
		n.DriverInfo = map[string]any{
			"redfish_address": bmc.URL(), "redfish_system_id": redfishbmc.SystemPath("sys-1"),
			"redfish_username": oobUser, "redfish_password": oobPassword,
		}
	}}, mut...)...)
}

// sensorMessage is oslo.messaging's notification as the exporter and
// Ceilometer read it.
type sensorMessage struct {
	MessageID   string `json:"message_id"`
	PublisherID string `json:"publisher_id"`
	EventType   string `json:"event_type"`
	Priority    string `json:"priority"`
	Timestamp   string `json:"timestamp"`
	Payload     struct {
		MessageID    string                    `json:"message_id"`
		InstanceUUID *string                   `json:"instance_uuid"`
		NodeUUID     string                    `json:"node_uuid"`
		NodeName     *string                   `json:"node_name"`
		Timestamp    string                    `json:"timestamp"`
		EventType    string                    `json:"event_type"`
		Payload      map[string]map[string]any `json:"payload"`
	} `json:"payload"`
}

// sensorConsumer declares, binds and consumes the queue the sensor
// notifier publishes to (notifications.info on exchange).
func sensorConsumer(t *testing.T, transport, exchange string) <-chan amqp.Delivery {
	t.Helper()
	conn, err := amqp.Dial(strings.Replace(transport, "rabbit://", "amqp://", 1))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	const key = "notifications.info"
	if err := ch.ExchangeDeclare(exchange, "topic", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	q := key + "." + exchange
	if _, err := ch.QueueDeclare(q, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(q, key, exchange, false, nil); err != nil {
		t.Fatal(err)
	}
	d, err := ch.Consume(q, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = ch.QueueDelete(q, false, false, false)
		_ = ch.ExchangeDelete(exchange, false, false)
		_ = conn.Close()
	})
	return d
}

func receiveSensor(t *testing.T, in <-chan amqp.Delivery) sensorMessage {
	t.Helper()
	select {
	case d := <-in:
		var env struct {
			Version string `json:"oslo.version"`
			Message string `json:"oslo.message"`
		}
		if err := json.Unmarshal(d.Body, &env); err != nil || env.Version != "2.0" {
			t.Fatalf("envelope %s: %v", d.Body, err)
		}
		var m sensorMessage
		if err := json.Unmarshal([]byte(env.Message), &m); err != nil {
			t.Fatalf("message %s: %v", env.Message, err)
		}
		return m
	case <-time.After(30 * time.Second):
		t.Fatal("no sensor notification reached the broker")
	}
	return sensorMessage{}
}

// The sensor periodic reads an active redfish node's chassis through the
// management interface and sends upstream's hardware.redfish.metrics
// notification to RabbitMQ, and the readings appear on /metrics under
// ironic-prometheus-exporter's names; the next pass reports what the BMC
// reads then.
func TestSendSensorDataRedfishToRabbitMQ(t *testing.T) {
	transport := os.Getenv("IRONIC_TEST_TRANSPORT_URL")
	if transport == "" {
		t.Skip("IRONIC_TEST_TRANSPORT_URL is not set (RabbitMQ, e.g. rabbit://guest:guest@127.0.0.1:5672/)")
	}
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		exchange := "ironic_sensors_" + uuid.NewString()[:8]
		in := sensorConsumer(t, transport, exchange)
		broker, err := notify.NewBroker(notify.BrokerOptions{TransportURL: transport, Exchange: exchange,
			Topics: []string{"notifications"}, Retry: -1})
		if err != nil {
			t.Fatal(err)
		}
		bmc := redfishbmc.New(t).System("sys-1", append(sysWithHardware(redfishbmc.On),
			redfishbmc.SimpleStorageDevice("Disk 0", "SSD-1", 480<<30))...).WithBasicAuth(oobUser, oobPassword)
		e, _, scrape := newSensorEnv(t, db, nil, broker)
		name := "rack1-u7"
		n := e.redfishNode(bmc, states.Active, func(n *model.Node) { n.Name = &name })
		// Not deployed: not read with enable_for_undeployed_nodes off.
		e.redfishNode(bmc, states.Manageable)
		ctx := context.Background()

		e.c.SendSensorData(ctx)
		m := receiveSensor(t, in)
		if m.EventType != "hardware.redfish.metrics" || m.PublisherID != "None.sensor-host" || m.Priority != "INFO" {
			t.Errorf("envelope: event_type %s publisher %s priority %s", m.EventType, m.PublisherID, m.Priority)
		}
		p := m.Payload
		if p.NodeUUID != n.UUID || deref(p.NodeName) != name || p.InstanceUUID != nil || p.EventType != "hardware.redfish.metrics.update" || p.MessageID == "" {
			t.Errorf("payload header %+v", p)
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000000", p.Timestamp); err != nil {
			t.Errorf("payload timestamp %q: %v", p.Timestamp, err)
		}
		sensor := func(typ, id string) map[string]any {
			s, _ := p.Payload[typ][id].(map[string]any)
			return s
		}
		temp := sensor("Temperature", "CPU1@1U")
		if temp["reading_celsius"] != 45.0 || temp["physical_context"] != "CPU" || temp["state"] != "Enabled" || temp["health"] != "OK" ||
			temp["identity"] != "CPU1" || temp["sensor_number"] != 5.0 || temp["max_reading_range_temp"] != 100.0 {
			t.Errorf("temperature %v", temp)
		}
		if fan := sensor("Fan", "Fan1@1U"); fan["reading"] != 2400.0 || fan["reading_units"] != "RPM" || fan["health"] != "OK" {
			t.Errorf("fan %v", fan)
		}
		if psu := sensor("Power", "0:Power@1U"); psu["last_power_output_watts"] != 190.0 || psu["power_capacity_watts"] != 800.0 {
			t.Errorf("power %v", psu)
		}
		if drive := sensor("Drive", "Disk 0:1@sys-1"); drive["capacity_bytes"] != float64(480<<30) || drive["model"] != "SSD-1" || drive["health"] != "OK" {
			t.Errorf("drives %v", p.Payload["Drive"])
		}
		if extra := p.Payload["Extra"]; extra["Manufacturer"] != "OpenKeel" || extra["UUID"] == nil {
			t.Errorf("Extra %v", extra)
		}
		body := scrape()
		for _, want := range []string{
			`baremetal_temp_cpu_celsius{`, `node_name="rack1-u7"`, `sensor_id="CPU1@1U"`,
			`baremetal_fan_status{`, `baremetal_power_status{`, `baremetal_drive_status{`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		if !strings.Contains(body, `state="Enabled"} 45`) {
			t.Errorf("/metrics has no CPU temperature of 45:\n%s", grepLines(body, "baremetal_temp_"))
		}

		// The machine warms up and a fan fails: the next pass says so.
		bmc.SetSensors(redfishbmc.Sensors{CPUCelsius: 71.5, FanRPM: 300, PSUOutputWatts: 420, CPUHealth: "Warning", FanHealth: "Critical", PSUHealth: "OK"})
		e.c.SendSensorData(ctx)
		m = receiveSensor(t, in)
		if got := m.Payload.Payload["Temperature"]["CPU1@1U"].(map[string]any)["reading_celsius"]; got != 71.5 {
			t.Errorf("second pass: temperature %v", got)
		}
		body = scrape()
		if !strings.Contains(body, `state="Enabled"} 71.5`) || !grepHas(body, "baremetal_fan_status{", "} 2") ||
			!grepHas(body, "baremetal_temperature_status{", "} 1") {
			t.Errorf("/metrics after the second pass:\n%s", grepLines(body, "baremetal_"))
		}
		select {
		case d := <-in:
			t.Errorf("unexpected notification (the undeployed node?): %s", d.Body)
		default:
		}
	})
}

// grepLines keeps body's lines that start with prefix.
func grepLines(body, prefix string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// grepHas reports whether a line starting with prefix ends with suffix.
func grepHas(body, prefix, suffix string) bool {
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) && strings.HasSuffix(l, suffix) {
			return true
		}
	}
	return false
}

// [sensor_data] options: undeployed nodes with enable_for_undeployed_nodes,
// data_types filtering, nothing for nodes with enable_for_nodes off,
// maintenance skipped, and a management interface without sensor data
// (fake answers none, so nothing is sent) skipped quietly.
func TestSendSensorDataOptions(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", sysWithHardware(redfishbmc.On)...).WithBasicAuth(oobUser, oobPassword)
		ctx := context.Background()

		rec := &notifytest.Recorder{}
		e, _, _ := newSensorEnv(t, db, map[string]string{"enable_for_undeployed_nodes": "true", "data_types": "temperature,Fan"}, rec)
		manageable := e.redfishNode(bmc, states.Manageable)
		e.redfishNode(bmc, states.Active, func(n *model.Node) { n.Maintenance = true })
		e.node(states.Active)
		e.c.SendSensorData(ctx)
		msgs := rec.Take()
		if len(msgs) != 1 {
			t.Fatalf("%d notifications, want the undeployed node's only: %v", len(msgs), msgs)
		}
		data := msgs[0].Payload.Data
		if data["node_uuid"] != manageable.UUID || msgs[0].EventType != "hardware.redfish.metrics" {
			t.Errorf("notification %s %v", msgs[0].EventType, data["node_uuid"])
		}
		got := data["payload"].(map[string]any)
		if _, ok := got["Temperature"]; !ok || len(got) != 2 || got["Fan"] == nil {
			t.Errorf("data_types temperature,Fan kept %v", keysOf(got))
		}
	})
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", sysWithHardware(redfishbmc.On)...).WithBasicAuth(oobUser, oobPassword)
		rec := &notifytest.Recorder{}
		e, _, _ := newSensorEnv(t, db, map[string]string{"enable_for_nodes": "false"}, rec)
		e.redfishNode(bmc, states.Active)
		e.c.SendSensorData(context.Background())
		if msgs := rec.Take(); len(msgs) != 0 {
			t.Errorf("enable_for_nodes off sent %d notifications", len(msgs))
		}
	})
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The emulator's system health reaches the 1.109 health field through
// the power sync (redfish GetNodeHealth reads Status.Health).
func TestRedfishHealthFromEmulator(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1", sysWithHardware(redfishbmc.On)...).WithBasicAuth(oobUser, oobPassword)
		e, _, _ := newSensorEnv(t, db, nil)
		n := e.redfishNode(bmc, states.Manageable, func(n *model.Node) { n.PowerState = states.PowerOn })
		ctx := context.Background()
		for _, h := range []string{"OK", "Critical", "Warning"} {
			bmc.SetSystemHealth("sys-1", h)
			e.c.SyncPowerStates(ctx)
			if got := e.get(n); deref(got.Health) != h {
				t.Fatalf("BMC health %s: node health %q", h, deref(got.Health))
			}
		}
		if hist := e.history(n); len(hist) != 3 || !strings.Contains(hist[2], "health='Warning' (previously 'Critical')") {
			t.Errorf("history %v", hist)
		}
	})
}

// The sensor periodic reads an active ipmi node's sensors from ipmi_sim
// with the real ipmitool and sends hardware.ipmi.metrics with the parsed
// "sdr -v" records; /metrics shows them under the exporter's IPMI names
// and follows a reading that changes.
func TestSendSensorDataIPMISim(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		b := ipmisim.Start(t, ipmisim.Options{Sensors: []ipmisim.Sensor{
			{Number: 1, Name: "CPU Temp", Type: ipmisim.SensorTemperature, Entity: ipmisim.EntityProcessor, Instance: 1, Raw: 45},
			{Number: 2, Name: "Fan1A", Type: ipmisim.SensorFan, Entity: ipmisim.EntityFan, Instance: 1, Raw: 24},
		}})
		rec := &notifytest.Recorder{}
		e, _, scrape := newSensorEnvWith(t, db, nil, true, rec)
		instance := "9b3c4f44-0d8e-4b7c-9f61-3c1f3c0b7a11"
		n := e.node(states.Active, func(n *model.Node) {
			n.Driver = "ipmi"
			n.InstanceUUID = &instance
			n.DriverInfo = map[string]any{
				"ipmi_address": b.Address, "ipmi_port": float64(b.Port),
				"ipmi_username": b.Username, "ipmi_password": b.Password, "ipmi_cipher_suite": ipmisim.CipherSuite,
			}
		})
		ctx := context.Background()
		e.c.SendSensorData(ctx)
		msgs := rec.Take()
		if len(msgs) != 1 || msgs[0].EventType != "hardware.ipmi.metrics" || msgs[0].PublisherID != "None.sensor-host" {
			t.Fatalf("notifications %v", msgs)
		}
		data := msgs[0].Payload.Data
		if data["node_uuid"] != n.UUID || data["instance_uuid"] != instance || data["event_type"] != "hardware.ipmi.metrics.update" {
			t.Errorf("payload header %v", data)
		}
		temps, _ := data["payload"].(map[string]any)["Temperature"].(map[string]any)
		if cpu, _ := temps["CPU Temp (0x1)"].(map[string]any); cpu["Sensor Reading"] != "45 (+/- 0) degrees C" {
			t.Errorf("temperature sensors %v", temps)
		}
		body := scrape()
		if !grepHas(body, "baremetal_cpu_temp_celsius{", "} 45") || !grepHas(body, "baremetal_fan_rpm{", "} 2400") ||
			!strings.Contains(body, `entity_id="3.1 (Processor)"`) || !strings.Contains(body, `instance_uuid="`+instance+`"`) {
			t.Errorf("/metrics:\n%s", grepLines(body, "baremetal_"))
		}

		b.SetSensor(t, 1, 83)
		e.c.SendSensorData(ctx)
		if !grepHas(scrape(), "baremetal_cpu_temp_celsius{", "} 83") {
			t.Errorf("/metrics after the change:\n%s", grepLines(scrape(), "baremetal_cpu"))
		}
	})
}
