package conductor_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// settingsBIOS is a BIOS interface that, like redfish, reports its
// settings and leaves storing them to the conductor.
type settingsBIOS struct {
	mu      sync.Mutex
	attrs   map[string]string
	readErr error
}

func (b *settingsBIOS) Properties() map[string]string                { return map[string]string{} }
func (b *settingsBIOS) Validate(context.Context, *driver.Task) error { return nil }
func (b *settingsBIOS) CacheBIOSSettings(context.Context, *driver.Task) error {
	return errors.New("the conductor must read the settings, not ask the interface to cache them")
}

func (b *settingsBIOS) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.CleanStep("apply_configuration", 0).WithArgs(map[string]driver.ArgInfo{"settings": driver.Required("settings")}),
		driver.CleanStep("factory_reset", 0),
	}
}

func (b *settingsBIOS) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"apply_configuration": func(ctx context.Context, t *driver.Task, args map[string]any) (string, error) {
			var settings []map[string]any
			for _, s := range args["settings"].([]any) {
				settings = append(settings, s.(map[string]any))
			}
			return b.ApplyConfiguration(ctx, t, settings)
		},
		"factory_reset": func(ctx context.Context, t *driver.Task, _ map[string]any) (string, error) {
			return b.FactoryReset(ctx, t)
		},
	}
}

func (b *settingsBIOS) ApplyConfiguration(_ context.Context, _ *driver.Task, settings []map[string]any) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range settings {
		b.attrs[s["name"].(string)] = s["value"].(string)
	}
	return "", nil
}

func (b *settingsBIOS) FactoryReset(context.Context, *driver.Task) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.attrs = map[string]string{"Default": "1"}
	return "", nil
}

func (b *settingsBIOS) BIOSSettings(context.Context, *driver.Task) ([]model.BIOSSetting, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.readErr != nil {
		return nil, b.readErr
	}
	var out []model.BIOSSetting
	for _, k := range slices.Sorted(maps.Keys(b.attrs)) {
		v := b.attrs[k]
		out = append(out, model.BIOSSetting{Name: k, Value: &v})
	}
	return out, nil
}

func (b *settingsBIOS) set(attrs map[string]string, readErr error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.attrs, b.readErr = attrs, readErr
}

// seedBIOS stores rows as a previous caching would have.
func seedBIOS(t *testing.T, e *env, n *model.Node, rows map[string]string) {
	t.Helper()
	var settings []model.BIOSSetting
	for _, k := range slices.Sorted(maps.Keys(rows)) {
		v := rows[k]
		settings = append(settings, model.BIOSSetting{Name: k, Value: &v})
	}
	if _, err := e.st.CreateBIOSSettings(context.Background(), n.ID, settings, "1.1"); err != nil {
		t.Fatal(err)
	}
}

// biosRows are the node's stored settings by name.
func biosRows(t *testing.T, e *env, n *model.Node) map[string]model.BIOSSetting {
	t.Helper()
	rows, err := e.st.ListBIOSSettings(context.Background(), n.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]model.BIOSSetting{}
	for _, r := range rows {
		out[r.Name] = r
	}
	return out
}

func biosValues(rows map[string]model.BIOSSetting) map[string]string {
	out := map[string]string{}
	for k, r := range rows {
		out[k] = deref(r.Value)
	}
	return out
}

func TestManageCachesRedfishBIOSSettings(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1",
			redfishbmc.Bios(map[string]any{"BootMode": "Uefi", "ProcTurboMode": "Enabled", "NumCores": float64(8)}),
			redfishbmc.BiosRegistry(redfishbmc.RegistryAttribute{Name: "BootMode", Type: "Enumeration", ResetRequired: true, AllowableValues: []string{"Uefi", "Bios"}}),
		).WithBasicAuth(oobUser, oobPassword)
		e := newOOBEnv(t, db, &settingsBIOS{})
		ctx := context.Background()
		n := e.node(states.Enroll, redfishNode(bmc, "redfish"))
		seedBIOS(t, e, n, map[string]string{"BootMode": "Bios", "NumCores": "8", "Removed": "x"})
		if err := e.api.DoProvisioningAction(ctx, "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")
		rows := biosRows(t, e, n)
		if want := map[string]string{"BootMode": "Uefi", "NumCores": "8", "ProcTurboMode": "Enabled"}; !maps.Equal(biosValues(rows), want) {
			t.Fatalf("settings %v, want %v", biosValues(rows), want)
		}
		bm := rows["BootMode"]
		if deref(bm.AttributeType) != "Enumeration" || bm.ResetRequired == nil || !*bm.ResetRequired ||
			!slices.Equal(bm.AllowableValues, []string{"Uefi", "Bios"}) || bm.UpdatedAt == nil {
			t.Errorf("updated BootMode row %+v", bm)
		}
		if rows["NumCores"].UpdatedAt != nil {
			t.Errorf("unchanged NumCores was rewritten: %+v", rows["NumCores"])
		}
	})
}

