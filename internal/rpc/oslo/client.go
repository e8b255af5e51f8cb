package oslo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/rpc/jsonrpc"
)

// Client is the API's side: it publishes calls and casts to the topic a
// Router chose and waits for replies on its own reply queue. It is a
// jsonrpc.Sender: NewConductorAPI wraps it in the generated client.
type Client struct {
	o      Options
	d      *dialer
	log    *slog.Logger
	replyQ string

	mu   sync.Mutex
	conn *amqp.Connection
	pub  *amqp.Channel

	wmu     sync.Mutex
	waiters map[string]*waiter
}

var _ jsonrpc.Sender = (*Client)(nil)

// waiter is one call waiting for its reply.
type waiter struct {
	done chan reply
	// partial is the result of a reply that was not the last one, as
	// oslo.messaging before "ending" sent them.
	partial json.RawMessage
}

// answer delivers r unless the call already has its answer (a
// duplicated reply).
func (w *waiter) answer(r reply) {
	select {
	case w.done <- r:
	default:
	}
}

type reply struct {
	result json.RawMessage
	err    error
}

// NewClient returns a Client; it connects on its first call.
func NewClient(o Options) (*Client, error) {
	o = o.withDefaults()
	if o.Quorum && o.HAQueues {
		return nil, errors.New("[oslo_messaging_rabbit]: rabbit_quorum_queue and rabbit_ha_queues are both set; queues are quorum or mirrored, not both")
	}
	d, err := newDialer(o)
	if err != nil {
		return nil, err
	}
	return &Client{o: o, d: d, log: o.Logger, replyQ: "reply_" + uniqueID(), waiters: map[string]*waiter{}}, nil
}

// NewConductorAPI returns the conductor RPC API over oslo.messaging, with
// the payload settings of copts (pin_release_version), and the Client to
// Close when done.
func NewConductorAPI(o Options, copts jsonrpc.ClientOptions) (rpc.ConductorAPI, *Client, error) {
	c, err := NewClient(o)
	if err != nil {
		return nil, nil, err
	}
	api, err := jsonrpc.NewClientOver(c, copts)
	if err != nil {
		return nil, nil, err
	}
	return api, c, nil
}

// Close drops the connection; calls waiting for a reply time out.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn, c.pub = nil, nil
	return err
}

// Send publishes one call or cast (jsonrpc.Sender). A call waits for its
// reply until [DEFAULT]/rpc_response_timeout or ctx's deadline, whichever
// comes first; that time includes reaching a broker, so a broker that is
// down or restarting fails the call with a 503 (TemporaryFailure, with
// Retry-After) once it is spent, as upstream's MessagingTimeout, instead
// of hanging.
func (c *Client) Send(ctx context.Context, topic, method string, params map[string]json.RawMessage, cast bool) (json.RawMessage, error) {
	deadline := time.Now().Add(c.o.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	msg, err := request(method, params)
	if err != nil {
		return nil, fmt.Errorf("oslo.messaging %s: %w", method, err)
	}
	var w *waiter
	if !cast {
		id := uniqueID()
		msg["_msg_id"], msg["_reply_q"], msg["_timeout"] = id, c.replyQ, nil
		w = c.listen(id)
		defer c.unlisten(id)
	}
	body, err := seal(msg)
	if err != nil {
		return nil, err
	}
	p := amqp.Publishing{ContentType: contentType, ContentEncoding: contentEncoding, Body: body, DeliveryMode: amqp.Transient}
	if c.o.durable() {
		p.DeliveryMode = amqp.Persistent
	}
	if !cast {
		// As upstream, a call's message expires with the call, so that
		// a conductor that comes back late does not run calls nobody
		// waits for.
		p.Expiration = strconv.FormatInt(max(time.Until(deadline).Milliseconds(), 1), 10)
	}
	if err := c.publish(ctx, topic, p); err != nil {
		return nil, c.fault(ctx, fmt.Errorf("oslo.messaging %s to %s: %w", method, topic, err))
	}
	if cast {
		return nil, nil
	}
	select {
	case r := <-w.done:
		return r.result, r.err
	case <-ctx.Done():
		return nil, c.fault(ctx, fmt.Errorf("oslo.messaging %s to %s: MessagingTimeout: no reply on %s within %s",
			method, topic, c.replyQ, c.o.Timeout))
	}
}

// fault classifies a call that got no answer: the caller giving up stays
// a context error; anything else (no broker, no reply in time) is a 503
// the caller may retry, as for JSON-RPC.
func (c *Client) fault(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return err
	}
	return errs.Unavailable(err)
}

