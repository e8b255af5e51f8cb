package store

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/openkeel/ironic/internal/model"
)

func TestNodeHistory(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{})
		other := mustNode(t, e, model.Node{})
		var hs []*model.NodeHistory
		for i := range 5 {
			h, err := e.s.CreateNodeHistory(e.ctx, &model.NodeHistory{NodeID: &n.ID, Event: model.Ptr(fmt.Sprintf("e%d", i)),
				Severity: model.Ptr("ERROR"), EventType: model.Ptr("deploy"), Conductor: model.Ptr("c1"), User: model.Ptr("u"), DurationSeconds: model.Ptr(i)})
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs, h)
			e.clock.Advance(time.Hour)
		}
		if len(hs[0].UUID) != 36 || *hs[0].User != "u" || *hs[4].DurationSeconds != 4 {
			t.Errorf("created: %+v", hs[0])
		}
		for _, c := range []struct {
			name, event string
			wantLen     int
		}{
			{"fits", strings.Repeat("x", MaxNodeHistoryEvent), MaxNodeHistoryEvent},
			{"ascii", "H" + strings.Repeat("x", MaxNodeHistoryEvent+10) + "T", MaxNodeHistoryEvent},
			// 3-byte characters cut at both ends lose the partial ones.
			{"multibyte", "H" + strings.Repeat("€", MaxNodeHistoryEvent) + "T", MaxNodeHistoryEvent - 4},
		} {
			h, err := e.s.CreateNodeHistory(e.ctx, &model.NodeHistory{NodeID: &other.ID, Event: model.Ptr(c.event)})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			ev := *h.Event
			if len(ev) != c.wantLen || !utf8.ValidString(ev) || ev[0] != c.event[0] || ev[len(ev)-1] != c.event[len(c.event)-1] {
				t.Errorf("%s: stored %d bytes, want %d", c.name, len(ev), c.wantLen)
			}
			if truncated := len(c.event) > MaxNodeHistoryEvent; truncated != strings.Contains(ev, TruncatedEventMarker) {
				t.Errorf("%s: marker present = %v", c.name, !truncated)
			}
		}
		_, err := e.s.CreateNodeHistory(e.ctx, &model.NodeHistory{UUID: hs[0].UUID})
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Kind != KindNodeHistory {
			t.Errorf("%+v", d)
		}
		if got, err := e.s.GetNodeHistoryByUUID(e.ctx, hs[1].UUID); err != nil || !reflect.DeepEqual(got, hs[1]) {
			t.Errorf("by uuid: %+v %v", got, err)
		}
		if got, err := e.s.GetNodeHistoryByID(e.ctx, hs[2].ID); err != nil || got.UUID != hs[2].UUID {
			t.Errorf("by id: %v", err)
		}
		page1, err := e.s.ListNodeHistory(e.ctx, n.ID, ListOptions{Limit: 2, SortKey: "created_at", SortDir: "desc"})
		if err != nil || len(page1) != 2 || page1[0].ID != hs[4].ID || page1[1].ID != hs[3].ID {
			t.Fatalf("page 1: %v %v", page1, err)
		}
		page2, err := e.s.ListNodeHistory(e.ctx, n.ID, ListOptions{Limit: 10, Marker: page1[1].UUID, SortKey: "created_at", SortDir: "desc"})
		if err != nil || len(page2) != 3 || page2[2].ID != hs[0].ID {
			t.Errorf("page 2: %v %v", page2, err)
		}
		if err := e.s.DeleteNodeHistoryByUUID(e.ctx, hs[2].UUID); err != nil {
			t.Fatal(err)
		}
		nf := wantErr[*NotFoundError](t, e.s.DeleteNodeHistoryByUUID(e.ctx, hs[2].UUID), ErrNotFound)
		if nf.Kind != KindNodeHistory {
			t.Errorf("kind %q", nf.Kind)
		}
	})
}

