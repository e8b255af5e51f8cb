package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/openkeel/ironic/internal/conductor"
)

// onDrainSignal ends ctx when the process gets SIGUSR2, as upstream's
// handle_drain: the conductor is told to drain, so that its shutdown waits
// [DEFAULT]/drain_shutdown_timeout for running deployments and cleanings
// rather than graceful_shutdown_timeout. stop undoes the handler.
func onDrainSignal(ctx context.Context, c *conductor.Conductor, log *slog.Logger) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR2)
	go func() {
		select {
		case <-sig:
			log.Info("got signal SIGUSR2, initiating a workload drain and shutdown")
			c.Drain()
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		cancel()
	}
}
