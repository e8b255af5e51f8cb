package task_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/conductor/workers"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// nodeNotes returns the notifications about one node.
func (e *env) nodeNotes(uuid string) []record {
	var out []record
	for _, r := range e.logs.notifications() {
		if p, ok := r.Attrs["payload"].(map[string]any); ok && p["uuid"] == uuid {
			out = append(out, r)
		}
	}
	return out
}

func newPool(t *testing.T, size int) *workers.Pool {
	t.Helper()
	p, err := workers.New(workers.Settings{Size: size})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Wait(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return p
}

func TestProcessEventBookkeeping(t *testing.T) {
	cases := []struct {
		name                 string
		state, target        string
		lastError            *string
		event                string
		callback             bool
		targetOverride       string
		setError             *string
		wantState, wantTgt   string
		wantError            *string
		wantStatus, priority string
	}{
		{name: "enroll manage", state: states.Enroll, event: states.EventManage,
			wantState: states.Verifying, wantTgt: states.Manageable, wantStatus: "start", priority: "INFO"},
		{name: "verify done", state: states.Verifying, target: states.Manageable, event: states.EventDone,
			wantState: states.Manageable, wantStatus: "end", priority: "INFO"},
		{name: "stable to stable", state: states.Available, event: states.EventManage,
			wantState: states.Manageable, wantStatus: "success", priority: "INFO"},
		{name: "provide with worker clears last_error", state: states.Manageable, lastError: str("old"), event: states.EventProvide, callback: true,
			wantState: states.Cleaning, wantTgt: states.Available, wantStatus: "start", priority: "INFO"},
		{name: "manual clean keeps manageable target", state: states.Manageable, event: states.EventClean, callback: true, targetOverride: states.Manageable,
			wantState: states.Cleaning, wantTgt: states.Manageable, wantStatus: "start", priority: "INFO"},
		{name: "worker with a fresh last_error", state: states.Manageable, lastError: str("old"), event: states.EventInspect, callback: true, setError: str("fresh"),
			wantState: states.Inspecting, wantTgt: states.Manageable, wantError: str("fresh"), wantStatus: "start", priority: "INFO"},
		{name: "deploy fail sets last_error", state: states.Deploying, target: states.Active, event: states.EventFail, setError: str("boom"),
			wantState: states.DeployFail, wantTgt: states.Active, wantError: str("boom"), wantStatus: "error", priority: "ERROR"},
		{name: "fail without error keeps last_error", state: states.Verifying, target: states.Manageable, lastError: str("keep"), event: states.EventFail,
			wantState: states.Enroll, wantError: str("keep"), wantStatus: "error", priority: "ERROR"},
		{name: "abort clean wait", state: states.CleanWait, target: states.Available, event: states.EventAbort,
			wantState: states.CleanFail, wantTgt: states.Available, wantStatus: "end", priority: "INFO"},
		{name: "tear down", state: states.Active, event: states.EventDelete, callback: true,
			wantState: states.Deleting, wantTgt: states.Available, wantStatus: "start", priority: "INFO"},
		{name: "stable state without worker clears target", state: states.Verifying, target: states.Available, event: states.EventDone,
			wantState: states.Manageable, wantStatus: "end", priority: "INFO"},
		{name: "stable state with worker keeps target", state: states.Verifying, target: states.Available, event: states.EventDone, callback: true,
			wantState: states.Manageable, wantTgt: states.Available, wantStatus: "end", priority: "INFO"},
	}
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		pool := newPool(t, 8)
		ctx := context.Background()
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				n := e.node(t, c.state, c.target)
				if c.lastError != nil {
					n.LastError = c.lastError
					if _, err := e.st.UpdateNode(ctx, n, "last_error"); err != nil {
						t.Fatal(err)
					}
				}
				e.clock.Advance(time.Hour)
				now := e.clock.Now()
				tk := e.acquire(t, n, task.AcquireOptions{})
				opts := task.EventOptions{TargetState: c.targetOverride, LastError: c.setError}
				ran := make(chan struct{})
				if c.callback {
					opts.Spawner = pool
					opts.Work = task.Work{Name: "do_work", Fn: func(context.Context, *task.Task) error {
						close(ran)
						return nil
					}}
				}
				if err := tk.ProcessEvent(ctx, c.event, opts); err != nil {
					t.Fatalf("ProcessEvent(%s) = %v", c.event, err)
				}
				got := e.reload(t, n.ID)
				if got.ProvisionState != c.wantState || got.TargetProvisionState != c.wantTgt {
					t.Errorf("state = %q target %q, want %q target %q", got.ProvisionState, got.TargetProvisionState, c.wantState, c.wantTgt)
				}
				if deref(got.LastError) != deref(c.wantError) {
					t.Errorf("last_error = %s, want %s", deref(got.LastError), deref(c.wantError))
				}
				if got.ProvisionUpdatedAt == nil || !got.ProvisionUpdatedAt.Equal(now) {
					t.Errorf("provision_updated_at = %v, want %v", got.ProvisionUpdatedAt, now)
				}
				if tk.Node.ProvisionState != c.wantState || tk.FSM.CurrentState() != c.wantState {
					t.Errorf("task node %q / fsm %q, want %q", tk.Node.ProvisionState, tk.FSM.CurrentState(), c.wantState)
				}
				if c.callback {
					if notes := e.nodeNotes(n.UUID); len(notes) != 0 {
						t.Errorf("notification sent before the worker was started: %v", notes)
					}
					if err := tk.End(); err != nil {
						t.Fatalf("End = %v", err)
					}
					<-ran
				} else if err := tk.End(); err != nil {
					t.Fatalf("End = %v", err)
				}
				notes := e.nodeNotes(n.UUID)
				if len(notes) != 1 {
					t.Fatalf("%d notifications, want 1", len(notes))
				}
				r := notes[0]
				wantType := "baremetal.node.provision_set." + c.wantStatus
				if r.Msg != wantType || r.Attrs["event_type"] != wantType || r.Attrs["priority"] != c.priority {
					t.Errorf("notification %q event_type %v priority %v, want %s %s", r.Msg, r.Attrs["event_type"], r.Attrs["priority"], wantType, c.priority)
				}
				wantLevel := slog.LevelInfo
				if c.priority == "ERROR" {
					wantLevel = slog.LevelError
				}
				if r.Level != wantLevel || r.Attrs["publisher_id"] != "ironic-conductor."+host {
					t.Errorf("level %v publisher %v", r.Level, r.Attrs["publisher_id"])
				}
				p := r.Attrs["payload"].(map[string]any)
				want := map[string]any{
					"event":                           c.event,
					"previous_provision_state":        c.state,
					"previous_target_provision_state": nilIfEmpty(c.target),
					"provision_state":                 c.wantState,
					"target_provision_state":          nilIfEmpty(c.wantTgt),
					"driver":                          "fake-hardware",
				}
				for k, v := range want {
					if p[k] != v {
						t.Errorf("payload %s = %v, want %v", k, p[k], v)
					}
				}
			})
		}
	})
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func TestProcessEventRefusals(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(t, states.Available, "")
		tk := e.acquire(t, n, task.AcquireOptions{})

		err := tk.ProcessEvent(ctx, states.EventDone, task.EventOptions{})
		ie, ok := errs.As(err)
		want := "Can not transition from state 'available' on event 'done' (no defined transition)"
		if !ok || ie.Class != errs.ClassInvalidState || ie.Code != 409 || ie.Message != want {
			t.Errorf("ProcessEvent(done) = %v, want InvalidState %q", err, want)
		}
		err = tk.ProcessEvent(ctx, states.EventDeploy, task.EventOptions{TargetState: states.Deploying})
		if !errs.Is(err, errs.ClassInvalidState) || err.Error() != "Target state 'deploying' is not a 'stable' state" {
			t.Errorf("ProcessEvent with an unstable target = %v", err)
		}
		if tk.FSM.CurrentState() != states.Available || tk.Node.ProvisionState != states.Available {
			t.Errorf("refused events moved the task: fsm %q node %q", tk.FSM.CurrentState(), tk.Node.ProvisionState)
		}
		got := e.reload(t, n.ID)
		if got.ProvisionState != states.Available || got.ProvisionUpdatedAt != nil {
			t.Errorf("refused events changed the node: %s %v", got.ProvisionState, got.ProvisionUpdatedAt)
		}
		if notes := e.nodeNotes(n.UUID); len(notes) != 0 {
			t.Errorf("refused events notified: %v", notes)
		}
		if err := tk.ProcessEvent(ctx, states.EventDeploy, task.EventOptions{}); err != nil {
			t.Errorf("a valid event after refusals = %v", err)
		}
	})
}