func TestNodeHistoryPurge(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c, err := e.s.RegisterConductor(e.ctx, "c1", "", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		mine := mustNode(t, e, model.Node{ConductorAffinity: &c.ID})
		few := mustNode(t, e, model.Node{ConductorAffinity: &c.ID})
		foreign := mustNode(t, e, model.Node{})
		record := func(n *model.Node) int64 {
			h, err := e.s.CreateNodeHistory(e.ctx, &model.NodeHistory{NodeID: &n.ID})
			if err != nil {
				t.Fatal(err)
			}
			return h.ID
		}
		var mineIDs []int64
		for range 6 {
			mineIDs = append(mineIDs, record(mine))
			record(foreign)
			e.clock.Advance(24 * time.Hour)
		}
		record(few)
		e.clock.Advance(24 * time.Hour)
		cases := []struct {
			name   string
			minAge time.Duration
			max    int
			want   map[int64][]int64
		}{
			{"count only", 0, 2, map[int64][]int64{mine.ID: mineIDs[:4], few.ID: {}}},
			// Records younger than 3 days are neither purged nor counted.
			{"count and age", 3*24*time.Hour + time.Minute, 2, map[int64][]int64{mine.ID: mineIDs[:2]}},
			{"under the limit", 0, 10, map[int64][]int64{mine.ID: {}, few.ID: {}}},
		}
		for _, tc := range cases {
			got, err := e.s.NodeHistoryForPurge(e.ctx, c.ID, tc.minAge, tc.max)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
			}
		}
		if err := e.s.DeleteNodeHistoryRecords(e.ctx, append(slices.Clone(mineIDs[:4]), 99999)); err != nil {
			t.Fatal(err)
		}
		left, err := e.s.ListNodeHistory(e.ctx, mine.ID, ListOptions{})
		if got := idsOf(left, func(h *model.NodeHistory) int64 { return h.ID }); err != nil || !slices.Equal(got, mineIDs[4:]) {
			t.Errorf("left %v %v, want %v", got, err, mineIDs[4:])
		}
		if err := e.s.DeleteNodeHistoryRecords(e.ctx, nil); err != nil {
			t.Errorf("empty delete: %v", err)
		}
		if foreignLeft, _ := e.s.ListNodeHistory(e.ctx, foreign.ID, ListOptions{}); len(foreignLeft) != 6 {
			t.Errorf("foreign node history touched: %d", len(foreignLeft))
		}
	})
}

func TestNodeInventory(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{})
		_, err := e.s.GetNodeInventory(e.ctx, n.ID)
		if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindNodeInventory {
			t.Errorf("kind %q", nf.Kind)
		}
		inv := map[string]any{"cpu": map[string]any{"count": float64(4)}, "interfaces": []any{map[string]any{"mac_address": "52:54:00:00:00:01"}}}
		first, err := e.s.CreateNodeInventory(e.ctx, &model.NodeInventory{NodeID: &n.ID, InventoryData: inv, PluginData: map[string]any{"p": "1"}})
		if err != nil || !reflect.DeepEqual(first.InventoryData, inv) || first.PluginData["p"] != "1" {
			t.Fatalf("create: %+v %v", first, err)
		}
		e.clock.Advance(time.Minute)
		second, err := e.s.CreateNodeInventory(e.ctx, &model.NodeInventory{NodeID: &n.ID, InventoryData: map[string]any{"v": "2"}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.s.GetNodeInventory(e.ctx, n.ID)
		if err != nil || got.ID != second.ID || got.InventoryData["v"] != "2" || len(got.PluginData) != 0 {
			t.Errorf("get: %+v %v", got, err)
		}
		var count int
		if err := e.db.QueryRow("SELECT COUNT(*) FROM node_inventory WHERE node_id = ?", n.ID).Scan(&count); err != nil || count != 1 {
			t.Errorf("create kept %d inventories (%v), want 1", count, err)
		}
		_, err = e.s.CreateNodeInventory(e.ctx, &model.NodeInventory{NodeID: model.Ptr(int64(9999))})
		if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindNode {
			t.Errorf("missing node kind %q", nf.Kind)
		}
		_, err = e.s.CreateNodeInventory(e.ctx, &model.NodeInventory{})
		wantErr[*InvalidParameterError](t, err, ErrInvalidParameter)
		if err := e.s.DeleteNodeInventory(e.ctx, n.ID); err != nil {
			t.Fatal(err)
		}
		wantErr[*NotFoundError](t, e.s.DeleteNodeInventory(e.ctx, n.ID), ErrNotFound)
	})
}

