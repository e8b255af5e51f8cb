package oslo_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/rpc/oslo"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/rabbitmq"
)

// A broker restarted under load: calls in flight and calls made while it
// is down fail within rpc_response_timeout, each as a 503 with Retry-After
// (upstream's MessagingTimeout, which a client retries), never hang and
// never fail otherwise; once the broker is back the conductor's server
// and the API's client reconnect on their own and calls succeed again.
func TestBrokerRestartUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a private RabbitMQ node")
	}
	broker := rabbitmq.Start(t)
	b := bus{
		opts: oslo.Options{TransportURL: broker.URL(), Exchange: "ironic", Timeout: 3 * time.Second, TransientTTL: time.Minute,
			RetryInterval: 100 * time.Millisecond, RetryBackoff: 100 * time.Millisecond, IntervalMax: 500 * time.Millisecond,
			Logger: quiet},
		topic: "ironic.conductor_manager",
	}
	b.serve(t, newConductor("cond-1"))
	api := b.client(t)

	var ok, failed atomic.Int64
	var mu sync.Mutex
	var unexpected []error
	var slowest time.Duration
	ctx, stop := context.WithCancel(context.Background())
	var load sync.WaitGroup
	for range 4 {
		load.Go(func() {
			for ctx.Err() == nil {
				start := time.Now()
				got, err := api.GetDriverProperties(context.Background(), b.topic+".cond-1", "fake-hardware")
				d := time.Since(start)
				mu.Lock()
				slowest = max(slowest, d)
				mu.Unlock()
				if err == nil && got["served_by"] == "cond-1" {
					ok.Add(1)
					continue
				}
				failed.Add(1)
				if e, isErr := errs.As(err); !isErr || e.Code != http.StatusServiceUnavailable || e.Headers["Retry-After"] == "" {
					mu.Lock()
					unexpected = append(unexpected, fmt.Errorf("%v (answer %v)", err, got))
					mu.Unlock()
				}
			}
		})
	}
	t.Cleanup(func() { stop(); load.Wait() })

	await.Until(t, 30*time.Second, "calls to succeed before the restart", func() bool { return ok.Load() >= 50 })
	broker.Stop()
	okAtStop := ok.Load()
	await.Until(t, 30*time.Second, "calls to fail while the broker is down", func() bool { return failed.Load() >= 4 })
	broker.Boot()
	restarted := ok.Load()
	await.Until(t, 60*time.Second, "calls to succeed after the restart", func() bool { return ok.Load() >= restarted+50 })
	stop()
	load.Wait()

	t.Logf("calls: %d succeeded (%d before the stop), %d failed; slowest %v", ok.Load(), okAtStop, failed.Load(), slowest)
	for _, err := range unexpected {
		t.Errorf("a call failed otherwise than with a 503: %v", err)
	}
	// A call never outlives its timeout by more than a publish's
	// give-up and the scheduling of a loaded machine.
	if limit := b.opts.Timeout + 5*time.Second; slowest > limit {
		t.Errorf("slowest call took %v, more than %v", slowest, limit)
	}
}
