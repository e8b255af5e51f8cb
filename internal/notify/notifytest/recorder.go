// Package notifytest holds a notification driver for tests that keeps
// every message it is given.
package notifytest

import (
	"context"
	"sync"

	"github.com/openkeel/ironic/internal/notify"
)

// Recorder is a notify.Driver that records the messages sent to it.
type Recorder struct {
	mu   sync.Mutex
	msgs []*notify.Message
}

var _ notify.Driver = (*Recorder)(nil)

// Send records m.
func (r *Recorder) Send(_ context.Context, _ notify.Level, m *notify.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
}

// Close does nothing.
func (r *Recorder) Close() {}

// Messages returns the messages recorded so far, in order.
func (r *Recorder) Messages() []*notify.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*notify.Message(nil), r.msgs...)
}

// Take returns the messages recorded so far and forgets them.
func (r *Recorder) Take() []*notify.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.msgs
	r.msgs = nil
	return out
}

// Events returns the event types recorded so far, in order.
func (r *Recorder) Events() []string {
	var out []string
	for _, m := range r.Messages() {
		out = append(out, m.EventType)
	}
	return out
}

// Find returns the first message of event, nil when there is none.
func (r *Recorder) Find(event string) *notify.Message {
	for _, m := range r.Messages() {
		if m.EventType == event {
			return m
		}
	}
	return nil
}
