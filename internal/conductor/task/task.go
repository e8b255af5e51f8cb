package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// Task is one unit of work on a node under its lock. It belongs to one
// goroutine at a time: the caller of Acquire until End hands it to a
// worker, then the worker.
type Task struct {
	// Node is the node as last loaded or saved. Changes are written by
	// Save or ProcessEvent.
	Node *model.Node
	// Driver holds the node's interfaces, nil when acquired with NoDriver.
	Driver *driver.Interfaces
	// FSM is the node's provision state machine, initialised from
	// provision_state and target_provision_state whenever the node is
	// (re)loaded.
	FSM states.FSM

	m       *Manager
	base    context.Context // the acquiring context without its cancellation
	log     *slog.Logger
	shared  bool
	purpose string
	retry   bool
	patient bool
	tries   int
	held    time.Time
	// beforeWait is AcquireOptions.BeforeWait, run at most once.
	beforeWait func() error

	// saved is a deep copy of Node as last loaded or written; Save writes
	// the columns that differ from it.
	saved model.Node
	// pending is the node as SaveLater found it, written by the next save
	// (which writes Node, so also what pending holds) or, when none comes,
	// with the release; nil when nothing waits.
	pending *model.Node

	spawn       *pendingSpawn
	errHook     SpawnErrorHook
	pendingNote *notification

	mu       sync.Mutex
	handed   bool // a worker owns the task
	released bool
}

func (t *Task) lockType() string {
	if t.shared {
		return "shared"
	}
	return "exclusive"
}

// Shared reports whether the task holds no lock.
func (t *Task) Shared() bool { return t.shared }

// Purpose is what the lock was taken for.
func (t *Task) Purpose() string { return t.purpose }

// Log returns the task's logger.
func (t *Task) Log() *slog.Logger { return t.log }

// Manager returns the manager the task came from.
func (t *Task) Manager() *Manager { return t.m }

// DriverTask is the view of the task handed to driver interfaces; it shares
// Node with the task, so what the driver changes is saved with the task.
func (t *Task) DriverTask() *driver.Task {
	dt := &driver.Task{Node: t.Node, Driver: t.Driver, Shared: t.shared, Log: t.log}
	if t.m != nil && t.m.store != nil {
		dt.VolumeTargets = nodeVolumeTargets{t}
	}
	return dt
}

// nodeVolumeTargets are the volume targets of a task's node in the store.
type nodeVolumeTargets struct{ t *Task }

// DestroyAll is the loop of upstream's tear_down_storage_configuration.
func (v nodeVolumeTargets) DestroyAll(ctx context.Context) error {
	n := v.t.Node
	targets, err := v.t.m.store.ListVolumeTargets(ctx, store.VolumeFilter{NodeID: &n.ID}, store.ListOptions{})
	if err != nil {
		return fmt.Errorf("list the volume targets of node %s: %w", n.UUID, err)
	}
	for _, vt := range targets {
		if err := v.t.m.store.DeleteVolumeTarget(ctx, vt.ID); err != nil {
			return fmt.Errorf("delete volume target %s of node %s: %w", vt.UUID, n.UUID, err)
		}
		v.t.log.InfoContext(ctx, fmt.Sprintf("Successfully deleted volume target %s. The node associated with the target was %s.", vt.UUID, n.UUID))
	}
	return nil
}

// List returns the node's volume targets.
func (v nodeVolumeTargets) List(ctx context.Context) ([]*model.VolumeTarget, error) {
	n := v.t.Node
	targets, err := v.t.m.store.ListVolumeTargets(ctx, store.VolumeFilter{NodeID: &n.ID}, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the volume targets of node %s: %w", n.UUID, err)
	}
	return targets, nil
}

// Connectors returns the node's volume connectors.
func (v nodeVolumeTargets) Connectors(ctx context.Context) ([]*model.VolumeConnector, error) {
	n := v.t.Node
	conns, err := v.t.m.store.ListVolumeConnectors(ctx, store.VolumeFilter{NodeID: &n.ID}, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the volume connectors of node %s: %w", n.UUID, err)
	}
	return conns, nil
}

