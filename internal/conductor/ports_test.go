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

// TestPortPhysnetInPortgroup: a port joins a portgroup (or is created in
// one) only on the physical network of the portgroup's other ports,
// None included, as upstream's validate_port_physnet requires.
func TestPortPhysnetInPortgroup(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable)
		id := n.ID
		pgAddr := "52:54:00:12:34:50"
		pg, err := e.st.CreatePortgroup(ctx, &model.Portgroup{NodeID: &id, Address: &pgAddr})
		if err != nil {
			t.Fatal(err)
		}
		physnet1 := "physnet1"
		addr1, addr2, addr3 := "52:54:00:12:34:51", "52:54:00:12:34:52", "52:54:00:12:34:53"
		if _, err := e.api.CreatePort(ctx, "", &model.Port{NodeID: &id, Address: &addr1, PortgroupID: &pg.ID, PhysicalNetwork: &physnet1}); err != nil {
			t.Fatalf("first member: %v", err)
		}
		lone, err := e.api.CreatePort(ctx, "", &model.Port{NodeID: &id, Address: &addr2})
		if err != nil {
			t.Fatal(err)
		}
		join := *lone
		join.PortgroupID = &pg.ID
		_, err = e.api.UpdatePort(ctx, "", &join)
		want := "Port with physical network None cannot become a member of port group " + pg.UUID +
			" which has ports in physical network physnet1."
		if class(err) != "Conflict" || err.Error() != want {
			t.Fatalf("joining without physical network: %v, want Conflict %q", err, want)
		}
		_, err = e.api.CreatePort(ctx, "", &model.Port{NodeID: &id, Address: &addr3, PortgroupID: &pg.ID})
		if class(err) != "Conflict" {
			t.Fatalf("created in the portgroup without physical network: %v", err)
		}
		join.PhysicalNetwork = &physnet1
		if _, err := e.api.UpdatePort(ctx, "", &join); err != nil {
			t.Fatalf("joining on the portgroup's physical network: %v", err)
		}
	})
}