func TestManageWithoutBIOSResourceStillSucceeds(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bmc := redfishbmc.New(t).System("sys-1").WithBasicAuth(oobUser, oobPassword)
		e := newOOBEnv(t, db, &settingsBIOS{})
		n := e.node(states.Enroll, redfishNode(bmc, "redfish"))
		seedBIOS(t, e, n, map[string]string{"Old": "1"})
		if err := e.api.DoProvisioningAction(context.Background(), "", n.UUID, "manage"); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")
		if got := biosValues(biosRows(t, e, n)); !maps.Equal(got, map[string]string{"Old": "1"}) {
			t.Fatalf("settings changed without BIOS support: %v", got)
		}
	})
}

func TestBIOSStepsSyncSettings(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		bios := &settingsBIOS{attrs: map[string]string{"A": "1", "B": "1"}}
		e := newOOBEnv(t, db, bios)
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) { n.BIOSInterface = "settings" })
		seedBIOS(t, e, n, map[string]string{"A": "1", "B": "0", "Gone": "x"})
		apply := []map[string]any{{"interface": "bios", "step": "apply_configuration",
			"args": map[string]any{"settings": []any{map[string]any{"name": "C", "value": "3"}}}}}
		if err := e.api.DoNodeClean(ctx, "", n.UUID, apply, false); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")
		rows := biosRows(t, e, n)
		if want := map[string]string{"A": "1", "B": "1", "C": "3"}; !maps.Equal(biosValues(rows), want) {
			t.Fatalf("after apply_configuration: %v, want %v", biosValues(rows), want)
		}
		if rows["A"].UpdatedAt != nil || rows["B"].UpdatedAt == nil {
			t.Errorf("A unchanged must not be rewritten, B must be updated: %+v %+v", rows["A"], rows["B"])
		}

		reset := []map[string]any{{"interface": "bios", "step": "factory_reset"}}
		if err := e.api.DoNodeClean(ctx, "", n.UUID, reset, false); err != nil {
			t.Fatal(err)
		}
		e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")
		if got := biosValues(biosRows(t, e, n)); !maps.Equal(got, map[string]string{"Default": "1"}) {
			t.Fatalf("after factory_reset: %v", got)
		}

		// Caching after the step fails the step, as upstream's decorator lets it.
		bios.set(map[string]string{"X": "1"}, errors.New("BMC unreachable"))
		if err := e.api.DoNodeClean(ctx, "", n.UUID, reset, false); err != nil {
			t.Fatal(err)
		}
		got := e.waitState(n, states.CleanFail)
		if !strings.Contains(deref(got.LastError), "BMC unreachable") {
			t.Fatalf("last_error %q", deref(got.LastError))
		}
		if vals := biosValues(biosRows(t, e, n)); !maps.Equal(vals, map[string]string{"Default": "1"}) {
			t.Fatalf("settings written by a failed caching: %v", vals)
		}
	})
}

// Upstream's FakeBIOS writes the rows itself: apply_configuration syncs
// them to exactly the settings given, factory_reset deletes them all.
func TestFakeBIOSStepsWriteSettings(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		n := e.node(states.Manageable, func(n *model.Node) { n.BIOSInterface = "fake" })
		seedBIOS(t, e, n, map[string]string{"A": "1", "Old": "x"})
		clean := func(step string, settings ...map[string]any) {
			t.Helper()
			s := map[string]any{"interface": "bios", "step": step}
			if settings != nil {
				list := make([]any, len(settings))
				for i, v := range settings {
					list[i] = v
				}
				s["args"] = map[string]any{"settings": list}
			}
			if err := e.api.DoNodeClean(ctx, "", n.UUID, []map[string]any{s}, false); err != nil {
				t.Fatal(err)
			}
		}
		clean("apply_configuration", map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "2"})
		e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")
		rows := biosRows(t, e, n)
		if want := map[string]string{"A": "1", "B": "2"}; !maps.Equal(biosValues(rows), want) {
			t.Fatalf("after apply_configuration: %v, want %v", biosValues(rows), want)
		}
		if rows["A"].UpdatedAt != nil {
			t.Errorf("unchanged A was rewritten: %+v", rows["A"])
		}

		clean("factory_reset")
		e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")
		if rows := biosRows(t, e, n); len(rows) != 0 {
			t.Fatalf("after factory_reset: %v", biosValues(rows))
		}

		clean("apply_configuration", map[string]any{"name": "C", "value": "3"})
		e.expect(e.waitState(n, states.Manageable), states.Manageable, "", "")
		clean("apply_configuration", map[string]any{"name": "B"})
		got := e.waitState(n, states.CleanFail)
		if !strings.HasSuffix(deref(got.LastError), ": 'value'") {
			t.Errorf("setting without a value: last_error %q", deref(got.LastError))
		}
		if vals := biosValues(biosRows(t, e, n)); !maps.Equal(vals, map[string]string{"C": "3"}) {
			t.Fatalf("rows written by a failed step: %v", vals)
		}
	})
}
