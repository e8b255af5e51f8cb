package conductor_test

import (
	"context"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestCleanupStaleConductors(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		if _, err := e.st.RegisterConductor(ctx, "conductor-old", "", nil, false); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(time.Hour)
		if _, err := e.st.RegisterConductor(ctx, "conductor-recent", "", nil, false); err != nil {
			t.Fatal(err)
		}
		// conductor-old went silent 14 days and 1 hour ago, conductor-recent
		// 14 days ago minus a minute.
		e.clock.Advance(14*24*time.Hour - time.Minute)
		if err := e.st.TouchConductor(ctx, testHost, true); err != nil {
			t.Fatal(err)
		}
		e.c.CleanupStaleConductors(ctx)
		if _, err := e.st.GetConductor(ctx, "conductor-old", nil); err == nil {
			t.Fatal("stale conductor kept")
		}
		for _, h := range []string{"conductor-recent", testHost} {
			if _, err := e.st.GetConductor(ctx, h, nil); err != nil {
				t.Fatalf("%s deleted: %v", h, err)
			}
		}
	})
}

func TestManageNodeHistory(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "node_history_max_entries", "2"))
		ctx := context.Background()
		me := e.c.ID()
		n := e.node(states.Active, func(n *model.Node) { n.ConductorAffinity = &me })
		for i := 0; i < 5; i++ {
			id := n.ID
			ev := "event " + fmtInt(int64(i))
			if _, err := e.st.CreateNodeHistory(ctx, &model.NodeHistory{NodeID: &id, Event: &ev, CreatedAt: e.clock.Now()}); err != nil {
				t.Fatal(err)
			}
			e.clock.Advance(time.Second)
		}
		e.c.ManageNodeHistory(ctx)
		rows, err := e.st.ListNodeHistory(ctx, n.ID, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || deref(rows[0].Event) != "event 3" || deref(rows[1].Event) != "event 4" {
			var evs []string
			for _, r := range rows {
				evs = append(evs, deref(r.Event))
			}
			t.Fatalf("kept %v, want the 2 newest", evs)
		}
	})
}