// SetProperties writes properties to every target of volumeID, as
// upstream's cinder storage interface saves them after attaching.
func (v nodeVolumeTargets) SetProperties(ctx context.Context, volumeID string, properties map[string]any) error {
	targets, err := v.t.m.store.ListVolumeTargets(ctx, store.VolumeFilter{VolumeID: &volumeID}, store.ListOptions{})
	if err != nil {
		return fmt.Errorf("list the volume targets of volume %s: %w", volumeID, err)
	}
	for _, vt := range targets {
		vt.Properties = properties
		if _, err := v.t.m.store.UpdateVolumeTarget(ctx, vt, "properties"); err != nil {
			return fmt.Errorf("save the properties of volume target %s: %w", vt.UUID, err)
		}
	}
	return nil
}

// RequireExclusive fails with ExclusiveLockRequired (403) on a shared task
// (upstream's require_exclusive_lock).
func (t *Task) RequireExclusive() error {
	if t.shared {
		return errs.New(errs.ClassExclusiveLockRequired, nil)
	}
	return nil
}

// initFSM places the state machine where the node is, as upstream does each
// time task.node is assigned.
func (t *Task) initFSM() error {
	t.FSM = states.Provision().NewFSM()
	if err := t.FSM.Initialize(t.Node.ProvisionState, t.Node.TargetProvisionState); err != nil {
		return invalidState(err)
	}
	return nil
}

// invalidState carries the state machine's refusal as Ironic's InvalidState.
func invalidState(err error) error {
	var ise *states.InvalidStateError
	if errors.As(err, &ise) {
		return errs.NewMessage(errs.ClassInvalidState, ise.Message)
	}
	return err
}

// lock reserves the node with upstream's retry policy, waiting its turn
// behind this conductor's earlier waiters (fairlock.go), and returns it
// as read by the reservation. held, when not nil, is the holder a read
// just before found: the first try then fails without a write.
func (t *Task) lock(ctx context.Context, id int64, uuid string, held *string) (*model.Node, error) {
	m := t.m
	attempts := m.settings.RetryAttempts
	if t.tries > 0 {
		attempts = t.tries
	}
	switch {
	case t.patient:
		attempts = 0
	case !t.retry || attempts < 1:
		attempts = 1
	}
	interval := m.settings.RetryInterval
	maxLockTime := interval * time.Duration(m.settings.RetryAttempts)
	start := m.clock.Now()
	conflicts := 0
	observe := func(outcome string) {
		if m.observe != nil {
			m.observe(m.clock.Now().Sub(start), conflicts, outcome)
		}
	}
	// The wait is bounded as upstream's retries are: attempts intervals
	// (none for a patient task), and the context.
	var deadline time.Time
	if attempts > 0 {
		deadline = start.Add(interval * time.Duration(attempts))
	}
	// A single try (upstream retry=False) takes no turn; every other
	// acquire queues before its first try, so that a release between the
	// try and the wait still wakes it.
	var w *lockWaiter
	var wake <-chan struct{}
	if attempts != 1 {
		w = m.waiters.join(id)
		wake = w.wake
	}
	leave := func(locked bool) {
		if w != nil {
			m.waiters.leave(id, w, locked)
		}
	}
	// A retry waits node_locked_retry_interval, as upstream's, but a lock
	// released by this conductor wakes the head waiter at once: such a
	// wake-up is a free try within the same interval, so the time a caller
	// may wait is unchanged while contended nodes change hands without idling.
	intervalEnd := start.Add(interval)
	for try := 1; ; {
		now := m.clock.Now()
		if elapsed := now.Sub(start); elapsed > maxLockTime {
			t.log.WarnContext(ctx, "exceeded the normal maximum time window to reserve the node",
				"purpose", t.purpose, "seconds", elapsed.Seconds())
		}
		expired := !deadline.IsZero() && !now.Before(deadline)
		if w != nil && !expired && !m.waiters.isHead(id, w) {
			// Not our turn: wait for it (an earlier waiter took the lock
			// and released it, or gave up), re-checking every interval.
			// The holder read before queueing is stale by then.
			if err := t.runBeforeWait(); err != nil {
				leave(false)
				observe("error")
				return nil, err
			}
			held = nil
			wait := interval
			if !deadline.IsZero() {
				wait = min(wait, deadline.Sub(now))
			}
			if _, err := m.sleepUntilReleased(ctx, wake, wait); err != nil {
				leave(false)
				observe("locked")
				return nil, fmt.Errorf("%w (gave up waiting: %w)", errs.NodeLocked(uuid, ""), err)
			}
			continue
		}
		// The head's try, or the last one of a waiter whose time is up.
		var n *model.Node
		var err error
		if held != nil {
			err = &store.NodeLockedError{Node: uuid, Host: *held}
			held = nil
		} else {
			n, err = m.store.ReserveNode(ctx, m.settings.Host, id)
		}
		if err == nil {
			leave(true)
			t.log.DebugContext(ctx, "node reserved", "purpose", t.purpose, "seconds", m.clock.Now().Sub(start).Seconds())
			observe("ok")
			return n, nil
		}
		err = storeError(err, "reserve node "+uuid)
		locked := errs.Is(err, errs.ClassNodeLocked)
		if locked {
			conflicts++
			if berr := t.runBeforeWait(); berr != nil {
				leave(false)
				observe("error")
				return nil, berr
			}
		}
		if !locked || (attempts > 0 && try >= attempts) || expired {
			leave(false)
			if locked {
				observe("locked")
			} else {
				observe("error")
			}
			return nil, err
		}
		woken, serr := m.sleepUntilReleased(ctx, wake, min(intervalEnd.Sub(now), untilDeadline(deadline, now)))
		if serr != nil {
			leave(false)
			observe("locked")
			return nil, fmt.Errorf("%w (gave up waiting: %w)", err, serr)
		}
		if !woken {
			try++
			intervalEnd = m.clock.Now().Add(interval)
		}
	}
}

