package store

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

func TestReserveReleaseErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{})
		got, err := e.s.ReserveNode(e.ctx, "host1", n.ID)
		if err != nil || model.Deref(got.Reservation) != "host1" {
			t.Fatalf("reserve: %+v %v", got, err)
		}
		_, err = e.s.ReserveNode(e.ctx, "host2", n.ID)
		if l := wantErr[*NodeLockedError](t, err, ErrNodeLocked); l.Host != "host1" || l.Node != n.UUID {
			t.Errorf("locked error %+v", l)
		}
		if l := wantErr[*NodeLockedError](t, e.s.ReleaseNode(e.ctx, "host2", n.ID), ErrNodeLocked); l.Host != "host1" {
			t.Errorf("release by other: %+v", l)
		}
		if err := e.s.ReleaseNode(e.ctx, "host1", n.ID); err != nil {
			t.Fatal(err)
		}
		wantErr[*NodeNotLockedError](t, e.s.ReleaseNode(e.ctx, "host1", n.ID), ErrNodeNotLocked)
		_, err = e.s.ReserveNode(e.ctx, "host1", 9999)
		wantErr[*NotFoundError](t, err, ErrNotFound)
		wantErr[*NotFoundError](t, e.s.ReleaseNode(e.ctx, "host1", 9999), ErrNotFound)
	})
}

func TestClearReservationsAndTargetPower(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		a := mustNode(t, e, model.Node{TargetPowerState: "power on"})
		b := mustNode(t, e, model.Node{})
		c := mustNode(t, e, model.Node{TargetPowerState: "power off"})
		for _, r := range []struct {
			host string
			id   int64
		}{{"Host1", a.ID}, {"host1", b.ID}, {"host2", c.ID}} {
			if _, err := e.s.ReserveNode(e.ctx, r.host, r.id); err != nil {
				t.Fatal(err)
			}
		}
		changed, err := e.s.ClearNodeTargetPowerState(e.ctx, "host1")
		if err != nil || len(changed) != 1 || changed[0] != a.UUID {
			t.Fatalf("clear target power: %v %v", changed, err)
		}
		got, _ := e.s.GetNodeByID(e.ctx, a.ID)
		if got.TargetPowerState != "" || model.Deref(got.LastError) != AbortedPowerOperation {
			t.Errorf("node a: %q %v", got.TargetPowerState, got.LastError)
		}
		released, err := e.s.ClearNodeReservationsForConductor(e.ctx, "host1")
		if err != nil || len(released) != 2 {
			t.Fatalf("clear reservations: %v %v", released, err)
		}
		got, _ = e.s.GetNodeByID(e.ctx, c.ID)
		if model.Deref(got.Reservation) != "host2" || got.TargetPowerState != "power off" {
			t.Errorf("other host's node changed: %+v", got)
		}
	})
}

// TestNodeWritesStampUpdatedAt: every UPDATE of a node row stamps
// updated_at, as oslo.db's onupdate does upstream, so taking and dropping
// the lock, a write that changes nothing and the conductor's bulk clears
// all show in the node's updated_at (issue #19).
func TestNodeWritesStampUpdatedAt(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{TargetPowerState: "power on"})
		if n.UpdatedAt != nil {
			t.Fatalf("new node has updated_at %v", n.UpdatedAt)
		}
		stamped := func(what string, got *model.Node) {
			t.Helper()
			if got == nil {
				var err error
				if got, err = e.s.GetNodeByID(e.ctx, n.ID); err != nil {
					t.Fatal(err)
				}
			}
			if got.UpdatedAt == nil || !got.UpdatedAt.Equal(e.clock.Now()) {
				t.Errorf("%s: updated_at = %v, want %v", what, got.UpdatedAt, e.clock.Now())
			}
		}
		steps := []struct {
			what string
			do   func() (*model.Node, error)
		}{
			{"reserve", func() (*model.Node, error) { return e.s.ReserveNode(e.ctx, "host1", n.ID) }},
			{"release", func() (*model.Node, error) { return nil, e.s.ReleaseNode(e.ctx, "host1", n.ID) }},
			{"write of an unchanged column", func() (*model.Node, error) { return e.s.UpdateNode(e.ctx, n, "driver") }},
			{"touch provisioning", func() (*model.Node, error) { return nil, e.s.TouchNodeProvisioning(e.ctx, n.ID) }},
			{"reserve again", func() (*model.Node, error) { return e.s.ReserveNode(e.ctx, "host1", n.ID) }},
			{"clear target power state", func() (*model.Node, error) {
				_, err := e.s.ClearNodeTargetPowerState(e.ctx, "host1")
				return nil, err
			}},
			{"clear reservations", func() (*model.Node, error) {
				_, err := e.s.ClearNodeReservationsForConductor(e.ctx, "host1")
				return nil, err
			}},
		}
		for _, st := range steps {
			e.clock.Advance(time.Second)
			got, err := st.do()
			if err != nil {
				t.Fatalf("%s: %v", st.what, err)
			}
			stamped(st.what, got)
		}
		// A lock attempt that fails writes nothing.
		if _, err := e.s.ReserveNode(e.ctx, "host1", n.ID); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Second)
		_, err := e.s.ReserveNode(e.ctx, "host2", n.ID)
		wantErr[*NodeLockedError](t, err, ErrNodeLocked)
		wantErr[*NodeLockedError](t, e.s.ReleaseNode(e.ctx, "host2", n.ID), ErrNodeLocked)
		got, err := e.s.GetNodeByID(e.ctx, n.ID)
		if err != nil || got.UpdatedAt == nil || !got.UpdatedAt.Equal(e.clock.Now().Add(-time.Second)) {
			t.Errorf("failed lock attempts moved updated_at to %v (%v)", got.UpdatedAt, err)
		}
	})
}

