package oslo_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/rpc/jsonrpc"
	"github.com/openkeel/ironic/internal/rpc/oslo"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/rabbitmq"
)

// transportURL is the machine's RabbitMQ (oslo.messaging's form); CI
// starts Debian's rabbitmq-server on 127.0.0.1 and sets it.
func transportURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("IRONIC_TEST_TRANSPORT_URL")
	if u == "" {
		t.Skip("IRONIC_TEST_TRANSPORT_URL is not set (e.g. rabbit://guest:guest@127.0.0.1:5672/)")
	}
	return u
}

// conductor is a conductor stand-in recording what it was asked; the
// methods it does not override panic through the nil interface.
type conductor struct {
	rpc.ConductorAPI
	host string

	mu       sync.Mutex
	contexts []*rpc.RequestContext
	casts    chan string
	block    chan struct{}
}

func newConductor(host string) *conductor {
	return &conductor{host: host, casts: make(chan string, 16)}
}

func (c *conductor) GetDriverProperties(ctx context.Context, topic, driverName string) (map[string]string, error) {
	c.mu.Lock()
	c.contexts = append(c.contexts, rpc.RequestContextFrom(ctx))
	c.mu.Unlock()
	if driverName == "missing" {
		return nil, errs.New(errs.ClassDriverNotFound, map[string]any{"driver_name": driverName})
	}
	if c.block != nil {
		<-c.block
	}
	return map[string]string{"driver": driverName, "served_by": c.host}, nil
}

func (c *conductor) ContinueNodeDeploy(ctx context.Context, topic, nodeID string) error {
	c.casts <- nodeID
	return errs.New(errs.ClassNodeLocked, map[string]any{"node": nodeID, "host": c.host})
}

// quiet drops the transport's logs: the reconnection warnings of the
// fault tests are expected.
var quiet = slog.New(slog.DiscardHandler)

// bus is one test's private corner of the broker: its own exchange and
// topic, so that tests running at once never see each other's messages.
type bus struct {
	opts  oslo.Options
	topic string
}

func newBus(t *testing.T) bus {
	t.Helper()
	id := uuid.NewString()[:8]
	return bus{
		opts: oslo.Options{TransportURL: transportURL(t), Exchange: "test-" + id, Timeout: 10 * time.Second,
			TransientTTL: time.Minute, RetryInterval: 50 * time.Millisecond, RetryBackoff: 50 * time.Millisecond, IntervalMax: 500 * time.Millisecond,
			Logger: quiet},
		topic: "ironic.conductor_manager-" + id,
	}
}

// serve runs a conductor's RPC server until the test ends.
func (b bus) serve(t *testing.T, c *conductor) {
	t.Helper()
	srv, err := oslo.NewServer(b.opts, b.topic, c.host, jsonrpc.NewServer(c, jsonrpc.ServerOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server %s: %v", c.host, err)
		}
		// Topic queues outlive their consumers, as upstream's: remove
		// the test's own from the shared broker.
		b.remove(t, b.topic, b.topic+"."+c.host)
	})
	select {
	case <-srv.Ready():
	case err := <-done:
		t.Fatalf("server %s ended before consuming: %v", c.host, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("server %s not consuming after 30 s", c.host)
	}
}

// remove deletes queues of the test and its exchange, when the broker
// is still there.
func (b bus) remove(t *testing.T, queues ...string) {
	t.Helper()
	conn, err := amqp.Dial(strings.Replace(b.opts.TransportURL, "rabbit://", "amqp://", 1))
	if err != nil {
		return
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return
	}
	for _, q := range queues {
		_, _ = ch.QueueDelete(q, false, false, false)
	}
	_ = ch.ExchangeDelete(b.opts.Exchange, false, false)
}

