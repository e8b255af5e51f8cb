package conductor

import (
	"context"
	"errors"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// Periodic tasks run in every conductor but each touches only the nodes
// the hash ring maps to it (Options.Owns), as upstream's iter_nodes and
// node_periodic do. Each task is exported so that tests and operators'
// tools can run one pass on demand.

// PeriodicRun is one pass of a periodic task, as Options.ObservePeriodic
// hears of it.
type PeriodicRun struct {
	Name     string
	Interval time.Duration
	// Due is when the pass was scheduled, Started when it began: later
	// when the previous pass overran the interval or the conductor was
	// starved.
	Due, Started time.Time
	Duration     time.Duration
}

// periodic is one periodic task with its interval option.
type periodic struct {
	name     string
	interval time.Duration
	run      func(ctx context.Context)
}

func (c *Conductor) periodics() []periodic {
	check := c.cfg.DurationOf(config.ConductorCheckProvisionStateInterval)
	ps := []periodic{
		{"_sync_power_states", c.cfg.DurationOf(config.ConductorSyncPowerStateInterval), c.SyncPowerStates},
		{"_power_failure_recovery", c.cfg.DurationOf(config.ConductorPowerFailureRecoveryInterval), c.PowerFailureRecovery},
		{"_check_deploy_timeouts", check, c.CheckDeployTimeouts},
		{"_check_orphan_nodes", check, c.CheckOrphanNodes},
		{"_check_cleanwait_timeouts", check, c.CheckCleanWaitTimeouts},
		{"_check_servicewait_timeouts", check, c.CheckServiceWaitTimeouts},
		{"_check_inspect_wait_timeouts", check, c.CheckInspectWaitTimeouts},
		{"_sync_local_state", c.cfg.DurationOf(config.ConductorSyncLocalStateInterval), c.SyncLocalState},
		{"_check_orphan_allocations", c.cfg.DurationOf(config.ConductorCheckAllocationsInterval), c.CheckOrphanAllocations},
		{"cleanup_stale_conductors", c.cfg.DurationOf(config.ConductorConductorCleanupInterval), c.CleanupStaleConductors},
		{"manage_node_history", c.cfg.DurationOf(config.ConductorNodeHistoryCleanupInterval), c.ManageNodeHistory},
		{"_clean_up_caches", c.cfg.DurationOf(config.ConductorCacheCleanUpInterval), c.CleanUpCaches},
	}
	if c.cfg.BoolOf(config.SensorDataSendSensorData) {
		ps = append(ps, periodic{"_send_sensor_data", c.cfg.DurationOf(config.SensorDataInterval), c.SendSensorData})
	}
	ps = append(ps, c.driverPeriodics()...)
	ps = append(ps, c.bootRetryPeriodics()...)
	ps = append(ps, c.pushEventPeriodics()...)
	if c.cfg.IntOf(config.ConductorRescueCallbackTimeout) > 0 {
		ps = append(ps, periodic{"_check_rescuewait_timeouts", c.cfg.DurationOf(config.ConductorCheckRescueStateInterval), c.CheckRescueWaitTimeouts})
	}
	return ps
}

// startPeriodics starts one loop per enabled periodic task (interval > 0);
// they stop with ctx.
func (c *Conductor) startPeriodics(ctx context.Context) {
	for _, p := range c.periodics() {
		if p.interval <= 0 {
			continue
		}
		c.loops.Add(1)
		go func(p periodic) {
			defer c.loops.Done()
			tick := time.NewTicker(p.interval)
			defer tick.Stop()
			for {
				// A tick is the time it was due; a pass that overran
				// leaves one tick waiting, received late.
				var due time.Time
				select {
				case <-ctx.Done():
					return
				case due = <-tick.C:
				}
				start := time.Now()
				p.run(ctx)
				if c.observe != nil {
					c.observe(PeriodicRun{Name: p.name, Interval: p.interval, Due: due, Started: start, Duration: time.Since(start)})
				}
			}
		}(p)
	}
}

// periodicPage is how many node summaries a periodic task reads per
// query.
const periodicPage = 1000

// iterNodes lists the nodes matching f that are mapped to this conductor,
// sorted on sortKey ascending, as summaries: a pass reads a few columns
// per node and the full node only under the lock of those it works on.
// Unsorted walks page on id; sorted ones (the timeouts, whose filters
// keep to transient states) read in one query.
func (c *Conductor) iterNodes(ctx context.Context, f store.NodeFilter, sortKey string) []store.NodeSummary {
	if sortKey == "" {
		var out []store.NodeSummary
		for page := range c.nodePages(ctx, f) {
			out = append(out, page...)
		}
		return out
	}
	f.IncludeChildren = true
	page, err := c.store.ListNodeSummaries(ctx, f, store.ListOptions{SortKey: sortKey, SortDir: "asc"})
	if err != nil {
		if ctx.Err() == nil {
			c.log.ErrorContext(ctx, "list nodes for a periodic task", "error", err)
		}
		return nil
	}
	return slices.DeleteFunc(page, func(n store.NodeSummary) bool { return !c.ownsSummary(n) })
}

// nodePages yields the nodes matching f that are mapped to this
// conductor, a page (of at most periodicPage) at a time in id order, each
// read when the previous one has been handled: a pass over the fleet that
// works page by page holds one page of summaries, not the whole fleet's
// (the power sync's did, 580 MiB at 50,000 nodes, issue 29).
func (c *Conductor) nodePages(ctx context.Context, f store.NodeFilter) iter.Seq[[]store.NodeSummary] {
	return func(yield func([]store.NodeSummary) bool) {
		f.IncludeChildren = true
		o := store.ListOptions{SortDir: "asc", Limit: periodicPage}
		for {
			page, err := c.store.ListNodeSummaries(ctx, f, o)
			if err != nil {
				if ctx.Err() == nil {
					c.log.ErrorContext(ctx, "list nodes for a periodic task", "error", err)
				}
				return
			}
			full := len(page) == o.Limit
			if full {
				f.IDAbove = page[len(page)-1].ID
			}
			page = slices.DeleteFunc(page, func(n store.NodeSummary) bool { return !c.ownsSummary(n) })
			if len(page) > 0 && !yield(page) {
				return
			}
			if !full {
				return
			}
		}
	}
}

func (c *Conductor) ownsSummary(n store.NodeSummary) bool {
	return c.owns(&model.Node{UUID: n.UUID, Driver: n.Driver, ConductorGroup: n.ConductorGroup})
}

// withNode turns a predicate on the full node into one on summaries: it
// reads the node (for a driver's predicate, which looks at interfaces and
// JSON columns), and a node gone meanwhile does not match.
func (c *Conductor) withNode(ctx context.Context, pred func(*model.Node) bool) func(store.NodeSummary) bool {
	return func(s store.NodeSummary) bool {
		n, err := c.store.GetNodeByID(ctx, s.ID)
		if err != nil {
			if !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
				c.log.ErrorContext(ctx, "read node for a periodic task", "node", s.UUID, "error", err)
			}
			return false
		}
		return pred(n)
	}
}

