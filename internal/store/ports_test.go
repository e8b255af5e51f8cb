package store

import (
	"fmt"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/model"
)

func TestPortsAndPortgroups(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n1 := mustNode(t, e, model.Node{Shard: model.Ptr("s1"), ConductorGroup: "g1", Owner: model.Ptr("p1")})
		n2 := mustNode(t, e, model.Node{Lessee: model.Ptr("p1")})
		n3 := mustNode(t, e, model.Node{})
		pg, err := e.s.CreatePortgroup(e.ctx, &model.Portgroup{NodeID: &n1.ID, Name: model.Ptr("bond0"), Address: model.Ptr("52:54:00:00:01:00")})
		if err != nil || model.Deref(pg.Mode) != DefaultPortgroupMode {
			t.Fatalf("portgroup: %+v %v", pg, err)
		}
		mac := func(i int) *string { return model.Ptr(fmt.Sprintf("52:54:00:00:00:%02x", i)) }
		p1, err := e.s.CreatePort(e.ctx, &model.Port{NodeID: &n1.ID, PortgroupID: &pg.ID, Address: mac(1), Name: model.Ptr("eth0"), Description: model.Ptr("uplink A")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.CreatePort(e.ctx, &model.Port{NodeID: &n2.ID, Address: mac(2)}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.CreatePort(e.ctx, &model.Port{NodeID: &n3.ID, Address: mac(3)}); err != nil {
			t.Fatal(err)
		}
		for name, get := range map[string]func() (*model.Port, error){
			"id": func() (*model.Port, error) { return e.s.GetPortByID(e.ctx, p1.ID) }, "uuid": func() (*model.Port, error) { return e.s.GetPortByUUID(e.ctx, p1.UUID) },
			"name": func() (*model.Port, error) { return e.s.GetPortByName(e.ctx, "eth0") }, "address": func() (*model.Port, error) { return e.s.GetPortByAddress(e.ctx, *mac(1)) },
		} {
			if got, err := get(); err != nil || got.ID != p1.ID {
				t.Errorf("port by %s: %+v %v", name, got, err)
			}
		}
		_, err = e.s.CreatePort(e.ctx, &model.Port{Address: mac(1)})
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "address" || d.Value != *mac(1) {
			t.Errorf("MAC duplicate: %+v", d)
		}
		_, err = e.s.CreatePort(e.ctx, &model.Port{Address: mac(9), Name: model.Ptr("eth0")})
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "name" {
			t.Errorf("name duplicate: %+v", d)
		}
		_, err = e.s.CreatePortgroup(e.ctx, &model.Portgroup{Address: pg.Address})
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "address" || d.Kind != KindPortgroup {
			t.Errorf("portgroup MAC duplicate: %+v", d)
		}
		p1.Address = mac(2)
		_, err = e.s.UpdatePort(e.ctx, p1, "address")
		wantErr[*DuplicateError](t, err, ErrDuplicate)
		p1.Address = mac(7)
		if got, err := e.s.UpdatePort(e.ctx, p1, "address"); err != nil || *got.Address != *mac(7) || got.UpdatedAt == nil {
			t.Errorf("update port: %+v %v", got, err)
		}
		cases := []struct {
			name string
			f    PortFilter
			want []int64
		}{
			{"node", PortFilter{NodeID: &n2.ID}, []int64{n2.ID}},
			{"address", PortFilter{Address: mac(3)}, []int64{n3.ID}},
			{"portgroup", PortFilter{PortgroupID: &pg.ID}, []int64{n1.ID}},
			{"shard", PortFilter{ShardIn: []string{"s1"}}, []int64{n1.ID}},
			{"conductor group", PortFilter{ConductorGroups: []string{"g1"}}, []int64{n1.ID}},
			{"owner", PortFilter{Owner: model.Ptr("p1")}, []int64{n1.ID}},
			{"project", PortFilter{Project: model.Ptr("p1")}, []int64{n1.ID, n2.ID}},
			{"description", PortFilter{DescriptionContains: model.Ptr("link")}, []int64{n1.ID}},
		}
		for _, c := range cases {
			ps, err := e.s.ListPorts(e.ctx, c.f, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, p := range ps {
				got = append(got, *p.NodeID)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("ports %s: nodes %v, want %v", c.name, got, c.want)
			}
		}
		pgs, err := e.s.ListPortgroups(e.ctx, PortgroupFilter{NodeID: &n1.ID}, ListOptions{})
		if err != nil || len(pgs) != 1 {
			t.Errorf("portgroups by node: %v %v", pgs, err)
		}
		pgs, err = e.s.ListPortgroups(e.ctx, PortgroupFilter{Address: model.Ptr("52:54:00:00:01:99")}, ListOptions{})
		if err != nil || len(pgs) != 0 {
			t.Errorf("portgroups by other address: %v %v", pgs, err)
		}
		if _, err := e.s.GetPortgroupByName(e.ctx, "bond0"); err != nil {
			t.Error(err)
		}
		wantErr[*NotEmptyError](t, e.s.DeletePortgroup(e.ctx, pg.ID), ErrNotEmpty)
		if err := e.s.DeletePort(e.ctx, p1.ID); err != nil {
			t.Fatal(err)
		}
		wantErr[*NotFoundError](t, e.s.DeletePort(e.ctx, p1.ID), ErrNotFound)
		if err := e.s.DeletePortgroup(e.ctx, pg.ID); err != nil {
			t.Fatal(err)
		}
		_, err = e.s.GetPortgroupByUUID(e.ctx, pg.UUID)
		wantErr[*NotFoundError](t, err, ErrNotFound)
	})
}

func TestChassis(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		var made []*model.Chassis
		for i := range 25 {
			c, err := e.s.CreateChassis(e.ctx, &model.Chassis{Description: model.Ptr(fmt.Sprintf("c%02d", 24-i))})
			if err != nil {
				t.Fatal(err)
			}
			made = append(made, c)
		}
		_, err := e.s.CreateChassis(e.ctx, &model.Chassis{UUID: made[0].UUID})
		wantErr[*DuplicateError](t, err, ErrDuplicate)
		var seen []string
		marker := ""
		for {
			page, err := e.s.ListChassis(e.ctx, ListOptions{Limit: 10, Marker: marker, SortKey: "description", SortDir: "desc"})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range page {
				seen = append(seen, *c.Description)
			}
			if len(page) < 10 {
				break
			}
			marker = page[len(page)-1].UUID
		}
		if len(seen) != 25 || seen[0] != "c24" || seen[24] != "c00" || !slices.IsSortedFunc(seen, func(a, b string) int { return -cmpStr(a, b) }) {
			t.Errorf("chassis pages: %v", seen)
		}
		c := made[0]
		n := mustNode(t, e, model.Node{ChassisID: &c.ID})
		wantErr[*NotEmptyError](t, e.s.DeleteChassis(e.ctx, c.ID), ErrNotEmpty)
		c.Extra = map[string]any{"k": "v"}
		if got, err := e.s.UpdateChassis(e.ctx, c, "extra"); err != nil || got.Extra["k"] != "v" {
			t.Errorf("update chassis: %+v %v", got, err)
		}
		if err := e.s.DeleteNode(e.ctx, n.ID); err != nil {
			t.Fatal(err)
		}
		if err := e.s.DeleteChassis(e.ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		_, err = e.s.GetChassisByID(e.ctx, c.ID)
		wantErr[*NotFoundError](t, err, ErrNotFound)
	})
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestTraitsAndTags(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{})
		traits, err := e.s.SetNodeTraits(e.ctx, n.ID, []string{"CUSTOM_B", "CUSTOM_A", "CUSTOM_B"}, "1.0")
		if err != nil || len(traits) != 2 {
			t.Fatalf("set traits: %v %v", traits, err)
		}
		if _, err := e.s.AddNodeTrait(e.ctx, n.ID, "CUSTOM_A", "1.0"); err != nil {
			t.Errorf("adding an existing trait: %v", err)
		}
		if _, err := e.s.AddNodeTrait(e.ctx, n.ID, "CUSTOM_C", "1.0"); err != nil {
			t.Fatal(err)
		}
		got, _ := e.s.GetNodeByID(e.ctx, n.ID)
		if !slices.Equal(got.Traits, []string{"CUSTOM_A", "CUSTOM_B", "CUSTOM_C"}) || len(got.Tags) != 0 {
			t.Errorf("node traits %v tags %v", got.Traits, got.Tags)
		}
		if ok, err := e.s.NodeTraitExists(e.ctx, n.ID, "CUSTOM_C"); !ok || err != nil {
			t.Errorf("exists: %v %v", ok, err)
		}
		if err := e.s.DeleteNodeTrait(e.ctx, n.ID, "CUSTOM_C"); err != nil {
			t.Fatal(err)
		}
		wantErr[*NotFoundError](t, e.s.DeleteNodeTrait(e.ctx, n.ID, "CUSTOM_C"), ErrNotFound)
		if ok, _ := e.s.NodeTraitExists(e.ctx, n.ID, "CUSTOM_C"); ok {
			t.Error("deleted trait still exists")
		}
		many := make([]string, MaxTraitsPerNode+1)
		for i := range many {
			many[i] = fmt.Sprintf("CUSTOM_%d", i)
		}
		_, err = e.s.SetNodeTraits(e.ctx, n.ID, many, "1.0")
		wantErr[*InvalidParameterError](t, err, ErrInvalidParameter)
		if _, err := e.s.SetNodeTraits(e.ctx, n.ID, many[:MaxTraitsPerNode], "1.0"); err != nil {
			t.Fatal(err)
		}
		_, err = e.s.AddNodeTrait(e.ctx, n.ID, "CUSTOM_ONE_TOO_MANY", "1.0")
		wantErr[*InvalidParameterError](t, err, ErrInvalidParameter)
		if ts, _ := e.s.GetNodeTraits(e.ctx, n.ID); len(ts) != MaxTraitsPerNode {
			t.Errorf("traits after refused add: %d", len(ts))
		}
		if err := e.s.UnsetNodeTraits(e.ctx, n.ID); err != nil {
			t.Fatal(err)
		}
		if ts, _ := e.s.GetNodeTraits(e.ctx, n.ID); len(ts) != 0 {
			t.Errorf("traits after unset: %v", ts)
		}
		if _, err := e.s.SetNodeTags(e.ctx, n.ID, []string{"x", "y"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.AddNodeTag(e.ctx, n.ID, "z"); err != nil {
			t.Fatal(err)
		}
		tags, _ := e.s.GetNodeTags(e.ctx, n.ID)
		if len(tags) != 3 || tags[2].Tag != "z" {
			t.Errorf("tags %v", tags)
		}
		if ok, _ := e.s.NodeTagExists(e.ctx, n.ID, "y"); !ok {
			t.Error("tag y missing")
		}
		if err := e.s.DeleteNodeTag(e.ctx, n.ID, "y"); err != nil {
			t.Fatal(err)
		}
		wantErr[*NotFoundError](t, e.s.DeleteNodeTag(e.ctx, n.ID, "y"), ErrNotFound)
		if err := e.s.UnsetNodeTags(e.ctx, n.ID); err != nil {
			t.Fatal(err)
		}
		for name, err := range map[string]error{
			"set":    func() error { _, err := e.s.SetNodeTraits(e.ctx, 9999, nil, ""); return err }(),
			"get":    func() error { _, err := e.s.GetNodeTags(e.ctx, 9999); return err }(),
			"add":    func() error { _, err := e.s.AddNodeTag(e.ctx, 9999, "x"); return err }(),
			"exists": func() error { _, err := e.s.NodeTraitExists(e.ctx, 9999, "x"); return err }(),
		} {
			if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindNode {
				t.Errorf("%s on missing node: %v", name, nf)
			}
		}
	})
}
