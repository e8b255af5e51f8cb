package driver

import (
	"context"
	"time"
)

// Clock is the time source of the waits in hardware interfaces (power
// state polling, retries, throttling); tests substitute one that advances
// only when slept on.
type Clock interface {
	Now() time.Time
	// Sleep waits for d or until ctx ends.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock.
type RealClock struct{}

// Now is time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits for d, or returns ctx's error when ctx ends first; a
// non-positive d only reports whether ctx has already ended.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
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
