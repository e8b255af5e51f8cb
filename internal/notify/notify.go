// Package notify sends upstream Ironic's versioned notifications
// (ironic/objects/notification.py): an event type
// baremetal.<object>.<action>.<status>, a publisher
// "<service>.<host>", a priority from the notification's level and a
// payload in oslo.versionedobjects' primitive form. A notification below
// [DEFAULT]/notification_level (or any, when it is unset) is not sent. The
// [oslo_messaging_notifications] drivers carry them: log, noop and
// messagingv2 (AMQP 0-9-1 to RabbitMQ with oslo.messaging's 2.0
// envelope). Sending never blocks the caller: the broker driver queues
// into a bounded buffer and counts what it drops.
package notify

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/google/uuid"
)

// Level is a notification's level; the priority on the wire is its upper
// case form.
type Level int

// Levels in increasing order, as upstream's NOTIFY_LEVELS.
const (
	LevelDebug Level = iota
	LevelInfo
	LevelWarning
	LevelError
	LevelCritical
)

var levelNames = [...]string{"debug", "info", "warning", "error", "critical"}

func (l Level) String() string { return levelNames[l] }

// Priority is the message's priority field ("INFO", …).
func (l Level) Priority() string {
	return map[Level]string{LevelDebug: "DEBUG", LevelInfo: "INFO", LevelWarning: "WARN", LevelError: "ERROR", LevelCritical: "CRITICAL"}[l]
}

// ParseLevel reads [DEFAULT]/notification_level; ok is false for an
// unset (or unknown) level, which sends nothing.
func ParseLevel(s string) (Level, bool) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), true
		}
	}
	return 0, false
}

// Status is the last part of an event type (upstream NotificationStatus).
type Status string

// Notification statuses.
const (
	StatusStart   Status = "start"
	StatusEnd     Status = "end"
	StatusError   Status = "error"
	StatusSuccess Status = "success"
)

// Notification is one versioned notification before it is sent.
type Notification struct {
	Level Level
	// Object and Action name the event type: baremetal.<Object>.<Action>.<Status>.
	Object, Action string
	Status         Status
	Payload        Object
}

// EventType is baremetal.<object>.<action>.<status>.
func (n Notification) EventType() string {
	return "baremetal." + n.Object + "." + n.Action + "." + string(n.Status)
}

// Message is oslo.messaging's notification message as the drivers send
// it (before the 2.0 envelope).
type Message struct {
	MessageID   string `json:"message_id"`
	PublisherID string `json:"publisher_id"`
	EventType   string `json:"event_type"`
	Priority    string `json:"priority"`
	Payload     Object `json:"payload"`
	// Timestamp is Python's str(datetime.utcnow()).
	Timestamp string `json:"timestamp"`
}

// Driver carries messages; Send must not block on the network.
type Driver interface {
	Send(ctx context.Context, level Level, m *Message)
	Close()
}

// Notifier emits notifications for one service and host.
type Notifier struct {
	publisher string
	level     Level
	enabled   bool
	drivers   []Driver
	now       func() time.Time
	mask      func(map[string]any) map[string]any
}

// Options configure New.
type Options struct {
	// Service is "ironic-api" or "ironic-conductor"; Host is [DEFAULT]/host.
	Service, Host string
	// Level is [DEFAULT]/notification_level, "" for none.
	Level   string
	Drivers []Driver
	// Mask is oslo.utils' mask_dict_password, applied to the payloads'
	// instance_info, driver_info and driver_internal_info; the caller
	// passes the API's so that notifications mask what the API does.
	// Without it those fields are sent empty.
	Mask func(map[string]any) map[string]any
	Now  func() time.Time
}

// New returns a notifier; with no drivers or no level nothing is sent.
func New(o Options) *Notifier {
	n := &Notifier{publisher: o.Service + "." + o.Host, drivers: o.Drivers, now: o.Now, mask: o.Mask}
	n.level, n.enabled = ParseLevel(o.Level)
	n.enabled = n.enabled && len(o.Drivers) > 0
	if n.now == nil {
		n.now = time.Now
	}
	return n
}

// Enabled reports whether a notification of level would be sent; callers
// use it to skip building payloads.
func (n *Notifier) Enabled(level Level) bool {
	return n != nil && n.enabled && level >= n.level
}

// Emit sends note through every driver unless its level is below the
// configured one. It never blocks on the network.
func (n *Notifier) Emit(ctx context.Context, note Notification) {
	if !n.Enabled(note.Level) {
		return
	}
	m := &Message{
		MessageID:   uuid.NewString(),
		PublisherID: n.publisher,
		EventType:   note.EventType(),
		Priority:    note.Level.Priority(),
		Payload:     note.Payload,
		Timestamp:   n.now().UTC().Format("2006-01-02 15:04:05.000000"),
	}
	for _, d := range n.drivers {
		d.Send(ctx, note.Level, m)
	}
}

// Close stops the drivers, flushing what they can.
func (n *Notifier) Close() {
	if n == nil {
		return
	}
	for _, d := range n.drivers {
		d.Close()
	}
}

// maskDict masks a secret-bearing payload field.
func (n *Notifier) maskDict(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	if n == nil || n.mask == nil {
		return map[string]any{}
	}
	return n.mask(m)
}

// LogDriver is oslo.messaging's log driver: each message is logged as
// JSON at its priority, under the logger name
// oslo.messaging.notification.<event_type>.
type LogDriver struct{ Log *slog.Logger }

var slogLevels = map[Level]slog.Level{LevelDebug: slog.LevelDebug, LevelInfo: slog.LevelInfo, LevelWarning: slog.LevelWarn, LevelError: slog.LevelError, LevelCritical: slog.LevelError + 4}

// Send logs m.
func (d LogDriver) Send(ctx context.Context, level Level, m *Message) {
	b, err := json.Marshal(m)
	if err != nil {
		d.Log.ErrorContext(ctx, "could not encode notification", "event_type", m.EventType, "error", err)
		return
	}
	d.Log.LogAttrs(ctx, slogLevels[level], string(b), slog.String("logger", "oslo.messaging.notification."+m.EventType))
}

// Close does nothing.
func (LogDriver) Close() {}

// NoopDriver drops every message.
type NoopDriver struct{}

// Send does nothing.
func (NoopDriver) Send(context.Context, Level, *Message) {}

// Close does nothing.
func (NoopDriver) Close() {}
