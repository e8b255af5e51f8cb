package conductor

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// syncExcludedStates are provision states in which the power sync leaves
// the node alone (upstream SYNC_EXCLUDED_STATES).
var syncExcludedStates = []string{states.DeployWait, states.CleanWait, states.Enroll, states.AdoptFail}

// SyncPowerStates compares the recorded power state of every node mapped
// here (not in maintenance) with the hardware's (upstream
// _sync_power_states), with [conductor]/sync_power_state_workers workers.
// A node whose state cannot be read, or cannot be forced back, for more
// than power_state_sync_max_retries passes goes into maintenance with
// fault "power failure"; a mismatch is corrected on the hardware with
// force_power_state_during_sync, otherwise recorded.
func (c *Conductor) SyncPowerStates(ctx context.Context) {
	// The pass works page by page: the next page of summaries is read
	// when the workers have taken the batches of this one.
	pending := func(yield func([]store.NodeSummary) bool) {
		for page := range c.nodePages(ctx, store.NodeFilter{Maintenance: boolPtr(false)}) {
			// The summary already tells of nodes the lock's checks would
			// skip (upstream makes them under the shared lock): they are
			// not locked, which saves reading them whole. One that leaves
			// such a state meanwhile is synced on the next pass; one that
			// enters it is still caught under the lock.
			page = slices.DeleteFunc(page, func(n store.NodeSummary) bool {
				return containsStr(syncExcludedStates, n.ProvisionState) || n.Maintenance || n.TargetPowerState != "" || n.Reservation != nil
			})
			for _, b := range batches(page, powerSyncBatch) {
				if !yield(b) {
					return
				}
			}
		}
	}
	parallelSeq(c.cfg.IntOf(config.ConductorSyncPowerStateWorkers), pending, func(b []store.NodeSummary) {
		c.syncPowerStateBatch(ctx, b)
	})
}

// Upstream's shared acquire reads each node whole, one query (three with
// traits and tags) per node, which was most of a pass's CPU. A sync
// worker reads powerSyncBatch nodes in one go instead, just before their
// turn, without the columns the sync never reads (JSON documents it would
// decode for nothing: store.ReadNodesForPowerSync); a node whose turn
// comes more than powerSyncMaxAge after that read (its neighbours' BMCs
// were slow) is read again alone. The read is the
// shared lock's, which guards nothing: a node that needs a write is read
// again under the exclusive lock either way.
const (
	powerSyncBatch  = store.NodeReadBatch
	powerSyncMaxAge = time.Second
)

// batches cuts items into runs of at most n.
func batches[T any](items []T, n int) [][]T {
	out := make([][]T, 0, (len(items)+n-1)/n)
	for len(items) > n {
		out = append(out, items[:n:n])
		items = items[n:]
	}
	if len(items) > 0 {
		out = append(out, items)
	}
	return out
}

// syncPowerStateBatch syncs the nodes of b in order, read together.
func (c *Conductor) syncPowerStateBatch(ctx context.Context, b []store.NodeSummary) {
	if ctx.Err() != nil {
		return
	}
	ids := make([]int64, len(b))
	for i, s := range b {
		ids[i] = s.ID
	}
	read := c.clock.Now()
	full, err := c.store.ReadNodesForPowerSync(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			c.log.ErrorContext(ctx, "power state sync: read nodes", "error", err)
		}
		return
	}
	byID := make(map[int64]*model.Node, len(full))
	for _, n := range full {
		byID[n.ID] = n
	}
	for _, s := range b {
		if ctx.Err() != nil {
			return
		}
		n, ok := byID[s.ID]
		if !ok {
			continue // deleted since the summary
		}
		if c.clock.Now().Sub(read) > powerSyncMaxAge {
			n = nil
		}
		c.syncPowerStateNode(ctx, s.UUID, n)
	}
}

