package scenarios

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/openkeel/ironic/testing/nova"
	"github.com/openkeel/ironic/testing/vbm"
)

// notifications consumes the versioned notifications oslo.messaging's
// notifier would leave for <topic>.info on exchange, declaring the queue
// before the service publishes so that none is lost.
func notifications(t *testing.T, transport, exchange, topic string) <-chan map[string]any {
	t.Helper()
	conn, err := amqp.Dial(strings.Replace(transport, "rabbit://", "amqp://", 1))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	key := topic + ".info"
	if err := ch.ExchangeDeclare(exchange, "topic", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(key, false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(key, key, exchange, false, nil); err != nil {
		t.Fatal(err)
	}
	deliveries, err := ch.Consume(key, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan map[string]any, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for d := range deliveries {
			var env map[string]string
			var msg map[string]any
			if json.Unmarshal(d.Body, &env) != nil || env["oslo.version"] != "2.0" || json.Unmarshal([]byte(env["oslo.message"]), &msg) != nil {
				t.Errorf("not an oslo.messaging 2.0 message: %s", d.Body)
				continue
			}
			out <- msg
		}
	}()
	t.Cleanup(func() {
		_, _ = ch.QueueDelete(key, false, false, false)
		_ = ch.ExchangeDelete(exchange, false, false)
		_ = conn.Close()
		<-done
	})
	return out
}

// awaitNotification reads msgs until one of event arrives.
func awaitNotification(t *testing.T, msgs <-chan map[string]any, event string, within time.Duration) map[string]any {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case m := <-msgs:
			if m["event_type"] == event {
				return m
			}
		case <-timeout:
			t.Fatalf("no %s notification within %v", event, within)
			return nil
		}
	}
}

// Scenario 4 of seed 001: a node's power changes behind the service's
// back. The power sync (every second here, force_power_state_during_sync
// off) records the new state, posts power-update to Nova and sends
// baremetal.node.power_state_corrected.success on RabbitMQ; a power
// action through the API tells Nova too.
func TestScenario4PowerDrift(t *testing.T) {
	transport := os.Getenv("IRONIC_TEST_TRANSPORT_URL")
	if transport == "" {
		t.Skip("IRONIC_TEST_TRANSPORT_URL is not set (RabbitMQ, e.g. rabbit://guest:guest@127.0.0.1:5672/)")
	}
	instance := "0d7c6f5e-8a4b-4c3d-9e2f-1a2b3c4d5e6f"
	fx := nova.New(t).Instance(instance)
	exchange, topic := "ironic_s4_"+uuid.NewString()[:8], "versioned_s4_"+uuid.NewString()[:8]
	msgs := notifications(t, transport, exchange, topic)
	s := newScenario(t, fmt.Sprintf(`[DEFAULT]
notification_level = info
versioned_notifications_topics = %s
control_exchange = %s
transport_url = %s
[oslo_messaging_notifications]
driver = messagingv2
[conductor]
sync_power_state_interval = 1
force_power_state_during_sync = false
[nova]
auth_type = none
endpoint_override = %s
`, topic, exchange, transport, fx.Endpoint()))
	m := s.lab.Machine("node-4", "52:54:00:00:04:01")
	id := s.enroll(m, "node-4", vbm.BMCPassword)
	s.provision(id, map[string]any{"target": "manage"}, "manageable", 60*time.Second)
	s.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, []map[string]any{{"op": "add", "path": "/instance_uuid", "value": instance}})

	// A power action of the API's: Nova hears POWER_ON.
	s.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/power", map[string]any{"target": "power on"})
	awaitNotification(t, msgs, "baremetal.node.power_set.end", 60*time.Second)
	awaitNova(t, fx, "POWER_ON", 30*time.Second)

	// Behind the service's back.
	m.BMC.SetPower(m.ID, "Off")
	corrected := awaitNotification(t, msgs, "baremetal.node.power_state_corrected.success", 30*time.Second)
	payload, _ := corrected["payload"].(map[string]any)
	data, _ := payload["ironic_object.data"].(map[string]any)
	if payload["ironic_object.name"] != "NodeCorrectedPowerStatePayload" || payload["ironic_object.version"] != "1.17" ||
		data["uuid"] != id || data["from_power"] != "power on" || data["power_state"] != "power off" || data["instance_uuid"] != instance {
		t.Errorf("power_state_corrected payload %v", payload)
	}
	if corrected["publisher_id"] == nil || !strings.HasPrefix(corrected["publisher_id"].(string), "ironic-conductor.") || corrected["priority"] != "INFO" {
		t.Errorf("envelope %v %v", corrected["publisher_id"], corrected["priority"])
	}
	awaitNova(t, fx, "POWER_OFF", 30*time.Second)
	if n := s.must(http.StatusOK, "GET", "/v1/nodes/"+id, nil); n["power_state"] != "power off" || n["maintenance"] != false {
		t.Errorf("node after the sync: power %v maintenance %v", n["power_state"], n["maintenance"])
	}
	for _, r := range fx.Requests() {
		if r.Path != "/v2.1/os-server-external-events" || r.Microversion != "compute 2.76" {
			t.Errorf("nova request %+v", r)
		}
	}
}

// awaitNova waits for Nova to accept a power-update with tag.
func awaitNova(t *testing.T, fx *nova.Fixture, tag string, within time.Duration) {
	t.Helper()
	timeout := time.After(within)
	for {
		for _, ev := range fx.Accepted() {
			if ev.Name == "power-update" && ev.Tag == tag {
				return
			}
		}
		select {
		case <-fx.Received():
		case <-timeout:
			t.Fatalf("nova never accepted power-update %s: %+v", tag, fx.Requests())
		}
	}
}
