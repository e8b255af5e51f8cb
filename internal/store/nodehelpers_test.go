package store

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
)

func TestGetNodeByPortAddresses(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		a := mustNode(t, e, model.Node{})
		b := mustNode(t, e, model.Node{})
		for _, p := range []model.Port{
			{NodeID: &a.ID, Address: model.Ptr("52:54:00:00:00:01")},
			{NodeID: &a.ID, Address: model.Ptr("52:54:00:00:00:02")},
			{NodeID: &b.ID, Address: model.Ptr("52:54:00:00:00:03")},
		} {
			if _, err := e.s.CreatePort(e.ctx, &p); err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			name  string
			addrs []string
			want  string
			err   error
		}{
			{"one address", []string{"52:54:00:00:00:03"}, b.UUID, nil},
			{"two ports of one node", []string{"52:54:00:00:00:01", "52:54:00:00:00:02"}, a.UUID, nil},
			{"with unknown address", []string{"52:54:00:00:00:99", "52:54:00:00:00:02"}, a.UUID, nil},
			{"two nodes", []string{"52:54:00:00:00:01", "52:54:00:00:00:03"}, "", ErrDuplicateNodeOnLookup},
			{"no match", []string{"52:54:00:00:00:99"}, "", ErrNotFound},
			{"no addresses", nil, "", ErrNotFound},
		}
		for _, c := range cases {
			n, err := e.s.GetNodeByPortAddresses(e.ctx, c.addrs)
			if c.err != nil {
				if !errors.Is(err, c.err) || !errors.Is(err, ErrNotFound) {
					t.Errorf("%s: error %v, want %v (and not found)", c.name, err, c.err)
				}
				continue
			}
			if err != nil || n.UUID != c.want || n.Traits == nil {
				t.Errorf("%s: %+v %v, want %s", c.name, n, err, c.want)
			}
		}
	})
}

func TestTouchNodeProvisioning(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{})
		e.clock.Advance(time.Hour)
		if err := e.s.TouchNodeProvisioning(e.ctx, n.ID); err != nil {
			t.Fatal(err)
		}
		got, _ := e.s.GetNodeByID(e.ctx, n.ID)
		if got.ProvisionUpdatedAt == nil || !got.ProvisionUpdatedAt.Equal(e.clock.Now()) {
			t.Errorf("provision_updated_at = %v, want %v", got.ProvisionUpdatedAt, e.clock.Now())
		}
		if nf := wantErr[*NotFoundError](t, e.s.TouchNodeProvisioning(e.ctx, 9999), ErrNotFound); nf.Kind != KindNode {
			t.Errorf("kind %q", nf.Kind)
		}
	})
}

func TestCheckNodeList(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		a := mustNode(t, e, model.Node{Name: model.Ptr("node-a"), Owner: model.Ptr("p1")})
		b := mustNode(t, e, model.Node{Lessee: model.Ptr("p1")})
		c := mustNode(t, e, model.Node{Name: model.Ptr("node-c")})
		const unknown = "dddddddd-0000-0000-0000-000000000000"
		cases := []struct {
			name    string
			idents  []string
			project string
			want    map[string]string
			missing string
		}{
			{"empty", nil, "", map[string]string{}, ""},
			{"uuids and names", []string{a.UUID, "node-c", b.UUID, "node-c"}, "", map[string]string{a.UUID: a.UUID, "node-c": c.UUID, b.UUID: b.UUID}, ""},
			{"name and uuid of one node", []string{"node-a", a.UUID}, "", map[string]string{"node-a": a.UUID, a.UUID: a.UUID}, ""},
			{"missing listed sorted", []string{"zz", c.UUID, unknown}, "", nil, unknown + ", zz"},
			{"invalid name fails before the query", []string{"bad name!", "node-a"}, "", nil, "bad name!"},
			{"project owner or lessee", []string{"node-a", b.UUID}, "p1", map[string]string{"node-a": a.UUID, b.UUID: b.UUID}, ""},
			{"project hides others", []string{"node-a", "node-c"}, "p1", nil, "node-c"},
		}
		for _, tc := range cases {
			got, err := e.s.CheckNodeList(e.ctx, tc.idents, tc.project)
			if tc.missing != "" {
				if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Ident != tc.missing || nf.Kind != KindNode {
					t.Errorf("%s: %+v, want missing %q", tc.name, nf, tc.missing)
				}
				continue
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: %v %v, want %v", tc.name, got, err, tc.want)
			}
		}
	})
}