// syncPowerStateNode syncs one node under a shared lock, taken on n when
// the caller has just read it, otherwise by reading the node.
func (c *Conductor) syncPowerStateNode(ctx context.Context, uuid string, n *model.Node) {
	const purpose = "power state sync"
	var t *task.Task
	var err error
	if n != nil {
		t, err = c.tasks.SharedFrom(ctx, n, task.AcquireOptions{Purpose: purpose})
	} else {
		t, err = c.acquire(ctx, uuid, purpose, true)
	}
	if err != nil {
		if !errs.Is(err, errs.ClassNodeLocked) && !errs.Is(err, errs.ClassNodeNotFound) {
			c.log.ErrorContext(ctx, "power state sync", "node", uuid, "error", err)
		}
		return
	}
	defer t.Release()
	n = t.Node
	if containsStr(syncExcludedStates, n.ProvisionState) || n.Maintenance || n.TargetPowerState != "" ||
		n.Reservation != nil || n.InternalInfo().Get(model.DIIRedfishFirmwareUpdates) != nil {
		return
	}
	c.mu.Lock()
	count := c.powerFails[uuid]
	c.mu.Unlock()
	count, err = c.doSyncPowerState(ctx, t, count)
	if err != nil {
		t.Log().ErrorContext(ctx, "power state sync", "error", err)
	}
	c.mu.Lock()
	if count > 0 {
		c.powerFails[uuid] = count
	} else {
		delete(c.powerFails, uuid)
	}
	c.mu.Unlock()
}

// doSyncPowerState is upstream do_sync_power_state; it returns the new
// failure count.
func (c *Conductor) doSyncPowerState(ctx context.Context, t *task.Task, count int) (int, error) {
	n := t.Node
	count++
	maxRetries := c.cfg.IntOf(config.ConductorPowerStateSyncMaxRetries)
	clearLastError := func() error {
		if c.cfg.BoolOf(config.ConductorNodeHistory) && n.LastError != nil {
			logClearLastError(ctx, t, "confirmed power state match")
			n.LastError = nil
			return t.Save(ctx)
		}
		return nil
	}
	dt := t.DriverTask()
	if n.PowerState == states.NoState {
		if err := t.Driver.Power.Validate(ctx, dt); errs.Is(err, errs.ClassInvalidParameterValue) {
			return 0, nil
		}
	}
	actual, err := t.Driver.Power.GetPowerState(ctx, dt)
	if err == nil && actual == states.Error {
		err = errs.NewMessage(errs.ClassPowerStateFailure, "Power driver returned ERROR state while trying to sync power state.")
	}
	if err != nil {
		if count > maxRetries {
			if uerr := t.UpgradeLock(ctx, task.UpgradeOptions{}); uerr != nil {
				return count, uerr
			}
			return count, c.powerSyncRetriesExceeded(ctx, t, states.NoState, err)
		}
		t.Log().WarnContext(ctx, "during sync_power_state, could not get power state", "attempt", count, "retries", maxRetries, "error", err)
		return count, nil
	}
	// As upstream: a vendor, boot mode or secure boot state that manage
	// could not read (or that changed since) is cached by the sync.
	c.nodeCacheVendor(ctx, t)
	c.nodeCacheBootMode(ctx, t)
	c.nodeCacheHealth(ctx, t)
	n = t.Node
	if n.PowerState == actual {
		return 0, clearLastErrorShared(ctx, t, clearLastError)
	}
	if err := t.UpgradeLock(ctx, task.UpgradeOptions{}); err != nil {
		return count, err
	}
	n = t.Node
	switch {
	case n.PowerState == actual:
		return 0, clearLastError()
	case containsStr(syncExcludedStates, n.ProvisionState) || n.Maintenance:
		return 0, nil
	case n.PowerState == states.NoState:
		t.Log().InfoContext(ctx, "during sync_power_state, node has no previous known state, recording current state", "state", actual)
		n.PowerState = actual
		if c.cfg.BoolOf(config.ConductorNodeHistory) && n.LastError != nil {
			logClearLastError(ctx, t, "no previous known state")
			n.LastError = nil
		}
		if err := t.Save(ctx); err != nil {
			return 0, err
		}
		c.powerStateCorrected(ctx, t, states.NoState)
		return 0, nil
	}
	if count > maxRetries {
		return count, c.powerSyncRetriesExceeded(ctx, t, actual, nil)
	}
	syncable := true
	if ps, ok := t.Driver.Power.(driver.PowerSyncer); ok {
		syncable = ps.SupportsPowerSync(ctx, t.DriverTask())
	}
	if c.cfg.BoolOf(config.ConductorForcePowerStateDuringSync) && syncable && !n.DisablePowerOff {
		t.Log().WarnContext(ctx, "during sync_power_state, node state does not match expected state, changing hardware state",
			"actual", actual, "state", n.PowerState)
		if err := c.nodePowerAction(ctx, t, n.PowerState, 0); err != nil {
			t.Log().ErrorContext(ctx, "failed to change power state of node", "state", n.PowerState, "attempt", count, "retries", maxRetries)
		}
		return count, nil
	}
	t.Log().WarnContext(ctx, "during sync_power_state, node state does not match expected state, updating recorded state",
		"actual", actual, "state", n.PowerState)
	old := n.PowerState
	n.PowerState = actual
	if err := t.Save(ctx); err != nil {
		return count, err
	}
	c.powerStateCorrected(ctx, t, old)
	return count, nil
}

