package task_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// Issue 23: [DEFAULT]/log_in_db_max_size cuts last_error and
// maintenance_reason to that many characters (not bytes) when a task saves
// the node, as upstream's Node.save; shorter texts are kept whole.
func TestSaveTruncatesLongLogs(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		e.m = task.NewManager(e.st, e.drivers, task.Settings{Host: host, RetryAttempts: 3, RetryInterval: time.Second, LogInDBMaxSize: 10},
			task.WithClock(e.clock), task.WithLogger(slog.New(e.logs)), task.WithHistory(e.st))
		ctx := context.Background()
		n := e.node(t, states.Available, "")
		tk := e.acquire(t, n, task.AcquireOptions{})
		long, short := strings.Repeat("é", 25), "short"
		tk.Node.LastError, tk.Node.MaintenanceReason = &long, &short
		if err := tk.Save(ctx); err != nil {
			t.Fatal(err)
		}
		got := e.reload(t, n.ID)
		if deref(got.LastError) != strings.Repeat("é", 10) || deref(got.MaintenanceReason) != "short" {
			t.Errorf("saved last_error %q maintenance_reason %q", deref(got.LastError), deref(got.MaintenanceReason))
		}
		// Also what SaveLater leaves for the release.
		reason := strings.Repeat("x", 11)
		tk.Node.MaintenanceReason = &reason
		if err := tk.SaveLater(); err != nil {
			t.Fatal(err)
		}
		if err := tk.Release(); err != nil {
			t.Fatal(err)
		}
		if got := e.reload(t, n.ID); deref(got.MaintenanceReason) != strings.Repeat("x", 10) {
			t.Errorf("released maintenance_reason %q", deref(got.MaintenanceReason))
		}
	})
}
