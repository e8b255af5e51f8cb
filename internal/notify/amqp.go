package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/openkeel/ironic/internal/amqpurl"
)

// BrokerOptions configure the messagingv2 driver.
type BrokerOptions struct {
	// TransportURL is oslo.messaging's rabbit://user:pass@host:port[,…]/vhost.
	TransportURL string
	// Exchange is [DEFAULT]/control_exchange: notifications go to this
	// topic exchange, as oslo.messaging's notifier sends them.
	Exchange string
	// Topics are the routing keys' prefixes; a message goes to each as
	// <topic>.<priority in lower case>.
	Topics []string
	// Retry is [oslo_messaging_notifications]/retry: how many times a
	// message is retried after a failed send; -1 retries until it is sent
	// or pushed out of the buffer.
	Retry int
	// Buffer bounds the messages waiting for the broker (default 1000);
	// when it is full the newest message is dropped and counted.
	Buffer int
	Log    *slog.Logger
	// Dial connects; amqp.Dial by default (tests stand a broker in).
	Dial func(url string) (*amqp.Connection, error)
}

type outgoing struct {
	key  string
	body []byte
}

// Broker is the messagingv2 driver: messages wait in a bounded buffer
// and a single goroutine publishes them, connecting (and reconnecting)
// to the broker's hosts in turn, so a broker that is down never blocks
// the caller.
type Broker struct {
	o     BrokerOptions
	urls  []string
	queue chan outgoing
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once

	dropped atomic.Uint64
	sent    atomic.Uint64
}

// NewBroker parses the transport URL and starts the publisher.
func NewBroker(o BrokerOptions) (*Broker, error) {
	urls, err := amqpurl.Parse(o.TransportURL)
	if err != nil {
		return nil, err
	}
	if o.Buffer <= 0 {
		o.Buffer = 1000
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Dial == nil {
		o.Dial = func(u string) (*amqp.Connection, error) {
			return amqp.DialConfig(u, amqp.Config{Dial: amqp.DefaultDial(10 * time.Second), Heartbeat: 10 * time.Second})
		}
	}
	b := &Broker{o: o, urls: urls, queue: make(chan outgoing, o.Buffer), stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b, nil
}

// Dropped is how many messages were not sent: the buffer was full, the
// retries ran out or the driver closed before the broker took them.
func (b *Broker) Dropped() uint64 { return b.dropped.Load() }

// Sent is how many messages the broker took.
func (b *Broker) Sent() uint64 { return b.sent.Load() }

// Send wraps m in oslo.messaging's 2.0 envelope and queues it for each
// topic; it never waits.
func (b *Broker) Send(ctx context.Context, level Level, m *Message) {
	inner, err := json.Marshal(m)
	if err != nil {
		b.o.Log.ErrorContext(ctx, "could not encode notification", "event_type", m.EventType, "error", err)
		b.dropped.Add(1)
		return
	}
	body, err := json.Marshal(map[string]string{"oslo.version": "2.0", "oslo.message": string(inner)})
	if err != nil {
		b.dropped.Add(1)
		return
	}
	for _, topic := range b.o.Topics {
		select {
		case b.queue <- outgoing{key: topic + "." + strings.ToLower(level.Priority()), body: body}:
		default:
			b.dropped.Add(1)
			b.o.Log.WarnContext(ctx, "notification buffer full, notification dropped", "event_type", m.EventType, "topic", topic)
		}
	}
}

// Close stops the publisher after it has sent what the broker takes
// within a few seconds; what is left is counted as dropped.
func (b *Broker) Close() {
	b.once.Do(func() { close(b.stop) })
	<-b.done
}

// publisher is one connection and channel with the queues it declared.
type publisher struct {
	conn     *amqp.Connection
	ch       *amqp.Channel
	declared map[string]bool
}

func (p *publisher) close() {
	if p.conn != nil {
		_ = p.conn.Close()
	}
}

func (b *Broker) run() {
	defer close(b.done)
	var p *publisher
	defer func() {
		if p != nil {
			p.close()
		}
	}()
	backoff := 100 * time.Millisecond
	var pending *outgoing
	attempts := 0
	draining := false
	var drainUntil time.Time
	for {
		if pending == nil {
			select {
			case m := <-b.queue:
				pending, attempts = &m, 0
			case <-b.stop:
				if draining {
					return
				}
				draining, drainUntil = true, time.Now().Add(3*time.Second)
				select {
				case m := <-b.queue:
					pending, attempts = &m, 0
				default:
					return
				}
			}
		}
		if draining && time.Now().After(drainUntil) {
			b.dropped.Add(uint64(1 + len(b.queue)))
			return
		}
		if p == nil {
			var err error
			if p, err = b.connect(); err != nil {
				b.o.Log.Warn("cannot connect to the notification broker", "error", err)
				if !b.wait(&backoff, draining) {
					b.dropped.Add(uint64(1 + len(b.queue)))
					return
				}
				continue
			}
			backoff = 100 * time.Millisecond
		}
		if err := b.publish(p, *pending); err != nil {
			b.o.Log.Warn("could not send notification", "routing_key", pending.key, "error", err)
			p.close()
			p = nil
			attempts++
			if b.o.Retry >= 0 && attempts > b.o.Retry {
				b.dropped.Add(1)
				pending = nil
			}
			continue
		}
		b.sent.Add(1)
		pending = nil
	}
}

// wait sleeps for the backoff (doubling up to 10 s); false when the
// driver is closing and nothing can be sent any more.
func (b *Broker) wait(backoff *time.Duration, draining bool) bool {
	if draining {
		return false
	}
	t := time.NewTimer(*backoff)
	defer t.Stop()
	*backoff = min(*backoff*2, 10*time.Second)
	select {
	case <-t.C:
		return true
	case <-b.stop:
		return false
	}
}

// connect tries the transport URL's hosts in turn.
func (b *Broker) connect() (*publisher, error) {
	var errs []error
	for _, u := range b.urls {
		conn, err := b.o.Dial(u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ch, err := conn.Channel()
		if err != nil {
			_ = conn.Close()
			errs = append(errs, err)
			continue
		}
		// oslo.messaging's defaults: neither durable nor auto-deleted.
		if err := ch.ExchangeDeclare(b.o.Exchange, "topic", false, false, false, false, nil); err != nil {
			_ = conn.Close()
			errs = append(errs, fmt.Errorf("declare exchange %s: %w", b.o.Exchange, err))
			continue
		}
		return &publisher{conn: conn, ch: ch, declared: map[string]bool{}}, nil
	}
	return nil, errors.Join(errs...)
}

// publish declares the queue named after the routing key (bound to it)
// once per connection, as oslo.messaging does so that notifications sent
// before a consumer exists are kept, then publishes.
func (b *Broker) publish(p *publisher, m outgoing) error {
	if !p.declared[m.key] {
		if _, err := p.ch.QueueDeclare(m.key, false, false, false, false, nil); err != nil {
			return fmt.Errorf("declare queue %s: %w", m.key, err)
		}
		if err := p.ch.QueueBind(m.key, m.key, b.o.Exchange, false, nil); err != nil {
			return fmt.Errorf("bind queue %s: %w", m.key, err)
		}
		p.declared[m.key] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.ch.PublishWithContext(ctx, b.o.Exchange, m.key, false, false, amqp.Publishing{
		ContentType: "application/json", ContentEncoding: "utf-8", Body: m.body,
	})
}
