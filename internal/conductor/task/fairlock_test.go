package task_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/fakeclock"
)

// Tasks of one conductor that meet a held lock get it in the order they
// asked, each woken by its predecessor's release, none seeing NodeLocked
// and none waiting for a retry interval (the clock never moves).
func TestWaitersGetTheLockInArrivalOrder(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		n := e.node(t, states.Available, "")
		clock := fakeclock.NewBlocking(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		sleeping := make(chan struct{}, 64)
		clock.OnSleep(func(int, time.Duration) { sleeping <- struct{}{} })
		m := task.NewManager(e.st, e.drivers, task.Settings{Host: host, RetryAttempts: 3, RetryInterval: time.Second}, task.WithClock(clock))
		holder, err := m.Acquire(ctx, n.UUID, task.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		const waiters = 5
		var mu sync.Mutex
		var order []int
		var wg sync.WaitGroup
		for i := range waiters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wctx, cancel := context.WithTimeout(ctx, time.Minute)
				defer cancel()
				tk, err := m.Acquire(wctx, n.UUID, task.AcquireOptions{})
				if err != nil {
					t.Errorf("waiter %d: %v", i, err)
					return
				}
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				if err := tk.Release(); err != nil {
					t.Error(err)
				}
			}()
			// Waiter i is queued (and waiting) before i+1 asks.
			<-sleeping
		}
		if err := holder.Release(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if want := []int{0, 1, 2, 3, 4}; !slices.Equal(order, want) {
			t.Errorf("lock taken in order %v, want %v", order, want)
		}
	})
}
