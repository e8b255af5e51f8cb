package conductor_test

import (
	"context"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
)

func TestStartRegistersAndStopUnregisters(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withoutStart())
		ctx := context.Background()
		// A row left online by an unclean stop is taken over, as upstream
		// does after ConductorAlreadyRegistered.
		if _, err := e.st.RegisterConductor(ctx, testHost, "", nil, false); err != nil {
			t.Fatal(err)
		}
		e.start(e.c)
		cond, err := e.st.GetConductor(ctx, testHost, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !cond.Online || cond.ID != e.c.ID() {
			t.Fatalf("conductor row %+v, id %d", cond, e.c.ID())
		}
		ifaces, err := e.st.ListConductorHardwareInterfaces(ctx, cond.ID)
		if err != nil {
			t.Fatal(err)
		}
		defaults := map[string]string{}
		for _, i := range ifaces {
			if i.HardwareType != "fake-hardware" {
				t.Fatalf("unexpected hardware type %q", i.HardwareType)
			}
			if i.Default {
				defaults[i.InterfaceType] = i.InterfaceName
			}
		}
		if defaults["power"] != "fake" || defaults["network"] != "noop" || defaults["vendor"] != "fake" || len(defaults) != 13 {
			t.Fatalf("defaults %v", defaults)
		}
		if err := e.c.Start(ctx); err == nil {
			t.Fatal("second Start succeeded")
		}
		held := e.node(states.Manageable)
		if _, err := e.st.ReserveNode(ctx, testHost, held.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.c.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		cond, err = e.st.GetConductor(ctx, testHost, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cond.Online {
			t.Fatal("conductor still online after Stop")
		}
		if got := e.get(held); got.Reservation != nil {
			t.Fatalf("lock %v kept after Stop", *got.Reservation)
		}
	})
}

func TestStartClearsOwnReservationsAndFailsStuckStates(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withoutStart())
		ctx := context.Background()
		type stuck struct {
			state, want string
		}
		cases := []stuck{
			{states.Deploying, states.DeployFail},
			{states.Cleaning, states.CleanFail},
			{states.Verifying, states.Enroll},
			{states.Inspecting, states.InspectFail},
			{states.Adopting, states.AdoptFail},
			{states.Rescuing, states.RescueFail},
			{states.Unrescuing, states.UnrescueFail},
			{states.Deleting, states.Error},
			{states.Servicing, states.ServiceFail},
		}
		if len(cases) != states.StuckStatesTreatedAsFail.Len() {
			t.Fatalf("cases cover %d of %d stuck states", len(cases), states.StuckStatesTreatedAsFail.Len())
		}
		nodes := make([]*model.Node, len(cases))
		for i, c := range cases {
			nodes[i] = e.node(c.state, func(n *model.Node) { n.TargetProvisionState = states.Active })
			// Locked by this very host before it died.
			if _, err := e.st.ReserveNode(ctx, testHost, nodes[i].ID); err != nil {
				t.Fatal(err)
			}
		}
		other := e.node(states.Deploying)
		if _, err := e.st.ReserveNode(ctx, "conductor-b", other.ID); err != nil {
			t.Fatal(err)
		}
		e.start(e.c)
		for i, c := range cases {
			n := e.get(nodes[i])
			want := "The " + c.state + " state can't be resumed by conductor " + testHost + ". Moving to fail state."
			if n.ProvisionState != c.want || n.Reservation != nil || deref(n.LastError) != want {
				t.Errorf("%s: have %q reservation %v last_error %q", c.state, n.ProvisionState, deref(n.Reservation), deref(n.LastError))
			}
			h := e.history(n)
			if len(h) == 0 || h[len(h)-1] != "ERROR|transition|"+want+"|"+c.state {
				t.Errorf("%s: history %v", c.state, h)
			}
		}
		// Another conductor's lock is not this one's to clear.
		if n := e.get(other); n.ProvisionState != states.Deploying || deref(n.Reservation) != "conductor-b" {
			t.Fatalf("other conductor's node changed: %q %v", n.ProvisionState, deref(n.Reservation))
		}
	})
}

// More nodes than [conductor]/periodic_max_workers are stuck: start-up
// fails them all, where upstream's cap would leave some stuck for good.
func TestStartFailsEveryStuckNode(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withoutStart())
		ctx := context.Background()
		max := e.cfg.Int("conductor", "periodic_max_workers")
		nodes := make([]*model.Node, 2*max+1)
		for i := range nodes {
			nodes[i] = e.node(states.Deploying, func(n *model.Node) { n.TargetProvisionState = states.Active })
			if _, err := e.st.ReserveNode(ctx, testHost, nodes[i].ID); err != nil {
				t.Fatal(err)
			}
		}
		e.start(e.c)
		for _, n := range nodes {
			if got := e.get(n); got.ProvisionState != states.DeployFail || got.Reservation != nil {
				t.Errorf("node %s: %q reserved by %q", n.UUID, got.ProvisionState, deref(got.Reservation))
			}
		}
	})
}

func TestKeepaliveTouchesConductor(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "heartbeat_interval", "1"))
		ctx := context.Background()
		first, err := e.st.GetConductor(ctx, testHost, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The store stamps with the test clock: move it so a touch shows.
		e.clock.Advance(30 * time.Second)
		// The keepalive runs on its own goroutine: wait for its touch.
		await.Until(t, 10*time.Second, "the keepalive touching the conductor row", func() bool {
			cur, err := e.st.GetConductor(ctx, testHost, nil)
			if err != nil {
				t.Fatal(err)
			}
			return cur.UpdatedAt != nil && first.UpdatedAt != nil && cur.UpdatedAt.After(*first.UpdatedAt)
		})
	})
}

func TestStopWaitsForRunningWork(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable, scriptedNode)
		g := gate(e)
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "provide"); err != nil {
			t.Fatal(err)
		}
		stopped := make(chan error, 1)
		go func() { stopped <- e.c.Stop(ctx) }()
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned while a worker held a lock: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		close(g)
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		got := e.get(n)
		e.expect(got, states.Available, "", "")
		if got.Reservation != nil {
			t.Fatal("lock kept")
		}
	})
}