// runBeforeWait runs the acquirer's BeforeWait once, when the lock is
// first found busy.
func (t *Task) runBeforeWait() error {
	f := t.beforeWait
	t.beforeWait = nil
	if f == nil {
		return nil
	}
	return f()
}

// untilDeadline is the time left before deadline; unbounded when zero.
func untilDeadline(deadline, now time.Time) time.Duration {
	if deadline.IsZero() {
		return time.Duration(math.MaxInt64)
	}
	return deadline.Sub(now)
}

// sleepUntilReleased waits d, or less when released closes first (woken).
func (m *Manager) sleepUntilReleased(ctx context.Context, released <-chan struct{}, d time.Duration) (woken bool, err error) {
	if d <= 0 {
		return false, ctx.Err()
	}
	wait, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-released:
			cancel()
		case <-wait.Done():
		}
	}()
	err = m.clock.Sleep(wait, d)
	if err != nil && ctx.Err() == nil {
		return true, nil
	}
	return false, err
}

// UpgradeOptions are upgrade_lock's arguments.
type UpgradeOptions struct {
	// Purpose, when set, replaces the task's purpose.
	Purpose string
	// NoRetry tries the lock once, and keeps it so for later upgrades (as
	// upstream's retry=False does).
	NoRetry bool
}

// UpgradeLock turns a shared task exclusive, with the task's retry policy,
// and reloads the node. On an exclusive task it only changes the purpose.
func (t *Task) UpgradeLock(ctx context.Context, opts UpgradeOptions) error {
	if opts.Purpose != "" {
		t.purpose = opts.Purpose
	}
	if opts.NoRetry {
		t.retry = false
	}
	if !t.shared {
		return nil
	}
	t.log.DebugContext(ctx, "upgrading shared lock to an exclusive one", "purpose", t.purpose,
		"held_seconds", t.m.clock.Now().Sub(t.held).Seconds())
	n, err := t.lock(ctx, t.Node.ID, t.Node.UUID, nil)
	if err != nil {
		return err
	}
	t.shared = false
	t.held = t.m.clock.Now()
	return t.reload(n)
}

// DowngradeLock gives the exclusive lock back and keeps the task as a shared
// one with the node reloaded.
func (t *Task) DowngradeLock(ctx context.Context) error {
	if t.isReleased() {
		return errors.New("cannot downgrade an already released lock")
	}
	if t.shared {
		return nil
	}
	if err := t.releaseNode(ctx); err != nil {
		return storeError(err, "release node "+t.Node.UUID)
	}
	t.m.waiters.released(t.Node.ID)
	t.shared = true
	n, err := t.m.store.GetNodeByID(ctx, t.Node.ID)
	if err != nil {
		return storeError(err, "reload node "+t.Node.UUID)
	}
	return t.reload(n)
}

// reload makes n the task's node, in place so that pointers to Node stay
// valid, and re-initialises the state machine.
func (t *Task) reload(n *model.Node) error {
	*t.Node = *n
	t.snapshot()
	return t.initFSM()
}

