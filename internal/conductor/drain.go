package conductor

import (
	"context"
	"time"

	"github.com/openkeel/ironic/internal/config"
)

// Drain makes the next Stop a drain shutdown, as upstream's SIGUSR2
// handler does: Stop then waits up to [DEFAULT]/drain_shutdown_timeout
// (long enough for deployments and cleanings to finish) rather than
// [conductor]/graceful_shutdown_timeout for the work running here.
func (c *Conductor) Drain() { c.draining.Store(true) }

// ShutdownTimeout is how long Stop waits for running work: the drain
// timeout after Drain, else the graceful one. Zero means no bound, as
// upstream waits until the work has ended.
func (c *Conductor) ShutdownTimeout() time.Duration {
	if c.draining.Load() {
		return c.cfg.DurationOf(config.DefaultDrainShutdownTimeout)
	}
	return c.cfg.DurationOf(config.ConductorGracefulShutdownTimeout)
}

// WithShutdownTimeout bounds ctx by a shutdown timeout; zero leaves it
// unbounded.
func WithShutdownTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, timeout)
}
