package task_test

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

func TestSettingsFromConfig(t *testing.T) {
	c, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{"DEFAULT": {"host": "cond-a"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := task.SettingsFromConfig(c)
	want := task.Settings{Host: "cond-a", RetryAttempts: 3, RetryInterval: time.Second, NodeHistory: true, LogInDBMaxSize: 4096}
	if got != want {
		t.Errorf("settings = %+v, want %+v", got, want)
	}
}

func TestSaveWritesOnlyChanges(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(t, states.Available, "")
		n.DriverInternalInfo = map[string]any{"nested": map[string]any{"a": 1.0}}
		if _, err := e.st.UpdateNode(ctx, n, "driver_internal_info"); err != nil {
			t.Fatal(err)
		}
		tk := e.acquire(t, n, task.AcquireOptions{})

		// Someone writes a column the task does not touch.
		other := e.reload(t, n.ID)
		other.Description = str("written elsewhere")
		if _, err := e.st.UpdateNode(ctx, other, "description"); err != nil {
			t.Fatal(err)
		}
		// A change deep inside a dict column counts as a change.
		tk.Node.DriverInternalInfo["nested"].(map[string]any)["a"] = 2.0
		tk.Node.Extra = map[string]any{"k": "v"}
		if err := tk.Save(ctx); err != nil {
			t.Fatal(err)
		}
		got := e.reload(t, n.ID)
		if deref(got.Description) != "written elsewhere" {
			t.Errorf("save overwrote an unchanged column: description %s", deref(got.Description))
		}
		if got.Extra["k"] != "v" || got.DriverInternalInfo["nested"].(map[string]any)["a"] != 2.0 {
			t.Errorf("changes not saved: extra %v dii %v", got.Extra, got.DriverInternalInfo)
		}
		// The save does not read the node again (issue 29): the task's
		// node is what it read under its lock with its saved columns as
		// stored; nodes are written under their lock, so nothing else
		// changed but this write's updated_at.
		if !reflect.DeepEqual(tk.Node.Extra, got.Extra) || !reflect.DeepEqual(tk.Node.DriverInternalInfo, got.DriverInternalInfo) ||
			tk.Node.UpdatedAt == nil || !tk.Node.UpdatedAt.Equal(*got.UpdatedAt) {
			t.Errorf("task node after the save: extra %v dii %v updated_at %v, stored %v %v %v",
				tk.Node.Extra, tk.Node.DriverInternalInfo, tk.Node.UpdatedAt, got.Extra, got.DriverInternalInfo, got.UpdatedAt)
		}
		if got.ProvisionUpdatedAt != nil {
			t.Errorf("save without a state change stamped provision_updated_at")
		}
	})
}

func TestSaveRefusedWhenLockWasTaken(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(t, states.Available, "")
		tk := e.acquire(t, n, task.AcquireOptions{})
		// An orphan clean-up elsewhere released the lock and another
		// conductor took it.
		if err := e.st.ReleaseNode(ctx, host, n.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.ReserveNode(ctx, "other-conductor", n.ID); err != nil {
			t.Fatal(err)
		}
		err := tk.ProcessEvent(ctx, states.EventManage, task.EventOptions{})
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("ProcessEvent on a node this conductor no longer holds = %v, want a conflict", err)
		}
		// A fault a retry can fix, never a 500.
		if !errs.IsUnavailable(err) {
			t.Errorf("lost lock answered %v, want a 503 with Retry-After", err)
		}
		if got := e.reload(t, n.ID); got.ProvisionState != states.Available {
			t.Errorf("state = %s", got.ProvisionState)
		}
		if len(e.nodeNotes(n.UUID)) != 0 {
			t.Errorf("notification for an unsaved transition")
		}
	})
}

