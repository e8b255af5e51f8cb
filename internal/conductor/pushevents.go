package conductor

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/httpserver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// BMC push events ([openkeel_events], ours: upstream only polls). The
// conductor subscribes to each Redfish node's EventService through the
// node's vendor interface (upstream's create_subscription passthru), with
// a Destination on its own listener naming the node and a Context that is
// a random secret of the node's. An event whose Context matches is
// answered by the power sync of that one node, at once: the state saved,
// power_state_corrected sent and the history written exactly as the
// periodic sync would, which stays the fallback for events lost on the
// way and re-creates subscriptions the BMC lost.

// pushEventsPath is the listener's path prefix; the node's UUID follows.
const pushEventsPath = "/openkeel/events/"

// maxPushEventBody bounds what a BMC may post: a Redfish Event with a
// few records is a few KiB.
const maxPushEventBody = 64 << 10

// pushEventTypes are the EventTypes asked for when the BMC offers them;
// a BMC that refuses some is asked for Alert alone, as upstream's
// passthru does by default.
var pushEventTypes = []any{"Alert", "ResourceUpdated", "StatusChange"}

// pushEvents is the listener's state.
type pushEvents struct {
	ctx  context.Context
	base string // the Destination's root, without the path
	// accepted and rejected count events authenticated and dropped.
	accepted, rejected atomic.Int64
	mu                 sync.Mutex
	// pending holds the nodes whose sync is running; again those that
	// had another event meanwhile, so that the sync runs once more.
	pending, again map[string]bool
}

// PushEventsURL is the root the BMCs post events to, "" when push events
// are disabled or the conductor is not started.
func (c *Conductor) PushEventsURL() string {
	if p := c.pushEvents(); p != nil {
		return p.base
	}
	return ""
}

// PushEventCounts tells how many events were authenticated and how many
// were dropped (unknown node, wrong Context, bad body).
func (c *Conductor) PushEventCounts() (accepted, rejected int64) {
	if p := c.pushEvents(); p != nil {
		return p.accepted.Load(), p.rejected.Load()
	}
	return 0, 0
}

func (c *Conductor) pushEvents() *pushEvents {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.push
}

// listenPushEvents opens the event listener when
// [openkeel_events]/enabled; serve answers events until its ctx ends (at
// once, closing the listener, when ctx has ended already). Disabled,
// serve returns at once.
func (c *Conductor) listenPushEvents() (serve func(ctx context.Context), err error) {
	if !c.cfg.BoolOf(config.OpenkeelEventsEnabled) {
		return func(context.Context) {}, nil
	}
	cert, key := c.cfg.StringOf(config.OpenkeelEventsCertFile), c.cfg.StringOf(config.OpenkeelEventsKeyFile)
	p := &pushEvents{pending: map[string]bool{}, again: map[string]bool{}}
	srv, err := httpserver.Listen(httpserver.Options{
		HostIP: c.cfg.StringOf(config.OpenkeelEventsHostIP), Port: c.cfg.IntOf(config.OpenkeelEventsPort),
		EnableSSL: cert != "", CertFile: cert, KeyFile: key,
		ShutdownTimeout: 5 * time.Second, Limits: httpserver.LimitsFromConfig(c.cfg), Logger: c.log,
	}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { c.servePushEvent(p, w, r) }))
	if err != nil {
		return nil, fmt.Errorf("push events listener: %w", err)
	}
	p.base = strings.TrimSuffix(c.cfg.StringOf(config.OpenkeelEventsExternalURL), "/")
	if p.base == "" {
		scheme := "http"
		if cert != "" {
			scheme = "https"
		}
		p.base = scheme + "://" + srv.Addr().String()
		if tcp, ok := srv.Addr().(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
			p.base = scheme + "://" + net.JoinHostPort(c.host, strconv.Itoa(tcp.Port))
		}
	}
	c.mu.Lock()
	c.push = p
	c.mu.Unlock()
	return func(ctx context.Context) {
		// Set before Serve starts the handlers that read it.
		p.ctx = ctx
		if ctx.Err() == nil {
			c.log.InfoContext(ctx, "push events listener started", "url", p.base)
		}
		if err := srv.Serve(ctx); err != nil {
			c.log.ErrorContext(ctx, "push events listener", "error", err)
		}
	}, nil
}

// pushEvent is the part of a Redfish Event the conductor reads.
type pushEvent struct {
	Context string
	Events  []struct {
		EventType         string
		MessageID         string `json:"MessageId"`
		OriginOfCondition struct {
			ID string `json:"@odata.id"`
		}
	}
}

