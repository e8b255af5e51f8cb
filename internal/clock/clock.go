// Package clock is the time source of waits that tests want to cross
// without sleeping: lock retries, power state polling, agent command
// polling, throttling.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and sleeps; tests substitute one that advances
// only when slept on.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx ends, returning ctx's error then.
	Sleep(ctx context.Context, d time.Duration) error
}

// Real is the wall clock.
type Real struct{}

// Now is time.Now.
func (Real) Now() time.Time { return time.Now() }

// Sleep is the package's Sleep.
func (Real) Sleep(ctx context.Context, d time.Duration) error { return Sleep(ctx, d) }

// Sleep waits for d, or returns ctx's error when ctx ends first; a
// non-positive d only reports whether ctx has already ended.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
