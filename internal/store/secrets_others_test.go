package store

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/secrets"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// otherSecrets are the secrets of the other resources upstream masks: a
// volume target's CHAP password, a deploy template's and a runbook's step
// argument.
var otherSecrets = []string{"chap-pw-Vt11", "dt-pw-Dt22", "rb-pw-Rb33", "dt-pw-Dt44"}

// createOthers writes a volume target, a deploy template and a runbook
// holding otherSecrets[:3] through s.
func createOthers(t *testing.T, e env, s Store) (*model.VolumeTarget, *model.DeployTemplate, *model.Runbook) {
	t.Helper()
	n, err := s.CreateNode(e.ctx, &model.Node{Driver: "fake-hardware"})
	if err != nil {
		t.Fatal(err)
	}
	vt, err := s.CreateVolumeTarget(e.ctx, &model.VolumeTarget{NodeID: &n.ID, VolumeType: model.Ptr("iscsi"), VolumeID: model.Ptr("vol-1"),
		BootIndex: model.Ptr(0), Properties: map[string]any{"target_iqn": "iqn.2026-01.example:t", "auth_password": otherSecrets[0]}})
	if err != nil {
		t.Fatal(err)
	}
	dt, err := s.CreateDeployTemplate(e.ctx, &model.DeployTemplate{Name: "CUSTOM_SECRET", Steps: []model.DeployTemplateStep{
		{Interface: "bios", Step: "apply_configuration", Priority: 10, Args: map[string]any{"settings": []any{}, "password": otherSecrets[1]}}}})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := s.CreateRunbook(e.ctx, &model.Runbook{Name: "CUSTOM_RB_SECRET", Steps: []model.RunbookStep{
		{Interface: "bios", Step: "apply_configuration", Order: 1, Args: map[string]any{"nested": map[string]any{"password": otherSecrets[2]}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return vt, dt, rb
}

// readOthers reads the three back through s and reports whether each
// secret is plain as written (every way of reading: by UUID and listed).
func readOthers(t *testing.T, e env, s Store, vt *model.VolumeTarget, dt *model.DeployTemplate, rb *model.Runbook) error {
	t.Helper()
	v, err := s.GetVolumeTargetByUUID(e.ctx, vt.UUID)
	if err != nil {
		return err
	}
	vs, err := s.ListVolumeTargets(e.ctx, VolumeFilter{}, ListOptions{})
	if err != nil {
		return err
	}
	d, err := s.GetDeployTemplateByName(e.ctx, dt.Name)
	if err != nil {
		return err
	}
	ds, err := s.ListDeployTemplates(e.ctx, ListOptions{})
	if err != nil {
		return err
	}
	r, err := s.GetRunbookByUUID(e.ctx, rb.UUID)
	if err != nil {
		return err
	}
	rs, err := s.ListRunbooks(e.ctx, RunbookFilter{}, ListOptions{})
	if err != nil {
		return err
	}
	if v.Properties["auth_password"] != vt.Properties["auth_password"] || vs[0].Properties["auth_password"] != vt.Properties["auth_password"] ||
		d.Steps[0].Args["password"] != otherSecrets[1] || ds[0].Steps[0].Args["password"] != otherSecrets[1] ||
		r.Steps[0].Args["nested"].(map[string]any)["password"] != otherSecrets[2] || rs[0].Steps[0].Args["nested"].(map[string]any)["password"] != otherSecrets[2] {
		t.Fatalf("read back: %v %v %v", v.Properties, d.Steps, r.Steps)
	}
	return nil
}

// Volume targets' properties and the step arguments of deploy templates
// and runbooks are sealed as nodes' secrets: written sealed with a key
// ring, opened on every read, a 503 when they do not open, counted,
// checked and converted by the commands.
func TestSecretsOtherResources(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		plain := New(e.db, WithClock(e.clock.Now))
		vt, dt, rb := createOthers(t, e, plain)
		sv, err := SurveySecrets(e.ctx, e.db)
		if err != nil || sv.PlainOthers != 3 || sv.Counts.Plain != 3 || sv.PlainNodes != 0 {
			t.Fatalf("survey of plain rows: %+v %v", sv, err)
		}
		r1 := ring(t, "k1", map[string]byte{"k1": 1})
		rep, err := ConvertSecrets(e.ctx, e.db, r1, secrets.Encrypt, ConvertOptions{})
		if err != nil || rep.Others != 3 || rep.Rewritten != 3 || rep.Values != 3 {
			t.Fatalf("encrypt: %+v %v", rep, err)
		}
		all := storetest.AllText(t, e.db)
		for _, p := range otherSecrets[:3] {
			if strings.Contains(all, p) {
				t.Errorf("%q still plain after encrypt", p)
			}
		}
		if !strings.Contains(all, "iqn.2026-01.example:t") {
			t.Fatal("a value that is no secret was sealed")
		}
		keyed := New(e.db, WithClock(e.clock.Now), WithKeyRing(r1))
		if err := readOthers(t, e, keyed, vt, dt, rb); err != nil {
			t.Fatal(err)
		}
		// Without the key a read is a 503 naming the resource, never the
		// sealed text.
		for name, read := range map[string]func() error{
			"volume target":   func() error { _, err := plain.GetVolumeTargetByID(e.ctx, vt.ID); return err },
			"deploy template": func() error { _, err := plain.ListDeployTemplates(e.ctx, ListOptions{}); return err },
			"runbook":         func() error { _, err := plain.GetRunbookByName(e.ctx, rb.Name); return err },
		} {
			err := read()
			var u *secrets.UndecryptableError
			if errs.Status(err) != http.StatusServiceUnavailable || !errors.As(err, &u) || !strings.Contains(u.Error(), name) {
				t.Errorf("%s read without the key: %v (%v)", name, err, u)
			}
		}

		// Writes with the key are sealed; steps kept by an update keep
		// their row (matched on their opened arguments).
		d, err := keyed.GetDeployTemplateByID(e.ctx, dt.ID)
		if err != nil {
			t.Fatal(err)
		}
		kept := d.Steps[0].ID
		d.Steps = append(d.Steps, model.DeployTemplateStep{Interface: "raid", Step: "apply_configuration", Priority: 5,
			Args: map[string]any{"admin_password": otherSecrets[3]}})
		d, err = keyed.UpdateDeployTemplate(e.ctx, d, "steps")
		if err != nil || len(d.Steps) != 2 || d.Steps[0].ID != kept || d.Steps[1].Args["admin_password"] != otherSecrets[3] {
			t.Fatalf("update steps: %+v %v", d, err)
		}
		v, err := keyed.GetVolumeTargetByID(e.ctx, vt.ID)
		if err != nil {
			t.Fatal(err)
		}
		v.Properties["auth_password"] = "chap-pw-new-Vt55"
		if v, err = keyed.UpdateVolumeTarget(e.ctx, v, "properties"); err != nil || v.Properties["auth_password"] != "chap-pw-new-Vt55" {
			t.Fatalf("update volume target: %+v %v", v, err)
		}
		all = storetest.AllText(t, e.db)
		for _, p := range []string{otherSecrets[3], "chap-pw-new-Vt55"} {
			if strings.Contains(all, p) {
				t.Errorf("%q written plain with a key ring", p)
			}
		}

		// Rotation; the wrong key is refused naming the resource; decrypt.
		r2 := ring(t, "k2", map[string]byte{"k1": 1, "k2": 2})
		if rep, err := ConvertSecrets(e.ctx, e.db, r2, secrets.Rotate, ConvertOptions{}); err != nil || rep.Values != 4 || rep.Rewritten != 4 {
			t.Fatalf("rotate: %+v %v", rep, err)
		}
		if err := CheckKeyRing(e.ctx, e.db, ring(t, "k2", map[string]byte{"k2": 2})); err != nil {
			t.Fatal(err)
		}
		if err := CheckKeyRing(e.ctx, e.db, ring(t, "k2", map[string]byte{"k2": 9})); err == nil || !strings.Contains(err.Error(), vt.UUID) {
			t.Fatalf("CheckKeyRing with another key under k2: %v", err)
		}
		sv, _ = SurveySecrets(e.ctx, e.db)
		if sv.Counts.Plain != 0 || sv.Counts.Sealed["k2"] != 4 || sv.PlainOthers != 0 {
			t.Fatalf("after rotation: %+v", sv)
		}
		if rep, err := ConvertSecrets(e.ctx, e.db, r2, secrets.Decrypt, ConvertOptions{}); err != nil || rep.Values != 4 {
			t.Fatalf("decrypt: %+v %v", rep, err)
		}
		if strings.Contains(storetest.AllText(t, e.db), secrets.Prefix) {
			t.Fatal("sealed values left after decrypt")
		}
		vt.Properties["auth_password"] = "chap-pw-new-Vt55"
		if err := readOthers(t, e, plain, vt, dt, rb); err != nil {
			t.Fatal(err)
		}
	})
}

// Without a key ring the hooks cost no allocation: a row read is looked
// at once, a row written is written as it is.
func TestSecretsOtherResourcesNoKeyAllocs(t *testing.T) {
	s := &sqlStore{}
	vt := &model.VolumeTarget{UUID: "u", Properties: map[string]any{"target_iqn": "iqn", "auth_password": "pw", "nested": map[string]any{"k": "v"}}}
	dt := &model.DeployTemplate{UUID: "u", Steps: []model.DeployTemplateStep{{Args: map[string]any{"password": "pw"}}}}
	rows, dts := []*model.VolumeTarget{vt}, []*model.DeployTemplate{dt}
	allocs := testing.AllocsPerRun(100, func() {
		if w, err := volumeTargetResource.sealed(s, vt); err != nil || w != vt {
			t.Fatal("sealed without a key ring")
		}
		if volumeTargetResource.opened(s, rows) != nil || deployTemplateResource.opened(s, dts) != nil {
			t.Fatal("opened without a key ring")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations without a key ring", allocs)
	}
}

// Rotation beside the service writing volume targets and deploy template
// steps loses no write: each rewrite is conditional on the row unchanged.
func TestRotateUnderConcurrentOtherWrites(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		r1 := ring(t, "k1", map[string]byte{"k1": 1})
		r2 := ring(t, "k2", map[string]byte{"k1": 1, "k2": 2})
		old := New(e.db, WithKeyRing(r1))
		n, err := old.CreateNode(e.ctx, &model.Node{Driver: "fake-hardware"})
		if err != nil {
			t.Fatal(err)
		}
		var vts []*model.VolumeTarget
		for i := range 10 {
			vt, err := old.CreateVolumeTarget(e.ctx, &model.VolumeTarget{NodeID: &n.ID, VolumeType: model.Ptr("iscsi"), BootIndex: model.Ptr(i),
				VolumeID: model.Ptr(fmt.Sprintf("vol-%d", i)), Properties: map[string]any{"auth_password": "pw-0"}})
			if err != nil {
				t.Fatal(err)
			}
			vts = append(vts, vt)
		}
		dt, err := old.CreateDeployTemplate(e.ctx, &model.DeployTemplate{Name: "CUSTOM_ROT", Steps: []model.DeployTemplateStep{
			{Interface: "bios", Step: "apply_configuration", Priority: 1, Args: map[string]any{"password": "step-pw-0"}}}})
		if err != nil {
			t.Fatal(err)
		}
		s := New(e.db, WithKeyRing(r2))
		const writes = 5
		var wg sync.WaitGroup
		errc := make(chan error, 3)
		wg.Add(3)
		go func() {
			defer wg.Done()
			for i := 1; i <= writes; i++ {
				for _, vt := range vts {
					v, err := s.GetVolumeTargetByID(e.ctx, vt.ID)
					if err == nil {
						v.Properties[fmt.Sprintf("w%d_password", i)] = fmt.Sprintf("pw-%d", i)
						_, err = s.UpdateVolumeTarget(e.ctx, v, "properties")
					}
					if err != nil {
						errc <- err
						return
					}
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 1; i <= writes; i++ {
				d, err := s.GetDeployTemplateByID(e.ctx, dt.ID)
				if err == nil {
					d.Steps = append(d.Steps, model.DeployTemplateStep{Interface: "raid", Step: "apply_configuration", Priority: 1 + i,
						Args: map[string]any{"password": fmt.Sprintf("step-pw-%d", i)}})
					_, err = s.UpdateDeployTemplate(e.ctx, d, "steps")
				}
				if err != nil {
					errc <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := ConvertSecrets(e.ctx, e.db, r2, secrets.Rotate, ConvertOptions{}); err != nil {
				errc <- err
			}
		}()
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		for _, vt := range vts {
			v, err := s.GetVolumeTargetByID(e.ctx, vt.ID)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= writes; i++ {
				if v.Properties[fmt.Sprintf("w%d_password", i)] != fmt.Sprintf("pw-%d", i) || v.Properties["auth_password"] != "pw-0" {
					t.Fatalf("volume target %d lost a write: %v", v.ID, v.Properties)
				}
			}
		}
		d, err := s.GetDeployTemplateByID(e.ctx, dt.ID)
		if err != nil || len(d.Steps) != writes+1 {
			t.Fatalf("template after rotation: %+v %v", d, err)
		}
		for i, st := range d.Steps {
			if st.Args["password"] != fmt.Sprintf("step-pw-%d", i) {
				t.Fatalf("step %d: %v", i, st.Args)
			}
		}
		sv, err := SurveySecrets(e.ctx, e.db)
		if err != nil || sv.Counts.Plain != 0 || len(sv.Counts.Sealed) != 1 || sv.Counts.Sealed["k2"] == 0 {
			t.Fatalf("after rotation: %+v %v", sv, err)
		}
	})
}