func TestRecordHistory(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(t, states.Manageable, "")
		tk := e.acquire(t, n, task.AcquireOptions{})
		if err := tk.ProcessEvent(ctx, states.EventInspect, task.EventOptions{}); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(90 * time.Second)
		if err := tk.RecordHistory(ctx, task.HistoryEvent{Event: "", EventType: "x"}); err != nil {
			t.Fatal(err)
		}
		if err := tk.RecordHistory(ctx, task.HistoryEvent{Event: "inspection started", EventType: states.HistoryIntrospection, User: "u1", Project: "p1"}); err != nil {
			t.Fatal(err)
		}
		if err := tk.RecordHistory(ctx, task.HistoryEvent{Event: "BMC unreachable", Error: true}); err != nil {
			t.Fatal(err)
		}
		if deref(tk.Node.LastError) != "BMC unreachable" {
			t.Errorf("error event not copied to last_error: %s", deref(tk.Node.LastError))
		}
		hist, err := e.hist.ListNodeHistory(ctx, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != 2 {
			t.Fatalf("%d rows, want 2 (an empty event records nothing)", len(hist))
		}
		first, second := hist[0], hist[1]
		if first.Event != "inspection started" || first.EventType != "introspection" || first.Severity != "INFO" ||
			first.User != "u1" || first.Project != "p1" || first.State != states.Inspecting ||
			first.TargetProvisionState != states.Manageable || first.Conductor != host || len(first.UUID) != 36 {
			t.Errorf("first = %+v", first)
		}
		if first.DurationSeconds == nil || *first.DurationSeconds != 90 || !first.CreatedAt.Equal(e.clock.Now()) {
			t.Errorf("duration %v created %v", first.DurationSeconds, first.CreatedAt)
		}
		if second.Severity != "ERROR" || second.EventType != "UNKNOWN" {
			t.Errorf("second = %+v", second)
		}

		// With [conductor]/node_history off nothing is written, but the
		// error still reaches last_error.
		off := task.NewManager(e.st, e.drivers, task.Settings{Host: "quiet", RetryAttempts: 1},
			task.WithClock(e.clock), task.WithHistory(e.st), task.WithLogger(slog.New(e.logs)))
		m := e.node(t, states.Available, "")
		tq, err := off.Acquire(ctx, m.UUID, task.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer tq.Release()
		if err := tq.RecordHistory(ctx, task.HistoryEvent{Event: "boom", Error: true}); err != nil {
			t.Fatal(err)
		}
		if deref(tq.Node.LastError) != "boom" {
			t.Errorf("last_error = %s", deref(tq.Node.LastError))
		}
		if rows, err := e.hist.ListNodeHistory(ctx, m.ID); err != nil || len(rows) != 0 {
			t.Errorf("history written with node_history off: %v %v", rows, err)
		}
	})
}

// TestSaveLater: what SaveLater marks is written with the release (the
// node unlocked and changed in one write), by an earlier save when one
// comes, or before a refresh reads the node again; a change made after
// SaveLater and never saved is not written.
func TestSaveLater(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(t, states.DeployWait, states.Active)

		tk := e.acquire(t, n, task.AcquireOptions{})
		tk.Node.DriverInternalInfo = map[string]any{"agent_url": "http://192.0.2.1:9999"}
		if err := tk.SaveLater(); err != nil {
			t.Fatal(err)
		}
		tk.Node.Description = str("not saved")
		if got := e.reload(t, n.ID); got.DriverInternalInfo["agent_url"] != nil {
			t.Fatalf("SaveLater wrote at once: %v", got.DriverInternalInfo)
		}
		if err := tk.Release(); err != nil {
			t.Fatal(err)
		}
		got := e.reload(t, n.ID)
		if got.DriverInternalInfo["agent_url"] != "http://192.0.2.1:9999" || got.Reservation != nil || got.Description != nil {
			t.Fatalf("after the release: dii %v reservation %v description %v", got.DriverInternalInfo, got.Reservation, got.Description)
		}

		tk = e.acquire(t, n, task.AcquireOptions{})
		tk.Node.DriverInternalInfo["agent_version"] = "10.0.0"
		if err := tk.SaveLater(); err != nil {
			t.Fatal(err)
		}
		if err := tk.ProcessEvent(ctx, states.EventResume, task.EventOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := e.reload(t, n.ID); got.DriverInternalInfo["agent_version"] != "10.0.0" || got.ProvisionState != states.Deploying {
			t.Fatalf("the next save left out what SaveLater marked: %v %s", got.DriverInternalInfo, got.ProvisionState)
		}
		tk.Node.Extra = map[string]any{"k": "v"}
		if err := tk.SaveLater(); err != nil {
			t.Fatal(err)
		}
		if err := tk.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if tk.Node.Extra["k"] != "v" {
			t.Fatalf("refresh dropped what SaveLater marked: %v", tk.Node.Extra)
		}
		if err := tk.Release(); err != nil {
			t.Fatal(err)
		}

		shared := e.acquire(t, n, task.AcquireOptions{Shared: true})
		defer shared.Release()
		if err := shared.SaveLater(); err == nil {
			t.Error("SaveLater on a shared task succeeded")
		}
	})
}
