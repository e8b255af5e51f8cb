package conductor_test

import (
	"context"
	"testing"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

func TestPortRules(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Active)
		id := n.ID
		addr := "52:54:00:12:34:56"
		p, err := e.api.CreatePort(ctx, "", &model.Port{NodeID: &id, Address: &addr})
		if err != nil {
			t.Fatal(err)
		}
		other := "52:54:00:12:34:57"
		upd := *p
		upd.Address = &other
		_, err = e.api.UpdatePort(ctx, "", &upd)
		want := "Cannot update hardware address for port " + p.UUID + " as node " + n.UUID + " is active or has instance UUID assigned"
		if class(err) != "InvalidState" || err.Error() != want {
			t.Fatalf("address change on active node: %v", err)
		}
		upd = *p
		pxe := false
		upd.PXEEnabled = &pxe
		if _, err := e.api.UpdatePort(ctx, "", &upd); class(err) != "InvalidState" {
			t.Fatalf("connectivity change on active node: %v", err)
		}
		upd = *p
		upd.Extra = map[string]any{"k": "v"}
		got, err := e.api.UpdatePort(ctx, "", &upd)
		if err != nil || got.Extra["k"] != "v" {
			t.Fatalf("extra change: %v", err)
		}
		if err := e.api.DestroyPort(ctx, "", got); err != nil {
			t.Fatal(err)
		}
		if _, err := e.st.GetPortByID(ctx, p.ID); err == nil {
			t.Fatal("port not deleted")
		}
	})
}
