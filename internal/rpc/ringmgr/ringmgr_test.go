package ringmgr

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/rpc/hashring"
	"github.com/openkeel/ironic/internal/spectest"
	"github.com/openkeel/ironic/testing/fakeclock"
)

// fakeSource is a conductors table in memory: hardware type → group →
// hosts. It counts the loads.
type fakeSource struct {
	mu      sync.Mutex
	d2c     map[string]map[string][]string
	loads   int
	timeout time.Duration
}

func (f *fakeSource) GetActiveHardwareTypeDict(_ context.Context, heartbeatTimeout time.Duration) (map[string]map[string][]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads++
	f.timeout = heartbeatTimeout
	out := map[string]map[string][]string{}
	for hw, groups := range f.d2c {
		out[hw] = map[string][]string{}
		for g, hosts := range groups {
			out[hw][g] = append([]string(nil), hosts...)
		}
	}
	return out, nil
}

func (f *fakeSource) set(d2c map[string]map[string][]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.d2c = d2c
}

func (f *fakeSource) loadCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loads
}

func defaults(clock *fakeclock.Clock) Options {
	return Options{PartitionExponent: 5, Algorithm: "md5", ResetInterval: 15 * time.Second, HeartbeatTimeout: time.Minute, Now: clock.Now}
}

type ringVectors struct {
	Rings []struct {
		Setting   string   `json:"setting"`
		Exponent  int      `json:"hash_partition_exponent"`
		Algorithm string   `json:"hash_ring_algorithm"`
		Hosts     []string `json:"hosts"`
		Vectors   []struct {
			NodeUUID  string `json:"node_uuid"`
			Conductor string `json:"conductor"`
		} `json:"vectors"`
	} `json:"rings"`
}

// TestVectorsThroughManager replays every primary vector of the spec
// through the manager's rings: a node goes where upstream sends it.
func TestVectorsThroughManager(t *testing.T) {
	var v ringVectors
	spectest.LoadJSON(t, "ironic/core/hash-ring-vectors.json", &v)
	if len(v.Rings) == 0 {
		t.Fatal("no rings in the vectors")
	}
	total := 0
	for _, r := range v.Rings {
		t.Run(fmt.Sprintf("%s-%d", r.Setting, len(r.Hosts)), func(t *testing.T) {
			src := &fakeSource{d2c: map[string]map[string][]string{"redfish": {"": r.Hosts}}}
			opts := defaults(fakeclock.New(time.Time{}))
			opts.PartitionExponent, opts.Algorithm = r.Exponent, r.Algorithm
			m := New(src, opts)
			for _, vec := range r.Vectors {
				ring, err := m.GetRing(context.Background(), "redfish", "")
				if err != nil {
					t.Fatal(err)
				}
				if got, _ := ring.Primary(vec.NodeUUID); got != vec.Conductor {
					t.Errorf("node %s: %s, want %s", vec.NodeUUID, got, vec.Conductor)
				}
				total++
			}
		})
	}
	if total == 0 {
		t.Fatal("no vectors replayed")
	}
}

// TestOwnershipByGroup places 300 nodes over three conductors of one group
// and checks each lands where a ring over that group's hosts puts it,
// never on a conductor of another group.
func TestOwnershipByGroup(t *testing.T) {
	rack1 := []string{"ironic-conductor-0.ironic-conductor:8089", "ironic-conductor-1.ironic-conductor:8089", "ironic-conductor-2.ironic-conductor:8089"}
	src := &fakeSource{d2c: map[string]map[string][]string{
		"fake-hardware": {"rack1": rack1, "": {"other:8089"}},
		"ipmi":          {"rack1": rack1[:1]},
	}}
	m := New(src, defaults(fakeclock.New(time.Time{})))
	want, err := hashring.New(rack1, 5, "md5")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[string]int{}
	for range 300 {
		id := uuid.Must(uuid.NewRandomFromReader(readerOf(rng))).String()
		ring, err := m.GetRing(context.Background(), "fake-hardware", "rack1")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := ring.Primary(id)
		exp, _ := want.Primary(id)
		if got != exp {
			t.Errorf("node %s on %s, want %s", id, got, exp)
		}
		counts[got]++
	}
	for _, h := range rack1 {
		if counts[h] == 0 {
			t.Errorf("conductor %s owns no node: %v", h, counts)
		}
	}
	if len(counts) != len(rack1) {
		t.Errorf("nodes spread over %v, want only rack1's conductors", counts)
	}
	ring, err := m.GetRing(context.Background(), "ipmi", "rack1")
	if err != nil {
		t.Fatal(err)
	}
	if hosts := ring.Hosts(); len(hosts) != 1 || hosts[0] != rack1[0] {
		t.Errorf("ipmi ring hosts %v, want only %s", hosts, rack1[0])
	}
	if src.loadCount() != 1 {
		t.Errorf("%d loads, want 1 (cached)", src.loadCount())
	}
	if src.timeout != time.Minute {
		t.Errorf("heartbeat timeout passed %v, want 1m", src.timeout)
	}
}

type rngReader struct{ r *rand.Rand }

