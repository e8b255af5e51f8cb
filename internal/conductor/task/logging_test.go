package task_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/logging"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the JSON records logged so far by message, failing the
// test on a line that names an attribute twice.
func (b *syncBuffer) lines(t *testing.T) map[string]map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		for _, key := range []string{`"request_id"`, `"global_request_id"`, `"node"`} {
			if n := strings.Count(line, key); n > 1 {
				t.Errorf("%s %d times in %s", key, n, line)
			}
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out[rec["msg"].(string)] = rec
	}
	return out
}

// A task carries the node and the ids of the request it was acquired for
// into its logger: lines an interface or a worker writes without a
// context, and the provision notification sent once the worker started,
// name them, once each.
func TestTaskLoggerCarriesTheRequest(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		logs := &syncBuffer{}
		m := task.NewManager(e.st, e.drivers, task.Settings{Host: host, RetryAttempts: 3, RetryInterval: time.Second},
			task.WithClock(e.clock), task.WithLogger(logging.New(slog.NewJSONHandler(logs, nil))))
		n := e.node(t, states.Manageable, "")
		ctx := rpc.WithRequestContext(context.Background(), &rpc.RequestContext{RequestID: "req-1", GlobalRequestID: "req-g"})

		tk, err := m.Acquire(ctx, n.UUID, task.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tk.DriverTask().Logger().Warn("driver line")
		ran := make(chan struct{})
		if err := tk.ProcessEvent(ctx, states.EventProvide, task.EventOptions{
			Spawner: newPool(t, 2),
			Work: task.Work{Name: "clean", Fn: func(_ context.Context, wt *task.Task) error {
				defer close(ran)
				wt.Log().Info("worker line")
				return nil
			}},
		}); err != nil {
			t.Fatal(err)
		}
		if err := tk.End(); err != nil {
			t.Fatal(err)
		}
		<-ran

		other, err := m.Acquire(context.Background(), n.UUID, task.AcquireOptions{Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		other.Log().Info("no request")
		if err := other.Release(); err != nil {
			t.Fatal(err)
		}

		recs := logs.lines(t)
		for _, msg := range []string{"driver line", "worker line", task.ProvisionSetEventType(task.StatusStart)} {
			rec := recs[msg]
			if rec == nil {
				t.Errorf("no %q line in %v", msg, recs)
				continue
			}
			if rec["node"] != n.UUID || rec["request_id"] != "req-1" || rec["global_request_id"] != "req-g" {
				t.Errorf("%q names node %v request %v global %v, want %s req-1 req-g", msg, rec["node"], rec["request_id"], rec["global_request_id"], n.UUID)
			}
		}
		if rec := recs["no request"]; rec == nil || rec["node"] != n.UUID || rec["request_id"] != nil {
			t.Errorf("task acquired outside a request: %v", rec)
		}
	})
}
