package redfish

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
)

// raidConfigsKey holds the RAID operation the BMC runs as tasks (upstream
// driver_internal_info raid_configs: operation, pending, task_monitor_uri).
const raidConfigsKey = model.DIIRAIDConfigs

var (
	_ driver.AsyncStepPoller    = (*RAID)(nil)
	_ driver.AsyncStepDiscarder = (*RAID)(nil)
)

// raidConfigs is the RAID operation in progress: its task monitors and,
// for a creation, the volumes per controller still to request.
type raidConfigs struct {
	operation string
	pending   map[string][]map[string]any
	// pendingDelete is a deletion's "pending": volumes are left to delete.
	pendingDelete bool
	monitors      []string
}

func (c raidConfigs) toMap() map[string]any {
	m := map[string]any{"operation": c.operation}
	if c.operation == "create" {
		pending := map[string]any{}
		for k, v := range c.pending {
			list := make([]any, 0, len(v))
			for _, ld := range v {
				list = append(list, ld)
			}
			pending[k] = list
		}
		m["pending"] = pending
	} else {
		m["pending"] = c.pendingDelete
	}
	if len(c.monitors) > 0 {
		list := make([]any, 0, len(c.monitors))
		for _, u := range c.monitors {
			list = append(list, u)
		}
		m["task_monitor_uri"] = list
	}
	return m
}

func raidConfigsOf(n *model.Node) (raidConfigs, bool) {
	m, ok := n.InternalInfo().Get(raidConfigsKey).(map[string]any)
	if !ok || len(m) == 0 {
		return raidConfigs{}, false
	}
	c := raidConfigs{pending: map[string][]map[string]any{}}
	c.operation, _ = m["operation"].(string)
	switch p := m["pending"].(type) {
	case bool:
		c.pendingDelete = p
	case map[string]any:
		for ctrl, v := range p {
			list, _ := v.([]any)
			for _, item := range list {
				if ld, ok := item.(map[string]any); ok {
					c.pending[ctrl] = append(c.pending[ctrl], ld)
				}
			}
		}
	}
	list, _ := m["task_monitor_uri"].([]any)
	for _, u := range list {
		if s, ok := u.(string); ok {
			c.monitors = append(c.monitors, s)
		}
	}
	return c, true
}

// toMap is the logical disk as upstream keeps it once placed: the
// target_raid_config entry with its controller, drives and size in bytes.
func (ld *logicalDisk) toMap() map[string]any {
	m := maps.Clone(ld.raw)
	if m == nil {
		m = map[string]any{}
	}
	drives := make([]any, 0, len(ld.physical))
	for _, d := range ld.physical {
		drives = append(drives, d)
	}
	m["controller"] = ld.controller
	m["physical_disks"] = drives
	m["raid_level"] = ld.level
	m["size_bytes"] = ld.sizeBytes
	m["is_root_volume"] = ld.isRoot
	return m
}

// placedDisk reads back a logical disk stored by toMap.
func placedDisk(m map[string]any) *logicalDisk {
	ld := &logicalDisk{raw: m}
	ld.controller, _ = m["controller"].(string)
	ld.level, _ = m["raid_level"].(string)
	ld.isRoot, _ = m["is_root_volume"].(bool)
	switch v := m["size_bytes"].(type) {
	case float64:
		ld.sizeBytes = int64(v)
	case int64:
		ld.sizeBytes = v
	case int:
		ld.sizeBytes = int64(v)
	}
	list, _ := m["physical_disks"].([]any)
	for _, d := range list {
		if s, ok := d.(string); ok {
			ld.physical = append(ld.physical, s)
		}
	}
	if typed, ok := m["physical_disks"].([]string); ok {
		ld.physical = typed
	}
	return ld
}

// AsyncStepInterval is [redfish]/raid_config_status_interval.
func (r *RAID) AsyncStepInterval() time.Duration { return r.core.opts.RAIDConfigStatusInterval }

// AsyncStepPending is upstream's predicate: raid_configs is set.
func (r *RAID) AsyncStepPending(n *model.Node) bool {
	_, ok := raidConfigsOf(n)
	return ok
}

