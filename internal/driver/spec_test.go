package driver_test

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/graphical"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/spectest"
)

type specDrivers struct {
	HardwareTypes map[string]struct {
		Class                  string                     `json:"class"`
		SupportedInterfaces    map[string][]*string       `json:"supported_interfaces"`
		DefaultWithStockConfig map[string]json.RawMessage `json:"default_with_stock_config"`
		EnabledByStockConfig   bool                       `json:"enabled_by_stock_config"`
		SupportedNotRegistered map[string][]string        `json:"supported_but_not_registered"`
		FirstSupported         map[string]string          `json:"first_supported"`
		SupportedClasses       map[string][]string        `json:"supported_classes"`
		Extra                  map[string]json.RawMessage `json:"-"`
	} `json:"hardware_types"`
	Interfaces      map[string]map[string]string `json:"interfaces"`
	StockEnablement map[string]struct {
		Enabled             []string `json:"enabled"`
		ComputedFromHWTypes bool     `json:"computed_from_hardware_types"`
		DefaultOption       *string  `json:"default_option"`
	} `json:"stock_config_interface_enablement"`
	Classes map[string]specClass `json:"classes"`
}

type specClass struct {
	InterfaceType        string                        `json:"interface_type"`
	Steps                map[string][]specStep         `json:"steps"`
	Properties           map[string]string             `json:"properties"`
	RegisteredAs         []struct{ Kind, Name string } `json:"registered_as"`
	RuntimeStepOverrides map[string]struct {
		IncludesDeclaredSteps bool `json:"includes_declared_steps"`
	} `json:"runtime_step_overrides"`
}

// specStep is a step dict of drivers.json; defined_in and source are
// provenance, not part of what the conductor sees.
type specStep map[string]any

func loadDrivers(t *testing.T) specDrivers {
	t.Helper()
	var d specDrivers
	spectest.LoadJSON(t, "ironic/core/drivers.json", &d)
	if len(d.HardwareTypes) == 0 || len(d.Classes) == 0 {
		t.Fatal("drivers.json: no hardware types or classes decoded")
	}
	return d
}

// stockSettings reads the [DEFAULT] enabled_* / default_* defaults from
// config-options.json, so the test does not restate them.
func stockSettings(t *testing.T) driver.Settings {
	t.Helper()
	var doc struct {
		Options []struct {
			Section string          `json:"section"`
			Name    string          `json:"name"`
			Default json.RawMessage `json:"default"`
		} `json:"options"`
	}
	spectest.LoadJSON(t, "ironic/core/config-options.json", &doc)
	s := driver.Settings{EnabledInterfaces: map[driver.Kind][]string{}, DefaultInterfaces: map[driver.Kind]string{}}
	found := 0
	for _, o := range doc.Options {
		if o.Section != "DEFAULT" {
			continue
		}
		switch {
		case o.Name == "enabled_hardware_types":
			mustUnmarshal(t, o.Default, &s.EnabledHardwareTypes)
			found++
		case strings.HasPrefix(o.Name, "enabled_") && strings.HasSuffix(o.Name, "_interfaces"):
			kind := driver.Kind(strings.TrimSuffix(strings.TrimPrefix(o.Name, "enabled_"), "_interfaces"))
			var v []string
			mustUnmarshal(t, o.Default, &v)
			s.EnabledInterfaces[kind] = v
			found++
		case strings.HasPrefix(o.Name, "default_") && strings.HasSuffix(o.Name, "_interface"):
			kind := driver.Kind(strings.TrimSuffix(strings.TrimPrefix(o.Name, "default_"), "_interface"))
			var v *string
			mustUnmarshal(t, o.Default, &v)
			if v != nil {
				s.DefaultInterfaces[kind] = *v
			}
			found++
		}
	}
	if found != 1+2*len(driver.AllKinds) {
		t.Fatalf("config-options.json: found %d enabled_/default_ options, want %d", found, 1+2*len(driver.AllKinds))
	}
	return s
}

