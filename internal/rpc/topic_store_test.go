package rpc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc/hashring"
	"github.com/openkeel/ironic/internal/rpc/ringmgr"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
)

var (
	_ ringmgr.Source   = store.Store(nil)
	_ OnlineConductors = store.Store(nil)
)

// TestRoutingOverStore registers three conductors in a real database and
// routes 300 nodes: each goes to its ring owner, and a conductor whose
// heartbeat stops drops out of the rings once they expire.
func TestRoutingOverStore(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		ctx := context.Background()
		now := time.Date(2026, 8, 20, 12, 0, 0, 0, time.UTC)
		clock := func() time.Time { return now }
		st := store.New(db, store.WithClock(clock))
		hosts := []string{"ironic-conductor-0.ironic-conductor:8089", "ironic-conductor-1.ironic-conductor:8089", "ironic-conductor-2.ironic-conductor:8089"}
		for _, h := range hosts {
			ifaces := []model.ConductorHardwareInterface{{HardwareType: "fake-hardware", InterfaceType: "power", InterfaceName: "fake", Default: true}}
			if _, err := st.RegisterConductor(ctx, h, "", ifaces, false); err != nil {
				t.Fatal(err)
			}
		}
		rings := ringmgr.New(st, ringmgr.Options{PartitionExponent: 5, Algorithm: "md5", ResetInterval: 15 * time.Second,
			HeartbeatTimeout: 60 * time.Second, Now: clock})
		r := NewRouter(RouterOptions{Rings: rings, Conductors: st, HeartbeatTimeout: 60 * time.Second})
		want, err := hashring.New(hosts, 5, "md5")
		if err != nil {
			t.Fatal(err)
		}
		owners := map[string]int{}
		for i := range 300 {
			id := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "node-%d", i)).String()
			got, err := r.GetConductorFor(ctx, &model.Node{UUID: id, Driver: "fake-hardware"})
			if err != nil {
				t.Fatal(err)
			}
			if exp, _ := want.Primary(id); got != exp {
				t.Errorf("node %s on %s, want %s", id, got, exp)
			}
			owners[got]++
		}
		if len(owners) != 3 {
			t.Errorf("ownership %v, want all three conductors", owners)
		}

		// Two keep their heartbeat, the third falls silent.
		now = now.Add(61 * time.Second)
		for _, h := range hosts[:2] {
			if err := st.TouchConductor(ctx, h, true); err != nil {
				t.Fatal(err)
			}
		}
		survivors, err := hashring.New(hosts[:2], 5, "md5")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			id := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "node-%d", i)).String()
			got, err := r.GetConductorFor(ctx, &model.Node{UUID: id, Driver: "fake-hardware"})
			if err != nil {
				t.Fatal(err)
			}
			if exp, _ := survivors.Primary(id); got != exp {
				t.Errorf("after expiry node %s on %s, want %s", id, got, exp)
			}
		}
		topic, err := r.GetRandomTopic(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if h := HostFromTopic(topic); h == hosts[2] {
			t.Errorf("random topic %s names the silent conductor", topic)
		}
	})
}
