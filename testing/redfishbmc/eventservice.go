package redfishbmc

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// A real BMC posts its events some time after the change, from a queue of
// its own, and retries a subscriber that does not answer a few times
// before it drops the event. The emulator does the same, so that a
// conductor's listener meets the delays and losses it will meet in a rack.
const (
	eventDelay        = 50 * time.Millisecond
	eventRetries      = 3
	eventRetryBackoff = 200 * time.Millisecond
	eventPostTimeout  = 2 * time.Second
)

// eventDeliveries tracks the posts in flight so that closing the BMC
// stops them.
type eventDeliveries struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// mu guards delivered and failed.
	mu        sync.Mutex
	delivered int
	failed    int
}

func (d *eventDeliveries) init() {
	d.once.Do(func() { d.ctx, d.cancel = context.WithCancel(context.Background()) })
}

// stop cancels the posts in flight and waits for them.
func (d *eventDeliveries) stop() {
	d.init()
	d.cancel()
	d.wg.Wait()
}

// EventCounts tells how many events reached a subscriber and how many
// were dropped after the retries.
func (b *BMC) EventCounts() (delivered, failed int) {
	d := &b.deliveries
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.delivered, d.failed
}

// DropSubscriptions forgets every event subscription, as a BMC reset to
// factory defaults (or a firmware update) does.
func (b *BMC) DropSubscriptions() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs = nil
}

// powerEvent queues a ResourceUpdated event about system id's power
// state for the subscribers; the caller holds b.mu.
func (b *BMC) powerEvent(id, state string) {
	b.systemEvent(id, "ResourceUpdated", "ResourceEvent.1.0.ResourceChanged",
		"The power state of the system changed to "+state+".")
}

// healthEvent queues a StatusChange event about system id's health, as
// a BMC's Resource Event registry words it; the caller holds b.mu.
func (b *BMC) healthEvent(id, health string) {
	b.systemEvent(id, "StatusChange", "ResourceEvent.1.0.ResourceStatusChanged"+health,
		"The health of the system changed to "+health+".")
}

// systemEvent queues, for every subscriber whose EventTypes take
// eventType, an event about system id; the caller holds b.mu.
func (b *BMC) systemEvent(id, eventType, messageID, message string) {
	for _, s := range b.subs {
		if len(s.EventTypes) > 0 && !slices.Contains(s.EventTypes, eventType) {
			continue
		}
		b.nextEvent++
		ev := map[string]any{
			"@odata.type": "#Event.v1_7_0.Event", "Id": fmt.Sprint(b.nextEvent), "Name": "Event Array",
			"Context": s.Context,
			"Events": []map[string]any{{
				"EventType": eventType, "EventId": fmt.Sprint(b.nextEvent),
				"EventTimestamp":    time.Now().UTC().Format(time.RFC3339),
				"MessageId":         messageID,
				"Message":           message,
				"MessageArgs":       []string{},
				"OriginOfCondition": map[string]string{"@odata.id": root + "/Systems/" + id},
			}},
		}
		body, err := json.Marshal(ev)
		if err != nil {
			b.t.Fatalf("redfishbmc: event: %v", err)
		}
		b.deliver(s.Destination, body)
	}
}

// deliver posts body to dest after eventDelay, retrying as a BMC does.
func (b *BMC) deliver(dest string, body []byte) {
	d := &b.deliveries
	d.init()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		// Subscribers' certificates are not checked, as most BMCs
		// ship with no way to give them a CA.
		cl := &http.Client{Timeout: eventPostTimeout, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // see above
		defer cl.CloseIdleConnections()
		wait := eventDelay
		for attempt := 0; attempt < eventRetries; attempt++ {
			select {
			case <-d.ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = eventRetryBackoff
			req, err := http.NewRequestWithContext(d.ctx, http.MethodPost, dest, bytes.NewReader(body))
			if err != nil {
				break
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := cl.Do(req)
			if err != nil {
				continue
			}
			_ = resp.Body.Close()
			if resp.StatusCode < 300 {
				d.mu.Lock()
				d.delivered++
				d.mu.Unlock()
				return
			}
			if resp.StatusCode < 500 {
				break // refused: retrying will not help
			}
		}
		b.t.Logf("redfishbmc: event to %s dropped", dest)
		d.mu.Lock()
		d.failed++
		d.mu.Unlock()
	}()
}