func TestBIOSSettings(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{})
		in := []model.BIOSSetting{
			{Name: "ProcVirtualization", Value: model.Ptr("Enabled"), AttributeType: model.Ptr("Enumeration"),
				AllowableValues: []string{"Enabled", "Disabled"}, ReadOnly: model.Ptr(false), ResetRequired: model.Ptr(true)},
			{Name: "BootDelay", Value: model.Ptr("5"), AttributeType: model.Ptr("Integer"), LowerBound: model.Ptr(int64(0)),
				UpperBound: model.Ptr(int64(1) << 40), Unique: model.Ptr(false)},
			{Name: "AssetTag", Value: model.Ptr("x"), MinLength: model.Ptr(0), MaxLength: model.Ptr(16)},
		}
		got, err := e.s.CreateBIOSSettings(e.ctx, n.ID, in, "1.1")
		if err != nil {
			t.Fatal(err)
		}
		if names := stepNames(got, func(b model.BIOSSetting) string { return b.Name }); !slices.Equal(names, []string{"AssetTag", "BootDelay", "ProcVirtualization"}) {
			t.Fatalf("names %v", names)
		}
		pv := got[2]
		if pv.NodeID != n.ID || pv.Version != "1.1" || !slices.Equal(pv.AllowableValues, in[0].AllowableValues) || !*pv.ResetRequired || *pv.ReadOnly || pv.LowerBound != nil {
			t.Errorf("registry fields: %+v", pv)
		}
		if bd := got[1]; *bd.UpperBound != int64(1)<<40 || *bd.LowerBound != 0 || *got[0].MaxLength != 16 {
			t.Errorf("bounds: %+v %+v", bd, got[0])
		}
		_, err = e.s.CreateBIOSSettings(e.ctx, n.ID, []model.BIOSSetting{{Name: "New"}, {Name: "BootDelay"}}, "1.1")
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "name" || d.Value != "BootDelay" || d.Kind != KindBIOSSetting {
			t.Errorf("duplicate: %+v", d)
		}
		if _, err := e.s.GetBIOSSetting(e.ctx, n.ID, "New"); err == nil {
			t.Errorf("failed create wrote a setting")
		}
		e.clock.Advance(time.Minute)
		up, err := e.s.UpdateBIOSSettings(e.ctx, n.ID, []model.BIOSSetting{{Name: "BootDelay", Value: model.Ptr("10"), AttributeType: model.Ptr("Integer")}}, "1.2")
		if err != nil || len(up) != 1 || *up[0].Value != "10" || up[0].UpperBound != nil || up[0].Version != "1.2" || up[0].UpdatedAt == nil || !up[0].CreatedAt.Equal(got[1].CreatedAt) {
			t.Errorf("update: %+v %v", up, err)
		}
		_, err = e.s.UpdateBIOSSettings(e.ctx, n.ID, []model.BIOSSetting{{Name: "AssetTag", Value: model.Ptr("y")}, {Name: "Nope"}}, "1.2")
		if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindBIOSSetting || nf.Ident != "Nope" {
			t.Errorf("update missing: %+v", nf)
		}
		if b, _ := e.s.GetBIOSSetting(e.ctx, n.ID, "AssetTag"); *b.Value != "x" {
			t.Errorf("failed update wrote %q", *b.Value)
		}
		err = e.s.DeleteBIOSSettings(e.ctx, n.ID, []string{"Nope2", "AssetTag", "Nope1"})
		if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Ident != "Nope2,Nope1" || nf.Kind != KindBIOSSetting {
			t.Errorf("delete missing: %+v", nf)
		}
		list, err := e.s.ListBIOSSettings(e.ctx, n.ID)
		if names := stepNames(list, func(b model.BIOSSetting) string { return b.Name }); err != nil || !slices.Equal(names, []string{"BootDelay", "ProcVirtualization"}) {
			t.Errorf("after delete: %v %v", names, err)
		}
		_, err = e.s.GetBIOSSetting(e.ctx, n.ID, "AssetTag")
		if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindBIOSSetting {
			t.Errorf("kind %q", nf.Kind)
		}
		for _, err := range []error{
			func() error { _, err := e.s.CreateBIOSSettings(e.ctx, 999, in, ""); return err }(),
			func() error { _, err := e.s.UpdateBIOSSettings(e.ctx, 999, in, ""); return err }(),
			func() error { _, err := e.s.ListBIOSSettings(e.ctx, 999); return err }(),
			func() error { _, err := e.s.GetBIOSSetting(e.ctx, 999, "x"); return err }(),
			e.s.DeleteBIOSSettings(e.ctx, 999, []string{"x"}),
		} {
			if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindNode {
				t.Errorf("missing node kind %q", nf.Kind)
			}
		}
	})
}