// relevant reports whether an event may tell of a power or health
// change: the types subscribed to, or a message of the Resource Event
// registry for a BMC that sends the generic type "Event".
func (e *pushEvent) relevant() bool {
	for _, ev := range e.Events {
		switch ev.EventType {
		case "Alert", "ResourceUpdated", "StatusChange":
			return true
		}
		if strings.Contains(ev.MessageID, "ResourceChanged") || strings.Contains(ev.MessageID, "Power") {
			return true
		}
	}
	return false
}

// servePushEvent authenticates an event (the node's secret as Context,
// compared in constant time) and starts the node's sync. Whatever is
// refused gets the same 401, so that a caller learns nothing of which
// nodes exist.
func (c *Conductor) servePushEvent(p *pushEvents, w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	reject := func(reason string) {
		p.rejected.Add(1)
		// The Context is the secret: never logged.
		c.log.WarnContext(r.Context(), "push event dropped", "reason", reason, "remote", r.RemoteAddr)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}
	uuid, ok := strings.CutPrefix(r.URL.Path, pushEventsPath)
	if !ok || uuid == "" || strings.Contains(uuid, "/") {
		reject("unknown path")
		return
	}
	var ev pushEvent
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxPushEventBody)).Decode(&ev); err != nil {
		reject("body is not a Redfish event")
		return
	}
	n, err := c.store.GetNodeByUUID(r.Context(), uuid)
	if err != nil {
		reject("unknown node")
		return
	}
	secret := n.InternalInfo().String(model.DIIOpenkeelEventSecret)
	if secret == "" || subtle.ConstantTimeCompare([]byte(secret), []byte(ev.Context)) != 1 {
		reject("context does not match the node's")
		return
	}
	p.accepted.Add(1)
	w.WriteHeader(http.StatusNoContent)
	if ev.relevant() {
		c.pushSync(p, n.UUID)
	}
}

// pushSync runs the power sync of one node in the background; events
// arriving while it runs make it run once more rather than pile up.
func (c *Conductor) pushSync(p *pushEvents, uuid string) {
	p.mu.Lock()
	if p.pending[uuid] {
		p.again[uuid] = true
		p.mu.Unlock()
		return
	}
	p.pending[uuid] = true
	p.mu.Unlock()
	c.loops.Add(1)
	go func() {
		defer c.loops.Done()
		for {
			c.syncPowerStateNode(p.ctx, uuid, nil)
			p.mu.Lock()
			if !p.again[uuid] || p.ctx.Err() != nil {
				delete(p.pending, uuid)
				delete(p.again, uuid)
				p.mu.Unlock()
				return
			}
			delete(p.again, uuid)
			p.mu.Unlock()
		}
	}()
}

// pushEventPeriodics is the subscription pass, when push events are on.
func (c *Conductor) pushEventPeriodics() []periodic {
	if !c.cfg.BoolOf(config.OpenkeelEventsEnabled) {
		return nil
	}
	return []periodic{{"openkeel_event_subscriptions", c.cfg.DurationOf(config.OpenkeelEventsSubscriptionCheckInterval), c.EnsureEventSubscriptions}}
}

// EnsureEventSubscriptions makes sure every node mapped here whose vendor
// interface has upstream's subscription methods holds a subscription on
// its BMC: one never made, or one the BMC no longer lists (a BMC reset
// forgets them), is created, with a new secret.
func (c *Conductor) EnsureEventSubscriptions(ctx context.Context) {
	p := c.pushEvents()
	if p == nil {
		return
	}
	c.nodePeriodic(ctx, "push event subscription", store.NodeFilter{Maintenance: boolPtr(false)}, nil, 0, true,
		func(ctx context.Context, t *task.Task) (bool, error) {
			return true, c.ensureEventSubscription(ctx, p, t)
		})
}

