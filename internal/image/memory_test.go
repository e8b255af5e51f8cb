package image

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
)

// Issue 23: [DEFAULT]/minimum_required_memory and minimum_memory_*: a
// conversion waits for free memory, retries minimum_memory_wait_retries
// times, then fails with upstream's InsufficientMemory; warning-only mode
// goes on.
func TestMemoryGuard(t *testing.T) {
	seq := func(v ...int64) func() (int64, error) {
		i := 0
		return func() (int64, error) {
			x := v[min(i, len(v)-1)]
			i++
			return x, nil
		}
	}
	ctx := context.Background()
	if err := (MemoryGuard{RequiredMiB: 1024, WaitRetries: 6, Available: seq(100, 100, 2048)}).Wait(ctx); err != nil {
		t.Errorf("memory freed on the third check: %v", err)
	}
	err := (MemoryGuard{RequiredMiB: 1024, WaitRetries: 2, Available: seq(100)}).Wait(ctx)
	wantClass(t, err, errs.ClassInsufficientMemory, "Available memory at 100, Insufficient as 1024 is required to proceed at this time.")
	if err := (MemoryGuard{RequiredMiB: 1024, WarningOnly: true, Available: seq(100)}).Wait(ctx); err != nil {
		t.Errorf("warning only: %v", err)
	}
	if free, err := memAvailableMiB(); err != nil || free <= 0 {
		t.Errorf("MemAvailable: %d, %v", free, err)
	}

	// Through the conversion to raw: nothing is converted.
	needTool(t, "qemu-img")
	dir := t.TempDir()
	src := filepath.Join(dir, "disk.qcow2")
	run(t, "qemu-img", "create", "-f", "qcow2", src, "1M")
	o := DefaultOptions()
	o.Memory = MemoryGuard{RequiredMiB: 1024, Available: seq(1)}
	f := NewFetcher(nil, o)
	dst := filepath.Join(dir, "disk.raw")
	err = f.ImageToRaw(ctx, "http://127.0.0.1/disk.qcow2", dst, src)
	wantClass(t, err, errs.ClassInsufficientMemory, "")
	if _, err := os.Stat(dst); !os.IsNotExist(err) {
		t.Errorf("converted despite the memory check: %v", err)
	}
}
