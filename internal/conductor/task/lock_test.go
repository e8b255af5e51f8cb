package task_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/fakeclock"
)

func TestAcquireExclusive(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(t, states.Available, "")
		for _, ident := range []string{n.UUID, strconv.FormatInt(n.ID, 10)} {
			tk, err := e.m.Acquire(ctx, ident, task.AcquireOptions{Purpose: "test"})
			if err != nil {
				t.Fatalf("Acquire(%s): %v", ident, err)
			}
			if got := deref(e.reload(t, n.ID).Reservation); got != host {
				t.Errorf("reservation while held = %s, want %s", got, host)
			}
			if deref(tk.Node.Reservation) != host {
				t.Errorf("task node was not reloaded after reservation: %s", deref(tk.Node.Reservation))
			}
			if tk.Shared() || tk.FSM.CurrentState() != states.Available {
				t.Errorf("shared=%v fsm=%q", tk.Shared(), tk.FSM.CurrentState())
			}
			if tk.Driver == nil || tk.Driver.Names["power"] != "fake" || tk.Driver.Power == nil {
				t.Errorf("driver interfaces not resolved: %+v", tk.Driver)
			}
			if dt := tk.DriverTask(); dt.Node != tk.Node || dt.Shared {
				t.Errorf("driver task does not share the node or claims a shared lock")
			}
			for i := 0; i < 2; i++ {
				if err := tk.Release(); err != nil {
					t.Fatalf("Release #%d: %v", i+1, err)
				}
			}
			if r := e.reload(t, n.ID).Reservation; r != nil {
				t.Errorf("reservation after release = %s", *r)
			}
		}
	})
}

func TestAcquireErrors(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		cases := []struct {
			ident string
			class errs.Class
			msg   string
			code  int
		}{
			{"1f0b1e56-7d1c-4a86-9c55-4a5c04e0b0a1", "NodeNotFound", "Node 1f0b1e56-7d1c-4a86-9c55-4a5c04e0b0a1 could not be found.", 404},
			{"4242", "NodeNotFound", "Node 4242 could not be found.", 404},
			{"node-name", "InvalidIdentity", "Expected a UUID or int but received node-name.", 400},
		}
		for _, c := range cases {
			_, err := e.m.Acquire(ctx, c.ident, task.AcquireOptions{})
			ie, ok := errs.As(err)
			if !ok || ie.Class != c.class || ie.Message != c.msg || ie.Code != c.code {
				t.Errorf("Acquire(%s) = %v, want %s %d %q", c.ident, err, c.class, c.code, c.msg)
			}
		}
	})
}

func TestAcquireReleasesWhenDriverFails(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(t, states.Available, "")
		n.Driver = "no-such-hardware"
		if _, err := e.st.UpdateNode(context.Background(), n, "driver"); err != nil {
			t.Fatal(err)
		}
		_, err := e.m.Acquire(context.Background(), n.UUID, task.AcquireOptions{})
		if !errs.Is(err, errs.ClassDriverNotFound) {
			t.Fatalf("Acquire = %v, want DriverNotFound", err)
		}
		if r := e.reload(t, n.ID).Reservation; r != nil {
			t.Errorf("lock left behind after a failed acquire: %s", *r)
		}
		tk, err := e.m.Acquire(context.Background(), n.UUID, task.AcquireOptions{NoDriver: true})
		if err != nil {
			t.Fatalf("Acquire without driver = %v", err)
		}
		if tk.Driver != nil {
			t.Errorf("driver loaded despite NoDriver")
		}
		_ = tk.Release()
	})
}

