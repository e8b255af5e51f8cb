// Package ringmgr keeps the hash rings that say which conductor owns a
// node, as upstream's HashRingManager (ironic/common/hash_ring.py): one
// ring per "<conductor_group>:<hardware_type>" over the online conductors
// that enabled the hardware type, cached for [DEFAULT]hash_ring_reset_interval
// and rebuilt at once when a lookup misses, because a miss most often means
// a conductor just joined or left.
package ringmgr

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/rpc/hashring"
)

// Source lists the active conductors: hardware type → conductor group →
// hostnames (store.Store's GetActiveHardwareTypeDict).
type Source interface {
	GetActiveHardwareTypeDict(ctx context.Context, heartbeatTimeout time.Duration) (map[string]map[string][]string, error)
}

// Options are the ring settings, from ironic.conf.
type Options struct {
	// PartitionExponent is [DEFAULT]hash_partition_exponent (5).
	PartitionExponent int
	// Algorithm is [DEFAULT]hash_ring_algorithm ("md5").
	Algorithm string
	// ResetInterval is [DEFAULT]hash_ring_reset_interval (15 s).
	ResetInterval time.Duration
	// HeartbeatTimeout is [conductor]heartbeat_timeout: conductors silent
	// for longer are not in the rings.
	HeartbeatTimeout time.Duration
	// NeverExpire keeps the rings until a miss, as upstream does on SQLite,
	// where only one conductor can use the database anyway.
	NeverExpire bool
	// Now is the clock; nil is time.Now. Tests inject a fake one.
	Now func() time.Time
}

// Manager builds and caches the rings. It is safe for concurrent use.
type Manager struct {
	src  Source
	opts Options

	mu      sync.Mutex
	rings   map[string]*hashring.Ring // nil until loaded
	builtAt time.Time
}

// New returns a Manager reading conductors from src.
func New(src Source, opts Options) *Manager {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Manager{src: src, opts: opts}
}

// Key is the ring key of a hardware type in a conductor group.
func Key(group, hardwareType string) string { return group + ":" + hardwareType }

// GetRing returns the ring of hardwareType in group. With no conductor at
// all it fails with TemporaryFailure (503); when no conductor of group
// has hardwareType, with DriverNotFound (404). Either way the cache is
// dropped and the lookup tried once more on fresh rings first.
func (m *Manager) GetRing(ctx context.Context, hardwareType, group string) (*hashring.Ring, error) {
	rings, err := m.cached(ctx)
	if err != nil {
		return nil, err
	}
	if r, err := lookup(rings, Key(group, hardwareType), hardwareType); err == nil {
		return r, nil
	} else if !errs.Is(err, errs.ClassDriverNotFound) && !errs.Is(err, errs.ClassTemporaryFailure) {
		return nil, err
	}
	m.Reset()
	rings, err = m.cached(ctx)
	if err != nil {
		return nil, err
	}
	return lookup(rings, Key(group, hardwareType), hardwareType)
}

// GetDriverRing returns the ring of hardwareType over all conductor groups,
// built fresh from the database each time as upstream's driver routing
// does (it serves rare driver-level calls, where staleness would hurt
// more than the query). With no conductor at all it is DriverNotFound
// "No conductors registered.", since any driver request should be a 404.
func (m *Manager) GetDriverRing(ctx context.Context, hardwareType string) (*hashring.Ring, error) {
	d2c, err := m.src.GetActiveHardwareTypeDict(ctx, m.opts.HeartbeatTimeout)
	if err != nil {
		return nil, fmt.Errorf("hash ring: list active conductors: %w", err)
	}
	groups, ok := d2c[hardwareType]
	if !ok {
		// Upstream's miss resets the shared, cached rings too.
		m.Reset()
		if len(d2c) == 0 {
			return nil, errs.NewMessage(errs.ClassDriverNotFound, "No conductors registered.")
		}
		return nil, driverUnknown(hardwareType)
	}
	var hosts []string
	for _, hs := range groups {
		hosts = append(hosts, hs...)
	}
	return m.build(hosts)
}

// Reset drops the cached rings; the next lookup rebuilds them.
func (m *Manager) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rings = nil
}

// cached returns the rings, rebuilding them when they are older than the
// reset interval. The lock is held while loading so that a burst of
// lookups after expiry costs one query, as upstream's class lock does.
func (m *Manager) cached(ctx context.Context) (map[string]*hashring.Ring, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.opts.Now()
	if m.rings != nil && (m.opts.NeverExpire || now.Sub(m.builtAt) <= m.opts.ResetInterval) {
		return m.rings, nil
	}
	rings, err := m.load(ctx)
	if err != nil {
		return nil, err
	}
	m.rings, m.builtAt = rings, now
	return rings, nil
}

func (m *Manager) load(ctx context.Context) (map[string]*hashring.Ring, error) {
	d2c, err := m.src.GetActiveHardwareTypeDict(ctx, m.opts.HeartbeatTimeout)
	if err != nil {
		return nil, fmt.Errorf("hash ring: list active conductors: %w", err)
	}
	rings := map[string]*hashring.Ring{}
	for hw, groups := range d2c {
		for group, hosts := range groups {
			r, err := m.build(hosts)
			if err != nil {
				return nil, err
			}
			rings[Key(group, hw)] = r
		}
	}
	return rings, nil
}

func (m *Manager) build(hosts []string) (*hashring.Ring, error) {
	r, err := hashring.New(slices.Clone(hosts), m.opts.PartitionExponent, m.opts.Algorithm)
	if err != nil {
		return nil, fmt.Errorf("build hash ring: %w", err)
	}
	return r, nil
}

func lookup(rings map[string]*hashring.Ring, key, hardwareType string) (*hashring.Ring, error) {
	if len(rings) == 0 {
		return nil, errs.TemporaryFailure()
	}
	if r, ok := rings[key]; ok {
		return r, nil
	}
	return nil, driverUnknown(hardwareType)
}

func driverUnknown(hardwareType string) *errs.Error {
	return errs.NewMessage(errs.ClassDriverNotFound, fmt.Sprintf("The driver '%s' is unknown.", hardwareType))
}
