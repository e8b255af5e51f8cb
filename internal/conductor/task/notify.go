package task

import (
	"context"
	"log/slog"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/states"
)

// Provision notifications are upstream's versioned notifications
// baremetal.node.provision_set.{start,end,success,error}. They are sent
// through the manager's notifier (WithNotifier) and are also structured
// log records: the message is the event type, and the attributes are the
// notification's envelope (event_type, publisher_id, priority) and a
// "payload" group with the fields of upstream's
// NodeSetProvisionStatePayload that carry no secrets.

// Notification statuses, the last part of the event type.
const (
	StatusStart   = "start"
	StatusEnd     = "end"
	StatusSuccess = "success"
	StatusError   = "error"
)

// ProvisionSetEventType is the event type of a provision notification.
func ProvisionSetEventType(status string) string {
	return "baremetal.node.provision_set." + status
}

// notification is one provision notification, captured when the node was
// saved so that it can be sent after the task has moved to a worker.
type notification struct {
	status   string
	priority string
	level    slog.Level
	attrs    []slog.Attr
	// log is the task's logger, so that a notification sent after the
	// task moved to a worker still names the node and the request.
	log *slog.Logger
	// versioned is the notifier's form, built from the node as saved.
	versioned *notify.Notification
}

// provisionStatus classifies a transition as upstream does: fail and
// error events are errors; stable to unstable starts, unstable to stable
// ends, anything else succeeds.
func provisionStatus(event, prevState, newState string) string {
	if event == states.EventFail || event == "error" {
		return StatusError
	}
	prevUnstable := states.UnstableStates.Contains(prevState)
	newUnstable := states.UnstableStates.Contains(newState)
	switch {
	case !prevUnstable && newUnstable:
		return StatusStart
	case prevUnstable && !newUnstable:
		return StatusEnd
	}
	return StatusSuccess
}

func (t *Task) provisionNotification(event, prevState, prevTarget string) *notification {
	n := t.Node
	status := provisionStatus(event, prevState, n.ProvisionState)
	note := &notification{status: status, priority: "INFO", level: slog.LevelInfo, log: t.log}
	if status == StatusError {
		note.priority, note.level = "ERROR", slog.LevelError
	}
	note.attrs = []slog.Attr{
		slog.String("event_type", ProvisionSetEventType(status)),
		slog.String("publisher_id", "ironic-conductor."+t.m.settings.Host),
		slog.String("priority", note.priority),
		slog.Group("payload", payloadAttrs(n, event, prevState, prevTarget)...),
	}
	level := notify.LevelInfo
	if status == StatusError {
		level = notify.LevelError
	}
	if t.m.notifier.Enabled(level) {
		note.versioned = &notify.Notification{Level: level, Object: "node", Action: "provision_set", Status: notify.Status(status),
			Payload: t.m.notifier.NodeSetProvisionStatePayload(n, prevState, prevTarget, event)}
	}
	return note
}

func payloadAttrs(n *model.Node, event, prevState, prevTarget string) []any {
	return []any{
		slog.String("uuid", n.UUID),
		slog.Any("name", deref(n.Name)),
		slog.String("driver", n.Driver),
		slog.String("event", event),
		slog.Any("previous_provision_state", nullable(prevState)),
		slog.Any("previous_target_provision_state", nullable(prevTarget)),
		slog.Any("provision_state", nullable(n.ProvisionState)),
		slog.Any("target_provision_state", nullable(n.TargetProvisionState)),
		slog.Any("provision_updated_at", timeOrNil(n.ProvisionUpdatedAt)),
		slog.Any("last_error", deref(n.LastError)),
		slog.Any("power_state", nullable(n.PowerState)),
		slog.Any("target_power_state", nullable(n.TargetPowerState)),
		slog.Bool("maintenance", n.Maintenance),
		slog.Any("maintenance_reason", deref(n.MaintenanceReason)),
		slog.Any("fault", deref(n.Fault)),
		slog.Any("instance_uuid", deref(n.InstanceUUID)),
		slog.String("conductor_group", n.ConductorGroup),
		slog.Any("resource_class", deref(n.ResourceClass)),
		slog.Any("owner", deref(n.Owner)),
		slog.Any("lessee", deref(n.Lessee)),
		slog.Bool("console_enabled", n.ConsoleEnabled),
		slog.Bool("protected", n.Protected),
		slog.Bool("retired", n.Retired),
		slog.Any("clean_step", n.CleanStep),
		slog.Any("deploy_step", n.DeployStep),
	}
}

// nullable renders an empty state as null, as upstream's None.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func timeOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func (m *Manager) emit(ctx context.Context, note *notification) {
	note.log.LogAttrs(ctx, note.level, ProvisionSetEventType(note.status), note.attrs...)
	if note.versioned != nil {
		m.notifier.Emit(ctx, *note.versioned)
	}
}
