package task

import (
	"context"
	"fmt"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// History stores node history records; store.Store is one.
type History interface {
	CreateNodeHistory(ctx context.Context, h *model.NodeHistory) (*model.NodeHistory, error)
}

// historyVersion is upstream's NodeHistory object version, stored in the
// version column.
const historyVersion = "1.3"

// HistoryEvent is one call of upstream's node_history_record.
type HistoryEvent struct {
	// Event is the text recorded; nothing is recorded when empty.
	Event string
	// EventType is the activity (states.History*); "UNKNOWN" when empty.
	EventType string
	// Error marks the event an error: it also becomes the node's
	// last_error (saved with the node's next save, not here).
	Error bool
	// User and Project are who triggered the request, when known.
	User, Project string
}

// RecordHistory records ev against the task's node (upstream
// node_history_record): the row carries the node's current provision state
// and target and the seconds since provision_updated_at. Rows are written
// only with [conductor]/node_history on and a History configured.
func (t *Task) RecordHistory(ctx context.Context, ev HistoryEvent) error {
	if ev.Event == "" {
		return nil
	}
	n := t.Node
	if ev.Error {
		msg := ev.Event
		n.LastError = &msg
	}
	m := t.m
	if !m.settings.NodeHistory || m.history == nil {
		return nil
	}
	severity, eventType := "INFO", ev.EventType
	if ev.Error {
		severity = "ERROR"
	}
	if eventType == "" {
		eventType = "UNKNOWN"
	}
	r := &model.NodeHistory{
		Version:              historyVersion,
		NodeID:               &n.ID,
		Conductor:            optional(m.settings.Host),
		User:                 optional(ev.User),
		Project:              optional(ev.Project),
		Severity:             &severity,
		Event:                &ev.Event,
		EventType:            &eventType,
		State:                optional(n.ProvisionState),
		TargetProvisionState: optional(n.TargetProvisionState),
	}
	if n.ProvisionUpdatedAt != nil {
		d := int(m.clock.Now().Sub(*n.ProvisionUpdatedAt) / time.Second)
		r.DurationSeconds = &d
	}
	if _, err := m.history.CreateNodeHistory(ctx, r); err != nil {
		return fmt.Errorf("record history of node %s: %w", n.UUID, err)
	}
	return nil
}

// optional maps "" to NULL, as upstream stores an absent value.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// noFreeWorkers is the history event and last_error upstream writes when a
// node's work could not get a worker.
const noFreeWorkers = "No free conductor workers available"

// ProvisioningErrorHandler is upstream's provisioning_error_handler, the
// ErrHandler of provisioning transitions: when the worker could not start
// for lack of workers, the node goes back to the state and target it had
// before the event, with the failure in last_error and node history.
// Other spawn errors leave the node alone.
func ProvisioningErrorHandler(ctx context.Context, err error, t *Task, prevState, prevTarget string) {
	if !errs.Is(err, errs.ClassNoFreeConductorWorker) {
		return
	}
	t.Node.ProvisionState = prevState
	t.Node.TargetProvisionState = prevTarget
	eventType := states.HistoryProvisioning
	switch prevState {
	case states.Inspecting, states.InspectWait, states.InspectFail:
		eventType = states.HistoryIntrospection
	}
	t.saveAfterSpawnError(ctx, eventType)
	t.log.WarnContext(ctx, "no free conductor workers available, node's provision state set back",
		"provision_state", prevState, "target_provision_state", prevTarget)
}

// SpawnErrorHandler is upstream's _spawn_error_handler for operation
// (cleaning, deploying, servicing…), a SpawnErrorHook for work started
// without a state transition: the lack of workers is recorded in
// last_error and node history (event type "conductor").
func SpawnErrorHandler(operation string) SpawnErrorHook {
	return func(ctx context.Context, err error, t *Task) {
		if !errs.Is(err, errs.ClassNoFreeConductorWorker) {
			return
		}
		t.saveAfterSpawnError(ctx, states.HistoryConductor)
		t.log.WarnContext(ctx, "no free conductor workers available", "operation", operation)
	}
}

// PowerStateErrorHandler is upstream's power_state_error_handler: the
// power state is put back to powerState, the target cleared.
func PowerStateErrorHandler(powerState string) SpawnErrorHook {
	return func(ctx context.Context, err error, t *Task) {
		if !errs.Is(err, errs.ClassNoFreeConductorWorker) {
			return
		}
		t.Node.PowerState = powerState
		t.Node.TargetPowerState = states.NoState
		t.saveAfterSpawnError(ctx, states.HistoryConductor)
		t.log.WarnContext(ctx, "no free conductor workers available, node's power state set back", "power_state", powerState)
	}
}

func (t *Task) saveAfterSpawnError(ctx context.Context, eventType string) {
	if err := t.RecordHistory(ctx, HistoryEvent{Event: noFreeWorkers, EventType: eventType, Error: true}); err != nil {
		t.log.ErrorContext(ctx, "record node history", "error", err)
	}
	if err := t.save(ctx); err != nil {
		t.log.ErrorContext(ctx, "save node after a failed spawn", "error", err)
	}
}
