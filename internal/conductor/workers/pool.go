// Package workers is the conductor's worker pool (upstream base_manager's
// two executors): long operations leave the RPC handler that started them
// and run here, so the RPC answers at once and the node lock moves with the
// work.
//
// The pool is split as upstream splits it: [conductor]/workers_pool_size
// workers, of which reserved_workers_pool_percentage are kept for
// user-initiated work, so that a flood of agent heartbeats or periodic work
// cannot starve API requests. Work is never queued: a full pool answers
// NoFreeConductorWorker (503) and the caller rolls the node back.
package workers

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
)

// Settings size the pool.
type Settings struct {
	// Size is [conductor]/workers_pool_size, both shares together.
	Size int
	// ReservedPercentage is [conductor]/reserved_workers_pool_percentage:
	// the share of Size only user-initiated work may use.
	ReservedPercentage int
	// MinWorkers, when positive, is the number of workers the conductor's
	// own periodic machinery needs; upstream refuses to start when the
	// normal share is not larger (sync_power_state_workers +
	// 2 × periodic_max_workers + 2).
	MinWorkers int
}

// SettingsFromConfig reads the [conductor] options that size the pool.
func SettingsFromConfig(c *config.Config) Settings {
	return Settings{
		Size:               c.IntOf(config.ConductorWorkersPoolSize),
		ReservedPercentage: c.IntOf(config.ConductorReservedWorkersPoolPercentage),
		MinWorkers: c.IntOf(config.ConductorSyncPowerStateWorkers) +
			2*c.IntOf(config.ConductorPeriodicMaxWorkers) + 2,
	}
}

// Shares splits Size as upstream does: the reserved share is rounded down,
// the normal share is the rest.
func (s Settings) Shares() (normal, reserved int) {
	reserved = s.Size * s.ReservedPercentage / 100
	return s.Size - reserved, reserved
}

// Pool runs functions in goroutines up to its two limits.
type Pool struct {
	normalMax, reservedMax int
	log                    *slog.Logger

	mu       sync.Mutex
	normal   int
	reserved int
	closed   bool
	spawned  uint64
	rejected uint64
	wg       sync.WaitGroup
	idle     chan struct{} // closed when closed and nothing runs
}

// Option configures New.
type Option func(*Pool)

// WithLogger sets the logger (slog.Default otherwise).
func WithLogger(l *slog.Logger) Option { return func(p *Pool) { p.log = l } }

// New returns a pool sized by s. It fails with IncorrectConfiguration, as
// upstream's start-up does, when the normal share cannot hold MinWorkers.
func New(s Settings, opts ...Option) (*Pool, error) {
	if s.Size < 1 {
		return nil, errs.New(errs.ClassIncorrectConfiguration, map[string]any{"error": fmt.Sprintf("workers_pool_size must be positive, got %d", s.Size)})
	}
	if s.ReservedPercentage < 0 || s.ReservedPercentage > 100 {
		return nil, errs.New(errs.ClassIncorrectConfiguration, map[string]any{"error": fmt.Sprintf("reserved_workers_pool_percentage must be within 0..100, got %d", s.ReservedPercentage)})
	}
	normal, reserved := s.Shares()
	if s.MinWorkers > 0 && s.MinWorkers >= normal {
		return nil, errs.New(errs.ClassIncorrectConfiguration, map[string]any{"error": fmt.Sprintf(
			"The number of calculated minimum workers %d exceeds the resulting maximum worker count %d.", s.MinWorkers, normal)})
	}
	p := &Pool{normalMax: normal, reservedMax: reserved, log: slog.Default(), idle: make(chan struct{})}
	for _, o := range opts {
		o(p)
	}
	p.log.Info("starting workers pool", "normal", normal, "reserved", reserved)
	return p, nil
}

// Spawn runs fn in a new goroutine and returns once it is accepted. Work
// goes to the normal share first; when that is full and allowReserved is
// true (user-initiated work) it may take a reserved worker. Heartbeats and
// periodic work pass false. A full pool, or one that is shutting down,
// answers NoFreeConductorWorker.
//
// fn gets ctx without its cancellation: the request that spawned the work
// ends long before the work does, and the work must still run to its end
// (and release its node lock); only the values, such as the request id,
// are kept.
func (p *Pool) Spawn(ctx context.Context, fn func(context.Context), allowReserved bool) error {
	p.mu.Lock()
	useReserved := false
	switch {
	case p.closed:
		p.rejected++
		p.mu.Unlock()
		return errs.NoFreeConductorWorker()
	case p.normal < p.normalMax:
		p.normal++
	case allowReserved && p.reserved < p.reservedMax:
		p.reserved++
		useReserved = true
	default:
		p.rejected++
		p.mu.Unlock()
		return errs.NoFreeConductorWorker()
	}
	p.spawned++
	p.wg.Add(1)
	p.mu.Unlock()
	if useReserved {
		p.log.Debug("normal workers pool is full, using the reserved pool")
	}
	wctx := context.WithoutCancel(ctx)
	go func() {
		defer p.done(useReserved)
		fn(wctx)
	}()
	return nil
}

func (p *Pool) done(reserved bool) {
	p.mu.Lock()
	if reserved {
		p.reserved--
	} else {
		p.normal--
	}
	p.mu.Unlock()
	p.wg.Done()
}

// Wait stops accepting work and waits until every running function has
// returned, or until ctx ends (the graceful shutdown timeout), in which case
// it reports how many were still running.
func (p *Pool) Wait(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		go func() {
			p.wg.Wait()
			close(p.idle)
		}()
	}
	p.mu.Unlock()
	select {
	case <-p.idle:
		return nil
	case <-ctx.Done():
		st := p.Stats()
		return fmt.Errorf("wait for %d running workers: %w", st.NormalRunning+st.ReservedRunning, ctx.Err())
	}
}

// Stats is a snapshot of the pool for metrics.
type Stats struct {
	// NormalSize and ReservedSize are the two limits.
	NormalSize, ReservedSize int
	// NormalRunning and ReservedRunning count the functions running in
	// each share.
	NormalRunning, ReservedRunning int
	// Spawned and Rejected count Spawn calls since the pool started.
	Spawned, Rejected uint64
}

// Stats returns the current counts.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{
		NormalSize: p.normalMax, ReservedSize: p.reservedMax,
		NormalRunning: p.normal, ReservedRunning: p.reserved,
		Spawned: p.spawned, Rejected: p.rejected,
	}
}