func TestFirmwareComponents(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		n := mustNode(t, e, model.Node{})
		other := mustNode(t, e, model.Node{})
		bios, err := e.s.CreateFirmwareComponent(e.ctx, &model.FirmwareComponent{NodeID: n.ID, Component: "bios", InitialVersion: "1.0", CurrentVersion: model.Ptr("1.0"), Vendor: model.Ptr("v")})
		if err != nil || bios.ID == 0 || *bios.Vendor != "v" {
			t.Fatalf("create: %+v %v", bios, err)
		}
		if _, err := e.s.CreateFirmwareComponent(e.ctx, &model.FirmwareComponent{NodeID: n.ID, Component: "bmc", InitialVersion: "2"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.s.CreateFirmwareComponent(e.ctx, &model.FirmwareComponent{NodeID: other.ID, Component: "bios", InitialVersion: "9"}); err != nil {
			t.Fatalf("same component on another node: %v", err)
		}
		_, err = e.s.CreateFirmwareComponent(e.ctx, &model.FirmwareComponent{NodeID: n.ID, Component: "bios", InitialVersion: "x"})
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "component" || d.Value != "bios" || d.Kind != KindFirmwareComponent {
			t.Errorf("duplicate: %+v", d)
		}
		e.clock.Advance(time.Minute)
		got, err := e.s.UpdateFirmwareComponent(e.ctx, &model.FirmwareComponent{NodeID: n.ID, Component: "bios", CurrentVersion: model.Ptr("1.1"), LastVersionFlashed: model.Ptr("1.1")}, "current_version", "last_version_flashed")
		if err != nil || *got.CurrentVersion != "1.1" || got.InitialVersion != "1.0" || *got.Vendor != "v" || got.UpdatedAt == nil {
			t.Errorf("update: %+v %v", got, err)
		}
		_, err = e.s.UpdateFirmwareComponent(e.ctx, &model.FirmwareComponent{NodeID: n.ID, Component: "nic"}, "current_version")
		if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindFirmwareComponent {
			t.Errorf("kind %q", nf.Kind)
		}
		list, err := e.s.ListFirmwareComponents(e.ctx, n.ID)
		if names := stepNames(list, func(f *model.FirmwareComponent) string { return f.Component }); err != nil || !slices.Equal(names, []string{"bios", "bmc"}) {
			t.Errorf("list: %v %v", names, err)
		}
		if got, err := e.s.GetFirmwareComponent(e.ctx, other.ID, "bios"); err != nil || got.InitialVersion != "9" {
			t.Errorf("get: %+v %v", got, err)
		}
		_, err = e.s.ListFirmwareComponents(e.ctx, 999)
		if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindNode {
			t.Errorf("kind %q", nf.Kind)
		}
	})
}