func (r rngReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r.r.UintN(256))
	}
	return len(p), nil
}

func readerOf(r *rand.Rand) rngReader { return rngReader{r} }

// TestCacheExpiry checks that rings live hash_ring_reset_interval on the
// clock, then are rebuilt; NeverExpire keeps them.
func TestCacheExpiry(t *testing.T) {
	for _, never := range []bool{false, true} {
		t.Run(fmt.Sprintf("never=%v", never), func(t *testing.T) {
			clock := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			src := &fakeSource{d2c: map[string]map[string][]string{"redfish": {"": {"a:8089"}}}}
			opts := defaults(clock)
			opts.NeverExpire = never
			m := New(src, opts)
			ctx := context.Background()
			hosts := func() []string {
				t.Helper()
				r, err := m.GetRing(ctx, "redfish", "")
				if err != nil {
					t.Fatal(err)
				}
				return r.Hosts()
			}
			if h := hosts(); len(h) != 1 {
				t.Fatalf("hosts %v", h)
			}
			src.set(map[string]map[string][]string{"redfish": {"": {"a:8089", "b:8089"}}})
			clock.Advance(15 * time.Second)
			if h := hosts(); len(h) != 1 || src.loadCount() != 1 {
				t.Errorf("at the interval: hosts %v after %d loads, want the cached ring", h, src.loadCount())
			}
			clock.Advance(time.Second)
			h := hosts()
			if never {
				if len(h) != 1 || src.loadCount() != 1 {
					t.Errorf("NeverExpire: hosts %v after %d loads, want the cached ring", h, src.loadCount())
				}
				return
			}
			if len(h) != 2 || src.loadCount() != 2 {
				t.Errorf("past the interval: hosts %v after %d loads, want a rebuilt ring of 2", h, src.loadCount())
			}
		})
	}
}

// TestMissRebuilds checks that a lookup that misses rebuilds the rings at
// once, so a conductor that just registered is found without waiting.
func TestMissRebuilds(t *testing.T) {
	clock := fakeclock.New(time.Time{})
	src := &fakeSource{d2c: map[string]map[string][]string{"redfish": {"": {"a:8089"}}}}
	opts := defaults(clock)
	opts.NeverExpire = true
	m := New(src, opts)
	ctx := context.Background()
	if _, err := m.GetRing(ctx, "redfish", ""); err != nil {
		t.Fatal(err)
	}
	src.set(map[string]map[string][]string{"redfish": {"": {"a:8089"}, "rack2": {"b:8089"}}})
	r, err := m.GetRing(ctx, "redfish", "rack2")
	if err != nil {
		t.Fatalf("new group not found after a miss: %v", err)
	}
	if h := r.Hosts(); len(h) != 1 || h[0] != "b:8089" {
		t.Errorf("rack2 hosts %v", h)
	}
	if src.loadCount() != 2 {
		t.Errorf("%d loads, want 2", src.loadCount())
	}
}

func wantErr(t *testing.T, err error, class errs.Class, code int, msg string) {
	t.Helper()
	e, ok := errs.As(err)
	if !ok {
		t.Fatalf("error %v is not an Ironic error", err)
	}
	if e.Class != class || e.Code != code || (msg != "" && e.Message != msg) {
		t.Errorf("got %s %d %q, want %s %d %q", e.Class, e.Code, e.Message, class, code, msg)
	}
}

// TestMisses checks upstream's errors: no conductor at all is a 503
// TemporaryFailure, an unknown driver or group a 404 DriverNotFound; for
// driver rings, no conductor is DriverNotFound too.
func TestMisses(t *testing.T) {
	ctx := context.Background()
	empty := New(&fakeSource{}, defaults(fakeclock.New(time.Time{})))
	_, err := empty.GetRing(ctx, "redfish", "")
	wantErr(t, err, "TemporaryFailure", 503, "Resource temporarily unavailable, please retry.")
	_, err = empty.GetDriverRing(ctx, "redfish")
	wantErr(t, err, "DriverNotFound", 404, "No conductors registered.")

	src := &fakeSource{d2c: map[string]map[string][]string{"redfish": {"rack1": {"a:8089"}, "rack2": {"b:8089"}}}}
	m := New(src, defaults(fakeclock.New(time.Time{})))
	_, err = m.GetRing(ctx, "ipmi", "rack1")
	wantErr(t, err, "DriverNotFound", 404, "The driver 'ipmi' is unknown.")
	_, err = m.GetRing(ctx, "redfish", "")
	wantErr(t, err, "DriverNotFound", 404, "The driver 'redfish' is unknown.")
	_, err = m.GetDriverRing(ctx, "ipmi")
	wantErr(t, err, "DriverNotFound", 404, "The driver 'ipmi' is unknown.")
	r, err := m.GetDriverRing(ctx, "redfish")
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Hosts(); len(h) != 2 {
		t.Errorf("driver ring over all groups has hosts %v, want a and b", h)
	}
	if _, err := New(src, Options{PartitionExponent: 5, Algorithm: "crc32"}).GetRing(ctx, "redfish", "rack1"); err == nil {
		t.Error("unknown algorithm accepted")
	}
}
