package rpc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc/ringmgr"
)

// ManagerTopic is upstream's conductor topic (rpc.MANAGER_TOPIC), the
// prefix of per-conductor topics on the oslo.messaging and local
// transports. Under JSON-RPC upstream uses an empty prefix, so topics
// read ".<host>" there.
const ManagerTopic = "ironic.conductor_manager"

// OnlineConductors lists the hostnames of live conductors
// (store.Store's GetOnlineConductors).
type OnlineConductors interface {
	GetOnlineConductors(ctx context.Context, heartbeatTimeout time.Duration) ([]string, error)
}

// RouterOptions configure a Router.
type RouterOptions struct {
	// Rings place nodes on conductors.
	Rings *ringmgr.Manager
	// Conductors lists live conductors for calls not tied to a node.
	Conductors OnlineConductors
	// HeartbeatTimeout is [conductor]heartbeat_timeout.
	HeartbeatTimeout time.Duration
	// TopicPrefix starts every topic: "" under JSON-RPC, ManagerTopic
	// otherwise, as upstream.
	TopicPrefix string
	// Host is [DEFAULT]host of this process (GetCurrentTopic).
	Host string
	// IntN picks a random index below n; nil is math/rand/v2's IntN.
	IntN func(n int) int
}

// Router picks the conductor a call goes to, as upstream's get_topic_for*
// helpers of ConductorAPI.
type Router struct {
	opts RouterOptions
}

// NewRouter returns a Router.
func NewRouter(opts RouterOptions) *Router {
	if opts.IntN == nil {
		opts.IntN = rand.IntN
	}
	return &Router{opts: opts}
}

// Topic returns the topic addressing host.
func (r *Router) Topic(host string) string { return r.opts.TopicPrefix + "." + host }

// GetConductorFor returns the hostname of the conductor owning node: the
// primary of the node's UUID on the ring of its driver and conductor
// group. No conductor for that pair is NoValidHost (404); no conductor at
// all is TemporaryFailure (503).
func (r *Router) GetConductorFor(ctx context.Context, node *model.Node) (string, error) {
	ring, err := r.opts.Rings.GetRing(ctx, node.Driver, node.ConductorGroup)
	if errs.Is(err, errs.ClassDriverNotFound) {
		return "", errs.New(errs.ClassNoValidHost, map[string]any{"reason": fmt.Sprintf(
			"No conductor service registered which supports driver %s for conductor group \"%s\". Ensure the driver is valid and enabled.",
			node.Driver, node.ConductorGroup)})
	}
	if err != nil {
		return "", err
	}
	host, ok := ring.Primary(node.UUID)
	if !ok {
		return "", errs.TemporaryFailure()
	}
	return host, nil
}

// GetTopicFor returns the topic of the conductor owning node.
func (r *Router) GetTopicFor(ctx context.Context, node *model.Node) (string, error) {
	host, err := r.GetConductorFor(ctx, node)
	if err != nil {
		return "", err
	}
	return r.Topic(host), nil
}

// GetRandomTopic returns the topic of a random live conductor, for calls
// not tied to a node. No live conductor is TemporaryFailure (503).
func (r *Router) GetRandomTopic(ctx context.Context) (string, error) {
	hosts, err := r.opts.Conductors.GetOnlineConductors(ctx, r.opts.HeartbeatTimeout)
	if err != nil {
		return "", fmt.Errorf("list online conductors: %w", err)
	}
	if len(hosts) == 0 {
		return "", errs.TemporaryFailure()
	}
	return r.Topic(hosts[r.opts.IntN(len(hosts))]), nil
}

// GetTopicForDriver returns the topic of a random live conductor, in any
// group, that enabled hardware type driverName. None is DriverNotFound
// (404), even when no conductor runs at all.
func (r *Router) GetTopicForDriver(ctx context.Context, driverName string) (string, error) {
	ring, err := r.opts.Rings.GetDriverRing(ctx, driverName)
	if err != nil {
		return "", err
	}
	hosts := ring.Hosts()
	if len(hosts) == 0 {
		return "", errs.NewMessage(errs.ClassDriverNotFound, "No conductors registered.")
	}
	return r.Topic(hosts[r.opts.IntN(len(hosts))]), nil
}

// GetCurrentTopic returns the topic of this process's own conductor.
func (r *Router) GetCurrentTopic() string { return r.Topic(r.opts.Host) }

// HostFromTopic returns the conductor host a topic addresses: what follows
// ManagerTopic and a dot, or else what follows the first dot (upstream's
// JSON-RPC client reads ".<host>" that way), or the topic itself when it
// has no dot.
func HostFromTopic(topic string) string {
	if h, ok := strings.CutPrefix(topic, ManagerTopic+"."); ok {
		return h
	}
	if _, h, ok := strings.Cut(topic, "."); ok {
		return h
	}
	return topic
}
