package store

import (
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/model"
)

func TestVolumeConnectors(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n1 := mustNode(t, e, model.Node{Owner: model.Ptr("p1")})
		n2 := mustNode(t, e, model.Node{Lessee: model.Ptr("p2")})
		c1, err := e.s.CreateVolumeConnector(e.ctx, &model.VolumeConnector{NodeID: &n1.ID, Type: model.Ptr("iqn"), ConnectorID: model.Ptr("iqn.1"), Extra: map[string]any{"a": "b"}})
		if err != nil || len(c1.UUID) != 36 || c1.Extra["a"] != "b" {
			t.Fatalf("create: %+v %v", c1, err)
		}
		c2, err := e.s.CreateVolumeConnector(e.ctx, &model.VolumeConnector{NodeID: &n2.ID, Type: model.Ptr("wwpn"), ConnectorID: model.Ptr("iqn.1")})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.s.CreateVolumeConnector(e.ctx, &model.VolumeConnector{NodeID: &n2.ID, Type: model.Ptr("iqn"), ConnectorID: model.Ptr("iqn.1")})
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "type" || d.Value != "iqn/iqn.1" || d.Kind != KindVolumeConnector {
			t.Errorf("type+id duplicate: %+v", d)
		}
		_, err = e.s.CreateVolumeConnector(e.ctx, &model.VolumeConnector{UUID: c1.UUID, Type: model.Ptr("ip"), ConnectorID: model.Ptr("x")})
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "uuid" {
			t.Errorf("uuid duplicate: %+v", d)
		}
		if got, err := e.s.GetVolumeConnectorByUUID(e.ctx, c1.UUID); err != nil || got.ID != c1.ID {
			t.Errorf("by uuid: %+v %v", got, err)
		}
		if got, err := e.s.GetVolumeConnectorByID(e.ctx, c2.ID); err != nil || got.UUID != c2.UUID {
			t.Errorf("by id: %+v %v", got, err)
		}
		c2.Type = model.Ptr("iqn")
		_, err = e.s.UpdateVolumeConnector(e.ctx, c2, "type")
		wantErr[*DuplicateError](t, err, ErrDuplicate)
		c2.ConnectorID = model.Ptr("iqn.2")
		if got, err := e.s.UpdateVolumeConnector(e.ctx, c2, "type", "connector_id"); err != nil || *got.Type != "iqn" || *got.ConnectorID != "iqn.2" {
			t.Errorf("update: %+v %v", got, err)
		}
		cases := []struct {
			name string
			f    VolumeFilter
			want []int64
		}{
			{"none", VolumeFilter{}, []int64{c1.ID, c2.ID}},
			{"node", VolumeFilter{NodeID: &n2.ID}, []int64{c2.ID}},
			{"owner project", VolumeFilter{Project: model.Ptr("p1")}, []int64{c1.ID}},
			{"lessee project", VolumeFilter{Project: model.Ptr("p2")}, []int64{c2.ID}},
			{"other project", VolumeFilter{Project: model.Ptr("p3")}, nil},
		}
		for _, c := range cases {
			cs, err := e.s.ListVolumeConnectors(e.ctx, c.f, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := idsOf(cs, func(c *model.VolumeConnector) int64 { return c.ID }); !slices.Equal(got, c.want) {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			}
		}
		if page, err := e.s.ListVolumeConnectors(e.ctx, VolumeFilter{}, ListOptions{Limit: 1, SortDir: "desc"}); err != nil || len(page) != 1 || page[0].ID != c2.ID {
			t.Errorf("desc page: %+v %v", page, err)
		}
		if err := e.s.DeleteVolumeConnector(e.ctx, c1.ID); err != nil {
			t.Fatal(err)
		}
		nf := wantErr[*NotFoundError](t, e.s.DeleteVolumeConnector(e.ctx, c1.ID), ErrNotFound)
		if nf.Kind != KindVolumeConnector {
			t.Errorf("kind %q", nf.Kind)
		}
		_, err = e.s.GetVolumeConnectorByUUID(e.ctx, c1.UUID)
		wantErr[*NotFoundError](t, err, ErrNotFound)
	})
}

func TestVolumeTargets(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n1 := mustNode(t, e, model.Node{})
		n2 := mustNode(t, e, model.Node{})
		mk := func(node int64, idx int, vol string) (*model.VolumeTarget, error) {
			return e.s.CreateVolumeTarget(e.ctx, &model.VolumeTarget{NodeID: &node, BootIndex: &idx, VolumeID: &vol,
				VolumeType: model.Ptr("iscsi"), Properties: map[string]any{"target_lun": float64(idx)}})
		}
		t1, err := mk(n1.ID, 0, "vol-a")
		if err != nil || t1.Properties["target_lun"] != float64(0) {
			t.Fatalf("create: %+v %v", t1, err)
		}
		t2, err := mk(n1.ID, 1, "vol-b")
		if err != nil {
			t.Fatal(err)
		}
		t3, err := mk(n2.ID, 0, "vol-a")
		if err != nil {
			t.Fatalf("same boot index on another node: %v", err)
		}
		_, err = mk(n1.ID, 1, "vol-c")
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "boot_index" || d.Value != "1" || d.Kind != KindVolumeTarget {
			t.Errorf("boot index duplicate: %+v", d)
		}
		t2.BootIndex = model.Ptr(0)
		_, err = e.s.UpdateVolumeTarget(e.ctx, t2, "boot_index")
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "boot_index" {
			t.Errorf("update duplicate: %+v", d)
		}
		t2.BootIndex = model.Ptr(5)
		if got, err := e.s.UpdateVolumeTarget(e.ctx, t2, "boot_index"); err != nil || *got.BootIndex != 5 {
			t.Errorf("update: %+v %v", got, err)
		}
		cases := []struct {
			name string
			f    VolumeFilter
			want []int64
		}{
			{"none", VolumeFilter{}, []int64{t1.ID, t2.ID, t3.ID}},
			{"node", VolumeFilter{NodeID: &n1.ID}, []int64{t1.ID, t2.ID}},
			{"volume", VolumeFilter{VolumeID: model.Ptr("vol-a")}, []int64{t1.ID, t3.ID}},
			{"node and volume", VolumeFilter{NodeID: &n2.ID, VolumeID: model.Ptr("vol-a")}, []int64{t3.ID}},
		}
		for _, c := range cases {
			ts, err := e.s.ListVolumeTargets(e.ctx, c.f, ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := idsOf(ts, func(v *model.VolumeTarget) int64 { return v.ID }); !slices.Equal(got, c.want) {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			}
		}
		if got, err := e.s.GetVolumeTargetByUUID(e.ctx, t3.UUID); err != nil || got.ID != t3.ID {
			t.Errorf("by uuid: %v", err)
		}
		if err := e.s.DeleteVolumeTarget(e.ctx, t3.ID); err != nil {
			t.Fatal(err)
		}
		_, err = e.s.GetVolumeTargetByID(e.ctx, t3.ID)
		if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindVolumeTarget {
			t.Errorf("kind %q", nf.Kind)
		}
	})
}