// failOptions are _fail_if_in_state's keyword arguments.
type failOptions struct {
	// callback runs in a worker after the fail event; name is its name.
	callback     task.WorkFunc
	callbackName string
	errHandler   task.ErrHandler
	lastError    string
	keepTarget   bool
	// maintenance, when set, is re-checked under the lock.
	maintenance *bool
	// all lifts the periodic_max_workers cap.
	all bool
}

// failIfInState fails the nodes matching f that are (still, under their
// lock) in one of provStates (upstream _fail_if_in_state). Without a
// callback the error is recorded and the fail event processed; with one
// the callback runs after the event in a worker. As upstream, it stops
// after [conductor]/periodic_max_workers nodes or when no worker is free.
func (c *Conductor) failIfInState(ctx context.Context, f store.NodeFilter, provStates []string, sortKey string, o failOptions) {
	maxWorkers := c.cfg.IntOf(config.ConductorPeriodicMaxWorkers)
	count := 0
	for _, n := range c.iterNodes(ctx, f, sortKey) {
		err := func() error {
			t, err := c.acquire(ctx, n.UUID, "node state check", false)
			if err != nil {
				return err
			}
			defer t.Release()
			if o.maintenance != nil && *o.maintenance != t.Node.Maintenance {
				return nil
			}
			if !containsStr(provStates, t.Node.ProvisionState) {
				return nil
			}
			target := ""
			if o.keepTarget {
				target = t.Node.TargetProvisionState
			}
			if o.callback != nil {
				if err := t.ProcessEvent(ctx, states.EventFail, task.EventOptions{
					Spawner: c.spawner(), TargetState: target, ErrHandler: o.errHandler,
					Work: task.Work{Name: o.callbackName, Fn: o.callback},
				}); err != nil {
					return err
				}
				return t.End()
			}
			record(ctx, t, o.lastError, states.HistoryTransition, true)
			return t.ProcessEvent(ctx, states.EventFail, task.EventOptions{TargetState: target})
		}()
		switch {
		case errs.Is(err, errs.ClassNoFreeConductorWorker):
			return
		case errs.Is(err, errs.ClassNodeLocked), errs.Is(err, errs.ClassNodeNotFound):
			continue
		case err != nil:
			c.log.ErrorContext(ctx, "fail node in transient state", "node", n.UUID, "error", err)
		}
		count++
		if !o.all && count >= maxWorkers {
			return
		}
	}
}