// PollAsyncStep is upstream _check_node_raid_config: finished tasks are
// dropped (a failed one only logged: what the BMC did shows in the
// raid_config read back); once none is left the pending volumes are
// requested, or the operation is over and the step resumes.
func (r *RAID) PollAsyncStep(ctx context.Context, task *driver.Task) (driver.AsyncStepStatus, error) {
	n := task.Node
	cfg, ok := raidConfigsOf(n)
	if !ok {
		return driver.AsyncStepRunning, nil
	}
	var still []string
	err := r.core.withConnection(ctx, task, func(cl *client, _ DriverInfo) error {
		for _, uri := range cfg.monitors {
			if r.raidTaskInProgress(cl, task, uri, cfg.operation) {
				still = append(still, uri)
			}
		}
		return nil
	})
	if err != nil {
		task.Logger().Warn("unable to check RAID tasks, trying again later", "node", n.UUID, "error", err)
		return driver.AsyncStepRunning, nil
	}
	cfg.monitors = still
	n.InternalInfo().Set(raidConfigsKey, cfg.toMap())
	if len(still) > 0 {
		return driver.AsyncStepRunning, nil
	}
	if len(cfg.pending) > 0 || cfg.pendingDelete {
		next, err := r.submitPending(ctx, task, cfg)
		if err != nil {
			return driver.AsyncStepRunning, err
		}
		if len(next.monitors) > 0 {
			n.InternalInfo().Set(raidConfigsKey, next.toMap())
			if _, err := rebootToFinishStep(ctx, task); err != nil {
				return driver.AsyncStepRunning, err
			}
			return driver.AsyncStepRunning, nil
		}
	}
	n.InternalInfo().Delete(raidConfigsKey)
	task.Logger().Info("RAID configuration completed", "node", n.UUID)
	if err := r.readBackRAIDConfig(ctx, task); err != nil {
		return driver.AsyncStepRunning, err
	}
	return driver.AsyncStepDone, nil
}

// raidTaskInProgress is upstream _raid_config_in_progress. A monitor the
// BMC no longer knows is taken as done; one that cannot be reached is
// asked again next time rather than taken as done.
func (r *RAID) raidTaskInProgress(cl *client, task *driver.Task, uri, operation string) bool {
	log := task.Logger().With("node", task.Node.UUID, "operation", operation, "task_monitor", uri)
	info, err := getTaskMonitor(cl, uri)
	switch {
	case err != nil && isConnectionError(err):
		log.Warn("unable to reach the RAID task monitor, trying again later", "error", err)
		return true
	case errors.Is(err, errTaskGone), err != nil:
		log.Info("unable to get the status of the RAID task; assuming it completed successfully", "error", err)
		return false
	case info.processing:
		log.Debug("RAID task still in progress")
		return true
	case info.succeeded():
		log.Info("RAID task completed")
	default:
		log.Error("RAID task failed", "messages", strings.Join(info.messages, ", "))
	}
	return false
}

// submitPending requests what the finished tasks held back.
func (r *RAID) submitPending(ctx context.Context, task *driver.Task, cfg raidConfigs) (raidConfigs, error) {
	var next raidConfigs
	err := r.core.withConnection(ctx, task, func(cl *client, info DriverInfo) error {
		if cfg.operation != "create" {
			var err error
			next, err = submitDelete(cl, task, info)
			return err
		}
		sys, err := fetchSystem(cl, info)
		if err != nil {
			return redfishError(err.Error())
		}
		disks, storages, err := physicalDisks(cl, sys)
		if err != nil {
			return redfishError(err.Error())
		}
		var create []*logicalDisk
		for _, ctrl := range slices.Sorted(maps.Keys(cfg.pending)) {
			for _, m := range cfg.pending[ctrl] {
				create = append(create, placedDisk(m))
			}
		}
		next, err = submitCreate(cl, task, storages, disks, create)
		return err
	})
	return next, err
}

// AsyncStepFailInterval is [redfish]/raid_config_fail_interval.
func (r *RAID) AsyncStepFailInterval() time.Duration { return r.core.opts.RAIDConfigFailInterval }

// DiscardAsyncStep is upstream _query_raid_config_failed: the remaining
// RAID work is dropped and raid_config read back from the BMC.
func (r *RAID) DiscardAsyncStep(ctx context.Context, task *driver.Task) error {
	task.Logger().Warn("RAID configuration failed, discarding remaining RAID configurations", "node", task.Node.UUID)
	task.Node.InternalInfo().Delete(raidConfigsKey)
	return r.readBackRAIDConfig(ctx, task)
}
