package await

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	Until(t, time.Minute, "the third check", func() bool { return calls.Add(1) >= 3 })
	if n := calls.Load(); n != 3 {
		t.Fatalf("checked %d times, want 3", n)
	}
}

func TestUntilFailsAfterItsBound(t *testing.T) {
	ft := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Until(ft, 20*time.Millisecond, "a condition that never holds", func() bool { return false })
	}()
	<-done
	if !ft.failed.Load() {
		t.Fatal("Until returned without failing")
	}
}

// fatalRecorder records Fatalf and ends the goroutine as testing does.
type fatalRecorder struct {
	testing.TB
	failed atomic.Bool
	msg    string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	f.failed.Store(true)
	runtime.Goexit()
}

func TestUntilReasonShowsTheLastReason(t *testing.T) {
	ft := &fatalRecorder{TB: t}
	done := make(chan struct{})
	var calls atomic.Int32
	go func() {
		defer close(done)
		UntilReason(ft, 20*time.Millisecond, "a condition that never holds", func() (bool, string) {
			return false, fmt.Sprintf("check %d", calls.Add(1))
		})
	}()
	<-done
	if !ft.failed.Load() || !strings.HasSuffix(ft.msg, fmt.Sprintf(": check %d", calls.Load())) {
		t.Fatalf("failed %v with %q after %d checks", ft.failed.Load(), ft.msg, calls.Load())
	}
}
