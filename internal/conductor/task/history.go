package task

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// HistoryRecord is a row of node_history.
type HistoryRecord struct {
	ID        int64
	UUID      string
	CreatedAt time.Time
	NodeID    int64
	Conductor string
	User      string
	Project   string
	// Severity is "INFO" or "ERROR".
	Severity             string
	Event                string
	EventType            string
	State                string
	TargetProvisionState string
	// DurationSeconds is the time spent in State, nil when unknown.
	DurationSeconds *int64
}

// History stores node history records. The store has no node_history
// access yet, so SQLHistory writes the table itself.
type History interface {
	AddNodeHistory(ctx context.Context, r *HistoryRecord) error
}

// historyVersion is upstream's NodeHistory object version, stored in the
// version column.
const historyVersion = "1.3"

// SQLHistory is History over the node_history table.
type SQLHistory struct{ db *sqldb.DB }

// NewSQLHistory returns History on db, whose schema must be migrated.
func NewSQLHistory(db *sqldb.DB) *SQLHistory { return &SQLHistory{db: db} }

var _ History = (*SQLHistory)(nil)

var historyColumns = []string{
	"uuid", "created_at", "version", "conductor", "event_type", "severity", "event",
	"user", "project", "node_id", "state", "target_provision_state", "duration_seconds",
}

// AddNodeHistory inserts r with a new UUID (set on r).
func (h *SQLHistory) AddNodeHistory(ctx context.Context, r *HistoryRecord) error {
	r.UUID = uuid.NewString()
	r.CreatedAt = h.db.Truncate(r.CreatedAt)
	cols := ""
	marks := ""
	for i, c := range historyColumns {
		if i > 0 {
			cols += ", "
			marks += ", "
		}
		cols += h.db.Quote(c)
		marks += "?"
	}
	var dur any
	if r.DurationSeconds != nil {
		dur = *r.DurationSeconds
	}
	err := h.db.Retry(ctx, func(ctx context.Context) error {
		_, err := h.db.ExecContext(ctx, "INSERT INTO node_history ("+cols+") VALUES ("+marks+")",
			r.UUID, h.db.Time(r.CreatedAt), historyVersion, nullString(r.Conductor), nullString(r.EventType),
			nullString(r.Severity), nullString(r.Event), nullString(r.User), nullString(r.Project),
			r.NodeID, nullString(r.State), nullString(r.TargetProvisionState), dur)
		return err
	})
	if err != nil {
		return fmt.Errorf("add history of node %d: %w", r.NodeID, err)
	}
	return nil
}

// ListNodeHistory returns the node's records, oldest first.
func (h *SQLHistory) ListNodeHistory(ctx context.Context, nodeID int64) ([]HistoryRecord, error) {
	cols := ""
	for i, c := range append([]string{"id"}, historyColumns...) {
		if i > 0 {
			cols += ", "
		}
		cols += h.db.Quote(c)
	}
	rows, err := h.db.QueryContext(ctx, "SELECT "+cols+" FROM node_history WHERE node_id = ? ORDER BY id", nodeID)
	if err != nil {
		return nil, fmt.Errorf("list history of node %d: %w", nodeID, err)
	}
	defer rows.Close()
	var out []HistoryRecord
	for rows.Next() {
		var r HistoryRecord
		var created sqlTime
		var version, conductor, eventType, severity, event, user, project, state, target sql.NullString
		var dur sql.NullInt64
		if err := rows.Scan(&r.ID, &r.UUID, &created, &version, &conductor, &eventType, &severity, &event,
			&user, &project, &r.NodeID, &state, &target, &dur); err != nil {
			return nil, fmt.Errorf("list history of node %d: %w", nodeID, err)
		}
		r.CreatedAt = created.t
		r.Conductor, r.EventType, r.Severity, r.Event = conductor.String, eventType.String, severity.String, event.String
		r.User, r.Project, r.State, r.TargetProvisionState = user.String, project.String, state.String, target.String
		if dur.Valid {
			d := dur.Int64
			r.DurationSeconds = &d
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list history of node %d: %w", nodeID, err)
	}
	return out, nil
}

// sqlTime scans a DATETIME from either backend: MySQL gives time.Time,
// SQLite upstream's text form.
type sqlTime struct{ t time.Time }

func (s *sqlTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		s.t = time.Time{}
	case time.Time:
		s.t = x.UTC()
	case string:
		return s.parse(x)
	case []byte:
		return s.parse(string(x))
	default:
		return fmt.Errorf("unexpected time value %T", v)
	}
	return nil
}

func (s *sqlTime) parse(v string) error {
	for _, layout := range []string{"2006-01-02 15:04:05.999999", time.RFC3339Nano} {
		if t, err := time.Parse(layout, v); err == nil {
			s.t = t.UTC()
			return nil
		}
	}
	return fmt.Errorf("unparsable time %q", v)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

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
	now := m.clock.Now()
	r := &HistoryRecord{
		CreatedAt:            now,
		NodeID:               n.ID,
		Conductor:            m.settings.Host,
		User:                 ev.User,
		Project:              ev.Project,
		Severity:             "INFO",
		Event:                ev.Event,
		EventType:            ev.EventType,
		State:                n.ProvisionState,
		TargetProvisionState: n.TargetProvisionState,
	}
	if ev.Error {
		r.Severity = "ERROR"
	}
	if r.EventType == "" {
		r.EventType = "UNKNOWN"
	}
	if n.ProvisionUpdatedAt != nil {
		d := int64(now.Sub(*n.ProvisionUpdatedAt) / time.Second)
		r.DurationSeconds = &d
	}
	return m.history.AddNodeHistory(ctx, r)
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
	if !errs.Is(err, "NoFreeConductorWorker") {
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
		if !errs.Is(err, "NoFreeConductorWorker") {
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
		if !errs.Is(err, "NoFreeConductorWorker") {
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
