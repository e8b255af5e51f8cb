package store

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

func TestNodeCreateGetRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		in := model.Node{
			Name: model.Ptr("node-a"), Driver: "redfish", InstanceUUID: model.Ptr("11111111-1111-1111-1111-111111111111"),
			DriverInfo: map[string]any{"redfish_address": "https://bmc", "redfish_password": "secret"},
			Properties: map[string]any{"cpus": float64(8), "capabilities": "boot_mode:uefi"},
			Owner:      model.Ptr("p1"), AutomatedClean: model.Ptr(false), Protected: true,
			BootInterface: "ipxe", ConductorGroup: "rack1", Description: model.Ptr("first"),
		}
		n := mustNode(t, e, in)
		if n.ID == 0 || len(n.UUID) != 36 {
			t.Fatalf("id %d uuid %q not assigned", n.ID, n.UUID)
		}
		if n.ProvisionState != states.Enroll || n.PowerState != states.NoState {
			t.Errorf("defaults: provision %q power %q", n.ProvisionState, n.PowerState)
		}
		if !n.CreatedAt.Equal(e.clock.Now()) || n.UpdatedAt != nil {
			t.Errorf("created_at %v updated_at %v", n.CreatedAt, n.UpdatedAt)
		}
		if !reflect.DeepEqual(n.DriverInfo, in.DriverInfo) || !reflect.DeepEqual(n.Properties, in.Properties) {
			t.Errorf("json round trip: %v %v", n.DriverInfo, n.Properties)
		}
		if n.Extra != nil && len(n.Extra) != 0 {
			t.Errorf("extra = %v, want empty", n.Extra)
		}
		if *n.AutomatedClean || !n.Protected || n.BootInterface != "ipxe" || n.ConductorGroup != "rack1" || n.Reservation != nil {
			t.Errorf("fields not round-tripped: %+v", n)
		}
		var raw any
		if err := e.db.QueryRow("SELECT extra FROM nodes WHERE id = ?", n.ID).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if s := fmt.Sprintf("%s", raw); s != "{}" {
			t.Errorf("stored extra = %q, want {} as JsonEncodedDict", s)
		}
		for name, get := range map[string]func() (*model.Node, error){
			"id":       func() (*model.Node, error) { return e.s.GetNodeByID(e.ctx, n.ID) },
			"uuid":     func() (*model.Node, error) { return e.s.GetNodeByUUID(e.ctx, n.UUID) },
			"name":     func() (*model.Node, error) { return e.s.GetNodeByName(e.ctx, "node-a") },
			"instance": func() (*model.Node, error) { return e.s.GetNodeByInstance(e.ctx, *in.InstanceUUID) },
		} {
			got, err := get()
			if err != nil || !reflect.DeepEqual(got, n) {
				t.Errorf("get by %s = %+v, %v; want %+v", name, got, err, n)
			}
		}
	})
}

func TestNodeNotFoundAndDuplicates(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		a := mustNode(t, e, model.Node{Name: model.Ptr("a"), InstanceUUID: model.Ptr("22222222-2222-2222-2222-222222222222")})
		cases := []struct {
			name  string
			node  model.Node
			field string
		}{
			{"uuid", model.Node{UUID: a.UUID, Driver: "x"}, "uuid"},
			{"name", model.Node{Name: model.Ptr("a"), Driver: "x"}, "name"},
			{"instance", model.Node{InstanceUUID: a.InstanceUUID, Driver: "x"}, "instance_uuid"},
		}
		for _, c := range cases {
			_, err := e.s.CreateNode(e.ctx, &c.node)
			d := wantErr[*DuplicateError](t, err, ErrDuplicate)
			if d.Field != c.field || d.Kind != KindNode {
				t.Errorf("%s: duplicate %+v, want field %s", c.name, d, c.field)
			}
		}
		b := mustNode(t, e, model.Node{})
		b.Name = model.Ptr("a")
		_, err := e.s.UpdateNode(e.ctx, b, "name")
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "name" {
			t.Errorf("update duplicate field %q", d.Field)
		}
		_, err = e.s.GetNodeByUUID(e.ctx, "33333333-3333-3333-3333-333333333333")
		wantErr[*NotFoundError](t, err, ErrNotFound)
		_, err = e.s.GetNodeByInstance(e.ctx, "33333333-3333-3333-3333-333333333333")
		if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindInstance {
			t.Errorf("kind %q", nf.Kind)
		}
		_, err = e.s.UpdateNode(e.ctx, &model.Node{ID: 9999}, "name")
		wantErr[*NotFoundError](t, err, ErrNotFound)
		wantErr[*NotFoundError](t, e.s.DeleteNode(e.ctx, 9999), ErrNotFound)
		_, err = e.s.UpdateNode(e.ctx, b, "uuid")
		wantErr[*InvalidParameterError](t, err, ErrInvalidParameter)
		_, err = e.s.CreateNode(e.ctx, &model.Node{Driver: "x", Traits: []string{"CUSTOM_A"}})
		wantErr[*InvalidParameterError](t, err, ErrInvalidParameter)
	})
}

