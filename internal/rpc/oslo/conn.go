package oslo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/openkeel/ironic/internal/amqpurl"
)

// dialer connects to the transport URL's brokers in turn: each connection
// starts at the host after the one last reached (round-robin), or at a
// random one (shuffle), as kombu's failover strategies.
type dialer struct {
	o    Options
	urls []string

	mu   sync.Mutex
	next int
}

func newDialer(o Options) (*dialer, error) {
	urls, err := amqpurl.Parse(o.TransportURL)
	if err != nil {
		return nil, fmt.Errorf("[DEFAULT]/transport_url: %w", err)
	}
	if o.TLS != nil {
		// [oslo_messaging_rabbit]/ssl turns TLS on for every host.
		for i, u := range urls {
			urls[i] = strings.Replace(u, "amqp://", "amqps://", 1)
		}
	}
	return &dialer{o: o, urls: urls}, nil
}

// dial returns a connection to the first broker that answers, or the
// error of each when none does.
func (d *dialer) dial() (*amqp.Connection, error) {
	d.mu.Lock()
	start := d.next
	if d.o.Shuffle {
		start = rand.IntN(len(d.urls))
	}
	d.mu.Unlock()
	cfg := amqp.Config{
		Heartbeat:       d.o.Heartbeat,
		TLSClientConfig: d.o.TLS,
		Dial:            amqp.DefaultDial(10 * time.Second),
		Properties:      amqp.Table{"product": "openkeel-ironic", "connection_name": "ironic oslo.messaging"},
	}
	if d.o.Heartbeat == 0 {
		// amqp091's 0 means its own default; oslo's 0 means none.
		cfg.Heartbeat = -1
	}
	var errs []error
	for i := range d.urls {
		n := (start + i) % len(d.urls)
		conn, err := amqp.DialConfig(d.urls[n], cfg)
		if err == nil {
			d.mu.Lock()
			d.next = (n + 1) % len(d.urls)
			d.mu.Unlock()
			return conn, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", amqpurl.Mask(d.urls[n]), err))
	}
	return nil, fmt.Errorf("no RabbitMQ broker reachable: %w", errors.Join(errs...))
}

// backoff paces reconnections as oslo's rabbit_retry_interval,
// rabbit_retry_backoff and rabbit_interval_max.
type backoff struct {
	o    Options
	next time.Duration
}

// wait sleeps for the next interval; false when ctx ends first.
func (b *backoff) wait(ctx context.Context) bool {
	if b.next == 0 {
		b.next = b.o.RetryInterval
	}
	t := time.NewTimer(b.next)
	defer t.Stop()
	b.next = min(b.next+b.o.RetryBackoff, b.o.IntervalMax)
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (b *backoff) reset() { b.next = 0 }

// queueArgs are the arguments of a queue declaration, as upstream's
// _get_queue_arguments: mirrored or quorum, and an expiry for the
// transient queues (replies and fanout).
func (o Options) queueArgs(transient bool) amqp.Table {
	args := amqp.Table{}
	if o.HAQueues {
		args["x-ha-policy"] = "all"
	}
	if o.Quorum && !transient {
		args["x-queue-type"] = "quorum"
		if o.QuorumDeliveryLimit > 0 {
			args["x-delivery-limit"] = int64(o.QuorumDeliveryLimit)
		}
		if o.QuorumMaxMemoryLength > 0 {
			args["x-max-in-memory-length"] = int64(o.QuorumMaxMemoryLength)
		}
		if o.QuorumMaxMemoryBytes > 0 {
			args["x-max-in-memory-bytes"] = int64(o.QuorumMaxMemoryBytes)
		}
	}
	if transient && o.TransientTTL > 0 {
		args["x-expires"] = o.TransientTTL.Milliseconds()
	}
	return args
}

// durable is whether topic exchanges and queues are durable: quorum
// queues must be.
func (o Options) durable() bool { return o.Durable || o.Quorum }
