package pxe

import (
	"context"
	"fmt"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
	"github.com/openkeel/ironic/internal/states"
)

var _ driver.BootRetrier = (*Boot)(nil)

// retryStates are the waits in which the agent ramdisk booted by these
// interfaces is expected to call back (upstream _RETRY_ALLOWED_STATES).
var retryStates = []string{states.DeployWait, states.CleanWait, states.RescueWait}

// BootRetryPolicy is upstream's node periodic on the PXE mixin: off until
// [pxe]/boot_retry_timeout is set.
func (b *Boot) BootRetryPolicy() driver.BootRetryPolicy {
	if b.opts.BootRetryTimeout <= 0 {
		return driver.BootRetryPolicy{}
	}
	return driver.BootRetryPolicy{
		Interval: b.opts.BootRetryCheckInterval,
		Timeout:  b.opts.BootRetryTimeout,
		States:   append([]string(nil), retryStates...),
	}
}

// ShouldRetryBoot is upstream _should_retry_boot, which assumes the IPA
// agent: an agent token means the agent has looked the node up, and a
// heartbeat or a power change within the timeout means it is alive or
// still booting.
func (b *Boot) ShouldRetryBoot(task *driver.Task, now time.Time) bool {
	n := task.Node
	if pyfmt.Truthy(n.InternalInfo().Get(model.DIIAgentSecretToken)) {
		task.Logger().Debug("not retrying PXE boot: an agent token exists, so the agent has started")
		return false
	}
	timeout := b.opts.BootRetryTimeout
	for _, field := range []string{"agent_last_heartbeat", "last_power_state_change"} {
		within, err := withinTimeout(n.InternalInfo().Get(field), timeout, now)
		if err != nil {
			// Upstream's strptime raises here and the pass ends; the node
			// is left alone rather than power-cycled on a value we cannot
			// read.
			task.Logger().Warn("not retrying PXE boot: unreadable time in driver_internal_info", "field", field, "error", err)
			return false
		}
		if within {
			task.Logger().Debug("not retrying PXE boot: recent event", "event", field, "timeout", int(timeout.Seconds()))
			return false
		}
	}
	return true
}

// RetryBoot is upstream _check_boot_status once its checks passed: power
// off, network boot device (not persistent), power on.
func (b *Boot) RetryBoot(ctx context.Context, task *driver.Task, power driver.PowerAction) error {
	task.Logger().InfoContext(ctx, "booting the ramdisk is taking longer than the boot retry timeout, retrying boot",
		"timeout", int(b.opts.BootRetryTimeout.Seconds()))
	if err := power(ctx, states.PowerOff); err != nil {
		return fmt.Errorf("power off node %s to retry its boot: %w", task.Node.UUID, err)
	}
	if err := b.setNetworkBoot(ctx, task, false); err != nil {
		return err
	}
	if err := power(ctx, states.PowerOn); err != nil {
		return fmt.Errorf("power on node %s to retry its boot: %w", task.Node.UUID, err)
	}
	return nil
}

// dateLayout is how the conductor stamps driver_internal_info times
// (Python's isoformat without a zone); parsing also accepts any number of
// fractional digits.
const dateLayout = "2006-01-02T15:04:05"

// withinTimeout is upstream value_within_timeout: an absent time counts
// as the epoch.
func withinTimeout(v any, timeout time.Duration, now time.Time) (bool, error) {
	if v == nil || v == "" {
		return false, nil
	}
	s, ok := v.(string)
	if !ok {
		return false, fmt.Errorf("time %v is not a string", v)
	}
	last, err := time.Parse(dateLayout, s)
	if err != nil {
		return false, fmt.Errorf("parse time %q: %w", s, err)
	}
	return !last.Before(now.UTC().Add(-timeout)), nil
}