func TestNodeUpdate(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{Extra: map[string]any{"a": "b"}, Owner: model.Ptr("o")})
		e.clock.Advance(time.Minute)
		n.Extra = map[string]any{"c": "d"}
		n.Owner = nil
		n.Lessee = model.Ptr("ignored")
		if _, err := e.s.UpdateNode(e.ctx, n, "extra", "owner"); err != nil {
			t.Fatal(err)
		}
		// The node returned is the caller's with the named columns as
		// written (TestNodeWrittenIsNodeRead); what was written is read.
		got, err := e.s.GetNodeByID(e.ctx, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Extra, map[string]any{"c": "d"}) || got.Owner != nil || got.Lessee != nil {
			t.Errorf("partial update wrote %+v", got)
		}
		if got.UpdatedAt == nil || !got.UpdatedAt.Equal(e.clock.Now()) {
			t.Errorf("updated_at = %v", got.UpdatedAt)
		}
		if got.ProvisionUpdatedAt != nil {
			t.Errorf("provision_updated_at set without a provision change")
		}
		// Whole-object update.
		got.Lessee = model.Ptr("l")
		got.Maintenance = true
		got2, err := e.s.UpdateNode(e.ctx, got)
		if err != nil || model.Deref(got2.Lessee) != "l" || !got2.Maintenance {
			t.Fatalf("whole update: %+v %v", got2, err)
		}
	})
}

func TestNodeProvisionTimestamps(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{ProvisionState: states.Manageable})
		steps := []struct {
			to                string
			started, finished bool
		}{
			{states.Inspecting, true, false},
			{states.InspectWait, true, false},
			{states.Manageable, false, true},
			{states.Inspecting, true, false},
			{states.InspectFail, false, false},
		}
		for _, st := range steps {
			e.clock.Advance(time.Second)
			n.ProvisionState = st.to
			var err error
			n, err = e.s.UpdateNode(e.ctx, n, "provision_state")
			if err != nil {
				t.Fatal(err)
			}
			now := e.clock.Now()
			if n.ProvisionUpdatedAt == nil || !n.ProvisionUpdatedAt.Equal(now) {
				t.Errorf("%s: provision_updated_at %v", st.to, n.ProvisionUpdatedAt)
			}
			if (n.InspectionStartedAt != nil) != st.started || (st.to == states.Inspecting && !n.InspectionStartedAt.Equal(now)) {
				t.Errorf("%s: inspection_started_at %v", st.to, n.InspectionStartedAt)
			}
			if st.to == states.Manageable && (n.InspectionFinishedAt == nil || !n.InspectionFinishedAt.Equal(now)) {
				t.Errorf("%s: inspection_finished_at %v", st.to, n.InspectionFinishedAt)
			}
			if st.to == states.Inspecting && n.InspectionFinishedAt != nil {
				t.Errorf("inspecting keeps inspection_finished_at")
			}
		}
	})
}

