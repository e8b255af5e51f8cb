// Package conductor is the conductor service (upstream
// ironic/conductor/base_manager.py and manager.py): it registers itself,
// answers the RPC calls of rpc.ConductorAPI under node locks, runs the
// provisioning flows (deploy, clean, service, rescue, inspect, verify…)
// in its worker pool with the step framework, and runs the periodic tasks
// over the nodes the hash ring gives it.
package conductor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/conductor/steps"
	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/conductor/workers"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/notify"
	"github.com/openkeel/ironic/internal/nova"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/rpc/ovo"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/swift"
)

var _ rpc.ConductorAPI = (*Conductor)(nil)

// Clock is the conductor's time source (lock retries, wait steps, history
// durations); tests give a manual one.
type Clock = task.Clock

// Options are what New needs. Store, Drivers and Config are required.
type Options struct {
	Store   store.Store
	Drivers *driver.Drivers
	Config  *config.Config
	// Host is the name the conductor registers and locks nodes under;
	// [DEFAULT]/host when empty.
	Host string
	// Group is the conductor group; [conductor]/conductor_group when empty.
	Group  string
	Logger *slog.Logger
	Clock  Clock
	// Pool runs the spawned work; one sized from the configuration when nil.
	Pool *workers.Pool
	// History receives node history records; the store when nil.
	History task.History
	// Owns tells whether a node is mapped to this conductor by the hash
	// ring; periodic tasks only touch nodes it accepts. All nodes when nil
	// (a single conductor).
	Owns func(n *model.Node) bool
	// ObservePeriodic, when set, is told of every pass of a periodic task:
	// when it was due, when it started and how long it took (metrics).
	ObservePeriodic func(PeriodicRun)
	// ObserveLock, when set, hears of every exclusive node lock taken.
	ObserveLock task.LockObserver
	// Notifier sends the conductor's versioned notifications; none are
	// sent when nil. Stop closes it, flushing what the broker takes.
	Notifier *notify.Notifier
	// Nova receives power-update events; none are sent when nil.
	Nova *nova.Client
	// Sensors sends the sensor data notifications ([sensor_data],
	// periodic_sensors.go); none are sent when nil. Stop closes it.
	Sensors *notify.SensorNotifier
	// ObserveSensors, when set, hears of every node's sensor data the
	// periodic collects (the /metrics sensor series).
	ObserveSensors func(SensorReport)
	// MaskSecrets is oslo.utils' mask_dict_password, applied to the step
	// arguments the step flow records show (stepflows.go); the caller
	// passes the API's so that history masks what the API does. Without
	// it the values under secret keys are masked.
	MaskSecrets func(map[string]any) map[string]any
}

// Conductor is one conductor service.
type Conductor struct {
	store   store.Store
	drivers *driver.Drivers
	cfg     *config.Config
	host    string
	group   string
	log     *slog.Logger
	clock   Clock
	pool    *workers.Pool
	tasks   *task.Manager
	owns    func(n *model.Node) bool
	observe func(PeriodicRun)
	// draining is set by Drain: Stop waits drain_shutdown_timeout.
	draining atomic.Bool
	// notifier and nova carry what the conductor tells the rest of the
	// cloud (notify.go).
	notifier *notify.Notifier
	nova     *nova.Client
	// sensors and observeSensors carry the sensor data.
	sensors        *notify.SensorNotifier
	observeSensors func(SensorReport)
	// mask is Options.MaskSecrets.
	mask func(map[string]any) map[string]any

	// priorityOverrides are the step priority overrides of the kinds
	// that have them ([conductor]/clean_step_priority_override and
	// verify_step_priority_override).
	priorityOverrides map[driver.StepKind]map[string]int

	// swiftOnce builds swift, the [swift] object-store client, on first
	// use (objectStore).
	swiftOnce sync.Once
	swift     *swift.Client

	// objects are the versions of upstream's objects the rows this
	// conductor creates are written in: those of
	// [DEFAULT]/pin_release_version, so that an upstream Ironic of that
	// release sharing the database reads them (it refuses a row of a
	// version newer than its own, or of none).
	objects *ovo.Codec

	mu          sync.Mutex
	conductorID int64
	started     bool
	stop        context.CancelFunc
	loops       sync.WaitGroup
	powerFails  map[string]int
	push        *pushEvents // the event listener, when on (pushevents.go)
}

