package task_test

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// Sixteen clients acting on one node, each taking its lock ten times and
// holding it lockHold (a short operation), with upstream's defaults (3
// attempts, 1 s apart): how many see NodeLocked (the API's 409), and how
// long the others waited. "fifo" is this conductor's queue; "retry-loop"
// is upstream's tenacity loop (try, sleep the interval, try again), which
// is what a conductor without the queue does.
//
//	go test -run '^$' -bench FairLock -benchtime 1x ./internal/conductor/task/
func BenchmarkFairLock(b *testing.B) {
	const clients, rounds, lockHold = 16, 10, 50 * time.Millisecond
	for _, be := range storetest.Backends(b) {
		for _, mode := range []string{"fifo", "retry-loop"} {
			b.Run(be.Name+"/"+mode, func(b *testing.B) {
				st := store.New(be.DB)
				m := task.NewManager(st, nil, task.Settings{Host: "bench", RetryAttempts: 3, RetryInterval: time.Second})
				n, err := st.CreateNode(context.Background(), &model.Node{Driver: "fake-hardware"})
				if err != nil {
					b.Fatal(err)
				}
				acquire := func(ctx context.Context) (*task.Task, error) {
					if mode == "fifo" {
						return m.Acquire(ctx, n.UUID, task.AcquireOptions{NoDriver: true})
					}
					for try := 1; ; try++ {
						tk, err := m.Acquire(ctx, n.UUID, task.AcquireOptions{NoDriver: true, NoRetry: true})
						if err == nil || !errs.Is(err, errs.ClassNodeLocked) || try == 3 {
							return tk, err
						}
						// Upstream's loop waits its interval; the
						// request's deadline still ends the wait.
						if err := clock.Sleep(ctx, time.Second); err != nil {
							return nil, err
						}
					}
				}
				for range b.N {
					var mu sync.Mutex
					var waits []time.Duration
					perClient := make([]time.Duration, clients)
					conflicts := 0
					var wg sync.WaitGroup
					for c := range clients {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for range rounds {
								start := time.Now()
								tk, err := acquire(context.Background())
								wait := time.Since(start)
								mu.Lock()
								if err != nil {
									conflicts++
								} else {
									waits = append(waits, wait)
									perClient[c] += wait
								}
								mu.Unlock()
								if err != nil {
									continue
								}
								// The operation the lock is held for.
								_ = clock.Sleep(context.Background(), lockHold)
								if err := tk.Release(); err != nil {
									b.Error(err)
								}
							}
						}()
					}
					wg.Wait()
					slices.Sort(waits)
					q := func(p float64) float64 {
						if len(waits) == 0 {
							return 0
						}
						return float64(waits[min(len(waits)-1, int(p*float64(len(waits))))].Milliseconds())
					}
					var mean, sq float64
					for _, w := range waits {
						mean += float64(w.Milliseconds())
					}
					mean /= float64(max(1, len(waits)))
					for _, w := range waits {
						d := float64(w.Milliseconds()) - mean
						sq += d * d
					}
					b.ReportMetric(float64(conflicts), "409s/op")
					b.ReportMetric(q(0.5), "p50-wait-ms")
					b.ReportMetric(q(0.99), "p99-wait-ms")
					b.ReportMetric(q(1), "max-wait-ms")
					b.ReportMetric(math.Sqrt(sq/float64(max(1, len(waits)))), "stddev-wait-ms")
				}
			})
		}
	}
}