func TestNodeUpdateIfCompareAndSwap(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{ProvisionState: states.Available})
		a, b := *n, *n
		a.ProvisionState = states.Deploying
		b.ProvisionState = states.Cleaning
		if _, err := e.s.UpdateNodeIf(e.ctx, &a, NodeCondition{ProvisionState: model.Ptr(states.Available)}, "provision_state"); err != nil {
			t.Fatal(err)
		}
		_, err := e.s.UpdateNodeIf(e.ctx, &b, NodeCondition{ProvisionState: model.Ptr(states.Available)}, "provision_state")
		wantErr[*ConflictError](t, err, ErrConflict)
		_, err = e.s.UpdateNodeIf(e.ctx, &b, NodeCondition{Reservation: model.Ptr("host1")}, "provision_state")
		wantErr[*ConflictError](t, err, ErrConflict)
		got, _ := e.s.GetNodeByID(e.ctx, n.ID)
		if got.ProvisionState != states.Deploying {
			t.Errorf("lost update: state %q", got.ProvisionState)
		}
	})
}

func TestNodeDeleteCascade(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{})
		other := mustNode(t, e, model.Node{})
		pg, err := e.s.CreatePortgroup(e.ctx, &model.Portgroup{NodeID: &n.ID, Address: model.Ptr("52:54:00:00:00:01")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.CreatePort(e.ctx, &model.Port{NodeID: &n.ID, PortgroupID: &pg.ID, Address: model.Ptr("52:54:00:00:00:02")}); err != nil {
			t.Fatal(err)
		}
		keep, err := e.s.CreatePort(e.ctx, &model.Port{NodeID: &other.ID, Address: model.Ptr("52:54:00:00:00:03")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.SetNodeTraits(e.ctx, n.ID, []string{"CUSTOM_A"}, "1.0"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.SetNodeTags(e.ctx, n.ID, []string{"t"}); err != nil {
			t.Fatal(err)
		}
		now := e.db.Time(e.clock.Now())
		for _, q := range []string{
			"INSERT INTO bios_settings (node_id, name, value, created_at) VALUES (?, 'x', 'y', ?)",
			"INSERT INTO node_history (uuid, node_id, created_at) VALUES ('44444444-4444-4444-4444-444444444444', ?, ?)",
			"INSERT INTO node_inventory (node_id, inventory_data, created_at) VALUES (?, '{}', ?)",
			"INSERT INTO firmware_information (node_id, component, initial_version, created_at) VALUES (?, 'bios', '1', ?)",
			"INSERT INTO volume_connectors (uuid, node_id, type, connector_id, created_at) VALUES ('55555555-5555-5555-5555-555555555555', ?, 'iqn', 'x', ?)",
			"INSERT INTO volume_targets (uuid, node_id, boot_index, created_at) VALUES ('66666666-6666-6666-6666-666666666666', ?, 0, ?)",
			"INSERT INTO allocations (uuid, node_id, state, created_at) VALUES ('77777777-7777-7777-7777-777777777777', ?, 'active', ?)",
		} {
			if _, err := e.db.Exec(q, n.ID, now); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if _, err := e.db.Exec("UPDATE nodes SET allocation_id = (SELECT id FROM allocations) WHERE id = ?", n.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.s.DeleteNode(e.ctx, n.ID); err != nil {
			t.Fatal(err)
		}
		for _, table := range append(slices.Clone(nodeChildTables), "nodes") {
			var c int
			col := "node_id"
			if table == "nodes" {
				col = "id"
			}
			if err := e.db.QueryRow("SELECT COUNT(*) FROM "+table+" WHERE "+col+" = ?", n.ID).Scan(&c); err != nil {
				t.Fatal(err)
			}
			if c != 0 {
				t.Errorf("%s: %d rows left", table, c)
			}
		}
		if _, err := e.s.GetPortByID(e.ctx, keep.ID); err != nil {
			t.Errorf("other node's port deleted: %v", err)
		}
	})
}

func TestNodeListFilters(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		ch, err := e.s.CreateChassis(e.ctx, &model.Chassis{})
		if err != nil {
			t.Fatal(err)
		}
		mk := func(name string, n model.Node) *model.Node {
			n.Name = model.Ptr(name)
			return mustNode(t, e, n)
		}
		a := mk("a", model.Node{InstanceUUID: model.Ptr("aaaaaaaa-0000-0000-0000-000000000001"), Maintenance: true, ProvisionState: states.Active,
			Driver: "redfish", ResourceClass: model.Ptr("gold"), ChassisID: &ch.ID, ConductorGroup: "g1", Owner: model.Ptr("p1"),
			Shard: model.Ptr("s1"), Description: model.Ptr("Rack Twelve"), Fault: model.Ptr("power failure"), PowerState: "power on"})
		b := mk("b", model.Node{Retired: true, ProvisionState: states.Available, Driver: "ipmi", Lessee: model.Ptr("p1"), Shard: model.Ptr("s2"), InstanceName: model.Ptr("vm")})
		c := mk("c", model.Node{ProvisionState: states.Manageable, Driver: "ipmi", Owner: model.Ptr("p2")})
		child := mk("child", model.Node{ParentNode: &a.UUID})
		if _, err := e.s.ReserveNode(e.ctx, "host1", c.ID); err != nil {
			t.Fatal(err)
		}
		// provision_updated_at of a is now; b older.
		e.clock.Advance(-2 * time.Hour)
		b.ProvisionState = states.Available
		if _, err := e.s.UpdateNode(e.ctx, b, "provision_state"); err != nil {
			t.Fatal(err)
		}
		b.ProvisionState = states.Inspecting
		if _, err := e.s.UpdateNode(e.ctx, b, "provision_state"); err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(2 * time.Hour)
		hour := time.Hour
		T, F := model.Ptr(true), model.Ptr(false)
		cases := []struct {
			name string
			f    NodeFilter
			want []string
		}{
			{"none", NodeFilter{}, []string{"a", "b", "c"}},
			{"include children", NodeFilter{IncludeChildren: true}, []string{"a", "b", "c", "child"}},
			{"parent", NodeFilter{ParentNode: &a.UUID}, []string{"child"}},
			{"associated", NodeFilter{Associated: T}, []string{"a"}},
			{"not associated", NodeFilter{Associated: F}, []string{"b", "c"}},
			{"reserved", NodeFilter{Reserved: T}, []string{"c"}},
			{"not reserved", NodeFilter{Reserved: F}, []string{"a", "b"}},
			{"reserved by any of", NodeFilter{ReservedByAnyOf: []string{"host0", "host1"}}, []string{"c"}},
			{"reserved by empty", NodeFilter{ReservedByAnyOf: []string{}}, nil},
			{"maintenance", NodeFilter{Maintenance: T}, []string{"a"}},
			{"no maintenance", NodeFilter{Maintenance: F}, []string{"b", "c"}},
			{"retired", NodeFilter{Retired: T}, []string{"b"}},
			{"provision state", NodeFilter{ProvisionState: model.Ptr(states.Active)}, []string{"a"}},
			{"provision state in", NodeFilter{ProvisionStateIn: []string{states.Inspecting, states.Manageable}}, []string{"b", "c"}},
			{"driver", NodeFilter{Driver: model.Ptr("ipmi")}, []string{"b", "c"}},
			{"resource class", NodeFilter{ResourceClass: model.Ptr("gold")}, []string{"a"}},
			{"chassis", NodeFilter{ChassisUUID: &ch.UUID}, []string{"a"}},
			{"conductor group", NodeFilter{ConductorGroup: model.Ptr("g1")}, []string{"a"}},
			{"owner", NodeFilter{Owner: model.Ptr("p1")}, []string{"a"}},
			{"lessee", NodeFilter{Lessee: model.Ptr("p1")}, []string{"b"}},
			{"project", NodeFilter{Project: model.Ptr("p1")}, []string{"a", "b"}},
			{"shard in", NodeFilter{ShardIn: []string{"s2"}}, []string{"b"}},
			{"sharded", NodeFilter{Sharded: T}, []string{"a", "b"}},
			{"unsharded", NodeFilter{Sharded: F}, []string{"c"}},
			{"description contains", NodeFilter{DescriptionContains: model.Ptr("Twelve")}, []string{"a"}},
			{"instance uuid", NodeFilter{InstanceUUID: a.InstanceUUID}, []string{"a"}},
			{"instance name", NodeFilter{InstanceName: model.Ptr("vm")}, []string{"b"}},
			{"fault", NodeFilter{Fault: model.Ptr("power failure")}, []string{"a"}},
			{"uuid in", NodeFilter{UUIDIn: []string{a.UUID, c.UUID}}, []string{"a", "c"}},
			{"uuid", NodeFilter{UUID: &b.UUID}, []string{"b"}},
			{"with power state", NodeFilter{WithPowerState: T}, []string{"a"}},
			{"without power state", NodeFilter{WithPowerState: F}, []string{"b", "c"}},
			{"provisioned before", NodeFilter{ProvisionedBefore: &hour}, []string{"b"}},
			{"inspection started before", NodeFilter{InspectionStartedBefore: &hour}, []string{"b"}},
			{"combined", NodeFilter{Driver: model.Ptr("ipmi"), Project: model.Ptr("p1")}, []string{"b"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ns, err := e.s.ListNodes(e.ctx, tc.f, ListOptions{SortKey: "name"})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, n := range ns {
					got = append(got, *n.Name)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			})
		}
		_, err = e.s.ListNodes(e.ctx, NodeFilter{ChassisUUID: model.Ptr("88888888-8888-8888-8888-888888888888")}, ListOptions{})
		wantErr[*NotFoundError](t, err, ErrNotFound)
		_ = child
	})
}

func TestNodePagination(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		var all []*model.Node
		for i := range 25 {
			// Drivers repeat so sorting on them needs the id tiebreak.
			all = append(all, mustNode(t, e, model.Node{Name: model.Ptr(fmt.Sprintf("n%02d", (i*7)%25)), Driver: fmt.Sprintf("d%d", i%3)}))
		}
		for _, key := range []string{"", "id", "name", "driver", "created_at", "uuid"} {
			for _, dir := range []string{"asc", "desc"} {
				t.Run(key+"/"+dir, func(t *testing.T) {
					want := slices.Clone(all)
					slices.SortStableFunc(want, func(x, y *model.Node) int {
						var c int
						switch key {
						case "name":
							c = strings.Compare(*x.Name, *y.Name)
						case "driver":
							c = strings.Compare(x.Driver, y.Driver)
						case "uuid":
							c = strings.Compare(x.UUID, y.UUID)
						}
						if c == 0 {
							c = int(x.ID - y.ID)
						}
						if dir == "desc" {
							c = -c
						}
						return c
					})
					var got []*model.Node
					marker := ""
					pages := 0
					for {
						page, err := e.s.ListNodes(e.ctx, NodeFilter{}, ListOptions{Limit: 10, Marker: marker, SortKey: key, SortDir: dir})
						if err != nil {
							t.Fatal(err)
						}
						pages++
						got = append(got, page...)
						if len(page) < 10 {
							break
						}
						marker = page[len(page)-1].UUID
					}
					if pages != 3 {
						t.Errorf("pages = %d, want 3", pages)
					}
					if len(got) != len(want) {
						t.Fatalf("got %d nodes, want %d", len(got), len(want))
					}
					for i := range want {
						if got[i].ID != want[i].ID {
							t.Fatalf("position %d: got id %d, want %d", i, got[i].ID, want[i].ID)
						}
					}
				})
			}
		}
		_, err := e.s.ListNodes(e.ctx, NodeFilter{}, ListOptions{Marker: "99999999-9999-9999-9999-999999999999"})
		wantErr[*MarkerNotFoundError](t, err, ErrMarkerNotFound)
		_, err = e.s.ListNodes(e.ctx, NodeFilter{}, ListOptions{SortKey: "nope"})
		wantErr[*InvalidParameterError](t, err, ErrInvalidParameter)
		_, err = e.s.ListNodes(e.ctx, NodeFilter{}, ListOptions{SortDir: "sideways"})
		wantErr[*InvalidParameterError](t, err, ErrInvalidParameter)
	})
}
