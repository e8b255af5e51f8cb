package image

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/errs"
)

// MemoryGuard is upstream's is_memory_insufficient, checked before an
// image conversion: while less than RequiredMiB of memory is available it
// waits WaitTime, at most WaitRetries times, then refuses with
// InsufficientMemory; with WarningOnly it only warns and goes on.
type MemoryGuard struct {
	RequiredMiB int64
	WaitTime    time.Duration
	WaitRetries int
	WarningOnly bool
	// Available answers the memory available in MiB (default: the
	// kernel's MemAvailable, as psutil's virtual_memory().available).
	Available func() (int64, error)
}

// Wait returns once enough memory is available, or InsufficientMemory.
func (g MemoryGuard) Wait(ctx context.Context) error {
	if g.RequiredMiB <= 0 {
		return nil
	}
	avail := g.Available
	if avail == nil {
		avail = memAvailableMiB
	}
	for loops := 0; ; loops++ {
		free, err := avail()
		if err != nil {
			// Upstream would fail in psutil; a host without
			// /proc/meminfo cannot be guarded, which is no reason to fail
			// a deployment.
			slog.WarnContext(ctx, "cannot read the available memory", "error", err)
			return nil
		}
		if free >= g.RequiredMiB {
			return nil
		}
		if g.WarningOnly {
			slog.WarnContext(ctx, fmt.Sprintf("Memory is at %d MiB, required is %d. Ironic is in warning-only mode which can be changed by altering the [DEFAULT]minimum_memory_warning_only", free, g.RequiredMiB))
			return nil
		}
		if loops >= g.WaitRetries {
			slog.ErrorContext(ctx, fmt.Sprintf("Memory is at %d MiB, required is %d. Notifying caller that we have exceeded retries.", free, g.RequiredMiB))
			return errs.New(errs.ClassInsufficientMemory, map[string]any{"free": free, "required": g.RequiredMiB})
		}
		slog.WarnContext(ctx, fmt.Sprintf("Memory is at %d MiB, required is %d, waiting.", free, g.RequiredMiB))
		if err := clock.Sleep(ctx, g.WaitTime); err != nil {
			return fmt.Errorf("waiting for free memory: %w", err)
		}
	}
}

// memAvailableMiB reads MemAvailable from /proc/meminfo.
func memAvailableMiB() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo MemAvailable: %w", err)
			}
			return kb / 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/meminfo has no MemAvailable")
}
