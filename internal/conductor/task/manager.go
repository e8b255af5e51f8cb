// Package task is the conductor's task manager (upstream
// ironic/conductor/task_manager.py): every operation on a node runs inside a
// Task, which holds the node's lock, the node itself, its resolved driver
// interfaces and its provision state machine.
//
// An exclusive lock is the nodes.reservation column, taken with one
// conditional UPDATE and retried [conductor]/node_locked_retry_attempts
// times, node_locked_retry_interval apart; a shared lock writes nothing. A
// task ends in one of two ways: Release (the operation finished or failed
// in the caller) or End, which hands the lock to the worker recorded by
// SpawnAfter or ProcessEvent and releases it when that worker returns.
package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/logging"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/store"
)

// Settings are the options the task manager reads.
type Settings struct {
	// Host is the lock holder's name: [DEFAULT]/host, with ":port" under
	// JSON-RPC. It must be stable across restarts so a restarted conductor
	// can clear its own reservations.
	Host string
	// RetryAttempts is [conductor]/node_locked_retry_attempts: how many
	// times an exclusive lock is tried before NodeLocked.
	RetryAttempts int
	// RetryInterval is [conductor]/node_locked_retry_interval.
	RetryInterval time.Duration
	// NodeHistory is [conductor]/node_history: whether history events are
	// written to node_history.
	NodeHistory bool
	// LogInDBMaxSize is [DEFAULT]/log_in_db_max_size: last_error and
	// maintenance_reason are cut to that many characters when saved.
	LogInDBMaxSize int
}

// SettingsFromConfig reads the options; the caller adjusts Host when the
// conductor registers as host:port.
func SettingsFromConfig(c *config.Config) Settings {
	return Settings{
		Host:          c.StringOf(config.DefaultHost),
		RetryAttempts: c.IntOf(config.ConductorNodeLockedRetryAttempts),
		RetryInterval: c.DurationOf(config.ConductorNodeLockedRetryInterval),
		NodeHistory:   c.BoolOf(config.ConductorNodeHistory),
		// Upstream's Node.save truncates these two, in characters.
		LogInDBMaxSize: c.IntOf(config.DefaultLogInDBMaxSize),
	}
}

// DriverResolver builds a node's driver interfaces (upstream
// build_driver_for_task); *driver.Drivers is one.
type DriverResolver interface {
	ForNode(node *model.Node) (*driver.Interfaces, error)
}

var _ DriverResolver = (*driver.Drivers)(nil)

// Clock is the time source of lock retries and history durations; tests
// replace it to cross retry intervals without sleeping.
type Clock = clock.Clock

// Manager hands out tasks for one conductor.
type Manager struct {
	store    store.Store
	drivers  DriverResolver
	history  History
	settings Settings
	clock    Clock
	log      *slog.Logger
	observe  LockObserver
	// waiters are this conductor's tasks waiting for a node's lock, in
	// arrival order (fairlock.go).
	waiters lockQueues
	// notifier sends the provision notifications; nil sends none.
	notifier *notify.Notifier
}

// LockObserver hears of every exclusive lock acquisition: the time it
// took, the attempts that found the node reserved, and the outcome
// ("ok", "locked" when NodeLocked is returned, "error").
type LockObserver func(wait time.Duration, conflicts int, outcome string)

// Option configures NewManager.
type Option func(*Manager)

// WithClock replaces the wall clock.
func WithClock(c Clock) Option { return func(m *Manager) { m.clock = c } }

// WithLogger sets the logger that also carries provision notifications
// (slog.Default otherwise).
func WithLogger(l *slog.Logger) Option { return func(m *Manager) { m.log = l } }

// WithHistory sets where node history events are written; without it no
// history is recorded.
func WithHistory(h History) Option { return func(m *Manager) { m.history = h } }

// WithNotifier sends provision notifications through n as well as to
// the log.
func WithNotifier(n *notify.Notifier) Option { return func(m *Manager) { m.notifier = n } }

// WithLockObserver reports lock acquisitions to o (the conductor's
// metrics).
func WithLockObserver(o LockObserver) Option { return func(m *Manager) { m.observe = o } }

// NewManager returns a manager locking nodes in st under s.Host. drivers
// may be nil, in which case tasks carry no driver interfaces.
func NewManager(st store.Store, drivers DriverResolver, s Settings, opts ...Option) *Manager {
	m := &Manager{store: st, drivers: drivers, settings: s, clock: clock.Real{}, log: slog.Default()}
	for _, o := range opts {
		o(m)
	}
	return m
}

// Host returns the name locks are taken under.
func (m *Manager) Host() string { return m.settings.Host }