// Refresh reloads the node from the database, after writing what
// SaveLater left waiting.
func (t *Task) Refresh(ctx context.Context) error {
	if err := t.flushPending(ctx); err != nil {
		return err
	}
	n, err := t.m.store.GetNodeByID(ctx, t.Node.ID)
	if err != nil {
		return storeError(err, "reload node "+t.Node.UUID)
	}
	return t.reload(n)
}

func (t *Task) snapshot() { t.saved = cloneNode(t.Node) }

// Save writes what changed on Node since it was loaded or last saved. It
// requires an exclusive lock, and the write only happens while this
// conductor still holds it.
func (t *Task) Save(ctx context.Context) error {
	if err := t.RequireExclusive(); err != nil {
		return err
	}
	return t.save(ctx)
}

// save writes the changed columns plus always; a shared task (only its
// worker's failure report) writes without the reservation guard, as
// upstream's node.save() does.
func (t *Task) save(ctx context.Context, always ...string) error {
	t.truncateLogs(ctx, t.Node)
	fields := changedColumns(&t.saved, t.Node)
	for _, f := range always {
		if !containsString(fields, f) {
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		return nil
	}
	var cond store.NodeCondition
	if !t.shared {
		host := t.m.settings.Host
		cond.Reservation = &host
	}
	n, err := t.m.store.UpdateNodeIf(ctx, t.Node, cond, fields...)
	if errors.Is(err, store.ErrConflict) {
		// The reservation is no longer ours: another conductor took the
		// node over, taking this one for dead (a database node's eviction
		// can stall heartbeats past heartbeat_timeout). Nothing was
		// written; the caller may retry against the new holder.
		t.log.WarnContext(ctx, "node lock lost before its save; nothing was written", "node", t.Node.UUID, "error", err)
		return errs.Unavailable(fmt.Errorf("save node %s: %w", t.Node.UUID, err))
	}
	if err != nil {
		return storeError(err, "save node "+t.Node.UUID)
	}
	*t.Node = *n
	t.snapshot()
	t.pending = nil
	return nil
}

// SaveLater marks what changed on Node so far to be written by the task's
// next save or, when none comes, in the same transaction as the release
// (store.SaveAndReleaseNode): a worker that records something and may
// save again (a heartbeat's agent fields, then the flow's step) writes
// once instead of twice, and the lock's holder is the only one who could
// tell the difference. Changes made after SaveLater are not written at
// release unless a save or another SaveLater takes them. It requires an
// exclusive lock.
func (t *Task) SaveLater() error {
	if err := t.RequireExclusive(); err != nil {
		return err
	}
	t.truncateLogs(context.Background(), t.Node)
	c := cloneNode(t.Node)
	t.pending = &c
	return nil
}

// truncateLogs cuts last_error and maintenance_reason to
// [DEFAULT]/log_in_db_max_size characters, as upstream's Node.save does
// before every update, so that a driver's long error text (a traceback, a
// BMC's HTML page) does not fill the row.
func (t *Task) truncateLogs(ctx context.Context, n *model.Node) {
	limit := t.m.settings.LogInDBMaxSize
	if limit <= 0 {
		return
	}
	cut := func(name string, p *string) *string {
		if p == nil || len(*p) <= limit {
			return p // bytes >= characters: nothing to count
		}
		r := []rune(*p)
		if len(r) <= limit {
			return p
		}
		t.log.InfoContext(ctx, "Truncating too long "+name, "characters", limit, "node", n.UUID)
		short := string(r[:limit])
		return &short
	}
	n.LastError = cut("last_error", n.LastError)
	n.MaintenanceReason = cut("maintenance_reason", n.MaintenanceReason)
}

// pendingColumns names the columns SaveLater left to write.
func (t *Task) pendingColumns() []string {
	if t.pending == nil {
		return nil
	}
	return changedColumns(&t.saved, t.pending)
}

// flushPending writes what SaveLater left waiting, before the node is
// read again.
func (t *Task) flushPending(ctx context.Context) error {
	fields := t.pendingColumns()
	if len(fields) == 0 {
		t.pending = nil
		return nil
	}
	host := t.m.settings.Host
	if _, err := t.m.store.UpdateNodeIf(ctx, t.pending, store.NodeCondition{Reservation: &host}, fields...); err != nil {
		return storeError(err, "save node "+t.Node.UUID)
	}
	t.pending = nil
	return nil
}

// releaseNode drops the reservation, with what SaveLater left waiting
// written in the same transaction.
func (t *Task) releaseNode(ctx context.Context) error {
	host := t.m.settings.Host
	fields := t.pendingColumns()
	pending := t.pending
	t.pending = nil
	if len(fields) == 0 {
		return t.m.store.ReleaseNode(ctx, host, t.Node.ID)
	}
	return t.m.store.SaveAndReleaseNode(ctx, host, pending, fields...)
}

// SaveAndRelease is Save then Release in one write transaction
// (store.UpdateAndReleaseNode), for a task whose save is its last act: an
// update_node costs the reservation and this one write instead of a save
// and a release besides (issue 29). It returns the node as saved under
// the lock, the holder included, as upstream's update_node answers it;
// its updated_at is the one a later read shows. A save that fails still
// releases the lock. It requires an exclusive lock not handed to a
// worker.
func (t *Task) SaveAndRelease(ctx context.Context) (*model.Node, error) {
	if err := t.RequireExclusive(); err != nil {
		return nil, err
	}
	t.mu.Lock()
	if t.handed || t.released {
		t.mu.Unlock()
		return nil, errors.New("save and release of a task handed to a worker or released")
	}
	t.mu.Unlock()
	t.truncateLogs(ctx, t.Node)
	fields := changedColumns(&t.saved, t.Node)
	if len(fields) == 0 {
		out := cloneNode(t.Node)
		return &out, t.release()
	}
	t.mu.Lock()
	t.released = true
	t.mu.Unlock()
	t.spawn, t.pending = nil, nil
	host := t.m.settings.Host
	n, err := t.m.store.UpdateAndReleaseNode(ctx, host, t.Node, fields...)
	defer t.m.waiters.released(t.Node.ID)
	var locked *store.NodeLockedError
	var notLocked *store.NodeNotLockedError
	switch {
	case errors.As(err, &locked), errors.As(err, &notLocked), errors.Is(err, store.ErrConflict):
		// As save's: the reservation is no longer ours and nothing was
		// written.
		t.log.WarnContext(ctx, "node lock lost before its save; nothing was written", "node", t.Node.UUID, "error", err)
		return nil, errs.Unavailable(fmt.Errorf("save node %s: %w", t.Node.UUID, err))
	case err != nil:
		// The write was refused (a duplicate name…): the lock is still
		// ours to give back.
		if rerr := t.m.store.ReleaseNode(t.base, host, t.Node.ID); rerr != nil && !errors.Is(rerr, store.ErrNotFound) {
			t.log.ErrorContext(ctx, "release after a failed save", "error", rerr)
		}
		return nil, storeError(err, "save node "+t.Node.UUID)
	}
	t.log.DebugContext(ctx, "released lock", "type", t.lockType(), "purpose", t.purpose,
		"held_seconds", t.m.clock.Now().Sub(t.held).Seconds())
	*t.Node = *n
	t.snapshot()
	out := cloneNode(n)
	out.Reservation = &host
	return &out, nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (t *Task) isReleased() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.released
}

// Release drops the lock. It is idempotent, and a no-op once End has handed
// the task to a worker (the worker releases when it returns), so callers
// may always defer it. A node deleted under the task is not an error.
func (t *Task) Release() error {
	t.mu.Lock()
	if t.handed {
		t.mu.Unlock()
		return nil
	}
	t.mu.Unlock()
	return t.release()
}

func (t *Task) release() error {
	t.mu.Lock()
	if t.released {
		t.mu.Unlock()
		return nil
	}
	t.released = true
	t.mu.Unlock()
	t.spawn = nil
	if t.Node == nil {
		return nil
	}
	var err error
	if !t.shared {
		err = t.releaseNode(t.base)
		if errors.Is(err, store.ErrNotFound) {
			err = nil
		}
		t.m.waiters.released(t.Node.ID)
	}
	t.log.DebugContext(t.base, "released lock", "type", t.lockType(), "purpose", t.purpose,
		"held_seconds", t.m.clock.Now().Sub(t.held).Seconds())
	if err != nil {
		return storeError(err, "release node "+t.Node.UUID)
	}
	return nil
}
