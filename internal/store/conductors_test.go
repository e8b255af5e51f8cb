package store

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

func ifaces(hw ...string) []model.ConductorHardwareInterface {
	var out []model.ConductorHardwareInterface
	for _, h := range hw {
		out = append(out, model.ConductorHardwareInterface{HardwareType: h, InterfaceType: "power", InterfaceName: h, Default: true})
	}
	return out
}

func TestConductorRegistration(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c, err := e.s.RegisterConductor(e.ctx, "c1", "g1", ifaces("redfish", "ipmi"), false)
		if err != nil || !c.Online || c.ConductorGroup != "g1" || c.UpdatedAt == nil || !c.UpdatedAt.Equal(e.clock.Now()) {
			t.Fatalf("register: %+v %v", c, err)
		}
		if !slices.Equal(c.Drivers, []string{"redfish", "ipmi"}) {
			t.Errorf("drivers = %v, want the hardware types", c.Drivers)
		}
		_, err = e.s.RegisterConductor(e.ctx, "c1", "g1", nil, false)
		wantErr[*ConductorAlreadyRegisteredError](t, err, ErrConductorAlreadyRegistered)
		if _, err := e.s.RegisterConductor(e.ctx, "c1", "g2", nil, true); err != nil {
			t.Fatalf("re-register with update: %v", err)
		}
		if err := e.s.UnregisterConductor(e.ctx, "c1"); err != nil {
			t.Fatal(err)
		}
		wantErr[*NotFoundError](t, e.s.UnregisterConductor(e.ctx, "c1"), ErrNotFound)
		_, err = e.s.GetConductor(e.ctx, "c1", model.Ptr(true))
		wantErr[*NotFoundError](t, err, ErrNotFound)
		// An offline conductor is taken over without update.
		c2, err := e.s.RegisterConductor(e.ctx, "c1", "g3", ifaces("redfish"), false)
		if err != nil || c2.ID != c.ID || !c2.Online || c2.ConductorGroup != "g3" {
			t.Fatalf("take over offline: %+v %v", c2, err)
		}
		if !slices.Equal(c2.Drivers, []string{"redfish"}) {
			t.Errorf("drivers after take-over = %v", c2.Drivers)
		}
		hw, err := e.s.ListConductorHardwareInterfaces(e.ctx, c.ID)
		if err != nil || len(hw) != 1 || hw[0].HardwareType != "redfish" || !hw[0].Default {
			t.Fatalf("interfaces replaced: %+v %v", hw, err)
		}
		err = e.s.RegisterConductorHardwareInterfaces(e.ctx, c.ID, ifaces("redfish"))
		wantErr[*DuplicateError](t, err, ErrDuplicate)
		if err := e.s.UnregisterConductorHardwareInterfaces(e.ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if hw, _ := e.s.ListConductorHardwareInterfaces(e.ctx, c.ID); len(hw) != 0 {
			t.Errorf("interfaces left: %v", hw)
		}
		wantErr[*NotFoundError](t, e.s.TouchConductor(e.ctx, "nope", true), ErrNotFound)
	})
}

func TestConductorHeartbeatTimeout(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		const timeout = 60 * time.Second
		for _, r := range []struct{ host, group, hw string }{{"c1", "", "redfish"}, {"c2", "", "redfish"}, {"c3", "g1", "ipmi"}} {
			if _, err := e.s.RegisterConductor(e.ctx, r.host, r.group, ifaces(r.hw), false); err != nil {
				t.Fatal(err)
			}
		}
		check := func(step string, online, offline []string) {
			t.Helper()
			on, err := e.s.GetOnlineConductors(e.ctx, timeout)
			if err != nil {
				t.Fatal(err)
			}
			off, err := e.s.GetOfflineConductors(e.ctx, timeout)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(on, online) || !slices.Equal(off, offline) {
				t.Errorf("%s: online %v offline %v, want %v %v", step, on, off, online, offline)
			}
		}
		check("fresh", []string{"c1", "c2", "c3"}, nil)
		e.clock.Advance(45 * time.Second)
		if err := e.s.TouchConductor(e.ctx, "c2", true); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(30 * time.Second)
		check("c1 and c3 silent 75s", []string{"c2"}, []string{"c1", "c3"})
		if err := e.s.TouchConductor(e.ctx, "c1", true); err != nil {
			t.Fatal(err)
		}
		check("c1 heartbeats again", []string{"c1", "c2"}, []string{"c3"})
		d, err := e.s.GetActiveHardwareTypeDict(e.ctx, timeout)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]map[string][]string{"redfish": {"": {"c1", "c2"}}}; !reflect.DeepEqual(d, want) {
			t.Errorf("hardware type dict = %v, want %v", d, want)
		}
		if err := e.s.UnregisterConductor(e.ctx, "c2"); err != nil {
			t.Fatal(err)
		}
		check("c2 unregistered", []string{"c1"}, []string{"c2", "c3"})
		check0, _ := e.s.GetOnlineConductors(e.ctx, 0)
		if !slices.Equal(check0, []string{"c1", "c3"}) {
			t.Errorf("timeout 0 ignores heartbeat age: %v", check0)
		}
		hw, err := e.s.ListHardwareTypeInterfaces(e.ctx, []string{"redfish", "ipmi"}, timeout)
		if err != nil || len(hw) != 1 || hw[0].HardwareType != "redfish" {
			t.Errorf("hardware type interfaces of active conductors: %+v %v", hw, err)
		}
		all, err := e.s.ListConductors(e.ctx, ListOptions{Limit: 2, SortKey: "hostname"})
		if err != nil || len(all) != 2 || all[0].Hostname != "c1" {
			t.Fatalf("list: %+v %v", all, err)
		}
		rest, err := e.s.ListConductors(e.ctx, ListOptions{Marker: all[1].Hostname, SortKey: "hostname"})
		if err != nil || len(rest) != 1 || rest[0].Hostname != "c3" {
			t.Errorf("list after marker: %+v %v", rest, err)
		}
	})
}

func TestDeleteConductor(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c, err := e.s.RegisterConductor(e.ctx, "c1", "", ifaces("redfish"), false)
		if err != nil {
			t.Fatal(err)
		}
		n := mustNode(t, e, model.Node{ConductorAffinity: &c.ID})
		if _, err := e.s.ReserveNode(e.ctx, "c1", n.ID); err != nil {
			t.Fatal(err)
		}
		// An unlocked node with the affinity: only clearing it writes the row.
		m := mustNode(t, e, model.Node{ConductorAffinity: &c.ID})
		e.clock.Advance(time.Second)
		if err := e.s.DeleteConductor(e.ctx, "c1"); err != nil {
			t.Fatal(err)
		}
		for _, id := range []int64{n.ID, m.ID} {
			got, _ := e.s.GetNodeByID(e.ctx, id)
			if got.Reservation != nil || got.ConductorAffinity != nil {
				t.Errorf("node still tied to deleted conductor: %+v", got)
			}
			if got.UpdatedAt == nil || !got.UpdatedAt.Equal(e.clock.Now()) {
				t.Errorf("node %s: updated_at = %v, want %v", got.UUID, got.UpdatedAt, e.clock.Now())
			}
		}
		wantErr[*NotFoundError](t, e.s.DeleteConductor(e.ctx, "c1"), ErrNotFound)
	})
}
