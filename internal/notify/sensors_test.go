package notify_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/notify"
)

// The sensor notifier publishes to [oslo_messaging_notifications]/topics
// (not the versioned topics) whatever notification_level says, with a
// plain-dict payload and upstream's publisher "None.<host>".
func TestSensorNotifierOnRabbitMQ(t *testing.T) {
	transport := transportURL(t)
	exchange := "ironic_sensors_" + uuid.NewString()[:8]
	in := consumer(t, transport, exchange, "metering.info")
	c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"DEFAULT": {"host": "cond-7", "transport_url": transport, "control_exchange": exchange,
			"versioned_notifications_topics": "ironic_versioned_notifications"},
		"oslo_messaging_notifications": {"driver": "messagingv2", "topics": "metering"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	n, err := notify.SensorsFromConfig(c, nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	if !n.Enabled() {
		t.Fatal("sensor notifier disabled without a notification_level")
	}
	n.Info(context.Background(), "hardware.ipmi.metrics", map[string]any{"node_uuid": "n-1", "payload": map[string]any{"Fan": map[string]any{}}})
	n.Close()
	d := receive(t, in, 1)[0]
	var env struct {
		Version string `json:"oslo.version"`
		Message string `json:"oslo.message"`
	}
	if err := json.Unmarshal(d.Body, &env); err != nil || env.Version != "2.0" {
		t.Fatalf("envelope %s: %v", d.Body, err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(env.Message), &m); err != nil {
		t.Fatal(err)
	}
	payload, _ := m["payload"].(map[string]any)
	if m["publisher_id"] != "None.cond-7" || m["event_type"] != "hardware.ipmi.metrics" || m["priority"] != "INFO" ||
		payload["node_uuid"] != "n-1" || payload["ironic_object.name"] != nil {
		t.Errorf("message %v", m)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "ironic_sensor_notifications_sent_total" && f.GetMetric()[0].GetCounter().GetValue() == 1 {
			return
		}
	}
	t.Errorf("ironic_sensor_notifications_sent_total is not 1: %v", fams)
}

// Without drivers nothing is sent and nothing blocks.
func TestSensorNotifierWithoutDrivers(t *testing.T) {
	n := notify.NewSensorNotifier(notify.SensorOptions{Host: "h"})
	if n.Enabled() {
		t.Fatal("enabled without drivers")
	}
	n.Info(context.Background(), "hardware.fake-hardware.metrics", map[string]any{})
	n.Close()
	var none *notify.SensorNotifier
	none.Info(context.Background(), "x", nil)
	none.Close()
}
