package task_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

type lockObservation struct {
	wait      time.Duration
	conflicts int
	outcome   string
}

// The lock observer hears the wait, the attempts that met another
// holder, and the outcome, for the conductor's lock metrics.
func TestLockObserver(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		e := newEnv(t, db)
		var seen []lockObservation
		m := task.NewManager(e.st, e.drivers,
			task.Settings{Host: host, RetryAttempts: 3, RetryInterval: time.Second},
			task.WithClock(e.clock), task.WithLogger(slog.New(e.logs)),
			task.WithLockObserver(func(wait time.Duration, conflicts int, outcome string) {
				seen = append(seen, lockObservation{wait, conflicts, outcome})
			}))
		n := e.node(t, states.Available, "")
		tk, err := m.Acquire(ctx, n.UUID, task.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tk.Release(); err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.ReserveNode(ctx, "other-conductor", n.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Acquire(ctx, n.UUID, task.AcquireOptions{}); err == nil {
			t.Fatal("Acquire of a node reserved elsewhere succeeded")
		}
		want := []lockObservation{{0, 0, "ok"}, {2 * time.Second, 3, "locked"}}
		if len(seen) != len(want) {
			t.Fatalf("observed %+v, want %+v", seen, want)
		}
		for i := range want {
			if seen[i] != want[i] {
				t.Errorf("observation %d = %+v, want %+v", i, seen[i], want[i])
			}
		}
	})
}