// New builds a conductor; Start registers it.
func New(o Options) (*Conductor, error) {
	if o.Store == nil || o.Drivers == nil || o.Config == nil {
		return nil, errors.New("conductor: Store, Drivers and Config are required")
	}
	c := &Conductor{
		store: o.Store, drivers: o.Drivers, cfg: o.Config, host: o.Host, group: o.Group,
		log: o.Logger, clock: o.Clock, pool: o.Pool, owns: o.Owns, observe: o.ObservePeriodic, powerFails: map[string]int{},
		notifier: o.Notifier, nova: o.Nova, sensors: o.Sensors, observeSensors: o.ObserveSensors, mask: o.MaskSecrets,
	}
	objects, perr := ovo.NewCodec(o.Config.StringOf(config.DefaultPinReleaseVersion))
	if perr != nil {
		return nil, fmt.Errorf("conductor: %w", perr)
	}
	c.objects = objects
	if c.host == "" {
		c.host = o.Config.StringOf(config.DefaultHost)
	}
	if c.group == "" {
		c.group = o.Config.StringOf(config.ConductorConductorGroup)
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	c.log = c.log.With("conductor", c.host)
	if c.clock == nil {
		c.clock = clock.Real{}
	}
	if c.owns == nil {
		c.owns = func(*model.Node) bool { return true }
	}
	if c.pool == nil {
		p, err := workers.New(workers.SettingsFromConfig(o.Config), workers.WithLogger(c.log))
		if err != nil {
			return nil, fmt.Errorf("conductor worker pool: %w", err)
		}
		c.pool = p
	}
	c.priorityOverrides = map[driver.StepKind]map[string]int{}
	var err error
	if c.priorityOverrides[driver.StepClean], err = priorityOverrides(o.Config, config.ConductorCleanStepPriorityOverride); err != nil {
		return nil, err
	}
	if c.priorityOverrides[driver.StepVerify], err = priorityOverrides(o.Config, config.ConductorVerifyStepPriorityOverride); err != nil {
		return nil, err
	}
	// Upstream loads the redfish inspect interface's hooks with the
	// interface, so a bad [redfish]/inspection_hooks stops the conductor
	// at start-up rather than failing each inspection.
	if slices.Contains(o.Drivers.Enabled(driver.KindInspect), "redfish") {
		if _, err := c.redfishInspectionHooks("redfish"); err != nil {
			return nil, err
		}
	}
	hist := o.History
	if hist == nil {
		hist = o.Store
	}
	settings := task.SettingsFromConfig(o.Config)
	settings.Host = c.host
	c.tasks = task.NewManager(o.Store, o.Drivers, settings,
		task.WithClock(c.clock), task.WithLogger(c.log), task.WithHistory(hist), task.WithLockObserver(o.ObserveLock), task.WithNotifier(o.Notifier))
	return c, nil
}

// Host is the name the conductor registered under.
func (c *Conductor) Host() string { return c.host }

// ID is the conductor's row id, known once started.
func (c *Conductor) ID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conductorID
}

// Tasks is the conductor's task manager.
func (c *Conductor) Tasks() *task.Manager { return c.tasks }

// Start does what upstream's init_host does: it checks that hardware
// types are enabled, clears the target power states and reservations this
// host left behind, registers the conductor row (updating a row left
// online by an unclean stop) with its hardware interfaces, fails the
// nodes left in STUCK_STATES_TREATED_AS_FAIL, starts the keepalive and
// the periodic tasks, which run until Stop, and starts the consoles of its
// console_enabled nodes (console_start.go).
func (c *Conductor) Start(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New("attempt to start an already running conductor manager")
	}
	c.mu.Unlock()
	hw := c.drivers.EnabledHardwareTypes()
	if len(hw) == 0 {
		c.log.ErrorContext(ctx, "conductor cannot be started because no hardware types were specified in the 'enabled_hardware_types' config option")
		return errs.New(errs.ClassNoDriversLoaded, map[string]any{"conductor": c.host})
	}
	rows, err := c.drivers.HardwareInterfaces()
	if err != nil {
		return err
	}
	if _, err := c.store.ClearNodeTargetPowerState(ctx, c.host); err != nil {
		return fmt.Errorf("start conductor %s: %w", c.host, err)
	}
	if _, err := c.store.ClearNodeReservationsForConductor(ctx, c.host); err != nil {
		return fmt.Errorf("start conductor %s: %w", c.host, err)
	}
	ifaces := make([]model.ConductorHardwareInterface, 0, len(rows))
	for _, r := range rows {
		ifaces = append(ifaces, model.ConductorHardwareInterface{
			HardwareType: r.HardwareType, InterfaceType: string(r.InterfaceType),
			InterfaceName: r.InterfaceName, Default: r.Default,
		})
	}
	// The event listener opens before the conductor registers, so that a
	// busy port or a bad certificate leaves no conductor row behind.
	servePush, err := c.listenPushEvents()
	if err != nil {
		return err
	}
	cond, err := c.store.RegisterConductor(ctx, c.host, c.group, ifaces, false)
	var already *store.ConductorAlreadyRegisteredError
	if errors.As(err, &already) {
		c.log.WarnContext(ctx, "a conductor with this hostname was previously registered, updating registration")
		cond, err = c.store.RegisterConductor(ctx, c.host, c.group, ifaces, true)
	}
	if err != nil {
		closed, cancel := context.WithCancel(ctx)
		cancel()
		servePush(closed)
		return fmt.Errorf("register conductor %s: %w", c.host, err)
	}
	c.mu.Lock()
	c.conductorID = cond.ID
	c.started = true
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.stop = cancel
	c.mu.Unlock()

	c.correctStuckStates(ctx)

	c.loops.Add(1)
	go func() {
		defer c.loops.Done()
		c.keepalive(loopCtx)
	}()
	c.loops.Add(1)
	go func() {
		defer c.loops.Done()
		servePush(loopCtx)
	}()
	c.startPeriodics(loopCtx)
	c.loops.Add(1)
	go func() {
		defer c.loops.Done()
		c.startConsoles(loopCtx)
	}()
	c.log.InfoContext(ctx, "successfully started conductor")
	return nil
}

