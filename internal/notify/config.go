package notify

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openkeel/ironic/internal/config"
)

// Service names, the first part of publisher_id.
const (
	ServiceAPI       = "ironic-api"
	ServiceConductor = "ironic-conductor"
)

// FromConfig builds the versioned notifier of service from
// [DEFAULT]/notification_level, versioned_notifications_topics, host,
// transport_url and control_exchange, and [oslo_messaging_notifications]
// driver, transport_url and retry. mask is the API's secret masking
// (see Options.Mask). Each messagingv2 driver's counters are registered
// on reg when it is not nil.
func FromConfig(c *config.Config, service string, log *slog.Logger, mask func(map[string]any) map[string]any, reg prometheus.Registerer) (*Notifier, error) {
	if log == nil {
		log = slog.Default()
	}
	drivers, err := driversFromConfig(c, c.ListOf(config.DefaultVersionedNotificationsTopics), log, func(b *Broker) error {
		if reg == nil {
			return nil
		}
		return registerBroker(reg, "ironic_notifications", "Versioned notifications", service, b)
	})
	if err != nil {
		return nil, err
	}
	return New(Options{
		Service: service, Host: c.StringOf(config.DefaultHost), Level: c.StringOf(config.DefaultNotificationLevel),
		Drivers: drivers, Mask: mask,
	}), nil
}

// driversFromConfig builds the [oslo_messaging_notifications] drivers; a
// messagingv2 driver publishes to topics and is handed to registered.
func driversFromConfig(c *config.Config, topics []string, log *slog.Logger, registered func(*Broker) error) ([]Driver, error) {
	var drivers []Driver
	for _, name := range c.ListOf(config.OsloMessagingNotificationsDriver) {
		switch name {
		case "noop":
			drivers = append(drivers, NoopDriver{})
		case "log":
			drivers = append(drivers, LogDriver{Log: log})
		case "messagingv2", "messaging":
			url := c.StringOf(config.OsloMessagingNotificationsTransportURL)
			if url == "" {
				url = c.StringOf(config.DefaultTransportURL)
			}
			b, err := NewBroker(BrokerOptions{
				TransportURL: url,
				Exchange:     c.StringOf(config.DefaultControlExchange),
				Topics:       topics,
				Retry:        c.IntOf(config.OsloMessagingNotificationsRetry),
				Log:          log,
			})
			if err != nil {
				closeAll(drivers)
				return nil, fmt.Errorf("[oslo_messaging_notifications] driver %s: %w", name, err)
			}
			if err := registered(b); err != nil {
				b.Close()
				closeAll(drivers)
				return nil, err
			}
			drivers = append(drivers, b)
		default:
			// oslo.messaging loads drivers by entry point and logs the
			// ones it cannot find.
			log.Warn("unknown [oslo_messaging_notifications] driver, ignored", "driver", name)
		}
	}
	return drivers, nil
}

func closeAll(drivers []Driver) {
	for _, d := range drivers {
		d.Close()
	}
}

// registerBroker exposes the driver's sent and dropped counts as
// <prefix>_dropped_total and <prefix>_sent_total; what names the kind of
// notification in their help.
func registerBroker(reg prometheus.Registerer, prefix, what, service string, b *Broker) error {
	labels := prometheus.Labels{"service": service}
	for _, c := range []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: prefix + "_dropped_total", ConstLabels: labels,
			Help: what + " dropped: buffer full while the broker was unreachable, retries exhausted, or unsent at shutdown.",
		}, func() float64 { return float64(b.Dropped()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: prefix + "_sent_total", ConstLabels: labels,
			Help: what + " taken by the message broker.",
		}, func() float64 { return float64(b.Sent()) }),
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register notification metrics: %w", err)
		}
	}
	return nil
}
