// Package fakeclock is the one clock tests give to code that waits, so
// that retries, polls, throttles and timeouts are crossed without sleeping
// and without racing the wall clock. It implements internal/clock.Clock.
//
// A Clock comes in four kinds:
//
//   - New: a Sleep returns at once, moving the time forward by its
//     duration. The code under test runs as if every wait had elapsed; the
//     test reads afterwards which waits were asked for (Sleeps, Slept).
//   - NewBlocking: a Sleep lasts until the test moves the time past its end
//     with Advance, or until its context ends. The test sees a sleeper
//     arrive (OnSleep) and decides when it wakes.
//   - NewWall: the wall clock (UTC) shifted forward by what Advance added,
//     whose Sleeps really wait: for code whose timestamps meet the
//     database's and other processes' real time, where a test crosses a
//     timeout with Advance instead of waiting it out.
//   - NewWallInstant: the same time, but its Sleeps return at once, moving
//     nothing: for polls of a peer (an emulator) that has already settled.
//
// In all, OnSleep sets a hook run at every Sleep, which lets a test change
// the world a waiting caller will see next (release a lock, settle a BMC)
// at exactly the point the caller waits, rather than hope for the timing.
package fakeclock

import (
	"context"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/clock"
)

var _ clock.Clock = (*Clock)(nil)

// Clock is a test's time source, of one of the kinds the package comment
// describes. It is safe for concurrent use.
type Clock struct {
	kind kind

	mu sync.Mutex
	// now is the time of the New and NewBlocking kinds; the wall kinds
	// add off to the wall clock instead.
	now    time.Time
	off    time.Duration
	sleeps []time.Duration
	// count is every Sleep so far, which forgetting the recorded ones
	// does not reset.
	count int
	hook  func(n int, d time.Duration)
	// wake is closed and replaced on every Advance, waking the blocked
	// sleepers to compare their end with the new time.
	wake chan struct{}
}

type kind int

const (
	manual kind = iota
	blocking
	wall
	wallInstant
)

// New is a clock at start whose Sleeps return at once, having moved the
// time forward by their duration.
func New(start time.Time) *Clock {
	return &Clock{now: start, wake: make(chan struct{})}
}

// NewBlocking is a clock at start whose Sleeps last until Advance moves the
// time to their end, or their context ends.
func NewBlocking(start time.Time) *Clock {
	c := New(start)
	c.kind = blocking
	return c
}

// NewWall is the wall clock, shifted by Advance, whose Sleeps really wait.
func NewWall() *Clock { return &Clock{kind: wall, wake: make(chan struct{})} }

// NewWallInstant is the wall clock, shifted by Advance, whose Sleeps return
// at once.
func NewWallInstant() *Clock { return &Clock{kind: wallInstant, wake: make(chan struct{})} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kind == wall || c.kind == wallInstant {
		return time.Now().UTC().Add(c.off)
	}
	return c.now
}

// Advance moves the time forward by d and wakes the blocked sleepers whose
// end it reaches.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.off += d
	close(c.wake)
	c.wake = make(chan struct{})
	c.mu.Unlock()
}

// OnSleep sets the hook run at every Sleep with the number of Sleeps so far
// (this one included) and its duration: on a New clock after the time has
// moved, on the others before the sleeper waits. The hook runs on the
// sleeper's goroutine, with no lock of the clock's held, so it may call the
// clock and the code under test. nil removes it.
func (c *Clock) OnSleep(hook func(n int, d time.Duration)) {
	c.mu.Lock()
	c.hook = hook
	c.mu.Unlock()
}

// Sleep waits for d on the clock, or until ctx ends, returning ctx's error
// then. As a real sleep, one on a context that has already ended returns
// its error at once and is not recorded; a non-positive d is recorded but
// moves nothing.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	end := c.now.Add(max(d, 0))
	if c.kind == manual {
		c.now = end
	}
	c.sleeps = append(c.sleeps, d)
	c.count++
	n, hook := c.count, c.hook
	c.mu.Unlock()
	if hook != nil {
		hook(n, d)
	}
	switch c.kind {
	case wall:
		return clock.Sleep(ctx, d)
	case manual, wallInstant:
		// A real sleep would have been interrupted by a cancellation
		// during it.
		return ctx.Err()
	}
	for {
		c.mu.Lock()
		reached, wake := !c.now.Before(end), c.wake
		c.mu.Unlock()
		if reached {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Sleeps is every duration slept so far, in order.
func (c *Clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// Slept is the sum of the durations slept so far.
func (c *Clock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var total time.Duration
	for _, d := range c.sleeps {
		total += d
	}
	return total
}

// TakeSleeps returns the durations slept since the last TakeSleeps (or
// the start) and their sum, and forgets them, in one step: a sleep of
// another goroutine is either taken or left for the next call.
func (c *Clock) TakeSleeps() ([]time.Duration, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	taken := c.sleeps
	c.sleeps = nil
	var total time.Duration
	for _, d := range taken {
		total += d
	}
	return taken, total
}

// ResetSleeps forgets the sleeps recorded so far (not the time they
// moved), for a test that checks the waits of its next step alone.
func (c *Clock) ResetSleeps() {
	c.mu.Lock()
	c.sleeps = nil
	c.mu.Unlock()
}