// correctStuckStates fails the nodes left in a state no conductor can
// resume (upstream _correct_stuck_states). Upstream stops after
// periodic_max_workers nodes per state here too, which leaves the others
// in their transient state with nobody to ever fail them; this runs once
// and spawns nothing, so every stuck node is failed.
func (c *Conductor) correctStuckStates(ctx context.Context) {
	for _, state := range states.StuckStatesTreatedAsFail.Values() {
		msg := fmt.Sprintf("The %s state can't be resumed by conductor %s. Moving to fail state.", state, c.host)
		f := store.NodeFilter{Reserved: boolPtr(false), ProvisionState: &state}
		c.failIfInState(ctx, f, []string{state}, "provision_updated_at", failOptions{lastError: msg, all: true})
	}
}

// keepalive touches the conductor row every heartbeat_interval so that
// the others keep it in their hash rings.
func (c *Conductor) keepalive(ctx context.Context) {
	interval := c.cfg.DurationOf(config.ConductorHeartbeatInterval)
	if interval <= 0 {
		interval = 10 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := c.store.TouchConductor(ctx, c.host, true); err != nil && ctx.Err() == nil {
			c.log.WarnContext(ctx, "error while heartbeating", "error", err)
		}
	}
}

// Stop does what upstream's del_host does: it clears this host's
// reservations, marks the conductor offline, stops the keepalive and the
// periodic tasks and waits up to [conductor]/graceful_shutdown_timeout (or
// [DEFAULT]/drain_shutdown_timeout after Drain; drain.go) for running work
// (whose locks are released as each ends).
func (c *Conductor) Stop(ctx context.Context) error {
	c.mu.Lock()
	if !c.started {
		c.mu.Unlock()
		return nil
	}
	c.started = false
	stop := c.stop
	c.mu.Unlock()
	stop()
	c.loops.Wait()
	var errsOut []error
	if err := c.store.UnregisterConductor(ctx, c.host); err != nil && !errors.Is(err, store.ErrNotFound) {
		errsOut = append(errsOut, fmt.Errorf("unregister conductor %s: %w", c.host, err))
	}
	wctx, cancel := WithShutdownTimeout(ctx, c.ShutdownTimeout())
	defer cancel()
	if err := c.pool.Wait(wctx); err != nil {
		c.log.WarnContext(ctx, "workers still running at shutdown", "error", err)
	}
	if _, err := c.store.ClearNodeReservationsForConductor(context.WithoutCancel(ctx), c.host); err != nil {
		errsOut = append(errsOut, fmt.Errorf("release locks of %s: %w", c.host, err))
	}
	c.notifier.Close()
	c.sensors.Close()
	c.log.InfoContext(ctx, "successfully stopped conductor")
	return errors.Join(errsOut...)
}

// acquire takes the node's lock (exclusive unless shared) for purpose.
func (c *Conductor) acquire(ctx context.Context, nodeID, purpose string, shared bool) (*task.Task, error) {
	return c.tasks.Acquire(ctx, nodeID, task.AcquireOptions{Shared: shared, Purpose: purpose})
}

// spawner is the pool seen as the task manager's Spawner.
func (c *Conductor) spawner() task.Spawner { return c.pool }

// record writes a node history event, logging a failure to write it.
func record(ctx context.Context, t *task.Task, event, eventType string, isErr bool) {
	if err := t.RecordHistory(ctx, task.HistoryEvent{Event: event, EventType: eventType, Error: isErr}); err != nil {
		t.Log().ErrorContext(ctx, "record node history", "error", err)
	}
}

// save writes the task's node, logging a failure: used where upstream
// saves inside error handling and carries on.
func save(ctx context.Context, t *task.Task) {
	if err := t.Save(ctx); err != nil {
		t.Log().ErrorContext(ctx, "save node", "error", err)
	}
}

func boolPtr(b bool) *bool { return &b }

func priorityOverrides(c *config.Config, k config.DictOpt) (map[string]int, error) {
	out, err := steps.PriorityOverrides(c.DictOf(k))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.Option(), err)
	}
	return out, nil
}
