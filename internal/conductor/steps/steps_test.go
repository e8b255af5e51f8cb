package steps_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/conductor/steps"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/fake"
	"github.com/openkeel/ironic/internal/driver/noop"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/spectest"
)

type vectors struct {
	InterfacePriorities map[string]map[string]int `json:"interface_priorities"`
	Configurations      []struct {
		ID             string            `json:"id"`
		HardwareType   string            `json:"hardware_type"`
		Interfaces     map[string]string `json:"interfaces"`
		AutomatedClean []map[string]any  `json:"automated_clean_steps"`
		AllCleanSorted []map[string]any  `json:"all_clean_steps_sorted"`
		Deploy         []map[string]any  `json:"deploy_steps"`
		Verify         []map[string]any  `json:"verify_steps"`
		Service        []map[string]any  `json:"service_steps_available_unsorted"`
	} `json:"configurations"`
}

type classDoc struct {
	Interfaces map[string]map[string]string `json:"interfaces"`
	Classes    map[string]struct {
		RawSteps             map[string][]specStep `json:"steps"`
		RuntimeStepOverrides map[string]struct {
			IncludesDeclaredSteps bool `json:"includes_declared_steps"`
		} `json:"runtime_step_overrides"`
	} `json:"classes"`
}

type specStep struct {
	Step            string                    `json:"step"`
	Priority        int                       `json:"priority"`
	Abortable       bool                      `json:"abortable"`
	ArgsInfo        map[string]driver.ArgInfo `json:"argsinfo"`
	RequiresRamdisk bool                      `json:"requires_ramdisk"`
}

// standIn is an implementation not yet written in Go (redfish, ipmitool,
// direct deploy…), declared from drivers.json so the ordering can be
// replayed on upstream's real step lists. When upstream overrides
// get_<kind>_steps without returning the declared steps, the steps come
// from the agent at run time; no agent has reported here, so the stand-in
// lists nothing, as upstream does before the first heartbeat.
type standIn struct {
	specs  []driver.StepSpec
	hidden map[driver.StepKind]bool
}

func (s *standIn) Properties() map[string]string { return nil }
func (s *standIn) Steps() []driver.StepSpec      { return s.specs }
func (s *standIn) ListSteps(_ context.Context, _ *driver.Task, kind driver.StepKind) ([]driver.StepSpec, error) {
	if s.hidden[kind] {
		return nil, nil
	}
	var out []driver.StepSpec
	for _, sp := range s.specs {
		if sp.Kind == kind {
			out = append(out, sp)
		}
	}
	return out, nil
}

type mapSource map[driver.Kind]driver.Interface

func (m mapSource) Get(k driver.Kind) driver.Interface { return m[k] }

func registry(t *testing.T) *driver.Registry {
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
	return r
}

func TestPriorityTablesMatchSpec(t *testing.T) {
	var v vectors
	spectest.LoadJSON(t, "ironic/core/step-order-vectors.json", &v)
	for name, kind := range map[string]driver.StepKind{
		"CLEANING_INTERFACE_PRIORITY": driver.StepClean, "DEPLOYING_INTERFACE_PRIORITY": driver.StepDeploy,
		"SERVICING_INTERFACE_PRIORITY": driver.StepService, "VERIFYING_INTERFACE_PRIORITY": driver.StepVerify,
	} {
		got := map[string]int{}
		for _, ip := range steps.Table(kind) {
			got[string(ip.Kind)] = ip.Priority
		}
		if !maps.Equal(got, v.InterfacePriorities[name]) {
			t.Errorf("%s = %v, spec %v", name, got, v.InterfacePriorities[name])
		}
	}
}

