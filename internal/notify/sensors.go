package notify

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openkeel/ironic/internal/config"
)

// SensorNotifier sends the conductor's sensor data (upstream's
// SENSORS_NOTIFIER): non-versioned notifications whose payload is a plain
// dictionary, sent whatever [DEFAULT]/notification_level says, to
// [oslo_messaging_notifications]/topics rather than the versioned topics.
type SensorNotifier struct {
	publisher string
	drivers   []Driver
	now       func() time.Time
}

// SensorOptions configure NewSensorNotifier.
type SensorOptions struct {
	// Host is [DEFAULT]/host.
	Host string
	// PublisherID replaces the sensor data's "None.<host>" for the other
	// non-versioned notifications (the API's audit events).
	PublisherID string
	Drivers     []Driver
	Now         func() time.Time
}

// NewSensorNotifier returns a sensor notifier; with no drivers nothing is
// sent.
func NewSensorNotifier(o SensorOptions) *SensorNotifier {
	// Upstream's conductor asks rpc.get_sensors_notifier() for its
	// notifier without a service, and the publisher id is formatted from
	// Python's None: "None.<host>". Consumers match on it, so it is kept.
	n := &SensorNotifier{publisher: "None." + o.Host, drivers: o.Drivers, now: o.Now}
	if o.PublisherID != "" {
		n.publisher = o.PublisherID
	}
	if n.now == nil {
		n.now = time.Now
	}
	return n
}

// SensorsFromConfig builds the conductor's sensor notifier from
// [oslo_messaging_notifications] driver, transport_url, topics and retry,
// [DEFAULT]/transport_url, control_exchange and host. A messagingv2
// driver's counters are registered on reg (ironic_sensor_notifications_*)
// when it is not nil.
func SensorsFromConfig(c *config.Config, log *slog.Logger, reg prometheus.Registerer) (*SensorNotifier, error) {
	if log == nil {
		log = slog.Default()
	}
	drivers, err := driversFromConfig(c, c.ListOf(config.OsloMessagingNotificationsTopics), log, func(b *Broker) error {
		if reg == nil {
			return nil
		}
		return registerBroker(reg, "ironic_sensor_notifications", "Sensor data notifications", ServiceConductor, b)
	})
	if err != nil {
		return nil, err
	}
	return NewSensorNotifier(SensorOptions{Host: c.StringOf(config.DefaultHost), Drivers: drivers}), nil
}

// Enabled reports whether a notification would go anywhere.
func (n *SensorNotifier) Enabled() bool { return n != nil && len(n.drivers) > 0 }

// Info sends payload at INFO priority under eventType, as oslo.messaging's
// Notifier.info; it never blocks on the network.
func (n *SensorNotifier) Info(ctx context.Context, eventType string, payload map[string]any) {
	if !n.Enabled() {
		return
	}
	m := &Message{
		MessageID:   uuid.NewString(),
		PublisherID: n.publisher,
		EventType:   eventType,
		Priority:    LevelInfo.Priority(),
		Payload:     Object{Data: payload},
		Timestamp:   n.now().UTC().Format("2006-01-02 15:04:05.000000"),
	}
	for _, d := range n.drivers {
		d.Send(ctx, LevelInfo, m)
	}
}

// Close stops the drivers, flushing what they can.
func (n *SensorNotifier) Close() {
	if n == nil {
		return
	}
	closeAll(n.drivers)
}
