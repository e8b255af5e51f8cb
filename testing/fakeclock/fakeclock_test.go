package fakeclock

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// TestSleepMovesTheTime: on a New clock a Sleep returns at once, the time
// having moved by it; every Sleep is recorded and seen by the hook after
// the move.
func TestSleepMovesTheTime(t *testing.T) {
	c := New(start)
	var seen []time.Time
	c.OnSleep(func(n int, d time.Duration) {
		if n != len(seen)+1 {
			t.Errorf("hook call %d told n=%d", len(seen)+1, n)
		}
		seen = append(seen, c.Now())
	})
	ctx := context.Background()
	for _, d := range []time.Duration{time.Second, 0, -time.Second, time.Minute} {
		if err := c.Sleep(ctx, d); err != nil {
			t.Fatalf("sleep %v: %v", d, err)
		}
	}
	if got, want := c.Now(), start.Add(time.Minute+time.Second); !got.Equal(want) {
		t.Fatalf("now %v, want %v", got, want)
	}
	if got := c.Sleeps(); !slices.Equal(got, []time.Duration{time.Second, 0, -time.Second, time.Minute}) {
		t.Fatalf("sleeps %v", got)
	}
	if len(seen) != 4 || !seen[0].Equal(start.Add(time.Second)) {
		t.Fatalf("hook saw %v", seen)
	}
	c.Advance(time.Hour)
	if got, want := c.Now(), start.Add(time.Hour+time.Minute+time.Second); !got.Equal(want) {
		t.Fatalf("now after Advance %v, want %v", got, want)
	}
	if c.Slept() != time.Minute {
		t.Fatalf("slept %v", c.Slept())
	}
	c.ResetSleeps()
	if len(c.Sleeps()) != 0 || c.Slept() != 0 {
		t.Fatalf("sleeps after reset %v", c.Sleeps())
	}
	_ = c.Sleep(ctx, 2*time.Second)
	_ = c.Sleep(ctx, 3*time.Second)
	if taken, total := c.TakeSleeps(); !slices.Equal(taken, []time.Duration{2 * time.Second, 3 * time.Second}) || total != 5*time.Second {
		t.Fatalf("taken %v (%v)", taken, total)
	}
	if taken, total := c.TakeSleeps(); len(taken) != 0 || total != 0 || len(c.Sleeps()) != 0 {
		t.Fatalf("taken twice: %v (%v)", taken, total)
	}
}

// TestSleepOnEndedContext: as a real sleep, one on an ended context ends
// at once with its error and moves nothing; one whose context ends in the
// hook (during the sleep) reports it.
func TestSleepOnEndedContext(t *testing.T) {
	for _, c := range []*Clock{New(start), NewBlocking(start)} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := c.Sleep(ctx, time.Second); !errors.Is(err, context.Canceled) {
			t.Fatalf("sleep on an ended context: %v", err)
		}
		if !c.Now().Equal(start) || len(c.Sleeps()) != 0 {
			t.Fatalf("an ended sleep moved the clock to %v, recorded %v", c.Now(), c.Sleeps())
		}
	}
	c := New(start)
	ctx, cancel := context.WithCancel(context.Background())
	c.OnSleep(func(int, time.Duration) { cancel() })
	if err := c.Sleep(ctx, time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleep cancelled during it: %v", err)
	}
}

// TestBlockingSleepWaitsForAdvance: a blocking clock's sleeper is seen
// arriving, stays asleep while the time has not reached its end, and wakes
// when it does; another one ends with its context.
func TestBlockingSleepWaitsForAdvance(t *testing.T) {
	c := NewBlocking(start)
	arrived := make(chan time.Duration, 1)
	c.OnSleep(func(_ int, d time.Duration) { arrived <- d })
	done := make(chan error, 1)
	go func() { done <- c.Sleep(context.Background(), 10*time.Second) }()
	if d := <-arrived; d != 10*time.Second {
		t.Fatalf("sleeper announced %v", d)
	}
	c.Advance(9 * time.Second)
	select {
	case err := <-done:
		t.Fatalf("woke 1 s before its end: %v", err)
	default:
	}
	c.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatalf("woken sleeper: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- c.Sleep(ctx, time.Hour) }()
	<-arrived
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled sleeper: %v", err)
	}
	if !c.Now().Equal(start.Add(10 * time.Second)) {
		t.Fatalf("sleepers moved a blocking clock to %v", c.Now())
	}
}

// TestWallClocks: the wall kinds tell the wall time shifted by Advance; a
// NewWall Sleep really waits (and ends with its context), a
// NewWallInstant one returns at once; both are recorded and move nothing.
func TestWallClocks(t *testing.T) {
	w := NewWall()
	before := time.Now()
	w.Advance(time.Hour)
	if got := w.Now(); got.Before(before.Add(time.Hour)) || got.After(time.Now().Add(time.Hour)) {
		t.Fatalf("wall clock advanced by an hour reads %v at %v", got, before)
	}
	start := time.Now()
	if err := w.Sleep(context.Background(), 20*time.Millisecond); err != nil || time.Since(start) < 20*time.Millisecond {
		t.Fatalf("wall sleep returned %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.OnSleep(func(int, time.Duration) { cancel() })
	if err := w.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("wall sleep cancelled during it: %v", err)
	}

	i := NewWallInstant()
	start = time.Now()
	if err := i.Sleep(context.Background(), time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := i.Now(); got.After(time.Now()) || got.Before(start) {
		t.Fatalf("an instant sleep moved the wall clock to %v", got)
	}
	if got := append(w.Sleeps(), i.Sleeps()...); !slices.Equal(got, []time.Duration{20 * time.Millisecond, time.Hour, time.Hour}) {
		t.Fatalf("sleeps %v", got)
	}
}
