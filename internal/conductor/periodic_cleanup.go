package conductor

import (
	"context"
	"time"

	"github.com/openkeel/ironic/internal/config"
)

// ManageNodeHistory prunes the node history of the nodes this conductor
// deployed to [conductor]/node_history_max_entries records each (records
// younger than node_history_minimum_days kept), at most
// node_history_cleanup_batch_count records per pass (upstream
// manage_node_history).
func (c *Conductor) ManageNodeHistory(ctx context.Context) {
	id := c.ID()
	maxEntries := c.cfg.IntOf(config.ConductorNodeHistoryMaxEntries)
	batch := c.cfg.IntOf(config.ConductorNodeHistoryCleanupBatchCount)
	if id == 0 || maxEntries == 0 || batch <= 0 {
		return
	}
	minAge := time.Duration(c.cfg.IntOf(config.ConductorNodeHistoryMinimumDays)) * 24 * time.Hour
	purge, err := c.store.NodeHistoryForPurge(ctx, id, minAge, maxEntries)
	if err != nil {
		c.log.ErrorContext(ctx, "encountered error while cleaning node history records", "error", err)
		return
	}
	count := 0
	for _, ids := range purge {
		if count >= batch {
			c.log.WarnContext(ctx, "while cleaning up node history records, the maximum number of records permitted in a single batch was reached")
			return
		}
		if len(ids) > 0 {
			if err := c.store.DeleteNodeHistoryRecords(ctx, ids); err != nil {
				c.log.ErrorContext(ctx, "encountered error while cleaning node history records", "error", err)
				return
			}
		}
		count += len(ids)
	}
}

// CleanupStaleConductors deletes the rows of conductors offline for
// longer than [conductor]/conductor_cleanup_timeout, at most
// conductor_cleanup_batch_size per pass (upstream cleanup_stale_conductors);
// a timeout under three heartbeat timeouts is refused as upstream does.
func (c *Conductor) CleanupStaleConductors(ctx context.Context) {
	timeout := c.cfg.DurationOf(config.ConductorConductorCleanupTimeout)
	hb := c.cfg.DurationOf(config.ConductorHeartbeatTimeout)
	if hb <= 0 || timeout < 3*hb {
		c.log.WarnContext(ctx, "skipping stale conductor cleanup due to invalid configuration: [conductor]conductor_cleanup_timeout must be at least 3x [conductor]heartbeat_timeout")
		return
	}
	batch := c.cfg.IntOf(config.ConductorConductorCleanupBatchSize)
	limit := c.clock.Now().Add(-timeout)
	var stale []string
	for _, host := range c.offlineConductors(ctx) {
		cond, err := c.store.GetConductor(ctx, host, nil)
		if err != nil || cond.UpdatedAt == nil || !cond.UpdatedAt.Before(limit) {
			continue
		}
		stale = append(stale, host)
		if len(stale) >= batch {
			break
		}
	}
	for _, host := range stale {
		if err := c.store.DeleteConductor(ctx, host); err != nil {
			c.log.ErrorContext(ctx, "failed to delete conductor", "hostname", host, "error", err)
		}
	}
}
