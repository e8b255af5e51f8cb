package notify

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openkeel/ironic/internal/config"
)

// AuditFromConfig builds the notifier of the API's audit middleware
// ([audit]/enabled): keystonemiddleware's oslo.messaging notifier, which
// Ironic leaves on its [oslo_messaging_notifications] driver, topics and
// transport_url, publishing non-versioned INFO notifications as the
// ironic-api program (oslo's publisher id is the program's name). A
// messagingv2 driver's counters are registered on reg
// (ironic_audit_notifications_*) when it is not nil.
func AuditFromConfig(c *config.Config, log *slog.Logger, reg prometheus.Registerer) (*SensorNotifier, error) {
	if log == nil {
		log = slog.Default()
	}
	drivers, err := driversFromConfig(c, c.ListOf(config.OsloMessagingNotificationsTopics), log, func(b *Broker) error {
		if reg == nil {
			return nil
		}
		return registerBroker(reg, "ironic_audit_notifications", "API audit notifications", ServiceAPI, b)
	})
	if err != nil {
		return nil, err
	}
	return NewSensorNotifier(SensorOptions{PublisherID: ServiceAPI, Drivers: drivers}), nil
}
