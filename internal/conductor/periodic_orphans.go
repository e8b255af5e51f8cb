package conductor

import (
	"context"
	"errors"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// offlineConductors are the conductors whose heartbeat is older than
// [conductor]/heartbeat_timeout, this one excluded.
func (c *Conductor) offlineConductors(ctx context.Context) []string {
	off, err := c.store.GetOfflineConductors(ctx, c.cfg.DurationOf(config.ConductorHeartbeatTimeout))
	if err != nil {
		c.log.ErrorContext(ctx, "list offline conductors", "error", err)
		return nil
	}
	var out []string
	for _, h := range off {
		if h != c.host {
			out = append(out, h)
		}
	}
	return out
}

// CheckOrphanNodes releases the locks dead conductors hold on nodes mapped
// here and fails what they were doing (upstream _check_orphan_nodes): a
// pending power action is dropped with "Pending power operation was
// aborted due to conductor take over", and nodes in deploying or cleaning
// are failed with "Operation was aborted due to conductor take over".
func (c *Conductor) CheckOrphanNodes(ctx context.Context) {
	offline := c.offlineConductors(ctx)
	if len(offline) == 0 {
		return
	}
	var cleanup []string
	for _, n := range c.iterNodes(ctx, store.NodeFilter{ReservedByAnyOf: offline}, "") {
		holder := derefStr(n.Reservation)
		err := c.store.ReleaseNode(ctx, holder, n.ID)
		var locked *store.NodeLockedError
		var notLocked *store.NodeNotLockedError
		switch {
		case errors.Is(err, store.ErrNotFound):
			continue
		case errors.As(err, &locked):
			continue
		case errors.As(err, &notLocked):
		case err != nil:
			c.log.ErrorContext(ctx, "release the lock of an offline conductor", "node", n.UUID, "error", err)
			continue
		default:
			c.log.WarnContext(ctx, "forcibly removed reservation of a conductor that went offline", "old", holder, "node", n.UUID)
		}
		if !n.Maintenance && (n.ProvisionState == states.Deploying || n.ProvisionState == states.Cleaning || n.TargetPowerState != "") {
			cleanup = append(cleanup, n.UUID)
		}
	}
	for _, uuid := range cleanup {
		func() {
			t, err := c.acquire(ctx, uuid, "power state clean up", false)
			if err != nil {
				c.log.WarnContext(ctx, "clean up a node taken over", "node", uuid, "error", err)
				return
			}
			defer t.Release()
			if !t.Node.Maintenance && t.Node.TargetPowerState != "" {
				t.Node.TargetPowerState = ""
				record(ctx, t, "Pending power operation was aborted due to conductor take over", states.HistoryTakeover, true)
				save(ctx, t)
			}
		}()
		u := uuid
		c.failIfInState(ctx, store.NodeFilter{UUID: &u}, []string{states.Deploying, states.Cleaning}, "provision_updated_at", failOptions{
			callbackName: "abort_on_conductor_take_over", errHandler: task.ProvisioningErrorHandler,
			callback: c.abortOnConductorTakeOver,
		})
	}
}

// abortOnConductorTakeOver records why the operation ended (upstream
// abort_on_conductor_take_over).
func (c *Conductor) abortOnConductorTakeOver(ctx context.Context, t *task.Task) error {
	msg := "Operation was aborted due to conductor take over"
	if t.Node.ProvisionState == states.CleanFail {
		c.cleaningErrorHandler(ctx, t, msg, cleanErrOpts{tearDown: true})
	} else {
		record(ctx, t, msg, states.HistoryTakeover, true)
		save(ctx, t)
	}
	return nil
}

// SyncLocalState takes over active nodes mapped here whose
// conductor_affinity is another conductor (upstream _sync_local_state),
// at most [conductor]/periodic_max_workers per pass.
func (c *Conductor) SyncLocalState(ctx context.Context) {
	active := states.Active
	f := store.NodeFilter{Reserved: boolPtr(false), Maintenance: boolPtr(false), ProvisionState: &active}
	me := c.ID()
	pred := func(n store.NodeSummary) bool { return n.ConductorAffinity == nil || *n.ConductorAffinity != me }
	c.nodePeriodic(ctx, "node take over", f, pred, c.cfg.IntOf(config.ConductorPeriodicMaxWorkers), false,
		func(ctx context.Context, t *task.Task) (bool, error) {
			n := t.Node
			if n.Maintenance || (n.ConductorAffinity != nil && *n.ConductorAffinity == me) || n.ProvisionState != states.Active {
				return false, nil
			}
			t.SpawnAfter(c.spawner(), task.Work{Name: "_do_takeover", Fn: c.doTakeover})
			return true, nil
		})
}