// publish sends p to the control exchange with topic as routing key,
// reconnecting with backoff until it is sent or ctx ends.
func (c *Client) publish(ctx context.Context, topic string, p amqp.Publishing) error {
	b := backoff{o: c.o}
	for {
		ch, err := c.channel()
		if err == nil {
			if err = ch.PublishWithContext(ctx, c.o.Exchange, topic, false, false, p); err == nil {
				return nil
			}
			c.drop(ch)
		}
		c.log.WarnContext(ctx, "cannot publish RPC message, retrying", "topic", topic, "error", err)
		if !b.wait(ctx) {
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		}
	}
}

// channel returns the publishing channel, connecting first when there is
// none: the reply queue is declared and consumed before anything is sent,
// so that no reply can arrive before its consumer.
func (c *Client) channel() (*amqp.Channel, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pub != nil && !c.pub.IsClosed() {
		return c.pub, nil
	}
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn, c.pub = nil, nil
	}
	conn, err := c.d.dial()
	if err != nil {
		return nil, err
	}
	fail := func(what string, err error) (*amqp.Channel, error) {
		_ = conn.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	sub, err := conn.Channel()
	if err != nil {
		return fail("open channel", err)
	}
	// The reply queue, as upstream's declare_direct_consumer: on the
	// default exchange, neither durable nor auto-deleted, expiring
	// unused after rabbit_transient_queues_ttl.
	if _, err := sub.QueueDeclare(c.replyQ, false, false, false, false, c.o.queueArgs(true)); err != nil {
		return fail("declare reply queue "+c.replyQ, err)
	}
	deliveries, err := sub.Consume(c.replyQ, "", true, false, false, false, nil)
	if err != nil {
		return fail("consume reply queue "+c.replyQ, err)
	}
	go c.readReplies(deliveries)
	pub, err := conn.Channel()
	if err != nil {
		return fail("open channel", err)
	}
	if err := pub.ExchangeDeclare(c.o.Exchange, amqp.ExchangeTopic, c.o.durable(), c.o.AutoDelete, false, false, nil); err != nil {
		return fail("declare exchange "+c.o.Exchange, err)
	}
	c.conn, c.pub = conn, pub
	return pub, nil
}

// drop forgets ch's connection after a failed publish.
func (c *Client) drop(ch *amqp.Channel) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pub == ch {
		_ = c.conn.Close()
		c.conn, c.pub = nil, nil
	}
}

func (c *Client) listen(id string) *waiter {
	w := &waiter{done: make(chan reply, 1)}
	c.wmu.Lock()
	c.waiters[id] = w
	c.wmu.Unlock()
	return w
}

func (c *Client) unlisten(id string) {
	c.wmu.Lock()
	delete(c.waiters, id)
	c.wmu.Unlock()
}

// readReplies hands each reply to the call waiting for it, until the
// connection ends; replies nobody waits for (their call timed out) are
// dropped, as upstream.
func (c *Client) readReplies(deliveries <-chan amqp.Delivery) {
	for d := range deliveries {
		msg, err := unseal(d.Body)
		if err != nil {
			c.log.Warn("dropping malformed RPC reply", "error", err)
			continue
		}
		var r struct {
			MsgID   string          `json:"_msg_id"`
			Result  json.RawMessage `json:"result"`
			Failure *string         `json:"failure"`
			Ending  bool            `json:"ending"`
		}
		raw, _ := json.Marshal(msg)
		if err := json.Unmarshal(raw, &r); err != nil {
			c.log.Warn("dropping malformed RPC reply", "error", err)
			continue
		}
		c.wmu.Lock()
		w := c.waiters[r.MsgID]
		c.wmu.Unlock()
		if w == nil {
			c.log.Debug("dropping RPC reply nobody waits for", "msg_id", r.MsgID)
			continue
		}
		switch {
		case r.Failure != nil:
			w.answer(reply{err: decodeFailure(*r.Failure)})
		case !r.Ending:
			w.partial = r.Result
		default:
			result := r.Result
			if isNull(result) {
				result = w.partial
			}
			w.answer(reply{result: result})
		}
	}
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }
