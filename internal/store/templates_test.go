package store

import (
	"reflect"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/model"
)

func dstep(iface, step string, prio int, args map[string]any) model.DeployTemplateStep {
	return model.DeployTemplateStep{Interface: iface, Step: step, Priority: prio, Args: args}
}

func stepNames[S any](steps []S, name func(S) string) []string {
	var out []string
	for _, s := range steps {
		out = append(out, name(s))
	}
	return out
}

func TestDeployTemplates(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		in := model.DeployTemplate{Name: "CUSTOM_RAID", Extra: map[string]any{"a": "b"}, Steps: []model.DeployTemplateStep{
			dstep("raid", "create_configuration", 10, map[string]any{"x": float64(1)}),
			dstep("bios", "apply_configuration", 20, nil),
		}}
		d, err := e.s.CreateDeployTemplate(e.ctx, &in)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.UUID) != 36 || len(d.Steps) != 2 || d.Steps[0].DeployTemplateID != d.ID || d.Steps[0].ID == 0 ||
			!reflect.DeepEqual(d.Steps[0].Args, map[string]any{"x": float64(1)}) || len(d.Steps[1].Args) != 0 {
			t.Fatalf("created: %+v", d)
		}
		for name, get := range map[string]func() (*model.DeployTemplate, error){
			"id":   func() (*model.DeployTemplate, error) { return e.s.GetDeployTemplateByID(e.ctx, d.ID) },
			"uuid": func() (*model.DeployTemplate, error) { return e.s.GetDeployTemplateByUUID(e.ctx, d.UUID) },
			"name": func() (*model.DeployTemplate, error) { return e.s.GetDeployTemplateByName(e.ctx, "CUSTOM_RAID") },
		} {
			if got, err := get(); err != nil || !reflect.DeepEqual(got, d) {
				t.Errorf("by %s: %+v %v", name, got, err)
			}
		}
		_, err = e.s.CreateDeployTemplate(e.ctx, &model.DeployTemplate{Name: "CUSTOM_RAID"})
		if dup := wantErr[*DuplicateError](t, err, ErrDuplicate); dup.Field != "name" || dup.Kind != KindDeployTemplate {
			t.Errorf("%+v", dup)
		}
		_, err = e.s.CreateDeployTemplate(e.ctx, &model.DeployTemplate{Name: "CUSTOM_Y", UUID: d.UUID})
		if dup := wantErr[*DuplicateError](t, err, ErrDuplicate); dup.Field != "uuid" {
			t.Errorf("%+v", dup)
		}
		other, err := e.s.CreateDeployTemplate(e.ctx, &model.DeployTemplate{Name: "CUSTOM_OTHER"})
		if err != nil || other.Steps == nil || len(other.Steps) != 0 {
			t.Fatalf("no steps: %+v %v", other, err)
		}

		// Updating without naming steps keeps them.
		d.Extra = map[string]any{"c": "d"}
		d.Steps = nil
		got, err := e.s.UpdateDeployTemplate(e.ctx, d, "extra")
		if err != nil || len(got.Steps) != 2 || got.Extra["c"] != "d" {
			t.Fatalf("update extra: %+v %v", got, err)
		}
		keptID := got.Steps[0].ID
		// Replacing steps keeps the matching one, drops and adds the rest.
		got.Steps = []model.DeployTemplateStep{
			dstep("raid", "create_configuration", 10, map[string]any{"x": float64(1)}),
			dstep("deploy", "erase", 30, map[string]any{"y": true}),
		}
		got, err = e.s.UpdateDeployTemplate(e.ctx, got, "steps")
		if err != nil {
			t.Fatal(err)
		}
		if names := stepNames(got.Steps, func(s model.DeployTemplateStep) string { return s.Step }); !slices.Equal(names, []string{"create_configuration", "erase"}) {
			t.Errorf("steps = %v", names)
		}
		if got.Steps[0].ID != keptID || got.UpdatedAt == nil {
			t.Errorf("matching step recreated (id %d, was %d) or updated_at unset", got.Steps[0].ID, keptID)
		}
		// A step whose priority changed is a different step.
		got.Steps[0].Priority = 11
		got, err = e.s.UpdateDeployTemplate(e.ctx, got, "steps")
		if err != nil || got.Steps[0].Step != "erase" || got.Steps[1].Priority != 11 {
			t.Fatalf("priority change: %+v %v", got, err)
		}
		got.Name = "CUSTOM_OTHER"
		_, err = e.s.UpdateDeployTemplate(e.ctx, got, "name")
		wantErr[*DuplicateError](t, err, ErrDuplicate)
		_, err = e.s.UpdateDeployTemplate(e.ctx, &model.DeployTemplate{ID: 999, Name: "x"}, "name", "steps")
		wantErr[*NotFoundError](t, err, ErrNotFound)

		byNames, err := e.s.GetDeployTemplatesByNames(e.ctx, []string{"CUSTOM_RAID", "CUSTOM_NONE", "CUSTOM_OTHER"})
		if err != nil || len(byNames) != 2 || len(byNames[0].Steps) != 2 {
			t.Errorf("by names: %+v %v", byNames, err)
		}
		if none, err := e.s.GetDeployTemplatesByNames(e.ctx, nil); err != nil || len(none) != 0 {
			t.Errorf("by no names: %v %v", none, err)
		}
		all, err := e.s.ListDeployTemplates(e.ctx, ListOptions{SortKey: "name"})
		if err != nil || len(all) != 2 || all[0].Name != "CUSTOM_OTHER" || len(all[1].Steps) != 2 {
			t.Errorf("list: %+v %v", all, err)
		}
		page, err := e.s.ListDeployTemplates(e.ctx, ListOptions{Limit: 1, Marker: all[0].UUID, SortKey: "name"})
		if err != nil || len(page) != 1 || page[0].ID != d.ID {
			t.Errorf("page: %+v %v", page, err)
		}

		if err := e.s.DeleteDeployTemplate(e.ctx, d.ID); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := e.db.QueryRow("SELECT COUNT(*) FROM deploy_template_steps WHERE deploy_template_id = ?", d.ID).Scan(&n); err != nil || n != 0 {
			t.Errorf("steps left: %d %v", n, err)
		}
		wantErr[*NotFoundError](t, e.s.DeleteDeployTemplate(e.ctx, d.ID), ErrNotFound)
		_, err = e.s.GetDeployTemplateByName(e.ctx, "CUSTOM_RAID")
		if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindDeployTemplate {
			t.Errorf("kind %q", nf.Kind)
		}
	})
}

