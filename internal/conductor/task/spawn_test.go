package task_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/conductor/workers"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

func TestLockReleasedWhenWorkerEnds(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		pool, err := workers.New(workers.Settings{Size: 4})
		if err != nil {
			t.Fatal(err)
		}
		n := e.node(t, states.Available, "")
		tk := e.acquire(t, n, task.AcquireOptions{})
		proceed := make(chan struct{})
		seen := make(chan string, 1)
		tk.SpawnAfter(pool, task.Work{Name: "do_work", Fn: func(ctx context.Context, wt *task.Task) error {
			<-proceed
			// The worker still holds the lock the caller took.
			seen <- deref(e.reload(t, n.ID).Reservation)
			wt.Node.Extra = map[string]any{"worker": "was here"}
			return wt.Save(ctx)
		}})
		if err := tk.End(); err != nil {
			t.Fatalf("End = %v", err)
		}
		// The caller's deferred Release must not take the lock from the
		// worker.
		if err := tk.Release(); err != nil {
			t.Fatal(err)
		}
		if got := deref(e.reload(t, n.ID).Reservation); got != host {
			t.Errorf("reservation after the caller ended = %s, want held by the worker", got)
		}
		close(proceed)
		if got := <-seen; got != host {
			t.Errorf("worker saw reservation %s", got)
		}
		if err := pool.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := e.reload(t, n.ID)
		if got.Reservation != nil || got.Extra["worker"] != "was here" || got.LastError != nil {
			t.Errorf("after the worker: reservation %s extra %v last_error %s", deref(got.Reservation), got.Extra, deref(got.LastError))
		}
	})
}

func TestWorkerFailureRecorded(t *testing.T) {
	cases := []struct {
		name      string
		prior     *string
		fn        task.WorkFunc
		wantError string
	}{
		{"error", nil, func(context.Context, *task.Task) error { return errors.New("boom") },
			"Async execution of do_node_deploy failed with error: boom"},
		{"panic", nil, func(context.Context, *task.Task) error { panic("kaboom") },
			"Async execution of do_node_deploy failed with error: kaboom"},
		{"existing error kept", str("set by the flow"), func(_ context.Context, wt *task.Task) error {
			return errors.New("boom")
		}, "set by the flow"},
	}
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				pool, err := workers.New(workers.Settings{Size: 2})
				if err != nil {
					t.Fatal(err)
				}
				n := e.node(t, states.Available, "")
				tk := e.acquire(t, n, task.AcquireOptions{})
				tk.Node.LastError = c.prior
				tk.SpawnAfter(pool, task.Work{Name: "do_node_deploy", Fn: c.fn})
				if err := tk.End(); err != nil {
					t.Fatal(err)
				}
				if err := pool.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				got := e.reload(t, n.ID)
				if c.prior != nil {
					// The flow's error was not saved by anyone; the
					// worker must not overwrite it either.
					if got.LastError != nil {
						t.Errorf("last_error = %s, want untouched", *got.LastError)
					}
				} else if deref(got.LastError) != c.wantError {
					t.Errorf("last_error = %s, want %s", deref(got.LastError), c.wantError)
				}
				if got.Reservation != nil {
					t.Errorf("lock kept after the worker failed: %s", *got.Reservation)
				}
			})
		}
	})
}

// fullPool returns a pool of one worker, occupied until the test ends.
func fullPool(t *testing.T) *workers.Pool {
	t.Helper()
	pool, err := workers.New(workers.Settings{Size: 1})
	if err != nil {
		t.Fatal(err)
	}
	block := make(chan struct{})
	if err := pool.Spawn(context.Background(), func(context.Context) { <-block }, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(block)
		_ = pool.Wait(context.Background())
	})
	return pool
}

