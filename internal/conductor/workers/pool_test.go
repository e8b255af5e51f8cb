package workers_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/conductor/workers"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
)

// blocker holds spawned functions until released.
type blocker struct {
	started sync.WaitGroup
	release chan struct{}
}

func newBlocker() *blocker { return &blocker{release: make(chan struct{})} }

func (b *blocker) fn() func(context.Context) {
	b.started.Add(1)
	return func(context.Context) {
		b.started.Done()
		<-b.release
	}
}

func newPool(t *testing.T, s workers.Settings) *workers.Pool {
	t.Helper()
	p, err := workers.New(s)
	if err != nil {
		t.Fatalf("New(%+v): %v", s, err)
	}
	return p
}

func TestDefaultsFromConfig(t *testing.T) {
	c, err := config.Load(config.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := workers.SettingsFromConfig(c)
	if s.Size != 300 || s.ReservedPercentage != 5 || s.MinWorkers != 26 {
		t.Errorf("settings = %+v, want size 300, 5 %%, min 26", s)
	}
	normal, reserved := s.Shares()
	if normal != 285 || reserved != 15 {
		t.Errorf("shares = %d + %d, want 285 + 15", normal, reserved)
	}
}

func TestSaturationAndReservedShare(t *testing.T) {
	p := newPool(t, workers.Settings{Size: 300, ReservedPercentage: 5})
	b := newBlocker()
	t.Cleanup(func() {
		close(b.release)
		if err := p.Wait(context.Background()); err != nil {
			t.Error(err)
		}
	})
	ctx := context.Background()
	for i := 0; i < 285; i++ {
		if err := p.Spawn(ctx, b.fn(), false); err != nil {
			t.Fatalf("spawn %d of the normal share: %v", i, err)
		}
	}
	b.started.Wait()

	err := p.Spawn(ctx, func(context.Context) { t.Error("rejected work ran") }, false)
	if !errs.Is(err, errs.ClassNoFreeConductorWorker) {
		t.Fatalf("normal spawn on a full normal share = %v, want NoFreeConductorWorker", err)
	}
	e, _ := errs.As(err)
	if e.Code != 503 || e.Message != "Requested action cannot be performed due to lack of free conductor workers." {
		t.Errorf("error = %d %q", e.Code, e.Message)
	}

	for i := 0; i < 15; i++ {
		if err := p.Spawn(ctx, b.fn(), true); err != nil {
			t.Fatalf("reserved spawn %d: %v", i, err)
		}
	}
	b.started.Wait()
	if err := p.Spawn(ctx, func(context.Context) { t.Error("rejected work ran") }, true); !errs.Is(err, errs.ClassNoFreeConductorWorker) {
		t.Fatalf("reserved spawn on a full pool = %v, want NoFreeConductorWorker", err)
	}
	st := p.Stats()
	want := workers.Stats{NormalSize: 285, ReservedSize: 15, NormalRunning: 285, ReservedRunning: 15, Spawned: 300, Rejected: 2}
	if st != want {
		t.Errorf("stats = %+v, want %+v", st, want)
	}
}

func TestHeartbeatNeverUsesReservedShare(t *testing.T) {
	p := newPool(t, workers.Settings{Size: 20, ReservedPercentage: 10})
	b := newBlocker()
	t.Cleanup(func() {
		close(b.release)
		_ = p.Wait(context.Background())
	})
	ctx := context.Background()
	for i := 0; i < 18; i++ {
		if err := p.Spawn(ctx, b.fn(), false); err != nil {
			t.Fatalf("spawn %d: %v", i, err)
		}
	}
	if err := p.Spawn(ctx, b.fn(), false); !errs.Is(err, errs.ClassNoFreeConductorWorker) {
		t.Fatalf("heartbeat spawn with only reserved workers free = %v", err)
	}
	if st := p.Stats(); st.ReservedRunning != 0 {
		t.Errorf("reserved running = %d, want 0", st.ReservedRunning)
	}
}

func TestFinishedWorkFreesItsSlot(t *testing.T) {
	p := newPool(t, workers.Settings{Size: 1})
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		done := make(chan struct{})
		if err := p.Spawn(ctx, func(context.Context) { close(done) }, false); err != nil {
			t.Fatalf("spawn %d: %v", i, err)
		}
		<-done
		// The slot is returned after fn returns; wait for the count.
		for p.Stats().NormalRunning != 0 {
			runtime.Gosched()
		}
	}
	if err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestPanickingWorkFreesItsSlot(t *testing.T) {
	p := newPool(t, workers.Settings{Size: 1})
	var ran sync.WaitGroup
	ran.Add(1)
	err := p.Spawn(context.Background(), func(context.Context) {
		defer func() { _ = recover(); ran.Done() }()
		panic("boom")
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	ran.Wait()
	if err := p.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestWorkOutlivesTheSpawningContext(t *testing.T) {
	p := newPool(t, workers.Settings{Size: 2})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	start := make(chan struct{})
	if err := p.Spawn(ctx, func(wctx context.Context) {
		<-start
		got <- wctx.Err()
	}, false); err != nil {
		t.Fatal(err)
	}
	cancel()
	close(start)
	if err := <-got; err != nil {
		t.Errorf("worker context = %v after the request ended, want live", err)
	}
	_ = p.Wait(context.Background())
}

func TestWaitTimesOutThenCompletes(t *testing.T) {
	p := newPool(t, workers.Settings{Size: 4})
	b := newBlocker()
	if err := p.Spawn(context.Background(), b.fn(), false); err != nil {
		t.Fatal(err)
	}
	b.started.Wait()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := p.Wait(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with running work and an ended context = %v", err)
	}
	if err := p.Spawn(context.Background(), b.fn(), true); !errs.Is(err, errs.ClassNoFreeConductorWorker) {
		t.Errorf("spawn during shutdown = %v, want NoFreeConductorWorker", err)
	}
	close(b.release)
	if err := p.Wait(context.Background()); err != nil {
		t.Errorf("Wait after the work ended = %v", err)
	}
}

func TestNewRejectsTooSmallPool(t *testing.T) {
	_, err := workers.New(workers.Settings{Size: 20, ReservedPercentage: 5, MinWorkers: 26})
	if !errs.Is(err, errs.ClassIncorrectConfiguration) {
		t.Fatalf("New = %v, want IncorrectConfiguration", err)
	}
	want := "Supplied configuration is incorrect and must be fixed. Error: The number of calculated minimum workers 26 exceeds the resulting maximum worker count 19."
	if err.Error() != want {
		t.Errorf("message = %q", err.Error())
	}
}