// TestReserveNodeRace: 50 contenders per round, one winner; losers see the
// lock, and nobody but the winner can release it.
func TestReserveNodeRace(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{})
		const workers, rounds = 50, 200
		for round := range rounds {
			var wins atomic.Int32
			var winner atomic.Value
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make(chan error, workers*2)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tag := fmt.Sprintf("host-%d", w)
					<-start
					_, err := e.s.ReserveNode(e.ctx, tag, n.ID)
					if err == nil {
						wins.Add(1)
						winner.Store(tag)
						return
					}
					if _, ok := err.(*NodeLockedError); !ok {
						errs <- fmt.Errorf("round %d %s: %v", round, tag, err)
					}
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if wins.Load() != 1 {
				t.Fatalf("round %d: %d winners", round, wins.Load())
			}
			holder := winner.Load().(string)
			// Every non-holder's release fails, concurrently, and leaves the lock.
			var rg sync.WaitGroup
			var bad atomic.Int32
			for w := range workers {
				tag := fmt.Sprintf("host-%d", w)
				if tag == holder {
					continue
				}
				rg.Add(1)
				go func() {
					defer rg.Done()
					if _, ok := e.s.ReleaseNode(e.ctx, tag, n.ID).(*NodeLockedError); !ok {
						bad.Add(1)
					}
				}()
			}
			rg.Wait()
			if bad.Load() != 0 {
				t.Fatalf("round %d: %d non-holders did not get NodeLocked on release", round, bad.Load())
			}
			got, err := e.s.GetNodeByID(e.ctx, n.ID)
			if err != nil || model.Deref(got.Reservation) != holder {
				t.Fatalf("round %d: reservation %v after foreign releases, want %s (%v)", round, got.Reservation, holder, err)
			}
			if err := e.s.ReleaseNode(e.ctx, holder, n.ID); err != nil {
				t.Fatalf("round %d: holder release: %v", round, err)
			}
		}
	})
}

// TestSaveAndReleaseNode: the save and the release are one write, made
// only by the lock's holder; a refusal writes nothing.
func TestSaveAndReleaseNode(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{DriverInternalInfo: map[string]any{"agent_url": "http://192.0.2.1:9999"}})
		held, err := e.s.ReserveNode(e.ctx, "host1", n.ID)
		if err != nil {
			t.Fatal(err)
		}
		held.DriverInternalInfo["agent_url"] = "http://192.0.2.2:9999"
		held.DriverInternalInfo["agent_version"] = "10.0.0"
		_, err = e.s.UpdateAndReleaseNode(e.ctx, "host2", held, "driver_internal_info")
		if l := wantErr[*NodeLockedError](t, err, ErrNodeLocked); l.Host != "host1" {
			t.Errorf("save and release by another host: %+v", l)
		}
		got, _ := e.s.GetNodeByID(e.ctx, n.ID)
		if got.DriverInternalInfo["agent_url"] != "http://192.0.2.1:9999" || model.Deref(got.Reservation) != "host1" {
			t.Fatalf("a refused save and release wrote: %v %v", got.DriverInternalInfo, got.Reservation)
		}
		e.clock.Advance(1500*time.Millisecond + 1234*time.Nanosecond)
		saved, err := e.s.UpdateAndReleaseNode(e.ctx, "host1", held, "driver_internal_info")
		if err != nil {
			t.Fatal(err)
		}
		got, _ = e.s.GetNodeByID(e.ctx, n.ID)
		if got.DriverInternalInfo["agent_url"] != "http://192.0.2.2:9999" || got.DriverInternalInfo["agent_version"] != "10.0.0" || got.Reservation != nil {
			t.Fatalf("after save and release: %v %v", got.DriverInternalInfo, got.Reservation)
		}
		// What it returns is what a read gives, without reading.
		if !reflect.DeepEqual(saved, got) {
			t.Errorf("save and release returned\n%+v\na read gives\n%+v", saved, got)
		}
		wantErr[*NodeNotLockedError](t, e.s.SaveAndReleaseNode(e.ctx, "host1", held, "driver_internal_info"), ErrNodeNotLocked)

		// A provision state change keeps UpdateNodeIf's timestamps.
		held, err = e.s.ReserveNode(e.ctx, "host1", n.ID)
		if err != nil {
			t.Fatal(err)
		}
		held.ProvisionState = "manageable"
		e.clock.Advance(2*time.Second + 7*time.Microsecond)
		saved, err = e.s.UpdateAndReleaseNode(e.ctx, "host1", held, "provision_state")
		if err != nil {
			t.Fatal(err)
		}
		got, _ = e.s.GetNodeByID(e.ctx, n.ID)
		if got.ProvisionState != "manageable" || got.ProvisionUpdatedAt == nil || got.Reservation != nil {
			t.Fatalf("after a state change: %q %v %v", got.ProvisionState, got.ProvisionUpdatedAt, got.Reservation)
		}
		if !reflect.DeepEqual(saved, got) {
			t.Errorf("save and release of a state change returned\n%+v\na read gives\n%+v", saved, got)
		}
	})
}