func rbstep(step string, order int) model.RunbookStep {
	return model.RunbookStep{Interface: "deploy", Step: step, Order: order, Args: map[string]any{}}
}

func traitNames(ts []model.RunbookTrait) []string {
	return stepNames(ts, func(t model.RunbookTrait) string { return t.Trait })
}

func TestRunbooks(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		r, err := e.s.CreateRunbook(e.ctx, &model.Runbook{Name: "CUSTOM_RB", Owner: model.Ptr("p1"), Description: model.Ptr("d"),
			DisableRamdisk: true, Steps: []model.RunbookStep{rbstep("a", 0), rbstep("b", 1)},
			Traits: []model.RunbookTrait{{Trait: "CUSTOM_B"}, {Trait: "CUSTOM_A"}, {Trait: "CUSTOM_B"}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Steps) != 2 || r.Steps[1].Order != 1 || r.Steps[0].RunbookID != r.ID || !slices.Equal(traitNames(r.Traits), []string{"CUSTOM_A", "CUSTOM_B"}) || !r.DisableRamdisk {
			t.Fatalf("created: %+v", r)
		}
		pub, err := e.s.CreateRunbook(e.ctx, &model.Runbook{Name: "CUSTOM_PUB", Public: true, Owner: model.Ptr("p2")})
		if err != nil || pub.Steps == nil || pub.Traits == nil {
			t.Fatalf("public: %+v %v", pub, err)
		}
		priv, err := e.s.CreateRunbook(e.ctx, &model.Runbook{Name: "CUSTOM_PRIV", Owner: model.Ptr("p2")})
		if err != nil {
			t.Fatal(err)
		}
		for name, get := range map[string]func() (*model.Runbook, error){
			"id":   func() (*model.Runbook, error) { return e.s.GetRunbookByID(e.ctx, r.ID) },
			"uuid": func() (*model.Runbook, error) { return e.s.GetRunbookByUUID(e.ctx, r.UUID) },
			"name": func() (*model.Runbook, error) { return e.s.GetRunbookByName(e.ctx, "CUSTOM_RB") },
		} {
			if got, err := get(); err != nil || !reflect.DeepEqual(got, r) {
				t.Errorf("by %s: %+v %v", name, got, err)
			}
		}
		_, err = e.s.CreateRunbook(e.ctx, &model.Runbook{Name: "CUSTOM_RB"})
		if dup := wantErr[*DuplicateError](t, err, ErrDuplicate); dup.Field != "name" || dup.Kind != KindRunbook {
			t.Errorf("%+v", dup)
		}
		cases := []struct {
			name string
			f    RunbookFilter
			want []string
		}{
			{"none", RunbookFilter{}, []string{"CUSTOM_PRIV", "CUSTOM_PUB", "CUSTOM_RB"}},
			{"public", RunbookFilter{Public: model.Ptr(true)}, []string{"CUSTOM_PUB"}},
			{"owner", RunbookFilter{Owner: model.Ptr("p2")}, []string{"CUSTOM_PRIV", "CUSTOM_PUB"}},
			{"project p1 sees own and public", RunbookFilter{Project: model.Ptr("p1")}, []string{"CUSTOM_PUB", "CUSTOM_RB"}},
			{"disable ramdisk", RunbookFilter{DisableRamdisk: model.Ptr(true)}, []string{"CUSTOM_RB"}},
			{"uuid in", RunbookFilter{UUIDIn: []string{priv.UUID, r.UUID}}, []string{"CUSTOM_PRIV", "CUSTOM_RB"}},
			{"name in", RunbookFilter{NameIn: []string{"CUSTOM_PUB"}}, []string{"CUSTOM_PUB"}},
			{"name in empty", RunbookFilter{NameIn: []string{}}, nil},
		}
		for _, c := range cases {
			rs, err := e.s.ListRunbooks(e.ctx, c.f, ListOptions{SortKey: "name"})
			if err != nil {
				t.Fatal(err)
			}
			if got := stepNames(rs, func(r *model.Runbook) string { return r.Name }); !slices.Equal(got, c.want) {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			}
		}
		if rs, err := e.s.GetRunbooksByNames(e.ctx, []string{"CUSTOM_RB", "CUSTOM_NO"}); err != nil || len(rs) != 1 || len(rs[0].Traits) != 2 {
			t.Errorf("by names: %+v %v", rs, err)
		}

		// Naming only steps leaves traits; naming traits replaces them.
		r.Steps = []model.RunbookStep{rbstep("b", 1), rbstep("c", 2)}
		r.Traits = nil
		got, err := e.s.UpdateRunbook(e.ctx, r, "steps")
		if err != nil || len(got.Traits) != 2 || !slices.Equal(stepNames(got.Steps, func(s model.RunbookStep) string { return s.Step }), []string{"b", "c"}) {
			t.Fatalf("update steps: %+v %v", got, err)
		}
		got.Traits = []model.RunbookTrait{{Trait: "CUSTOM_C"}}
		got.Public = true
		got, err = e.s.UpdateRunbook(e.ctx, got, "traits", "public")
		if err != nil || !slices.Equal(traitNames(got.Traits), []string{"CUSTOM_C"}) || !got.Public || len(got.Steps) != 2 {
			t.Fatalf("update traits: %+v %v", got, err)
		}

		// Trait operations.
		if ts, err := e.s.SetRunbookTraits(e.ctx, r.ID, []string{"CUSTOM_X", "CUSTOM_X", "CUSTOM_W"}, "1.0"); err != nil || !slices.Equal(traitNames(ts), []string{"CUSTOM_W", "CUSTOM_X"}) {
			t.Errorf("set: %v %v", ts, err)
		}
		if _, err := e.s.AddRunbookTrait(e.ctx, r.ID, "CUSTOM_X", "1.0"); err != nil {
			t.Errorf("add existing: %v", err)
		}
		if tr, err := e.s.AddRunbookTrait(e.ctx, r.ID, "CUSTOM_Y", "1.0"); err != nil || tr.RunbookID != r.ID || tr.Version != "1.0" {
			t.Errorf("add: %+v %v", tr, err)
		}
		if ok, err := e.s.RunbookTraitExists(e.ctx, r.ID, "CUSTOM_Y"); err != nil || !ok {
			t.Errorf("exists: %v %v", ok, err)
		}
		if err := e.s.DeleteRunbookTrait(e.ctx, r.ID, "CUSTOM_Y"); err != nil {
			t.Error(err)
		}
		nf := wantErr[*NotFoundError](t, e.s.DeleteRunbookTrait(e.ctx, r.ID, "CUSTOM_Y"), ErrNotFound)
		if nf.Kind != KindRunbookTrait || nf.Runbook == "" || nf.Node != "" {
			t.Errorf("trait not found: %+v", nf)
		}
		if ts, err := e.s.GetRunbookTraits(e.ctx, r.ID); err != nil || !slices.Equal(traitNames(ts), []string{"CUSTOM_W", "CUSTOM_X"}) {
			t.Errorf("get: %v %v", ts, err)
		}
		if err := e.s.UnsetRunbookTraits(e.ctx, r.ID); err != nil {
			t.Error(err)
		}
		if ts, _ := e.s.GetRunbookTraits(e.ctx, r.ID); len(ts) != 0 {
			t.Errorf("unset left %v", ts)
		}
		for _, err := range []error{
			func() error { _, err := e.s.SetRunbookTraits(e.ctx, 999, []string{"A"}, ""); return err }(),
			func() error { _, err := e.s.GetRunbookTraits(e.ctx, 999); return err }(),
			func() error { _, err := e.s.AddRunbookTrait(e.ctx, 999, "A", ""); return err }(),
			func() error { _, err := e.s.RunbookTraitExists(e.ctx, 999, "A"); return err }(),
			e.s.UnsetRunbookTraits(e.ctx, 999),
			e.s.DeleteRunbookTrait(e.ctx, 999, "A"),
		} {
			if nf := wantErr[*NotFoundError](t, err, ErrNotFound); nf.Kind != KindRunbook {
				t.Errorf("missing runbook kind %q", nf.Kind)
			}
		}

		if _, err := e.s.SetRunbookTraits(e.ctx, r.ID, []string{"CUSTOM_Z"}, ""); err != nil {
			t.Fatal(err)
		}
		if err := e.s.DeleteRunbook(e.ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"runbook_steps", "runbook_traits"} {
			var n int
			if err := e.db.QueryRow("SELECT COUNT(*) FROM "+table+" WHERE runbook_id = ?", r.ID).Scan(&n); err != nil || n != 0 {
				t.Errorf("%s: %d left %v", table, n, err)
			}
		}
		wantErr[*NotFoundError](t, e.s.DeleteRunbook(e.ctx, r.ID), ErrNotFound)
	})
}