func (b bus) client(t *testing.T) rpc.ConductorAPI {
	t.Helper()
	api, c, err := oslo.NewConductorAPI(b.opts, jsonrpc.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return api
}

func TestCallRoutesToHostAndCarriesContext(t *testing.T) {
	b := newBus(t)
	c1, c2 := newConductor("cond-1"), newConductor("cond-2")
	b.serve(t, c1)
	b.serve(t, c2)
	api := b.client(t)
	ctx := rpc.WithRequestContext(context.Background(), &rpc.RequestContext{RequestID: "req-123", ProjectID: "p1", Roles: []string{"admin"}})
	for _, c := range []*conductor{c1, c2, c1} {
		got, err := api.GetDriverProperties(ctx, b.topic+"."+c.host, "fake-hardware")
		if err != nil {
			t.Fatalf("call to %s: %v", c.host, err)
		}
		if got["served_by"] != c.host || got["driver"] != "fake-hardware" {
			t.Errorf("call to %s answered %v", c.host, got)
		}
	}
	if len(c1.contexts) != 2 || len(c2.contexts) != 1 {
		t.Fatalf("calls served: %d by cond-1, %d by cond-2; want 2 and 1", len(c1.contexts), len(c2.contexts))
	}
	rc := c2.contexts[0]
	if rc == nil || rc.RequestID != "req-123" || rc.ProjectID != "p1" || len(rc.Roles) != 1 {
		t.Errorf("conductor saw context %+v", rc)
	}
}

func TestErrorsKeepTheirClass(t *testing.T) {
	b := newBus(t)
	b.serve(t, newConductor("cond-1"))
	api := b.client(t)
	_, err := api.GetDriverProperties(context.Background(), b.topic+".cond-1", "missing")
	e, ok := errs.As(err)
	if !ok || e.Class != errs.ClassDriverNotFound || e.Code != http.StatusNotFound || !strings.Contains(e.Message, "missing") {
		t.Fatalf("error %#v, want DriverNotFound 404 naming the driver", err)
	}
}

func TestCastReportsNothing(t *testing.T) {
	b := newBus(t)
	c := newConductor("cond-1")
	b.serve(t, c)
	api := b.client(t)
	if err := api.ContinueNodeDeploy(context.Background(), b.topic+".cond-1", "node-1"); err != nil {
		t.Fatalf("cast: %v", err)
	}
	select {
	case got := <-c.casts:
		if got != "node-1" {
			t.Errorf("cast delivered node %q", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cast not delivered within 30 s")
	}
}

// TestCallWithoutConductorTimesOut: nothing consumes the host's queue; as
// upstream's MessagingTimeout, the call fails when rpc_response_timeout is
// spent, here as a 503 the API's client may retry.
func TestCallWithoutConductorTimesOut(t *testing.T) {
	b := newBus(t)
	b.opts.Timeout = 500 * time.Millisecond
	api := b.client(t)
	start := time.Now()
	_, err := api.GetDriverProperties(context.Background(), b.topic+".nobody", "fake-hardware")
	e, ok := errs.As(err)
	if !ok || e.Code != http.StatusServiceUnavailable || e.Headers["Retry-After"] == "" {
		t.Fatalf("error %v, want a 503 with Retry-After", err)
	}
	if !strings.Contains(errors.Unwrap(err).Error(), "MessagingTimeout") {
		t.Errorf("cause %v does not say MessagingTimeout", errors.Unwrap(err))
	}
	if d := time.Since(start); d < b.opts.Timeout {
		t.Errorf("failed after %v, before the timeout", d)
	}
}

// TestUnreachableBrokerFailsCall: no broker answers; the call retries until
// its timeout, then answers 503.
func TestUnreachableBrokerFailsCall(t *testing.T) {
	b := newBus(t)
	b.opts.TransportURL = "rabbit://guest:guest@127.0.0.1:1/"
	b.opts.Timeout = 300 * time.Millisecond
	api := b.client(t)
	_, err := api.GetDriverProperties(context.Background(), b.topic+".cond-1", "fake-hardware")
	if e, ok := errs.As(err); !ok || e.Code != http.StatusServiceUnavailable {
		t.Fatalf("error %v, want 503", err)
	}
}

// TestFailoverToNextHost: the transport URL's first host refuses; the
// client and server reach the second.
func TestFailoverToNextHost(t *testing.T) {
	b := newBus(t)
	good := strings.TrimPrefix(b.opts.TransportURL, "rabbit://")
	b.opts.TransportURL = "rabbit://guest:guest@127.0.0.1:1," + strings.TrimSuffix(good, "/") + "/"
	b.serve(t, newConductor("cond-1"))
	api := b.client(t)
	if _, err := api.GetDriverProperties(context.Background(), b.topic+".cond-1", "fake-hardware"); err != nil {
		t.Fatalf("call through the second host: %v", err)
	}
}

// TestQuorumQueues: with rabbit_quorum_queue the conductor's topic queues
// are durable quorum queues on a durable exchange, and calls go through.
func TestQuorumQueues(t *testing.T) {
	b := newBus(t)
	b.opts.Quorum = true
	b.opts.QuorumDeliveryLimit = 5
	b.serve(t, newConductor("cond-1"))
	api := b.client(t)
	if _, err := api.GetDriverProperties(context.Background(), b.topic+".cond-1", "fake-hardware"); err != nil {
		t.Fatalf("call over quorum queues: %v", err)
	}
	conn, err := amqp.Dial(strings.Replace(b.opts.TransportURL, "rabbit://", "amqp://", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	// A passive declaration with other arguments than the queue's own
	// would close the channel: the queue is a durable quorum queue.
	q := b.topic + ".cond-1"
	if _, err := ch.QueueDeclare(q, true, false, false, false, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int64(5)}); err != nil {
		t.Fatalf("queue %s is not a durable quorum queue: %v", q, err)
	}
}

// TestDeletedQueueIsDeclaredAgain: an operator deleting the conductor's
// queue cancels its consumer; the server declares it again and serves on.
func TestDeletedQueueIsDeclaredAgain(t *testing.T) {
	b := newBus(t)
	b.serve(t, newConductor("cond-1"))
	api := b.client(t)
	conn, err := amqp.Dial(strings.Replace(b.opts.TransportURL, "rabbit://", "amqp://", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDelete(b.topic+".cond-1", false, false, false); err != nil {
		t.Fatal(err)
	}
	// Calls published before the queue is back are lost, as upstream's:
	// retry with a short timeout until one is answered.
	short := b
	short.opts.Timeout = 500 * time.Millisecond
	retry := short.client(t)
	await.Until(t, 30*time.Second, "the queue to be declared again", func() bool {
		_, err := retry.GetDriverProperties(context.Background(), b.topic+".cond-1", "fake-hardware")
		return err == nil
	})
	if _, err := api.GetDriverProperties(context.Background(), b.topic+".cond-1", "fake-hardware"); err != nil {
		t.Fatalf("call after the queue came back: %v", err)
	}
}

// TestTLS: [oslo_messaging_rabbit]/ssl with ssl_ca_file reaches a broker
// that serves AMQP over TLS only; without the CA the call fails as any
// broker outage, a 503.
func TestTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a private RabbitMQ node")
	}
	broker := rabbitmq.StartWith(t, rabbitmq.Options{TLS: true})
	for _, tc := range []struct {
		name string
		ca   string
		ok   bool
	}{{"with the CA", broker.CAFile(), true}, {"without it", "", false}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(config.LoadOptions{Overrides: map[string]map[string]string{
				"DEFAULT":               {"transport_url": broker.URL(), "control_exchange": "ironic", "rpc_response_timeout": "5"},
				"oslo_messaging_rabbit": {"ssl": "true", "ssl_ca_file": tc.ca},
			}})
			if err != nil {
				t.Fatal(err)
			}
			opts, err := oslo.OptionsFromConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			opts.Logger = quiet
			opts.RetryInterval, opts.IntervalMax = 100*time.Millisecond, 500*time.Millisecond
			b := bus{opts: opts, topic: "ironic.conductor_manager"}
			if tc.ok {
				b.serve(t, newConductor("cond-tls"))
			}
			b.opts.Timeout = time.Second
			_, err = b.client(t).GetDriverProperties(context.Background(), b.topic+".cond-tls", "fake-hardware")
			if tc.ok && err != nil {
				t.Fatalf("call over TLS: %v", err)
			}
			if e, isErr := errs.As(err); !tc.ok && (!isErr || e.Code != http.StatusServiceUnavailable) {
				t.Fatalf("call with an unknown CA: %v, want a 503", err)
			}
		})
	}
}