func TestInspectionRules(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		actions := []map[string]any{{"op": "set-attribute", "args": map[string]any{"path": "/properties/cpus", "value": "{inventory[cpu][count]}"}}}
		r1, err := e.s.CreateInspectionRule(e.ctx, &model.InspectionRule{Priority: 10, Scope: model.Ptr("rack1"), Sensitive: true,
			Conditions: []map[string]any{{"op": "eq", "args": []any{"a", "a"}}}, Actions: actions})
		if err != nil {
			t.Fatal(err)
		}
		if len(r1.UUID) != 36 || model.Deref(r1.Phase) != DefaultInspectionRulePhase || !r1.Sensitive || !reflect.DeepEqual(r1.Actions[0]["op"], "set-attribute") || len(r1.Conditions) != 1 {
			t.Errorf("created: %+v", r1)
		}
		r2, err := e.s.CreateInspectionRule(e.ctx, &model.InspectionRule{Phase: model.Ptr("early"), Actions: actions})
		if err != nil || r2.Conditions != nil && len(r2.Conditions) != 0 {
			t.Fatalf("%+v %v", r2, err)
		}
		var raw string
		if err := e.db.QueryRow("SELECT actions FROM inspection_rules WHERE id = ?", r2.ID).Scan(&raw); err != nil || !strings.HasPrefix(raw, "[{") {
			t.Errorf("actions stored as %q (%v)", raw, err)
		}
		_, err = e.s.CreateInspectionRule(e.ctx, &model.InspectionRule{UUID: r1.UUID})
		if d := wantErr[*DuplicateError](t, err, ErrDuplicate); d.Field != "uuid" || d.Kind != KindInspectionRule {
			t.Errorf("%+v", d)
		}
		cases := []struct {
			name string
			f    InspectionRuleFilter
			want []int64
		}{
			{"none", InspectionRuleFilter{}, []int64{r1.ID, r2.ID}},
			{"phase", InspectionRuleFilter{Phase: model.Ptr("main")}, []int64{r1.ID}},
			{"scope", InspectionRuleFilter{Scope: model.Ptr("rack1")}, []int64{r1.ID}},
			{"phase and scope", InspectionRuleFilter{Phase: model.Ptr("early"), Scope: model.Ptr("rack1")}, nil},
		}
		for _, c := range cases {
			rs, err := e.s.ListInspectionRules(e.ctx, c.f, ListOptions{})
			if got := idsOf(rs, func(r *model.InspectionRule) int64 { return r.ID }); err != nil || !slices.Equal(got, c.want) {
				t.Errorf("%s: got %v %v, want %v", c.name, got, err, c.want)
			}
		}
		if rs, err := e.s.ListInspectionRules(e.ctx, InspectionRuleFilter{}, ListOptions{SortKey: "priority", SortDir: "desc", Limit: 1}); err != nil || rs[0].ID != r1.ID {
			t.Errorf("sort by priority: %v", err)
		}
		r2.Priority, r2.Description = 50, model.Ptr("d")
		if got, err := e.s.UpdateInspectionRule(e.ctx, r2, "priority"); err != nil || got.Priority != 50 || got.Description != nil {
			t.Errorf("update: %+v %v", got, err)
		}
		if got, err := e.s.GetInspectionRuleByUUID(e.ctx, r2.UUID); err != nil || got.Priority != 50 {
			t.Errorf("by uuid: %v", err)
		}
		if err := e.s.DeleteInspectionRule(e.ctx, r1.ID); err != nil {
			t.Fatal(err)
		}
		_, err = e.s.GetInspectionRuleByID(e.ctx, r1.ID)
		if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindInspectionRule {
			t.Errorf("kind %q", nf.Kind)
		}
		wantErr[*NotFoundError](t, e.s.DeleteInspectionRule(e.ctx, r1.ID), ErrNotFound)
	})
}