// TestLockContention: 100 concurrent exclusive acquisitions of one node
// while the winner holds the lock: exactly one wins, all others get
// NodeLocked naming the holder, and the node moves exactly once.
func TestLockContention(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(t, states.Available, "")
		const workers = 100
		var attempts, all sync.WaitGroup
		attempts.Add(workers)
		all.Add(workers)
		results := make(chan error, workers)
		transitions := make(chan string, workers)
		for i := 0; i < workers; i++ {
			go func() {
				defer all.Done()
				tk, err := e.m.Acquire(context.Background(), n.UUID, task.AcquireOptions{NoRetry: true, Purpose: "manage"})
				attempts.Done()
				results <- err
				if err != nil {
					return
				}
				defer tk.Release()
				// Hold the lock until every contender has tried.
				attempts.Wait()
				if err := tk.ProcessEvent(context.Background(), states.EventManage, task.EventOptions{}); err != nil {
					transitions <- "error: " + err.Error()
					return
				}
				transitions <- tk.Node.ProvisionState
			}()
		}
		all.Wait()
		close(results)
		close(transitions)
		won, locked := 0, 0
		wantMsg := fmt.Sprintf("Node %s is locked by host %s, please retry after the current operation is completed.", n.UUID, host)
		for err := range results {
			switch {
			case err == nil:
				won++
			case errs.Is(err, errs.ClassNodeLocked):
				locked++
				if ie, _ := errs.As(err); ie.Code != 409 || ie.Message != wantMsg {
					t.Errorf("NodeLocked = %d %q, want 409 %q", ie.Code, ie.Message, wantMsg)
				}
			default:
				t.Errorf("unexpected acquire error: %v", err)
			}
		}
		if won != 1 || locked != workers-1 {
			t.Errorf("won=%d locked=%d, want 1 and %d", won, locked, workers-1)
		}
		var moved []string
		for s := range transitions {
			moved = append(moved, s)
		}
		if len(moved) != 1 || moved[0] != states.Manageable {
			t.Errorf("transitions = %v, want exactly one to manageable", moved)
		}
		got := e.reload(t, n.ID)
		if got.ProvisionState != states.Manageable || got.Reservation != nil {
			t.Errorf("node = %s reserved by %s", got.ProvisionState, deref(got.Reservation))
		}
		if notes := e.logs.notifications(); len(notes) != 1 {
			t.Errorf("%d provision notifications, want 1", len(notes))
		}
	})
}

// TestConcurrentProvisioningRequests: 100 requests racing without any
// coordination: whoever gets the lock first moves the node; later lock
// holders find the event no longer valid. Exactly one transition happens.
func TestConcurrentProvisioningRequests(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(t, states.Available, "")
		const workers = 100
		var wg sync.WaitGroup
		var mu sync.Mutex
		accepted, locked, invalid := 0, 0, 0
		start := make(chan struct{})
		for i := 0; i < workers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				tk, err := e.m.Acquire(context.Background(), n.UUID, task.AcquireOptions{NoRetry: true})
				if err == nil {
					defer tk.Release()
					err = tk.ProcessEvent(context.Background(), states.EventManage, task.EventOptions{})
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					accepted++
				case errs.Is(err, errs.ClassNodeLocked):
					locked++
				case errs.Is(err, errs.ClassInvalidState):
					invalid++
				default:
					t.Errorf("unexpected error: %v", err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if accepted != 1 || locked+invalid != workers-1 {
			t.Errorf("accepted=%d locked=%d invalid=%d", accepted, locked, invalid)
		}
		if got := e.reload(t, n.ID); got.ProvisionState != states.Manageable || got.Reservation != nil {
			t.Errorf("node = %s reserved by %s", got.ProvisionState, deref(got.Reservation))
		}
	})
}

