// Package changes serves the change stream (docs/changes.md):
// GET /openkeel/v1/changes, Server-Sent Events of the node, port,
// portgroup, allocation and conductor changes the store records in
// openkeel_changes, in the transaction of each change.
//
// One Hub per API process tails the table while somebody listens: woken
// at once by a commit of this process's store, and polling every
// [openkeel_changes]/poll_interval for the commits of other processes
// (conductors, other API replicas). The table's seq is commit order
// without holes (see store.ChangeLog), so a reader that has seen seq n
// has seen every change up to n: a subscriber's position is one number,
// which it gets back as Last-Event-ID when it reconnects.
package changes

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/store"
)

// Settings are the stream's options.
type Settings struct {
	// Retention is [openkeel_changes]/retention: how long changes are
	// kept for resumption.
	Retention time.Duration
	// PollInterval is [openkeel_changes]/poll_interval: how often the
	// table is read for other processes' changes.
	PollInterval time.Duration
	// Heartbeat is [openkeel_changes]/heartbeat_interval: the longest a
	// stream stays silent (an SSE comment is sent then), so that proxies
	// and clients see a live connection.
	Heartbeat time.Duration
}

// SettingsFromConfig reads the options.
func SettingsFromConfig(c *config.Config) Settings {
	return Settings{
		Retention:    c.DurationOf(config.OpenkeelChangesRetention),
		PollInterval: time.Duration(c.FloatOf(config.OpenkeelChangesPollInterval) * float64(time.Second)),
		Heartbeat:    c.DurationOf(config.OpenkeelChangesHeartbeatInterval),
	}
}

// recentSize is how many changes the hub keeps in memory: subscribers
// within that distance of the newest change read them from memory, the
// others (a resumption from long ago, a slow client) from the table.
const recentSize = 4096

// batchSize bounds one read of the table.
const batchSize = 512

// Hub tails the change table for the subscribers of one process.
type Hub struct {
	log      store.ChangeLog
	settings Settings
	logger   *slog.Logger

	mu sync.Mutex
	// subscribers counts the streams open; the tail runs while there are.
	subscribers int
	stopTail    context.CancelFunc
	tailDone    chan struct{}
	// recent are the newest changes read, in seq order; latest is the
	// seq up to which the table has been read.
	recent []store.Change
	latest int64
	// arrived is closed when changes are added to recent.
	arrived chan struct{}
	// tailErr is the tail's last read error, nil once a read succeeds.
	tailErr error
}

// NewHub returns a hub reading log.
func NewHub(log store.ChangeLog, s Settings, logger *slog.Logger) *Hub {
	if logger == nil {
		logger = slog.Default()
	}
	if s.PollInterval <= 0 {
		s.PollInterval = time.Second
	}
	return &Hub{log: log, settings: s, logger: logger, arrived: make(chan struct{})}
}

// subscribe registers a stream, starting the tail for the first one from
// the table's newest change.
func (h *Hub) subscribe(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subscribers++
	if h.subscribers > 1 {
		return nil
	}
	if h.tailDone != nil {
		// A previous tail is still ending: wait for it outside the lock.
		done := h.tailDone
		h.mu.Unlock()
		<-done
		h.mu.Lock()
	}
	_, latest, err := h.log.ChangeBounds(ctx)
	if err != nil {
		h.subscribers--
		return err
	}
	h.latest, h.recent = latest, nil
	tctx, cancel := context.WithCancel(context.Background())
	h.stopTail, h.tailDone = cancel, make(chan struct{})
	go h.tail(tctx, h.tailDone)
	return nil
}

// unsubscribe ends a stream; the last one stops the tail.
func (h *Hub) unsubscribe() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subscribers--
	if h.subscribers == 0 && h.stopTail != nil {
		h.stopTail()
		h.stopTail = nil
	}
}

// tail reads new changes as they commit until ctx ends.
func (h *Hub) tail(ctx context.Context, done chan struct{}) {
	defer func() {
		h.mu.Lock()
		if h.tailDone == done {
			h.tailDone = nil
		}
		h.mu.Unlock()
		close(done)
	}()
	timer := time.NewTimer(h.settings.PollInterval)
	defer timer.Stop()
	for {
		// Taken before the read, so that a commit during it is not missed.
		committed := h.log.ChangeSignal()
		full, err := h.readOnce(ctx)
		if err != nil && ctx.Err() == nil {
			h.logger.Warn("change stream: reading the change table failed; retrying", "error", err)
		}
		if full {
			continue
		}
		timer.Reset(h.settings.PollInterval)
		select {
		case <-ctx.Done():
			return
		case <-committed:
		case <-timer.C:
		}
	}
}

// readOnce appends the changes committed since the last read; full says
// a whole batch came, so more may be waiting.
func (h *Hub) readOnce(ctx context.Context) (bool, error) {
	h.mu.Lock()
	after := h.latest
	h.mu.Unlock()
	cs, err := h.log.ChangesAfter(ctx, after, batchSize)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tailErr = err
	if err != nil || len(cs) == 0 {
		return false, err
	}
	h.recent = append(h.recent, cs...)
	if over := len(h.recent) - recentSize; over > 0 {
		h.recent = append([]store.Change(nil), h.recent[over:]...)
	}
	h.latest = cs[len(cs)-1].Seq
	close(h.arrived)
	h.arrived = make(chan struct{})
	return len(cs) == batchSize, nil
}

// next returns the changes after seq after, waiting until there are some
// or ctx ends or wake closes (then with none).
func (h *Hub) next(ctx context.Context, after int64, wake <-chan time.Time) ([]store.Change, error) {
	for {
		h.mu.Lock()
		arrived := h.arrived
		latest := h.latest
		var cs []store.Change
		fromMemory := len(h.recent) > 0 && h.recent[0].Seq <= after+1
		if fromMemory && after < latest {
			i := int(after + 1 - h.recent[0].Seq)
			cs = append(cs, h.recent[i:min(len(h.recent), i+batchSize)]...)
		}
		h.mu.Unlock()
		if len(cs) > 0 {
			return cs, nil
		}
		if !fromMemory && after < latest {
			// Behind what memory holds: read the table itself.
			return h.log.ChangesAfter(ctx, after, batchSize)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wake:
			return nil, nil
		case <-arrived:
		}
	}
}