// logClearLastError says why the sync drops the node's last_error, and
// what it said, as upstream's "Clearing last_error for node ... after
// ...": otherwise the reason a deploy failed (during a conductor crash,
// say) would vanish without trace.
func logClearLastError(ctx context.Context, t *task.Task, reason string) {
	t.Log().InfoContext(ctx, "Clearing last_error for node "+t.Node.UUID+" after "+reason+".",
		"reason", reason, "last_error", *t.Node.LastError)
}

// clearLastErrorShared clears last_error on a match; the task is shared
// then, so the lock is upgraded only when there is something to clear.
func clearLastErrorShared(ctx context.Context, t *task.Task, clear func() error) error {
	if t.Node.LastError == nil {
		return nil
	}
	if err := t.UpgradeLock(ctx, task.UpgradeOptions{}); err != nil {
		return err
	}
	return clear()
}

// powerSyncRetriesExceeded records the hardware's state and puts the node
// into maintenance with fault "power failure" (upstream
// handle_sync_power_state_max_retries_exceeded).
func (c *Conductor) powerSyncRetriesExceeded(ctx context.Context, t *task.Task, actual string, cause error) error {
	n := t.Node
	msg := fmt.Sprintf("During sync_power_state, max retries exceeded for node %s, node state %s does not match expected state '%s'. Updating DB state to '%s' Switching node to maintenance mode.",
		n.UUID, pyNone(actual), pyNone(n.PowerState), pyNone(actual))
	if cause != nil {
		msg += " Error: " + cause.Error()
	}
	old := n.PowerState
	n.PowerState = actual
	record(ctx, t, msg, states.HistoryMonitoring, true)
	if !n.Maintenance {
		f := faultPowerFailure
		n.Maintenance, n.MaintenanceReason, n.Fault = true, &msg, &f
	}
	t.Log().ErrorContext(ctx, msg)
	if err := t.Save(ctx); err != nil {
		return err
	}
	if old != actual {
		c.powerStateCorrected(ctx, t, old)
	}
	return nil
}

// PowerFailureRecovery takes nodes out of maintenance once the power
// interface answers again (upstream _power_failure_recovery).
func (c *Conductor) PowerFailureRecovery(ctx context.Context) {
	fault := faultPowerFailure
	f := store.NodeFilter{Maintenance: boolPtr(true), Fault: &fault}
	c.nodePeriodic(ctx, "power failure recovery", f, nil, 0, true, func(ctx context.Context, t *task.Task) (bool, error) {
		n := t.Node
		if n.ProvisionState == states.Enroll || !n.Maintenance || n.Fault == nil || *n.Fault != faultPowerFailure ||
			n.TargetPowerState != "" || n.Reservation != nil {
			return true, nil
		}
		dt := t.DriverTask()
		if err := t.Driver.Power.Validate(ctx, dt); err != nil {
			return true, nil
		}
		actual, err := t.Driver.Power.GetPowerState(ctx, dt)
		if err != nil || actual == states.Error {
			t.Log().DebugContext(ctx, "during power_failure_recovery, could not get power state", "error", err)
			return true, nil
		}
		if err := t.UpgradeLock(ctx, task.UpgradeOptions{}); err != nil {
			return true, err
		}
		n = t.Node
		old := n.PowerState
		n.PowerState = actual
		n.Maintenance, n.MaintenanceReason, n.Fault = false, nil, nil
		if err := t.Save(ctx); err != nil {
			return true, err
		}
		t.Log().InfoContext(ctx, "node is recovered from power failure", "state", actual)
		if old != actual {
			c.powerStateCorrected(ctx, t, old)
		}
		return true, nil
	})
}