// TestReserveOrUpdateNode: one write transaction that either saves what
// decide changed on a free node without leaving it locked, or reserves
// it, or writes nothing; a held node is refused before decide sees it.
// What it returns is what a read gives.
func TestReserveOrUpdateNode(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{DriverInternalInfo: map[string]any{"agent_url": "http://192.0.2.1:9999"}})
		same := func(what string, got *model.Node) {
			t.Helper()
			read, err := e.s.GetNodeByID(e.ctx, n.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, read) {
				t.Errorf("%s returned\n%+v\na read gives\n%+v", what, got, read)
			}
		}

		e.clock.Advance(1500*time.Millisecond + 1234*time.Nanosecond)
		got, err := e.s.ReserveOrUpdateNode(e.ctx, "host1", 0, n.UUID, func(cur *model.Node) (NodeVerdict, error) {
			cur.DriverInternalInfo["agent_version"] = "10.0.0"
			return NodeVerdict{Fields: []string{"driver_internal_info"}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.Reservation != nil || got.DriverInternalInfo["agent_version"] != "10.0.0" || got.DriverInternalInfo["agent_url"] != "http://192.0.2.1:9999" {
			t.Fatalf("update: %v %v", got.Reservation, got.DriverInternalInfo)
		}
		same("update", got)

		before := got.UpdatedAt
		e.clock.Advance(time.Second)
		got, err = e.s.ReserveOrUpdateNode(e.ctx, "host1", n.ID, "", func(*model.Node) (NodeVerdict, error) { return NodeVerdict{}, nil })
		if err != nil {
			t.Fatal(err)
		}
		same("nothing", got)
		if !got.UpdatedAt.Equal(*before) {
			t.Errorf("a verdict of nothing wrote: updated_at %v, was %v", got.UpdatedAt, before)
		}

		refused := errors.New("refused")
		e.clock.Advance(time.Second)
		if _, err := e.s.ReserveOrUpdateNode(e.ctx, "host1", n.ID, "", func(cur *model.Node) (NodeVerdict, error) {
			cur.DriverInternalInfo["agent_version"] = "11"
			return NodeVerdict{Fields: []string{"driver_internal_info"}}, refused
		}); !errors.Is(err, refused) {
			t.Fatalf("decide's error: %v", err)
		}
		if cur, _ := e.s.GetNodeByID(e.ctx, n.ID); cur.DriverInternalInfo["agent_version"] != "10.0.0" || !cur.UpdatedAt.Equal(*before) {
			t.Errorf("a refusal wrote: %v %v", cur.DriverInternalInfo, cur.UpdatedAt)
		}

		e.clock.Advance(time.Second + 7*time.Microsecond)
		got, err = e.s.ReserveOrUpdateNode(e.ctx, "host1", 0, n.UUID, func(*model.Node) (NodeVerdict, error) { return NodeVerdict{Reserve: true}, nil })
		if err != nil {
			t.Fatal(err)
		}
		if model.Deref(got.Reservation) != "host1" {
			t.Fatalf("reserve: holder %v", got.Reservation)
		}
		same("reserve", got)

		called := false
		_, err = e.s.ReserveOrUpdateNode(e.ctx, "host2", n.ID, "", func(*model.Node) (NodeVerdict, error) {
			called = true
			return NodeVerdict{}, nil
		})
		if l := wantErr[*NodeLockedError](t, err, ErrNodeLocked); l.Host != "host1" || called {
			t.Errorf("held node: %+v, decide called %v", l, called)
		}
		_, err = e.s.ReserveOrUpdateNode(e.ctx, "host1", 0, "00000000-0000-0000-0000-000000000000", func(*model.Node) (NodeVerdict, error) { return NodeVerdict{}, nil })
		wantErr[*NotFoundError](t, err, ErrNotFound)
	})
}
