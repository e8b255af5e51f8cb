package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
)

// Boot retries: network boot interfaces (driver.BootRetrier, the pxe
// family) have the nodes whose agent never called back power-cycled into
// a new network boot, as upstream's PXEBaseMixin._check_boot_timeouts
// node periodic does. Each enabled implementation is its own periodic
// task over the nodes using it, as upstream matches the exact class.

// bootRetrier is one enabled boot interface whose retry is on.
type bootRetrier struct {
	name    string
	retrier driver.BootRetrier
	policy  driver.BootRetryPolicy
}

// bootRetriers lists the enabled boot interfaces with a retry configured,
// in enabled order.
func (c *Conductor) bootRetriers() []bootRetrier {
	var out []bootRetrier
	for _, e := range c.enabledImplementations(driver.KindBoot) {
		if r, ok := e.impl.(driver.BootRetrier); ok {
			if p := r.BootRetryPolicy(); p.Interval > 0 && p.Timeout > 0 {
				out = append(out, bootRetrier{name: e.name, retrier: r, policy: p})
			}
		}
	}
	return out
}

// bootRetryPeriodics are the periodic tasks of the enabled retriers, each
// at its own interval.
func (c *Conductor) bootRetryPeriodics() []periodic {
	var out []periodic
	for _, r := range c.bootRetriers() {
		out = append(out, periodic{
			name:     fmt.Sprintf("%s boot: _check_boot_timeouts", r.name),
			interval: r.policy.Interval,
			run:      func(ctx context.Context) { c.checkBootTimeouts(ctx, r) },
		})
	}
	return out
}

// CheckBootTimeouts runs one pass of every enabled boot retry.
func (c *Conductor) CheckBootTimeouts(ctx context.Context) {
	for _, r := range c.bootRetriers() {
		c.checkBootTimeouts(ctx, r)
	}
}

// checkBootTimeouts is one pass of one retrier over the unreserved nodes
// of this conductor, out of maintenance, that have been in one of its
// states for longer than its timeout and use its implementation.
func (c *Conductor) checkBootTimeouts(ctx context.Context, r bootRetrier) {
	timeout := r.policy.Timeout
	f := store.NodeFilter{
		Reserved: boolPtr(false), Maintenance: boolPtr(false),
		ProvisionStateIn: r.policy.States, ProvisionedBefore: &timeout,
	}
	pred := func(n *model.Node) bool { return driver.NodeInterface(n, driver.KindBoot) == r.name }
	c.nodePeriodic(ctx, "checking PXE boot status", f, c.withNode(ctx, pred), 0, true, func(ctx context.Context, t *task.Task) (bool, error) {
		return true, c.checkBootStatus(ctx, t, r)
	})
}

// checkBootStatus is upstream _check_boot_status: the cheap check under
// the shared lock, then under the exclusive one the checks again (the
// node may have moved on meanwhile) and the retry through the conductor's
// power actions.
func (c *Conductor) checkBootStatus(ctx context.Context, t *task.Task, r bootRetrier) error {
	if !r.retrier.ShouldRetryBoot(t.DriverTask(), c.clock.Now()) {
		return nil
	}
	if err := t.UpgradeLock(ctx, task.UpgradeOptions{Purpose: "retrying PXE boot"}); err != nil {
		return err
	}
	n := t.Node
	if n.Maintenance || !containsStr(r.policy.States, n.ProvisionState) ||
		driver.NodeInterface(n, driver.KindBoot) != r.name || !r.retrier.ShouldRetryBoot(t.DriverTask(), c.clock.Now()) {
		return nil
	}
	power := func(ctx context.Context, state string) error { return c.nodePowerAction(ctx, t, state, 0) }
	if err := r.retrier.RetryBoot(ctx, t.DriverTask(), power); err != nil {
		return fmt.Errorf("retry boot of node %s: %w", n.UUID, err)
	}
	return nil
}