// AcquireOptions are upstream acquire()'s keyword arguments.
type AcquireOptions struct {
	// Shared takes no lock: the task may read but not write.
	Shared bool
	// Purpose says what the lock is for, in logs; "unspecified action"
	// when empty.
	Purpose string
	// NoRetry tries the lock once (upstream retry=False).
	NoRetry bool
	// Patient retries until the lock is taken or ctx ends, for operations
	// that have no fallback, such as finishing a state transition.
	Patient bool
	// RetryAttempts, when positive, replaces node_locked_retry_attempts.
	RetryAttempts int
	// NoDriver skips resolving the driver interfaces (load_driver=False).
	NoDriver bool
	// BeforeWait, when set, runs once if an exclusive acquire finds the
	// node busy, before it waits for its turn (with retries) or gives up
	// (without); its error ends the acquire instead. It lets a caller
	// check, only when it must wait, what upstream checks before taking
	// the lock, and otherwise check it on the node read under the lock.
	BeforeWait func() error
}

// Acquire loads the node named by ident (an integer id or a UUID) and
// takes its lock. Errors: NodeNotFound, InvalidIdentity, NodeLocked, and
// the driver resolver's (DriverNotFound, InterfaceNotFoundInEntrypoint…).
//
// A shared task reads the node once. An exclusive one reads it once too,
// in the reservation's transaction: before it, only the node's id and
// holder are looked up (none for an integer id), so that a node another
// conductor holds is refused without taking the write lock.
func (m *Manager) Acquire(ctx context.Context, ident string, opts AcquireOptions) (*Task, error) {
	var (
		node *model.Node
		held *string
		err  error
	)
	if opts.Shared {
		node, err = m.getNode(ctx, ident)
	} else {
		node, held, err = m.lockTarget(ctx, ident)
	}
	if err != nil {
		return nil, err
	}
	t := m.newTask(ctx, node.UUID, opts)
	t.log.DebugContext(ctx, "attempting to get lock on node", "type", t.lockType(), "purpose", t.purpose)
	if !opts.Shared {
		stub := node.UUID
		node, err = t.lock(ctx, node.ID, node.UUID, held)
		t.beforeWait = nil
		if err != nil {
			return nil, err
		}
		if node.UUID != stub {
			// An integer identity learns the node's UUID from the lock.
			t.log = taskLogger(ctx, m.log, node.UUID)
		}
	}
	return m.setUp(t, node, opts)
}

// ReserveOrUpdate looks at the node named by ident (an integer id or a
// UUID) under its lock without first taking it (store.ReserveOrUpdateNode):
// decide either changes the node, which is then saved in the same write
// transaction and returned, no task taken; or asks for the lock, and the
// exclusive task is returned as Acquire's with NoRetry would return it.
// decide runs inside the database's write transaction: it must only look
// at the node. A node another holds gives NodeLocked at once.
func (m *Manager) ReserveOrUpdate(ctx context.Context, ident string, opts AcquireOptions, decide func(*model.Node) (store.NodeVerdict, error)) (*Task, *model.Node, error) {
	id, want, err := parseIdent(ident)
	if err != nil {
		return nil, nil, err
	}
	reserved := false
	start := m.clock.Now()
	n, err := m.store.ReserveOrUpdateNode(ctx, m.settings.Host, id, want, func(n *model.Node) (store.NodeVerdict, error) {
		v, err := decide(n)
		reserved = v.Reserve
		return v, err
	})
	// The lock's metrics see this as a try of the lock, taken (for the
	// task or for the save) or refused.
	observe := func(conflicts int, outcome string) {
		if m.observe != nil {
			m.observe(m.clock.Now().Sub(start), conflicts, outcome)
		}
	}
	if err != nil {
		var locked *store.NodeLockedError
		if errors.As(err, &locked) {
			observe(1, "locked")
			return nil, nil, errs.NodeLocked(ident, locked.Host)
		}
		if e, ok := errs.As(err); ok {
			observe(0, "ok") // decide's own answer, on a node it had to itself
			return nil, nil, e
		}
		observe(0, "error")
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, errs.NodeNotFound(ident)
		}
		return nil, nil, storeError(err, "reserve node "+ident)
	}
	observe(0, "ok")
	if !reserved {
		return nil, n, nil
	}
	// The lock is taken: the task is exclusive and never retries for it.
	opts.Shared, opts.NoRetry, opts.BeforeWait = false, true, nil
	t := m.newTask(ctx, n.UUID, opts)
	t.log.DebugContext(ctx, "node reserved", "purpose", t.purpose, "seconds", m.clock.Now().Sub(start).Seconds())
	t, err = m.setUp(t, n, opts)
	return t, nil, err
}

// SharedFrom is Acquire of a shared task on a node the caller has just
// read, for periodic tasks that read their nodes a batch at a time
// instead of one read each: the task is exactly Acquire's, with n as the
// node it read.
func (m *Manager) SharedFrom(ctx context.Context, n *model.Node, opts AcquireOptions) (*Task, error) {
	opts.Shared = true
	return m.setUp(m.newTask(ctx, n.UUID, opts), n, opts)
}