func TestSpawnFailureRollsBack(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		pool := fullPool(t)
		n := e.node(t, states.Available, "")
		n.LastError = str("previous failure")
		if _, err := e.st.UpdateNode(ctx, n, "last_error"); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(300 * time.Second)
		tk := e.acquire(t, n, task.AcquireOptions{})
		err := tk.ProcessEvent(ctx, states.EventDeploy, task.EventOptions{
			Spawner:    pool,
			Work:       task.Work{Name: "do_node_deploy", Fn: func(context.Context, *task.Task) error { t.Error("work ran"); return nil }},
			ErrHandler: task.ProvisioningErrorHandler,
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.reload(t, n.ID); got.ProvisionState != states.Deploying || got.TargetProvisionState != states.Active || got.LastError != nil {
			t.Fatalf("before End: %s target %s last_error %s", got.ProvisionState, got.TargetProvisionState, deref(got.LastError))
		}
		e.clock.Advance(7 * time.Second)
		err = tk.End()
		if !errs.Is(err, errs.ClassNoFreeConductorWorker) {
			t.Fatalf("End on a full pool = %v", err)
		}
		got := e.reload(t, n.ID)
		if got.ProvisionState != states.Available || got.TargetProvisionState != "" {
			t.Errorf("not rolled back: %s target %s", got.ProvisionState, got.TargetProvisionState)
		}
		if deref(got.LastError) != "No free conductor workers available" {
			t.Errorf("last_error = %s", deref(got.LastError))
		}
		if got.Reservation != nil {
			t.Errorf("lock kept after the failed spawn: %s", *got.Reservation)
		}
		if notes := e.nodeNotes(n.UUID); len(notes) != 0 {
			t.Errorf("notification for a transition that was rolled back: %v", notes)
		}
		hist, err := e.hist.ListNodeHistory(ctx, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != 1 {
			t.Fatalf("%d history rows, want 1", len(hist))
		}
		h := hist[0]
		if h.Event != "No free conductor workers available" || h.EventType != "provisioning" || h.Severity != "ERROR" ||
			h.State != states.Available || h.TargetProvisionState != "" || h.Conductor != host {
			t.Errorf("history = %+v", h)
		}
		// Rolled back from deploying, whose provision_updated_at was
		// stamped 7 s before.
		if h.DurationSeconds == nil || *h.DurationSeconds != 7 {
			t.Errorf("duration = %v, want 7", h.DurationSeconds)
		}
		if err := tk.Release(); err != nil {
			t.Errorf("Release after a failed End = %v", err)
		}
	})
}

func TestSpawnFailureOfInspectionIsIntrospection(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		pool := fullPool(t)
		n := e.node(t, states.InspectWait, states.Manageable)
		tk := e.acquire(t, n, task.AcquireOptions{})
		err := tk.ProcessEvent(ctx, states.EventResume, task.EventOptions{
			Spawner: pool, Work: task.Work{Name: "continue_inspection", Fn: func(context.Context, *task.Task) error { return nil }},
			ErrHandler: task.ProvisioningErrorHandler,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := tk.End(); !errs.Is(err, errs.ClassNoFreeConductorWorker) {
			t.Fatalf("End = %v", err)
		}
		hist, err := e.hist.ListNodeHistory(ctx, n.ID)
		if err != nil || len(hist) != 1 || hist[0].EventType != "introspection" || hist[0].State != states.InspectWait {
			t.Errorf("history = %+v, %v", hist, err)
		}
	})
}

func TestSpawnErrorHooks(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		pool := fullPool(t)

		n := e.node(t, states.CleanWait, states.Available)
		tk := e.acquire(t, n, task.AcquireOptions{})
		tk.SetSpawnErrorHook(task.SpawnErrorHandler(states.Cleaning))
		tk.SpawnAfter(pool, task.Work{Name: "continue_node_clean", Fn: func(context.Context, *task.Task) error { return nil }})
		if err := tk.End(); !errs.Is(err, errs.ClassNoFreeConductorWorker) {
			t.Fatalf("End = %v", err)
		}
		got := e.reload(t, n.ID)
		if got.ProvisionState != states.CleanWait || deref(got.LastError) != "No free conductor workers available" || got.Reservation != nil {
			t.Errorf("node = %s last_error %s reservation %s", got.ProvisionState, deref(got.LastError), deref(got.Reservation))
		}
		hist, err := e.hist.ListNodeHistory(ctx, n.ID)
		if err != nil || len(hist) != 1 || hist[0].EventType != "conductor" {
			t.Errorf("history = %+v, %v", hist, err)
		}

		p := e.node(t, states.Available, "")
		p.PowerState, p.TargetPowerState = states.PowerOff, states.PowerOn
		if _, err := e.st.UpdateNode(ctx, p, "power_state", "target_power_state"); err != nil {
			t.Fatal(err)
		}
		tp := e.acquire(t, p, task.AcquireOptions{})
		tp.Node.PowerState = states.Error
		tp.SetSpawnErrorHook(task.PowerStateErrorHandler(states.PowerOff))
		tp.SpawnAfter(pool, task.Work{Name: "node_power_action", Fn: func(context.Context, *task.Task) error { return nil }})
		if err := tp.End(); !errs.Is(err, errs.ClassNoFreeConductorWorker) {
			t.Fatalf("End = %v", err)
		}
		gp := e.reload(t, p.ID)
		if gp.PowerState != states.PowerOff || gp.TargetPowerState != "" || deref(gp.LastError) != "No free conductor workers available" {
			t.Errorf("power node = %q target %q last_error %s", gp.PowerState, gp.TargetPowerState, deref(gp.LastError))
		}

		// A hook that panics does not hide the spawn error nor keep the
		// lock.
		q := e.node(t, states.Available, "")
		tq := e.acquire(t, q, task.AcquireOptions{})
		tq.SetSpawnErrorHook(func(context.Context, error, *task.Task) { panic("hook broke") })
		tq.SpawnAfter(pool, task.Work{Name: "x", Fn: func(context.Context, *task.Task) error { return nil }})
		if err := tq.End(); !errs.Is(err, errs.ClassNoFreeConductorWorker) {
			t.Fatalf("End with a panicking hook = %v", err)
		}
		if r := e.reload(t, q.ID).Reservation; r != nil {
			t.Errorf("lock kept: %s", *r)
		}
	})
}

func TestHeartbeatWorkStaysOutOfReservedShare(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		pool, err := workers.New(workers.Settings{Size: 20, ReservedPercentage: 5})
		if err != nil {
			t.Fatal(err)
		}
		block := make(chan struct{})
		for i := 0; i < 19; i++ {
			if err := pool.Spawn(context.Background(), func(context.Context) { <-block }, false); err != nil {
				t.Fatal(err)
			}
		}
		defer func() { close(block); _ = pool.Wait(context.Background()) }()
		n := e.node(t, states.Available, "")
		hb := e.acquire(t, n, task.AcquireOptions{})
		hb.SpawnAfter(pool, task.Work{Name: "heartbeat", NoReservedPool: true, Fn: func(context.Context, *task.Task) error { return nil }})
		if err := hb.End(); !errs.Is(err, errs.ClassNoFreeConductorWorker) {
			t.Fatalf("heartbeat End = %v, want NoFreeConductorWorker", err)
		}
		user := e.acquire(t, n, task.AcquireOptions{})
		done := make(chan struct{})
		user.SpawnAfter(pool, task.Work{Name: "do_provisioning_action", Fn: func(context.Context, *task.Task) error { close(done); return nil }})
		if err := user.End(); err != nil {
			t.Fatalf("user End = %v, want the reserved worker", err)
		}
		<-done
	})
}