func (c *Conductor) ensureEventSubscription(ctx context.Context, p *pushEvents, t *task.Task) error {
	routes := vendorRoutes(t.Driver.Vendor)
	create, ok := routes["create_subscription"]
	if !ok {
		return nil
	}
	dest := p.base + pushEventsPath + t.Node.UUID
	ii := t.Node.InternalInfo()
	id := ii.String(model.DIIOpenkeelEventSubscription)
	if id != "" && ii.String(model.DIIOpenkeelEventDestination) != dest {
		// Subscribed by another conductor (the node was taken over) or
		// to an older external_url: replace it with one to this listener.
		if err := t.UpgradeLock(ctx, task.UpgradeOptions{}); err != nil {
			return err
		}
		if del, ok := routes["delete_subscription"]; ok {
			if _, err := del.Func(ctx, t.DriverTask(), http.MethodDelete, map[string]any{"id": id}); err != nil {
				t.Log().WarnContext(ctx, "event subscription of another destination left on the BMC", "subscription", id, "error", err)
			}
		}
		id = ""
	}
	if id != "" {
		list, ok := routes["get_all_subscriptions"]
		if !ok {
			return nil
		}
		doc, err := list.Func(ctx, t.DriverTask(), http.MethodGet, map[string]any{})
		if err != nil {
			// An unreachable BMC keeps its subscription as far as we
			// know; the next pass looks again.
			return fmt.Errorf("list event subscriptions: %w", err)
		}
		if listsSubscription(doc, id) {
			return nil
		}
		t.Log().WarnContext(ctx, "the BMC lost the node's event subscription, creating it again", "subscription", id)
	}
	if err := t.UpgradeLock(ctx, task.UpgradeOptions{}); err != nil {
		return err
	}
	// The lock's read of the node is the one to change.
	ii = t.Node.InternalInfo()
	secret, err := newEventSecret()
	if err != nil {
		return err
	}
	args := map[string]any{"Destination": dest, "Context": secret,
		"Protocol": "Redfish", "EventTypes": pushEventTypes}
	dt := t.DriverTask()
	if err := t.Driver.Vendor.Validate(ctx, dt, "create_subscription", args); errs.Is(err, errs.ClassInvalidParameterValue) {
		args["EventTypes"] = []any{"Alert"}
	} else if err != nil {
		return fmt.Errorf("create event subscription: %w", err)
	}
	out, err := create.Func(ctx, dt, http.MethodPost, args)
	if err != nil {
		return fmt.Errorf("create event subscription: %w", err)
	}
	doc, _ := out.(map[string]any)
	id, _ = doc["Id"].(string)
	if id == "" {
		return errors.New("create event subscription: the BMC's answer has no Id")
	}
	ii.Set(model.DIIOpenkeelEventSubscription, id)
	ii.Set(model.DIIOpenkeelEventSecret, secret)
	ii.Set(model.DIIOpenkeelEventDestination, dest)
	if err := t.Save(ctx); err != nil {
		return fmt.Errorf("save event subscription: %w", err)
	}
	t.Log().InfoContext(ctx, "event subscription created", "subscription", id)
	return nil
}

// dropPushSubscription deletes the node's subscription from its BMC, with
// the interfaces of the node as it is (before a driver change or its
// deletion), and forgets it. A BMC that cannot be reached keeps a
// subscription whose events are then refused for want of the secret.
func (c *Conductor) dropPushSubscription(ctx context.Context, n *model.Node, log *slog.Logger) {
	ii := n.InternalInfo()
	id := ii.String(model.DIIOpenkeelEventSubscription)
	if id == "" {
		return
	}
	ii.Delete(model.DIIOpenkeelEventSubscription, model.DIIOpenkeelEventSecret, model.DIIOpenkeelEventDestination)
	ifaces, err := c.drivers.ForNode(n)
	if err != nil {
		log.WarnContext(ctx, "event subscription left on the BMC", "subscription", id, "error", err)
		return
	}
	del, ok := vendorRoutes(ifaces.Vendor)["delete_subscription"]
	if !ok {
		return
	}
	dt := &driver.Task{Node: n, Driver: ifaces, Log: log}
	if _, err := del.Func(ctx, dt, http.MethodDelete, map[string]any{"id": id}); err != nil {
		log.WarnContext(ctx, "event subscription left on the BMC", "subscription", id, "error", err)
	}
}

// vendorRoutes are v's node passthru methods, none when v is unset.
func vendorRoutes(v driver.VendorInterface) map[string]driver.PassthruRoute {
	if v == nil {
		return nil
	}
	return v.VendorRoutes()
}

// listsSubscription reports whether a Subscriptions collection names the
// member id.
func listsSubscription(doc any, id string) bool {
	coll, _ := doc.(map[string]any)
	members, _ := coll["Members"].([]any)
	for _, m := range members {
		link, _ := m.(map[string]any)
		if ref, _ := link["@odata.id"].(string); strings.HasSuffix(strings.TrimSuffix(ref, "/"), "/"+id) {
			return true
		}
	}
	return false
}

// newEventSecret is a node's event Context: 256 random bits.
func newEventSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("event secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}