func TestStepOrderVectors(t *testing.T) {
	var v vectors
	spectest.LoadJSON(t, "ironic/core/step-order-vectors.json", &v)
	var doc classDoc
	spectest.LoadJSON(t, "ironic/core/drivers.json", &doc)
	if len(v.Configurations) != 4 {
		t.Fatalf("spec has %d configurations, want 4", len(v.Configurations))
	}
	r := registry(t)
	ctx := context.Background()
	for _, c := range v.Configurations {
		t.Run(c.ID, func(t *testing.T) {
			src := mapSource{}
			standIns := 0
			for _, kind := range driver.AllKinds {
				name := c.Interfaces[string(kind)]
				if impl, ok := r.Implementation(kind, name); ok {
					src[kind] = impl
					continue
				}
				class, ok := doc.Interfaces[string(kind)][name]
				if !ok {
					t.Fatalf("%s/%s: unknown upstream entry point", kind, name)
				}
				cl := doc.Classes[class]
				s := &standIn{hidden: map[driver.StepKind]bool{}}
				for _, sk := range driver.StepKinds {
					if o, ok := cl.RuntimeStepOverrides[string(sk)]; ok && !o.IncludesDeclaredSteps {
						s.hidden[sk] = true
					}
					for _, st := range cl.RawSteps[string(sk)] {
						s.specs = append(s.specs, driver.StepSpec{
							Kind: sk, Name: st.Step, Priority: st.Priority, Abortable: st.Abortable,
							ArgsInfo: st.ArgsInfo, RequiresRamdisk: st.RequiresRamdisk,
						})
					}
				}
				src[kind] = s
				if len(s.specs) > 0 {
					standIns++
				}
			}
			if c.HardwareType == "fake-hardware" && standIns != 0 {
				t.Fatalf("fake-hardware uses %d stand-ins with steps; the registry must serve every step", standIns)
			}
			task := &driver.Task{Node: &model.Node{Driver: c.HardwareType}}
			check := func(label string, kind driver.StepKind, opts steps.Options, want []map[string]any) {
				t.Helper()
				got, err := steps.Collect(ctx, task, src, kind, opts)
				if err != nil {
					t.Fatal(err)
				}
				compare(t, label, got, want)
			}
			check("automated clean", driver.StepClean, steps.Options{Enabled: true, Sort: true}, c.AutomatedClean)
			check("all clean sorted", driver.StepClean, steps.Options{Sort: true}, c.AllCleanSorted)
			check("deploy", driver.StepDeploy, steps.Options{Enabled: true, Sort: true}, c.Deploy)
			check("verify", driver.StepVerify, steps.Options{Enabled: true, Sort: true}, c.Verify)
			check("service", driver.StepService, steps.Options{}, c.Service)
		})
	}
}

func compare(t *testing.T, label string, got []driver.Step, want []map[string]any) {
	t.Helper()
	gotMaps := make([]map[string]any, len(got))
	for i, s := range got {
		b, err := json.Marshal(s.Map())
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &gotMaps[i]); err != nil {
			t.Fatal(err)
		}
	}
	if want == nil {
		want = []map[string]any{}
	}
	if !reflect.DeepEqual(gotMaps, want) {
		t.Errorf("%s steps:\n got  %v\n want %v", label, ids(gotMaps), ids(want))
		for i := range min(len(gotMaps), len(want)) {
			if !reflect.DeepEqual(gotMaps[i], want[i]) {
				t.Errorf("%s step %d:\n got  %v\n want %v", label, i, gotMaps[i], want[i])
			}
		}
	}
}

func ids(ms []map[string]any) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m["interface"].(string) + "." + m["step"].(string) + " ")
	}
	return b.String()
}

// fakeTask resolves a fake-hardware node through the registry with
// fake-hardware's first-supported interfaces.
func fakeTask(t *testing.T) *driver.Task {
	t.Helper()
	r := registry(t)
	enabled := map[driver.Kind][]string{}
	for _, k := range driver.AllKinds {
		enabled[k] = []string{"fake"}
	}
	enabled[driver.KindNetwork] = []string{"noop"}
	d, err := r.Build(driver.Settings{EnabledHardwareTypes: []string{"fake-hardware"}, EnabledInterfaces: enabled})
	if err != nil {
		t.Fatal(err)
	}
	node := &model.Node{UUID: "8a4d5b0e-4b8c-4bd5-9a0f-4a4cbb6a3b21", Driver: "fake-hardware"}
	drv, err := d.ForNode(node)
	if err != nil {
		t.Fatal(err)
	}
	return &driver.Task{Node: node, Driver: drv}
}