func TestLockRetries(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		cases := []struct {
			name   string
			opts   task.AcquireOptions
			sleeps int
		}{
			{"configured attempts", task.AcquireOptions{}, 2},
			{"no retry", task.AcquireOptions{NoRetry: true}, 0},
			{"attempts override", task.AcquireOptions{RetryAttempts: 5}, 4},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				e := newEnv(t, db)
				n := e.node(t, states.Available, "")
				if _, err := e.st.ReserveNode(ctx, "other-conductor", n.ID); err != nil {
					t.Fatal(err)
				}
				_, err := e.m.Acquire(ctx, n.UUID, c.opts)
				want := fmt.Sprintf("Node %s is locked by host other-conductor, please retry after the current operation is completed.", n.UUID)
				if !errs.Is(err, errs.ClassNodeLocked) || err.Error() != want {
					t.Fatalf("Acquire = %v, want NodeLocked %q", err, want)
				}
				sleeps := e.clock.Sleeps()
				if len(sleeps) != c.sleeps {
					t.Errorf("slept %d times, want %d", len(sleeps), c.sleeps)
				}
				for _, d := range sleeps {
					if d != time.Second {
						t.Errorf("slept %v, want node_locked_retry_interval 1s", d)
					}
				}
				if got := deref(e.reload(t, n.ID).Reservation); got != "other-conductor" {
					t.Errorf("reservation = %s", got)
				}
			})
		}
		t.Run("retry succeeds when the holder releases", func(t *testing.T) {
			e := newEnv(t, db)
			n := e.node(t, states.Available, "")
			if _, err := e.st.ReserveNode(ctx, "other-conductor", n.ID); err != nil {
				t.Fatal(err)
			}
			e.clock.OnSleep(func(i int, _ time.Duration) {
				if i == 2 {
					if err := e.st.ReleaseNode(ctx, "other-conductor", n.ID); err != nil {
						t.Error(err)
					}
				}
			})
			tk, err := e.m.Acquire(ctx, n.UUID, task.AcquireOptions{})
			if err != nil {
				t.Fatalf("Acquire after the holder released on the last retry = %v", err)
			}
			_ = tk.Release()
		})
		t.Run("patient", func(t *testing.T) {
			e := newEnv(t, db)
			n := e.node(t, states.Available, "")
			if _, err := e.st.ReserveNode(ctx, "other-conductor", n.ID); err != nil {
				t.Fatal(err)
			}
			e.clock.OnSleep(func(i int, _ time.Duration) {
				if i == 10 {
					if err := e.st.ReleaseNode(ctx, "other-conductor", n.ID); err != nil {
						t.Error(err)
					}
				}
			})
			tk, err := e.m.Acquire(ctx, n.UUID, task.AcquireOptions{Patient: true})
			if err != nil {
				t.Fatalf("patient Acquire = %v", err)
			}
			defer tk.Release()
			if len(e.clock.Sleeps()) != 10 {
				t.Errorf("slept %d times, want 10", len(e.clock.Sleeps()))
			}
			if deref(tk.Node.Reservation) != host {
				t.Errorf("reservation = %s", deref(tk.Node.Reservation))
			}
		})
		t.Run("patient gives up with its context", func(t *testing.T) {
			e := newEnv(t, db)
			n := e.node(t, states.Available, "")
			if _, err := e.st.ReserveNode(ctx, "other-conductor", n.ID); err != nil {
				t.Fatal(err)
			}
			cctx, cancel := context.WithCancel(ctx)
			e.clock.OnSleep(func(i int, _ time.Duration) {
				if i == 3 {
					cancel()
				}
			})
			_, err := e.m.Acquire(cctx, n.UUID, task.AcquireOptions{Patient: true})
			if !errs.Is(err, errs.ClassNodeLocked) || !errors.Is(err, context.Canceled) {
				t.Fatalf("Acquire = %v, want NodeLocked and context.Canceled", err)
			}
		})
	})
}

func TestSharedTask(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(t, states.Available, "")
		tk := e.acquire(t, n, task.AcquireOptions{Shared: true})
		if !tk.Shared() || tk.DriverTask().Shared != true {
			t.Errorf("task not shared")
		}
		if r := e.reload(t, n.ID).Reservation; r != nil {
			t.Errorf("shared lock reserved the node: %s", *r)
		}
		const msg = "An exclusive lock is required, but the current context has a shared lock."
		checkExclusive := func(what string, err error) {
			t.Helper()
			ie, ok := errs.As(err)
			if !ok || ie.Class != errs.ClassExclusiveLockRequired || ie.Code != 403 || ie.Message != msg {
				t.Errorf("%s on a shared task = %v, want ExclusiveLockRequired", what, err)
			}
		}
		checkExclusive("ProcessEvent", tk.ProcessEvent(ctx, states.EventManage, task.EventOptions{}))
		tk.Node.Extra = map[string]any{"k": "v"}
		checkExclusive("Save", tk.Save(ctx))
		checkExclusive("RequireExclusive", tk.RequireExclusive())
		if got := e.reload(t, n.ID); got.ProvisionState != states.Available || len(got.Extra) != 0 {
			t.Errorf("shared task wrote the node: %s %v", got.ProvisionState, got.Extra)
		}
		other, err := e.manager("other-conductor").Acquire(ctx, n.UUID, task.AcquireOptions{NoRetry: true})
		if err != nil {
			t.Fatalf("exclusive lock while a shared task exists = %v", err)
		}
		if err := other.Release(); err != nil {
			t.Fatal(err)
		}
		if err := tk.Release(); err != nil {
			t.Fatalf("releasing a shared task = %v", err)
		}
	})
}

