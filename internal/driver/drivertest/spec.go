// Package drivertest checks driver implementations against upstream's
// classes as the spec records them (ironic/core/drivers.json): the entry
// point an implementation is registered under, its interface type, its
// get_properties() and the steps it declares. Driver packages' tests share
// it so that each checks its registrations the same way.
package drivertest

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/spectest"
)

// Spec is the part of drivers.json the checks read.
type Spec struct {
	// Interfaces maps an interface kind and an entry point name to the
	// class upstream registers there ("module:Class").
	Interfaces map[string]map[string]string `json:"interfaces"`
	// Classes are upstream's interface classes by "module:Class".
	Classes map[string]Class `json:"classes"`
}

// Class is one upstream interface class.
type Class struct {
	InterfaceType string            `json:"interface_type"`
	Properties    map[string]string `json:"properties"`
	// Steps are the steps the class declares, by step kind, sorted by
	// method name.
	Steps map[string][]map[string]any `json:"steps"`
}

// LoadSpec reads drivers.json from the spec directory.
func LoadSpec(t testing.TB) Spec {
	t.Helper()
	var s Spec
	spectest.LoadJSON(t, "ironic/core/drivers.json", &s)
	if len(s.Classes) == 0 {
		t.Fatal("drivers.json: no classes decoded")
	}
	return s
}

// ClassOf is the class upstream registers as kind/name, failing t (not
// fatally) when upstream has no such entry point.
func (s Spec) ClassOf(t testing.TB, kind driver.Kind, name string) (string, Class, bool) {
	t.Helper()
	class, ok := s.Interfaces[string(kind)][name]
	if !ok {
		t.Errorf("%s/%s: no such entry point upstream", kind, name)
		return "", Class{}, false
	}
	return class, s.Classes[class], true
}

// CheckRegistered checks every implementation in r against its class, in
// a subtest named after the class, with the steps impl reports for task.
// It returns the "kind/name" of each implementation checked.
func CheckRegistered(t *testing.T, s Spec, r *driver.Registry, task *driver.Task) map[string]bool {
	t.Helper()
	checked := map[string]bool{}
	for _, kind := range driver.AllKinds {
		for _, name := range r.Names(kind) {
			impl, _ := r.Implementation(kind, name)
			class, c, ok := s.ClassOf(t, kind, name)
			if !ok {
				continue
			}
			t.Run(class, func(t *testing.T) { CheckClass(t, c, kind, impl, task) })
			checked[string(kind)+"/"+name] = true
		}
	}
	return checked
}

// CheckClass checks impl, registered as kind, against class c: interface
// type, properties, and the steps of each kind it reports for task.
func CheckClass(t testing.TB, c Class, kind driver.Kind, impl driver.Interface, task *driver.Task) {
	t.Helper()
	if c.InterfaceType != string(kind) {
		t.Errorf("interface_type %q, registered as %s", c.InterfaceType, kind)
	}
	if got := impl.Properties(); !maps.Equal(got, c.Properties) {
		t.Errorf("properties differ:\n got  %v\n want %v", got, c.Properties)
	}
	for _, sk := range driver.StepKinds {
		got, err := driver.StepsOf(context.Background(), task, kind, impl, sk)
		if err != nil {
			t.Fatal(err)
		}
		CompareSteps(t, string(sk), got, c.Steps[string(sk)])
	}
}

// CompareSteps checks steps against a class's list of them, as the
// conductor sees them (their JSON), in the spec's order (by method name).
// The spec's provenance keys, defined_in and source, are not compared.
func CompareSteps(t testing.TB, label string, steps []driver.Step, want []map[string]any) {
	t.Helper()
	got := make([]map[string]any, len(steps))
	for i, s := range steps {
		data, err := json.Marshal(s.Map())
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &got[i]); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortFunc(got, func(a, b map[string]any) int { return strings.Compare(a["step"].(string), b["step"].(string)) })
	if len(got) != len(want) {
		t.Errorf("%s steps: %v, spec %v", label, got, want)
		return
	}
	for i := range got {
		w := maps.Clone(want[i])
		delete(w, "defined_in")
		delete(w, "source")
		if !reflect.DeepEqual(got[i], w) {
			t.Errorf("%s step %d:\n got  %v\n want %v", label, i, got[i], w)
		}
	}
}