func TestCleanStepPriorityOverride(t *testing.T) {
	task := fakeTask(t)
	ctx := context.Background()
	cases := []struct {
		name   string
		values []string
		want   string
	}{
		{"none", nil, "vendor.log_passthrough:1"},
		{"disable", []string{"vendor.log_passthrough:0"}, ""},
		{"raise and tie", []string{"bios.factory_reset:1, firmware.update:1"},
			"vendor.log_passthrough:1 firmware.update:1 bios.factory_reset:1"},
		{"later value wins", []string{"bios.factory_reset:5", "bios.factory_reset:-2,bios.cache_bios_settings:3"},
			"bios.cache_bios_settings:3 vendor.log_passthrough:1 bios.factory_reset:-2"},
		{"empty value ignored", []string{"vendor.log_passthrough:"}, "vendor.log_passthrough:1"},
		{"unknown step ignored", []string{"raid.nope:9"}, "vendor.log_passthrough:1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			overrides, err := steps.PriorityOverrides(loadOverride(t, tc.values))
			if err != nil {
				t.Fatal(err)
			}
			got, err := steps.CleaningSteps(ctx, task, true, true, overrides)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, s := range got {
				parts = append(parts, s.ID()+":"+itoa(s.Priority))
			}
			if g := strings.Join(parts, " "); g != tc.want {
				t.Errorf("automated clean = %q, want %q", g, tc.want)
			}
		})
	}
	// Overrides are not shared between collections: the declarations stay.
	all, err := steps.CleaningSteps(ctx, task, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.ID() == "bios.factory_reset" && s.Priority != 0 {
			t.Errorf("declaration changed by an override: %v", s.Priority)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// loadOverride runs values through the real ironic.conf loader as repeated
// [conductor]clean_step_priority_override lines.
func loadOverride(t *testing.T, values []string) map[string]string {
	t.Helper()
	var b strings.Builder
	b.WriteString("[conductor]\n")
	for _, v := range values {
		b.WriteString("clean_step_priority_override = " + v + "\n")
	}
	path := filepath.Join(t.TempDir(), "ironic.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.LoadOptions{Files: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	return c.Dict("conductor", "clean_step_priority_override")
}

func TestPriorityOverridesErrors(t *testing.T) {
	if _, err := steps.PriorityOverrides(map[string]string{"deploy.erase_devices": "high"}); err == nil {
		t.Error("non-integer priority accepted")
	}
}

func TestExecuteFakeSteps(t *testing.T) {
	task := fakeTask(t)
	ctx := context.Background()
	service, err := steps.ServiceSteps(ctx, task, false)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]string{}
	for _, s := range service {
		res, err := driver.ExecuteStep(ctx, task, task.Driver.Get(s.Interface), s)
		if err != nil {
			t.Fatalf("%s: %v", s.ID(), err)
		}
		results[s.ID()] = res
	}
	if results["vendor.trigger_servicewait"] != "service wait" || results["vendor.log_passthrough"] != "" {
		t.Errorf("service step results = %v", results)
	}
	bios := driver.Step{Kind: driver.StepClean, Interface: driver.KindBIOS, Name: "apply_configuration",
		Args: map[string]any{"settings": []any{map[string]any{"name": "ProcTurboMode", "value": "Disabled"}}}}
	if _, err := driver.ExecuteStep(ctx, task, task.Driver.BIOS, bios); err != nil {
		t.Errorf("apply_configuration: %v", err)
	}
	bios.Args = map[string]any{}
	if _, err := driver.ExecuteStep(ctx, task, task.Driver.BIOS, bios); !driver.IsClass(err, errs.ClassMissingParameterValue) {
		t.Errorf("apply_configuration without settings: %v", err)
	}
	bios.Name = "nope"
	if _, err := driver.ExecuteStep(ctx, task, task.Driver.BIOS, bios); err == nil {
		t.Error("unknown step ran")
	}
}