func TestProcessEventSavesOtherChanges(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(t, states.Manageable, "")
		tk := e.acquire(t, n, task.AcquireOptions{})
		tk.Node.DriverInternalInfo = map[string]any{"clean_steps": []any{map[string]any{"step": "erase_devices"}}}
		if err := tk.ProcessEvent(ctx, states.EventClean, task.EventOptions{TargetState: states.Manageable}); err != nil {
			t.Fatal(err)
		}
		got := e.reload(t, n.ID)
		steps, _ := got.DriverInternalInfo["clean_steps"].([]any)
		if len(steps) != 1 || got.ProvisionState != states.Cleaning {
			t.Errorf("driver_internal_info %v state %s", got.DriverInternalInfo, got.ProvisionState)
		}
	})
}

func TestResumeCleaning(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		// Without the override, entering cleaning would adopt its default
		// target (available) and turn manual cleaning into automated.
		for _, target := range []string{states.Manageable, states.Available} {
			n := e.node(t, states.CleanWait, target)
			tk := e.acquire(t, n, task.AcquireOptions{})
			if err := tk.ResumeCleaning(ctx); err != nil {
				t.Fatalf("ResumeCleaning = %v", err)
			}
			got := e.reload(t, n.ID)
			if got.ProvisionState != states.Cleaning || got.TargetProvisionState != target {
				t.Errorf("resumed from clean wait towards %s: %s target %s", target, got.ProvisionState, got.TargetProvisionState)
			}
			_ = tk.Release()
		}
	})
}
