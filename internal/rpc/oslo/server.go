package oslo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/openkeel/ironic/internal/rpc"
)

// Dispatcher runs one call whose params are a JSON-RPC frame's (the
// kwargs and "context"): jsonrpc.Server's Dispatch, so that both
// transports serve the one generated method table.
type Dispatcher interface {
	Dispatch(ctx context.Context, method string, params map[string]json.RawMessage) (any, error)
}

// Server is a conductor's side, as upstream's RPC server on
// Target(topic, server=host): it consumes the shared topic queue, its own
// "<topic>.<host>" queue and a fanout queue of its own, runs each call
// and answers it on the caller's reply queue.
type Server struct {
	o     Options
	d     *dialer
	log   *slog.Logger
	topic string
	host  string
	h     Dispatcher
	sem   chan struct{}
	wg    sync.WaitGroup

	ready     chan struct{}
	readyOnce sync.Once

	mu  sync.Mutex
	pub *amqp.Channel
}

// NewServer returns a Server for topic (rpc.ManagerTopic) and host
// ([DEFAULT]/host) dispatching to h.
func NewServer(o Options, topic, host string, h Dispatcher) (*Server, error) {
	o = o.withDefaults()
	if o.Quorum && o.HAQueues {
		return nil, errors.New("[oslo_messaging_rabbit]: rabbit_quorum_queue and rabbit_ha_queues are both set; queues are quorum or mirrored, not both")
	}
	d, err := newDialer(o)
	if err != nil {
		return nil, err
	}
	return &Server{o: o, d: d, log: o.Logger, topic: topic, host: host, h: h,
		sem: make(chan struct{}, o.Workers), ready: make(chan struct{})}, nil
}

// Ready is closed once the server consumes its queues for the first time.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Serve consumes until ctx ends, reconnecting with backoff whenever the
// broker connection is lost (to the next host of the transport URL). At
// the end it stops consuming and waits for the calls it runs, so that
// they can still answer.
func (s *Server) Serve(ctx context.Context) error {
	b := backoff{o: s.o}
	for {
		started := time.Now()
		err := s.session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(started) > s.o.IntervalMax {
			b.reset()
		}
		s.log.Warn("RPC server lost its broker connection, reconnecting", "topic", s.topic, "host", s.host, "error", err)
		if !b.wait(ctx) {
			return nil
		}
	}
}

// session runs one broker connection until it is lost or ctx ends.
func (s *Server) session(ctx context.Context) error {
	conn, err := s.d.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open channel: %w", err)
	}
	if s.o.Prefetch > 0 {
		if err := ch.Qos(s.o.Prefetch, 0, false); err != nil {
			return fmt.Errorf("set prefetch count: %w", err)
		}
	}
	queues, err := s.declare(ch)
	if err != nil {
		return err
	}
	pub, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open channel: %w", err)
	}
	if s.o.DirectMandatory {
		returns := pub.NotifyReturn(make(chan amqp.Return, 16))
		go func() {
			for r := range returns {
				s.log.Warn("RPC reply returned: its caller's reply queue is gone", "reply_q", r.RoutingKey)
			}
		}()
	}
	s.mu.Lock()
	s.pub = pub
	s.mu.Unlock()
	var consumers sync.WaitGroup
	// A consumer the broker cancels (its queue deleted, a failover of
	// its node) ends the session: the next one declares the queues
	// again, as upstream's consumers do on a cancel notification.
	cancelled := make(chan string, len(queues))
	for i, q := range queues {
		deliveries, err := ch.Consume(q, fmt.Sprintf("%s-%d", s.host, i), false, false, false, false, nil)
		if err != nil {
			return fmt.Errorf("consume %s: %w", q, err)
		}
		consumers.Go(func() {
			for d := range deliveries {
				s.handle(ctx, d)
			}
			cancelled <- q
		})
	}
	s.readyOnce.Do(func() { close(s.ready) })
	s.log.Info("RPC server consuming", "exchange", s.o.Exchange, "queues", queues)
	select {
	case e := <-closed:
		consumers.Wait()
		if e == nil {
			return errors.New("connection closed")
		}
		return e
	case q := <-cancelled:
		for i := range queues {
			_ = ch.Cancel(fmt.Sprintf("%s-%d", s.host, i), false)
		}
		consumers.Wait()
		return fmt.Errorf("broker cancelled the consumer of %s", q)
	case <-ctx.Done():
		for i := range queues {
			_ = ch.Cancel(fmt.Sprintf("%s-%d", s.host, i), false)
		}
		consumers.Wait()
		// The running calls answer on this connection.
		s.wg.Wait()
		return nil
	}
}

