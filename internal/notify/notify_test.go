package notify_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
)

// transportURL is the RabbitMQ the tests publish to (oslo.messaging's
// form); CI starts Debian's rabbitmq-server on 127.0.0.1 and sets it.
func transportURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("IRONIC_TEST_TRANSPORT_URL")
	if u == "" {
		t.Skip("IRONIC_TEST_TRANSPORT_URL is not set (e.g. rabbit://guest:guest@127.0.0.1:5672/)")
	}
	return u
}

// consumer reads what reaches the queue oslo.messaging's notifier
// declares for <topic>.<priority> on exchange, declaring it first so
// that nothing published before the consumer starts is lost.
func consumer(t *testing.T, transport, exchange string, keys ...string) <-chan amqp.Delivery {
	t.Helper()
	conn, err := amqp.Dial(strings.Replace(transport, "rabbit://", "amqp://", 1))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.ExchangeDeclare(exchange, "topic", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	out := make(chan amqp.Delivery, 256)
	var wg sync.WaitGroup
	for _, key := range keys {
		if _, err := ch.QueueDeclare(key, false, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
		if err := ch.QueueBind(key, key, exchange, false, nil); err != nil {
			t.Fatal(err)
		}
		d, err := ch.Consume(key, "", true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range d {
				out <- m
			}
		}()
	}
	t.Cleanup(func() {
		for _, key := range keys {
			_, _ = ch.QueueDelete(key, false, false, false)
		}
		_ = ch.ExchangeDelete(exchange, false, false)
		_ = conn.Close()
		wg.Wait()
	})
	return out
}

func receive(t *testing.T, in <-chan amqp.Delivery, n int) []amqp.Delivery {
	t.Helper()
	var got []amqp.Delivery
	timeout := time.After(30 * time.Second)
	for len(got) < n {
		select {
		case d := <-in:
			got = append(got, d)
		case <-timeout:
			t.Fatalf("received %d of %d messages", len(got), n)
		}
	}
	return got
}

func testMask(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if strings.Contains(k, "password") {
			v = "******"
		}
		out[k] = v
	}
	return out
}

func sampleNode() *model.Node {
	name, inst, rc := "node-1", "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", "baremetal"
	updated := time.Date(2026, 12, 2, 9, 30, 1, 500, time.UTC)
	return &model.Node{
		UUID: "9a3c5f5e-2b0f-4ad6-8a1c-0f5e6c1c1a01", CreatedAt: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC), UpdatedAt: &updated,
		Name: &name, InstanceUUID: &inst, ResourceClass: &rc, Driver: "redfish", PowerState: "power on",
		ProvisionState: "active", ConductorGroup: "", CleanStep: map[string]any{}, DeployStep: map[string]any{},
		DriverInfo:         map[string]any{"redfish_address": "https://bmc", "redfish_password": "s3cret"},
		InstanceInfo:       map[string]any{"image_source": "http://img", "image_url": "http://swift/tempurl?sig=x"},
		DriverInternalInfo: map[string]any{"agent_url": "http://10.0.0.2:9999"},
		Traits:             []string{"CUSTOM_GPU"}, PowerInterface: "redfish",
	}
}

type emitted struct {
	event, payload, priority string
	note                     notify.Notification
}

// Every payload class reaches RabbitMQ in oslo.messaging's 2.0 envelope
// on the control exchange with routing key <topic>.<priority>, with
// upstream's name, version and field set.
func TestNotificationsOnRabbitMQ(t *testing.T) {
	transport := transportURL(t)
	exchange := "ironic_test_" + uuid.NewString()[:8]
	topic := "versioned_" + uuid.NewString()[:8]
	in := consumer(t, transport, exchange, topic+".info", topic+".error")

	b, err := notify.NewBroker(notify.BrokerOptions{TransportURL: transport, Exchange: exchange, Topics: []string{topic}, Retry: -1})
	if err != nil {
		t.Fatal(err)
	}
	n := notify.New(notify.Options{Service: notify.ServiceConductor, Host: "cond-1", Level: "info", Drivers: []notify.Driver{b}, Mask: testMask})
	node := sampleNode()
	pxe, smart := true, false
	addr := "52:54:00:00:01:01"
	port := &model.Port{UUID: uuid.NewString(), CreatedAt: time.Now(), Address: &addr, PXEEnabled: &pxe, IsSmartNIC: &smart, AvailableForDynamicPortgroup: true}
	pg := &model.Portgroup{UUID: uuid.NewString(), CreatedAt: time.Now()}
	ch := &model.Chassis{UUID: uuid.NewString(), CreatedAt: time.Now()}
	dt := &model.DeployTemplate{UUID: uuid.NewString(), CreatedAt: time.Now(), Name: "CUSTOM_RAID", Steps: []model.DeployTemplateStep{{Interface: "raid", Step: "apply_configuration", Priority: 10}}}
	al := &model.Allocation{UUID: uuid.NewString(), CreatedAt: time.Now(), State: "allocating", Traits: []string{}, CandidateNodes: []string{}}
	vc := &model.VolumeConnector{UUID: uuid.NewString(), CreatedAt: time.Now()}
	vt := &model.VolumeTarget{UUID: uuid.NewString(), CreatedAt: time.Now()}
	cases := []emitted{
		{"baremetal.node.create.end", "NodeCRUDPayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "node", Action: "create", Status: notify.StatusEnd, Payload: n.NodeCRUDPayload(node, "")}},
		{"baremetal.node.power_set.start", "NodeSetPowerStatePayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "node", Action: "power_set", Status: notify.StatusStart, Payload: n.NodeSetPowerStatePayload(node, "power off")}},
		{"baremetal.node.power_set.error", "NodeSetPowerStatePayload", "ERROR", notify.Notification{Level: notify.LevelError, Object: "node", Action: "power_set", Status: notify.StatusError, Payload: n.NodeSetPowerStatePayload(node, "power off")}},
		{"baremetal.node.power_state_corrected.success", "NodeCorrectedPowerStatePayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "node", Action: "power_state_corrected", Status: notify.StatusSuccess, Payload: n.NodeCorrectedPowerStatePayload(node, "power off")}},
		{"baremetal.node.provision_set.start", "NodeSetProvisionStatePayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "node", Action: "provision_set", Status: notify.StatusStart, Payload: n.NodeSetProvisionStatePayload(node, "available", "", "deploy")}},
		{"baremetal.node.maintenance_set.end", "NodePayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "node", Action: "maintenance_set", Status: notify.StatusEnd, Payload: n.NodePayload(node)}},
		{"baremetal.node.console_set.start", "NodePayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "node", Action: "console_set", Status: notify.StatusStart, Payload: n.NodePayload(node)}},
		{"baremetal.port.create.end", "PortCRUDPayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "port", Action: "create", Status: notify.StatusEnd, Payload: n.PortCRUDPayload(port, node.UUID, "")}},
		{"baremetal.portgroup.update.end", "PortgroupCRUDPayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "portgroup", Action: "update", Status: notify.StatusEnd, Payload: n.PortgroupCRUDPayload(pg, node.UUID)}},
		{"baremetal.chassis.delete.end", "ChassisCRUDPayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "chassis", Action: "delete", Status: notify.StatusEnd, Payload: n.ChassisCRUDPayload(ch)}},
		{"baremetal.deploytemplate.create.end", "DeployTemplateCRUDPayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "deploytemplate", Action: "create", Status: notify.StatusEnd, Payload: n.DeployTemplateCRUDPayload(dt)}},
		{"baremetal.allocation.create.start", "AllocationCRUDPayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "allocation", Action: "create", Status: notify.StatusStart, Payload: n.AllocationCRUDPayload(al, "")}},
		{"baremetal.volumeconnector.create.end", "VolumeConnectorCRUDPayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "volumeconnector", Action: "create", Status: notify.StatusEnd, Payload: n.VolumeConnectorCRUDPayload(vc, node.UUID)}},
		{"baremetal.volumetarget.delete.end", "VolumeTargetCRUDPayload", "INFO", notify.Notification{Level: notify.LevelInfo, Object: "volumetarget", Action: "delete", Status: notify.StatusEnd, Payload: n.VolumeTargetCRUDPayload(vt, node.UUID)}},
	}
	for _, c := range cases {
		n.Emit(context.Background(), c.note)
	}
	got := receive(t, in, len(cases))
	n.Close()

	byEvent := map[string]map[string]any{}
	stamp := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$`)
	for _, d := range got {
		if d.ContentType != "application/json" || d.Exchange != exchange {
			t.Errorf("delivery content type %q exchange %q", d.ContentType, d.Exchange)
		}
		var env map[string]string
		if err := json.Unmarshal(d.Body, &env); err != nil || env["oslo.version"] != "2.0" || len(env) != 2 {
			t.Fatalf("envelope %s: %v", d.Body, err)
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(env["oslo.message"]), &msg); err != nil {
			t.Fatalf("oslo.message %q: %v", env["oslo.message"], err)
		}
		ev, _ := msg["event_type"].(string)
		wantKey := topic + "." + strings.ToLower(msg["priority"].(string))
		if d.RoutingKey != wantKey {
			t.Errorf("%s: routing key %s, want %s", ev, d.RoutingKey, wantKey)
		}
		if _, err := uuid.Parse(msg["message_id"].(string)); err != nil || msg["publisher_id"] != "ironic-conductor.cond-1" || !stamp.MatchString(msg["timestamp"].(string)) {
			t.Errorf("%s: envelope fields %v", ev, msg)
		}
		byEvent[ev] = msg
	}
	for _, c := range cases {
		msg := byEvent[c.event]
		if msg == nil {
			t.Errorf("%s not received", c.event)
			continue
		}
		if msg["priority"] != c.priority {
			t.Errorf("%s: priority %v, want %s", c.event, msg["priority"], c.priority)
		}
		p, _ := msg["payload"].(map[string]any)
		class := upstreamPayloads[c.payload]
		if p["ironic_object.name"] != c.payload || p["ironic_object.version"] != class.version || p["ironic_object.namespace"] != "ironic" {
			t.Errorf("%s: payload object %v %v %v, want %s %s", c.event, p["ironic_object.name"], p["ironic_object.version"], p["ironic_object.namespace"], c.payload, class.version)
		}
		data, _ := p["ironic_object.data"].(map[string]any)
		var keys []string
		for k := range data {
			keys = append(keys, k)
		}
		want := slices.Clone(class.fields)
		sort.Strings(keys)
		sort.Strings(want)
		if !slices.Equal(keys, want) {
			t.Errorf("%s: fields\n got %v\nwant %v", c.event, keys, want)
		}
	}
	crud := byEvent["baremetal.node.create.end"]["payload"].(map[string]any)["ironic_object.data"].(map[string]any)
	if di := crud["driver_info"].(map[string]any); di["redfish_password"] != "******" || di["redfish_address"] != "https://bmc" {
		t.Errorf("driver_info not masked as the API masks it: %v", di)
	}
	if ii := crud["instance_info"].(map[string]any); ii["image_url"] != "******" {
		t.Errorf("image_url not masked: %v", ii)
	}
	if crud["updated_at"] != "2026-12-02T09:30:01Z" || crud["power_state"] != "power on" || crud["target_power_state"] != nil || crud["chassis_uuid"] != nil {
		t.Errorf("node fields: updated_at %v power %v target %v chassis %v", crud["updated_at"], crud["power_state"], crud["target_power_state"], crud["chassis_uuid"])
	}
	if b.Dropped() != 0 || b.Sent() != uint64(len(cases)) {
		t.Errorf("sent %d dropped %d", b.Sent(), b.Dropped())
	}
}

type recorder struct {
	mu   sync.Mutex
	msgs []*notify.Message
}

func (r *recorder) Send(_ context.Context, _ notify.Level, m *notify.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
}
func (r *recorder) Close() {}

// notification_level filters as upstream's _should_notify: below it, or
// with no level at all, nothing is sent.
func TestNotificationLevel(t *testing.T) {
	for _, tc := range []struct {
		level string
		sent  []string
	}{
		{"", nil},
		{"debug", []string{"DEBUG", "INFO", "WARN", "ERROR", "CRITICAL"}},
		{"info", []string{"INFO", "WARN", "ERROR", "CRITICAL"}},
		{"warning", []string{"WARN", "ERROR", "CRITICAL"}},
		{"error", []string{"ERROR", "CRITICAL"}},
		{"critical", []string{"CRITICAL"}},
	} {
		t.Run("level="+tc.level, func(t *testing.T) {
			r := &recorder{}
			n := notify.New(notify.Options{Service: notify.ServiceAPI, Host: "h", Level: tc.level, Drivers: []notify.Driver{r}})
			for l := notify.LevelDebug; l <= notify.LevelCritical; l++ {
				n.Emit(context.Background(), notify.Notification{Level: l, Object: "node", Action: "update", Status: notify.StatusEnd, Payload: n.NodePayload(sampleNode())})
			}
			var got []string
			for _, m := range r.msgs {
				got = append(got, m.Priority)
				if m.PublisherID != "ironic-api.h" || m.EventType != "baremetal.node.update.end" {
					t.Errorf("message %+v", m)
				}
			}
			if !slices.Equal(got, tc.sent) {
				t.Errorf("sent %v, want %v", got, tc.sent)
			}
		})
	}
}

// A broker that does not answer never blocks the caller: messages wait in
// the bounded buffer and what does not fit is dropped and counted.
func TestBrokerDownNeverBlocks(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	b, err := notify.NewBroker(notify.BrokerOptions{TransportURL: "rabbit://guest:guest@" + addr + "/", Exchange: "ironic", Topics: []string{"ironic_versioned_notifications"}, Retry: -1, Buffer: 10})
	if err != nil {
		t.Fatal(err)
	}
	n := notify.New(notify.Options{Service: notify.ServiceConductor, Host: "h", Level: "info", Drivers: []notify.Driver{b}})
	note := notify.Notification{Level: notify.LevelInfo, Object: "node", Action: "power_set", Status: notify.StatusStart, Payload: n.NodeSetPowerStatePayload(sampleNode(), "power on")}
	start := time.Now()
	for range 100 {
		n.Emit(context.Background(), note)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("100 emits took %v with the broker down", d)
	}
	// At most the buffer and the one message being retried are kept.
	if got := b.Dropped(); got < 89 {
		t.Errorf("dropped %d of 100 with a buffer of 10", got)
	}
	n.Close()
	if got := b.Dropped(); got != 100 || b.Sent() != 0 {
		t.Errorf("after close: dropped %d sent %d, want 100 and 0", got, b.Sent())
	}
}

// The drivers and topics come from the configuration as oslo.messaging
// reads them; the broker falls back to [DEFAULT]/transport_url.
func TestFromConfig(t *testing.T) {
	c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"DEFAULT":                      {"notification_level": "info", "host": "cond-9", "transport_url": "rabbit://u:p@127.0.0.1:1/"},
		"oslo_messaging_notifications": {"driver": "log", "retry": "0"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := notify.FromConfig(c, notify.ServiceConductor, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if !n.Enabled(notify.LevelInfo) || n.Enabled(notify.LevelDebug) {
		t.Errorf("levels: info %v debug %v", n.Enabled(notify.LevelInfo), n.Enabled(notify.LevelDebug))
	}
	c2, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
		"DEFAULT":                      {"notification_level": "info"},
		"oslo_messaging_notifications": {"driver": "messagingv2", "transport_url": "zmq://x"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := notify.FromConfig(c2, notify.ServiceAPI, nil, nil, nil); err == nil {
		t.Error("an unsupported transport was accepted")
	}
}