// newTask is the task opts describe on the node named uuid, not yet set up.
func (m *Manager) newTask(ctx context.Context, uuid string, opts AcquireOptions) *Task {
	purpose := opts.Purpose
	if purpose == "" {
		purpose = "unspecified action"
	}
	return &Task{
		m:          m,
		base:       context.WithoutCancel(ctx),
		shared:     opts.Shared,
		purpose:    purpose,
		retry:      !opts.NoRetry,
		patient:    opts.Patient,
		tries:      opts.RetryAttempts,
		log:        taskLogger(ctx, m.log, uuid),
		beforeWait: opts.BeforeWait,
	}
}

// setUp makes node the task's and resolves its state machine and driver.
func (m *Manager) setUp(t *Task, node *model.Node, opts AcquireOptions) (*Task, error) {
	t.held = m.clock.Now()
	t.Node = node
	if err := t.initFSM(); err != nil {
		return nil, t.abandon(err)
	}
	if m.drivers != nil && !opts.NoDriver {
		var err error
		t.Driver, err = m.drivers.ForNode(t.Node)
		if err != nil {
			return nil, t.abandon(err)
		}
	}
	t.snapshot()
	return t, nil
}

// taskLogger names the node and the request the task was acquired for:
// interfaces and workers often log without a context, and their lines
// must still join the request's.
func taskLogger(ctx context.Context, log *slog.Logger, node string) *slog.Logger {
	attrs := []any{logging.KeyNode, node}
	if id, global := logging.RequestIDs(ctx); id != "" {
		attrs = append(attrs, logging.KeyRequestID, id)
		if global != "" {
			attrs = append(attrs, logging.KeyGlobalRequestID, global)
		}
	}
	return log.With(attrs...)
}

// abandon releases a task that failed to finish setting up and returns
// err, with the release error appended if there was one.
func (t *Task) abandon(err error) error {
	if rerr := t.Release(); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// getNode looks the node up as upstream's Node.get: an integer is an id, a
// UUID-like string a UUID; anything else is not an identity.
func (m *Manager) getNode(ctx context.Context, ident string) (*model.Node, error) {
	var (
		n   *model.Node
		err error
	)
	id, u, err := parseIdent(ident)
	if err != nil {
		return nil, err
	}
	if u == "" {
		n, err = m.store.GetNodeByID(ctx, id)
	} else {
		n, err = m.store.GetNodeByUUID(ctx, u)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.NodeNotFound(ident)
	}
	if err != nil {
		return nil, fmt.Errorf("load node %s: %w", ident, err)
	}
	return n, nil
}

// parseIdent reads a node identity as upstream's Node.get: an integer is
// an id (uuid empty), a UUID-like string a UUID in canonical form;
// anything else is InvalidIdentity.
func parseIdent(ident string) (id int64, uuidStr string, err error) {
	if n, perr := strconv.ParseInt(ident, 10, 64); perr == nil {
		return n, "", nil
	}
	u, perr := uuid.Parse(ident)
	if perr != nil {
		return 0, "", errs.New(errs.ClassInvalidIdentity, map[string]any{"identity": ident})
	}
	return 0, u.String(), nil
}

// lockTarget finds the node an exclusive acquire reserves: a stub with
// its id and UUID, and its holder as last seen. An integer identity is
// the id itself and costs no read (the reservation's read answers
// NodeNotFound); a UUID is looked up in the node's summary.
func (m *Manager) lockTarget(ctx context.Context, ident string) (*model.Node, *string, error) {
	id, want, err := parseIdent(ident)
	if err != nil {
		return nil, nil, err
	}
	if want == "" {
		return &model.Node{ID: id, UUID: ident}, nil, nil
	}
	found, err := m.store.ListNodeSummaries(ctx, store.NodeFilter{UUID: &want, IncludeChildren: true}, store.ListOptions{Limit: 1})
	if err != nil {
		return nil, nil, fmt.Errorf("load node %s: %w", ident, err)
	}
	if len(found) == 0 {
		return nil, nil, errs.NodeNotFound(ident)
	}
	return &model.Node{ID: found[0].ID, UUID: found[0].UUID}, found[0].Reservation, nil
}

// storeError turns the store's lock errors into Ironic's classes.
func storeError(err error, what string) error {
	var locked *store.NodeLockedError
	var notLocked *store.NodeNotLockedError
	var notFound *store.NotFoundError
	switch {
	case errors.As(err, &locked):
		return errs.NodeLocked(locked.Node, locked.Host)
	case errors.As(err, &notLocked):
		return errs.New(errs.ClassNodeNotLocked, map[string]any{"node": notLocked.Node})
	case errors.As(err, &notFound):
		return errs.NodeNotFound(notFound.Ident)
	}
	return fmt.Errorf("%s: %w", what, err)
}