func TestPortsCarryNodeUUID(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		a := mustNode(t, e, model.Node{})
		b := mustNode(t, e, model.Node{})
		pa, err := e.s.CreatePort(e.ctx, &model.Port{NodeID: &a.ID, Address: model.Ptr("52:54:00:00:00:01")})
		if err != nil || pa.NodeUUID != a.UUID {
			t.Fatalf("create: %+v %v", pa, err)
		}
		if _, err := e.s.CreatePort(e.ctx, &model.Port{NodeID: &b.ID, Address: model.Ptr("52:54:00:00:00:02")}); err != nil {
			t.Fatal(err)
		}
		orphan, err := e.s.CreatePort(e.ctx, &model.Port{Address: model.Ptr("52:54:00:00:00:03")})
		if err != nil || orphan.NodeUUID != "" {
			t.Fatalf("orphan: %+v %v", orphan, err)
		}
		ps, err := e.s.ListPorts(e.ctx, PortFilter{}, ListOptions{})
		if err != nil || len(ps) != 3 || ps[0].NodeUUID != a.UUID || ps[1].NodeUUID != b.UUID || ps[2].NodeUUID != "" {
			t.Errorf("list: %+v %v", ps, err)
		}
		pa.NodeID = &b.ID
		if got, err := e.s.UpdatePort(e.ctx, pa, "node_id"); err != nil || got.NodeUUID != b.UUID {
			t.Errorf("moved port: %+v %v", got, err)
		}
		pg, err := e.s.CreatePortgroup(e.ctx, &model.Portgroup{NodeID: &a.ID})
		if err != nil || pg.NodeUUID != a.UUID {
			t.Errorf("portgroup: %+v %v", pg, err)
		}
	})
}

func TestListNodeColumns(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		a := mustNode(t, e, model.Node{Name: model.Ptr("a"), Owner: model.Ptr("p1"), Extra: map[string]any{"x": "y"}})
		b := mustNode(t, e, model.Node{Name: model.Ptr("b"), Owner: model.Ptr("p2")})
		if _, err := e.s.SetNodeTraits(e.ctx, a.ID, []string{"CUSTOM_T"}, "1"); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name    string
			f       NodeFilter
			o       ListOptions
			columns []string
			want    []model.Node
		}{
			{"uuid and name", NodeFilter{}, ListOptions{SortKey: "name", SortDir: "desc"}, []string{"uuid", "name"},
				[]model.Node{{ID: b.ID, UUID: b.UUID, Name: b.Name}, {ID: a.ID, UUID: a.UUID, Name: a.Name}}},
			{"filtered with traits", NodeFilter{Owner: model.Ptr("p1")}, ListOptions{}, []string{"extra", "traits"},
				[]model.Node{{ID: a.ID, Extra: a.Extra, Traits: []string{"CUSTOM_T"}, Tags: []string{}}}},
			{"paged", NodeFilter{}, ListOptions{Marker: a.UUID}, []string{"owner"},
				[]model.Node{{ID: b.ID, Owner: b.Owner}}},
		}
		for _, c := range cases {
			ns, err := e.s.ListNodeColumns(e.ctx, c.f, c.o, c.columns)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if len(ns) != len(c.want) {
				t.Fatalf("%s: %d nodes, want %d", c.name, len(ns), len(c.want))
			}
			for i := range ns {
				if !reflect.DeepEqual(*ns[i], c.want[i]) {
					t.Errorf("%s: node %d = %+v, want %+v", c.name, i, *ns[i], c.want[i])
				}
			}
		}
		_, err := e.s.ListNodeColumns(e.ctx, NodeFilter{}, ListOptions{}, []string{"uuid", "bogus"})
		wantErr[*InvalidParameterError](t, err, ErrInvalidParameter)
	})
}