// nodePeriodic is upstream's node_periodic: for each node matching f and
// pred (on its summary), take the lock (shared unless exclusive) and run fn; locked or
// vanished nodes are skipped; at most limit nodes (0 = all) are handled;
// fn returning errStopPeriodic ends the pass.
func (c *Conductor) nodePeriodic(ctx context.Context, purpose string, f store.NodeFilter, pred func(store.NodeSummary) bool, limit int, shared bool, fn func(ctx context.Context, t *task.Task) (bool, error)) {
	for _, n := range c.iterNodes(ctx, f, "") {
		if ctx.Err() != nil {
			return
		}
		if pred != nil && !pred(n) {
			continue
		}
		var counted bool
		err := func() error {
			t, err := c.acquire(ctx, n.UUID, purpose, shared)
			if err != nil {
				return err
			}
			defer t.Release()
			counted, err = fn(ctx, t)
			if err != nil {
				return err
			}
			return t.End()
		}()
		switch {
		case err == errStopPeriodic, errs.Is(err, errs.ClassNoFreeConductorWorker):
			return
		case errs.Is(err, errs.ClassNodeLocked), errs.Is(err, errs.ClassNodeNotFound):
			c.log.InfoContext(ctx, "periodic task skipped a node", "purpose", purpose, "node", n.UUID, "reason", err)
		case err != nil:
			c.log.ErrorContext(ctx, "periodic task failed on a node", "purpose", purpose, "node", n.UUID, "error", err)
		}
		if limit > 0 && counted {
			limit--
			if limit == 0 {
				return
			}
		}
	}
}

type stopPeriodic struct{}

func (stopPeriodic) Error() string { return "stop periodic task" }

var errStopPeriodic error = stopPeriodic{}

// parallel runs fn over items with at most n goroutines.
func parallel[T any](n int, items []T, fn func(T)) {
	parallelSeq(min(n, len(items)), slices.Values(items), fn)
}

// parallelSeq is parallel over items produced while the first are
// handled.
func parallelSeq[T any](n int, items iter.Seq[T], fn func(T)) {
	if n < 1 {
		n = 1
	}
	ch := make(chan T)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range ch {
				fn(it)
			}
		}()
	}
	for it := range items {
		ch <- it
	}
	close(ch)
	wg.Wait()
}