func TestUpgradeLock(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(t, states.Available, "")
		tk := e.acquire(t, n, task.AcquireOptions{Shared: true, Purpose: "heartbeat"})

		other, err := e.manager("other-conductor").Acquire(ctx, n.UUID, task.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		err = tk.UpgradeLock(ctx, task.UpgradeOptions{})
		if !errs.Is(err, errs.ClassNodeLocked) {
			t.Fatalf("UpgradeLock while another conductor holds the node = %v", err)
		}
		if got := len(e.clock.Sleeps()); got != 2 {
			t.Errorf("upgrade retried with %d sleeps, want 2 (3 attempts)", got)
		}
		if !tk.Shared() {
			t.Errorf("task became exclusive although the upgrade failed")
		}
		// The other conductor changes the node and goes away.
		other.Node.Extra = map[string]any{"changed": "by other"}
		if err := other.Save(ctx); err != nil {
			t.Fatal(err)
		}
		if err := other.Release(); err != nil {
			t.Fatal(err)
		}

		if err := tk.UpgradeLock(ctx, task.UpgradeOptions{Purpose: "finish", NoRetry: true}); err != nil {
			t.Fatalf("UpgradeLock = %v", err)
		}
		if tk.Shared() || tk.Purpose() != "finish" || tk.DriverTask().Shared {
			t.Errorf("shared=%v purpose=%q after upgrade", tk.Shared(), tk.Purpose())
		}
		if tk.Node.Extra["changed"] != "by other" || deref(tk.Node.Reservation) != host {
			t.Errorf("node not reloaded by the upgrade: extra=%v reservation=%s", tk.Node.Extra, deref(tk.Node.Reservation))
		}
		if err := tk.UpgradeLock(ctx, task.UpgradeOptions{}); err != nil {
			t.Errorf("UpgradeLock on an exclusive task = %v", err)
		}
		if err := tk.ProcessEvent(ctx, states.EventManage, task.EventOptions{}); err != nil {
			t.Fatalf("ProcessEvent after upgrade = %v", err)
		}
		if err := tk.Release(); err != nil {
			t.Fatal(err)
		}
		if got := e.reload(t, n.ID); got.Reservation != nil || got.ProvisionState != states.Manageable {
			t.Errorf("node = %s reserved by %s", got.ProvisionState, deref(got.Reservation))
		}
	})
}

func TestUpgradeLockNoRetry(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(t, states.Available, "")
		tk := e.acquire(t, n, task.AcquireOptions{Shared: true})
		if _, err := e.st.ReserveNode(ctx, "other-conductor", n.ID); err != nil {
			t.Fatal(err)
		}
		if err := tk.UpgradeLock(ctx, task.UpgradeOptions{NoRetry: true}); !errs.Is(err, errs.ClassNodeLocked) {
			t.Fatalf("UpgradeLock = %v, want NodeLocked", err)
		}
		if n := len(e.clock.Sleeps()); n != 0 {
			t.Errorf("no-retry upgrade slept %d times", n)
		}
	})
}

func TestDowngradeLock(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(t, states.Available, "")
		tk := e.acquire(t, n, task.AcquireOptions{})
		if err := tk.DowngradeLock(ctx); err != nil {
			t.Fatal(err)
		}
		if !tk.Shared() || tk.Node.Reservation != nil || e.reload(t, n.ID).Reservation != nil {
			t.Errorf("downgrade kept the reservation")
		}
		if err := tk.Release(); err != nil {
			t.Errorf("Release after downgrade = %v", err)
		}
		if err := tk.DowngradeLock(ctx); err == nil {
			t.Errorf("DowngradeLock after release succeeded")
		}
	})
}

func TestReleaseOfDeletedNode(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		n := e.node(t, states.Available, "")
		tk := e.acquire(t, n, task.AcquireOptions{})
		if err := e.st.DeleteNode(context.Background(), n.ID); err != nil {
			t.Fatal(err)
		}
		if err := tk.Release(); err != nil {
			t.Errorf("Release of a node deleted under the task = %v", err)
		}
	})
}

// TestLocalReleaseWakesWaiter: a task waiting for a node this conductor
// holds gets the lock when it is released, not an interval later, and a
// wake-up does not use up one of its attempts.
func TestLocalReleaseWakesWaiter(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		n := e.node(t, states.Available, "")
		// The clock never moves: a wait lasts until something wakes the
		// waiter (or its context ends), and each is announced on sleeping.
		clock := fakeclock.NewBlocking(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		sleeping := make(chan time.Duration, 8)
		clock.OnSleep(func(_ int, d time.Duration) { sleeping <- d })
		m := task.NewManager(e.st, e.drivers, task.Settings{Host: host, RetryAttempts: 1, RetryInterval: time.Second}, task.WithClock(clock))
		for round := 0; round < 3; round++ {
			holder, err := m.Acquire(ctx, n.UUID, task.AcquireOptions{RetryAttempts: 1})
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan error, 1)
			go func() {
				// Two attempts: one wait, woken by the release (or
				// failing when the context ends, if nothing wakes it).
				wctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				waiter, err := m.Acquire(wctx, n.UUID, task.AcquireOptions{RetryAttempts: 2})
				if err == nil {
					err = waiter.Release()
				}
				got <- err
			}()
			if d := <-sleeping; d != time.Second {
				t.Fatalf("waited %v, want the 1s interval", d)
			}
			if err := holder.Release(); err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Fatalf("round %d: waiter: %v", round, err)
			}
		}
	})
}