func mustUnmarshal(t *testing.T, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

func stockByName() map[string]driver.HardwareType {
	out := map[string]driver.HardwareType{}
	for _, h := range driver.StockHardwareTypes() {
		out[h.Name] = h
	}
	return out
}

func TestStockHardwareTypesMatchSpec(t *testing.T) {
	spec := loadDrivers(t)
	stock := stockByName()
	var specNames []string
	for name := range spec.HardwareTypes {
		if !strings.HasPrefix(name, "(") {
			specNames = append(specNames, name)
		}
	}
	if got, want := slices.Sorted(maps.Keys(stock)), slices.Sorted(slices.Values(specNames)); !slices.Equal(got, want) {
		t.Fatalf("hardware types = %v, spec has %v", got, want)
	}
	for _, name := range specNames {
		sh := spec.HardwareTypes[name]
		h := stock[name]
		t.Run(name, func(t *testing.T) {
			if want := sh.Class[strings.LastIndex(sh.Class, ":")+1:]; h.ClassName != want {
				t.Errorf("class name %q, want %q", h.ClassName, want)
			}
			if h.AnyInterface != (name == "fake-hardware") {
				t.Errorf("AnyInterface = %v", h.AnyInterface)
			}
			if len(sh.SupportedInterfaces) != len(driver.AllKinds) {
				t.Fatalf("spec lists %d kinds", len(sh.SupportedInterfaces))
			}
			for _, kind := range driver.AllKinds {
				var want []string
				for _, n := range sh.SupportedInterfaces[string(kind)] {
					// A supported class without an entry point cannot be
					// named by a node: left out of the Go lists.
					if n != nil {
						want = append(want, *n)
					}
				}
				if got := h.Supported[kind]; !slices.Equal(got, want) {
					t.Errorf("%s supported = %v, want %v", kind, got, want)
				}
			}
		})
	}
}

func TestDefaultInterfacesWithStockConfig(t *testing.T) {
	spec := loadDrivers(t)
	settings := stockSettings(t)
	stock := stockByName()
	var enabledHW []*driver.HardwareType
	for _, name := range settings.EnabledHardwareTypes {
		h := stock[name]
		enabledHW = append(enabledHW, &h)
	}
	for _, kind := range driver.AllKinds {
		want := spec.StockEnablement[string(kind)]
		got := driver.EffectiveEnabled(kind, settings.EnabledInterfaces[kind], enabledHW)
		if !slices.Equal(got, want.Enabled) {
			t.Errorf("%s: effective enabled %v, spec %v", kind, got, want.Enabled)
		}
		if computed := len(settings.EnabledInterfaces[kind]) == 0; computed != want.ComputedFromHWTypes {
			t.Errorf("%s: computed from hardware types = %v, spec %v", kind, computed, want.ComputedFromHWTypes)
		}
		if def := settings.DefaultInterfaces[kind]; (want.DefaultOption == nil) != (def == "") || (want.DefaultOption != nil && *want.DefaultOption != def) {
			t.Errorf("%s: default option %q, spec %v", kind, def, want.DefaultOption)
		}
	}
	cases := 0
	for name, sh := range spec.HardwareTypes {
		if strings.HasPrefix(name, "(") {
			continue
		}
		h := stock[name]
		if got := slices.Contains(settings.EnabledHardwareTypes, name); got != sh.EnabledByStockConfig {
			t.Errorf("%s: enabled by stock config = %v, spec %v", name, got, sh.EnabledByStockConfig)
		}
		for _, kind := range driver.AllKinds {
			raw, ok := sh.DefaultWithStockConfig[string(kind)]
			if !ok {
				t.Fatalf("%s/%s: no default_with_stock_config", name, kind)
			}
			enabled := driver.EffectiveEnabled(kind, settings.EnabledInterfaces[kind], enabledHW)
			got, err := driver.DefaultInterface(&h, kind, enabled, settings.DefaultInterfaces[kind], name, "")
			var wantName string
			var wantErr struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(raw, &wantName) == nil {
				if err != nil || got != wantName {
					t.Errorf("%s/%s: default = %q, %v; want %q", name, kind, got, err, wantName)
				}
			} else {
				mustUnmarshal(t, raw, &wantErr)
				if !driver.IsClass(err, errs.Class(wantErr.Error)) {
					t.Errorf("%s/%s: default = %q, %v; want error %s", name, kind, got, err, wantErr.Error)
				}
			}
			cases++
		}
		if first := sh.FirstSupported; len(first) > 0 {
			for _, kind := range driver.AllKinds {
				if sup := h.Supported[kind]; len(sup) == 0 || sup[0] != first[string(kind)] {
					t.Errorf("%s/%s: first supported %v, spec %q", name, kind, sup, first[string(kind)])
				}
			}
		}
	}
	if cases != 6*len(driver.AllKinds) {
		t.Fatalf("replayed %d default cases, want %d", cases, 6*len(driver.AllKinds))
	}
}

// fullRegistry registers every implementation this build has.
func fullRegistry(t *testing.T) *driver.Registry {
	t.Helper()
	r := driver.NewRegistry()
	for _, h := range driver.StockHardwareTypes() {
		if err := r.AddHardwareType(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := fake.Register(r, fake.Delays{}); err != nil {
		t.Fatal(err)
	}
	if err := noop.Register(r); err != nil {
		t.Fatal(err)
	}
	if err := graphical.Register(r, graphical.Options{}); err != nil {
		t.Fatal(err)
	}
	return r
}

// notYetImplemented lists upstream entry points of the fake and noop modules
// that this build does not register, with the reason.
var notYetImplemented = map[string]string{}

func TestRegisteredInterfacesMatchSpecClasses(t *testing.T) {
	spec := loadDrivers(t)
	r := fullRegistry(t)
	ctx := context.Background()
	registered := 0
	for _, kind := range driver.AllKinds {
		for _, name := range r.Names(kind) {
			impl, _ := r.Implementation(kind, name)
			class, ok := spec.Interfaces[string(kind)][name]
			if !ok {
				t.Errorf("%s/%s: no such entry point upstream", kind, name)
				continue
			}
			registered++
			t.Run(string(kind)+"/"+name, func(t *testing.T) {
				checkClass(ctx, t, spec.Classes[class], kind, impl)
			})
		}
	}
	// Every entry point of the fake and no-op modules must be registered.
	for kind, names := range spec.Interfaces {
		for name, class := range names {
			mod := class[:strings.Index(class, ":")]
			if !slices.Contains([]string{
				"ironic.drivers.modules.fake", "ironic.drivers.modules.noop", "ironic.drivers.modules.noop_mgmt",
				"ironic.drivers.modules.network.noop", "ironic.drivers.modules.storage.noop",
			}, mod) {
				continue
			}
			if _, ok := r.Implementation(driver.Kind(kind), name); !ok && notYetImplemented[kind+"/"+name] == "" {
				t.Errorf("%s/%s (%s) is not registered", kind, name, class)
			}
		}
	}
	if registered == 0 {
		t.Fatal("nothing registered")
	}
	t.Run("vendor/FakeVendorA", func(t *testing.T) {
		checkClass(ctx, t, spec.Classes["ironic.drivers.modules.fake:FakeVendorA"], driver.KindVendor, &fake.VendorA{})
	})
}

func checkClass(ctx context.Context, t *testing.T, c specClass, kind driver.Kind, impl driver.Interface) {
	t.Helper()
	if c.InterfaceType != string(kind) {
		t.Errorf("interface_type %q, registered as %s", c.InterfaceType, kind)
	}
	if got := impl.Properties(); !maps.Equal(got, c.Properties) {
		t.Errorf("properties = %v, spec %v", got, c.Properties)
	}
	for _, sk := range driver.StepKinds {
		want := c.Steps[string(sk)]
		if o, ok := c.RuntimeStepOverrides[string(sk)]; ok && !o.IncludesDeclaredSteps {
			want = nil
		}
		got, err := driver.StepsOf(ctx, &driver.Task{}, kind, impl, sk)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("%s steps: got %d %v, spec %d", sk, len(got), got, len(want))
			continue
		}
		for i := range got {
			compareStep(t, string(sk), got[i], want[i])
		}
	}
}

func compareStep(t *testing.T, label string, got driver.Step, want specStep) {
	t.Helper()
	gotJSON, err := json.Marshal(got.Map())
	if err != nil {
		t.Fatal(err)
	}
	var gotMap map[string]any
	mustUnmarshal(t, gotJSON, &gotMap)
	wantMap := map[string]any(maps.Clone(want))
	delete(wantMap, "defined_in")
	delete(wantMap, "source")
	if !reflect.DeepEqual(gotMap, wantMap) {
		t.Errorf("%s step %v:\n got  %v\n want %v", label, got.Name, gotMap, wantMap)
	}
}