// declare declares what upstream's RPC server declares and returns the
// queues to consume: the topic exchange with the shared topic queue and
// this host's queue, and the topic's fanout exchange with a queue of this
// process's own.
func (s *Server) declare(ch *amqp.Channel) ([]string, error) {
	if err := ch.ExchangeDeclare(s.o.Exchange, amqp.ExchangeTopic, s.o.durable(), s.o.AutoDelete, false, false, nil); err != nil {
		return nil, fmt.Errorf("declare exchange %s: %w", s.o.Exchange, err)
	}
	queues := []string{s.topic, s.topic + "." + s.host}
	for _, q := range queues {
		if _, err := ch.QueueDeclare(q, s.o.durable(), s.o.AutoDelete, false, false, s.o.queueArgs(false)); err != nil {
			return nil, fmt.Errorf("declare queue %s: %w", q, err)
		}
		if err := ch.QueueBind(q, q, s.o.Exchange, false, nil); err != nil {
			return nil, fmt.Errorf("bind queue %s: %w", q, err)
		}
	}
	fanout := s.topic + "_fanout"
	if err := ch.ExchangeDeclare(fanout, amqp.ExchangeFanout, false, true, false, false, nil); err != nil {
		return nil, fmt.Errorf("declare exchange %s: %w", fanout, err)
	}
	fq := fmt.Sprintf("%s_fanout_%s", s.topic, uniqueID())
	if _, err := ch.QueueDeclare(fq, false, false, false, false, s.o.queueArgs(true)); err != nil {
		return nil, fmt.Errorf("declare queue %s: %w", fq, err)
	}
	if err := ch.QueueBind(fq, s.topic, fanout, false, nil); err != nil {
		return nil, fmt.Errorf("bind queue %s: %w", fq, err)
	}
	return append(queues, fq), nil
}

// handle runs one message. As upstream's RPC server, it acknowledges the
// message before running it: a conductor that dies mid-call does not run
// it twice. At most Workers calls run at once; the consumer waits for a
// free one, leaving the rest with the broker.
func (s *Server) handle(ctx context.Context, d amqp.Delivery) {
	_ = d.Ack(false)
	msg, err := unseal(d.Body)
	var in *incoming
	if err == nil {
		in, err = parseIncoming(msg)
	}
	if err != nil {
		s.log.Warn("dropping malformed RPC message", "error", err)
		return
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	s.wg.Go(func() {
		defer func() { <-s.sem }()
		// As upstream, a call runs to its end even when the server
		// stops; the conductor decides what is cancellable.
		result, failure := s.run(context.WithoutCancel(ctx), in)
		if in.MsgID == "" {
			return
		}
		s.reply(in, result, failure)
	})
}

// run dispatches one call and returns its result or its failure text.
func (s *Server) run(ctx context.Context, in *incoming) (any, *string) {
	version := in.Version
	if version == "" {
		version = "1.0"
	}
	if in.Namespace != "" || !compatible(rpc.APIVersion, version) {
		f := unsupportedVersion(version, in.Method)
		return nil, &f
	}
	result, err := s.h.Dispatch(ctx, in.Method, in.Params)
	if err != nil {
		if in.MsgID == "" {
			s.log.DebugContext(ctx, "RPC cast failed", "method", in.Method, "error", err)
		}
		f := encodeFailure(in.Method, err)
		return nil, &f
	}
	return result, nil
}

// reply answers a call on its caller's reply queue through the default
// exchange, as upstream's direct_send.
func (s *Server) reply(in *incoming, result any, failure *string) {
	body, err := seal(map[string]any{"result": result, "failure": failure, "ending": true,
		"_msg_id": in.MsgID, "_unique_id": uniqueID()})
	if err != nil {
		f := encodeFailure(in.Method, fmt.Errorf("encode result of %s: %w", in.Method, err))
		body, _ = seal(map[string]any{"result": nil, "failure": f, "ending": true, "_msg_id": in.MsgID, "_unique_id": uniqueID()})
	}
	s.mu.Lock()
	pub := s.pub
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = pub.PublishWithContext(ctx, "", in.ReplyQ, s.o.DirectMandatory, false, amqp.Publishing{
		ContentType: contentType, ContentEncoding: contentEncoding, Body: body, DeliveryMode: amqp.Transient})
	if err != nil {
		s.log.Warn("cannot send RPC reply", "method", in.Method, "reply_q", in.ReplyQ, "error", err)
	}
}
