package states

import (
	"errors"
	"slices"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
)

const (
	machineSpec = "ironic/core/state-machine.json"
	vectorsSpec = "ironic/core/state-machine-vectors.json"
)

type specState struct {
	Name          string  `json:"name"`
	Const         string  `json:"const"`
	Stable        bool    `json:"stable"`
	DefaultTarget *string `json:"default_target"`
}

type specSet struct {
	Ordered bool     `json:"ordered"`
	Values  []string `json:"values"`
	Count   int      `json:"count"`
}

type machineFile struct {
	States      []specState        `json:"states"`
	Events      []string           `json:"events"`
	Transitions []Transition       `json:"transitions"`
	StateSets   map[string]specSet `json:"state_sets"`
	Verbs       map[string]string  `json:"verbs"`
	Constants   map[string]*string `json:"provision_state_constants"`
	NotMachine  []string           `json:"provision_constants_not_machine_states"`
	PowerStates map[string]string  `json:"power_states"`
	Allocation  map[string]string  `json:"allocation_states"`
	History     map[string]string  `json:"history_event_types"`
	Counts      map[string]int     `json:"counts"`
	Nostate     *string            `json:"nostate"`
}

func loadMachine(t *testing.T) machineFile {
	t.Helper()
	var f machineFile
	// Transition's fields decode from the spec's "from", "event" and "to"
	// because encoding/json matches names case-insensitively.
	spectest.LoadJSON(t, machineSpec, &f)
	return f
}

func deref(s *string) string {
	if s == nil {
		return NoState
	}
	return *s
}

func TestMachineStatesMatchSpec(t *testing.T) {
	spec := loadMachine(t)
	m := Provision()
	if got, want := len(m.States()), spec.Counts["states"]; got != want || len(spec.States) != want {
		t.Fatalf("state count: machine %d, spec %d (listed %d)", got, want, len(spec.States))
	}
	var names []string
	for _, s := range spec.States {
		names = append(names, s.Name)
		stable, err := m.IsStable(s.Name)
		if err != nil {
			t.Errorf("%q: %v", s.Name, err)
			continue
		}
		if stable != s.Stable {
			t.Errorf("%q: stable %v, spec %v", s.Name, stable, s.Stable)
		}
		if got, want := m.DefaultTarget(s.Name), deref(s.DefaultTarget); got != want {
			t.Errorf("%q: default target %q, spec %q", s.Name, got, want)
		}
	}
	if got := m.States(); !slices.Equal(got, names) {
		t.Errorf("state declaration order:\n got %q\nwant %q", got, names)
	}
}

func TestMachineEventsMatchSpec(t *testing.T) {
	spec := loadMachine(t)
	if got := Provision().Events(); !slices.Equal(got, spec.Events) || len(got) != spec.Counts["events"] {
		t.Errorf("events:\n got %q\nwant %q", got, spec.Events)
	}
}

func TestMachineTransitionsMatchSpec(t *testing.T) {
	spec := loadMachine(t)
	m := Provision()
	if len(spec.Transitions) != spec.Counts["transitions"] {
		t.Fatalf("spec lists %d transitions, counts say %d", len(spec.Transitions), spec.Counts["transitions"])
	}
	want := make(map[Transition]bool, len(spec.Transitions))
	for _, tr := range spec.Transitions {
		want[tr] = true
		to, ok := m.Next(tr.From, tr.Event)
		if !ok || to != tr.To {
			t.Errorf("%q --%s--> got %q (defined %v), want %q", tr.From, tr.Event, to, ok, tr.To)
		}
	}
	got := m.Transitions()
	if len(got) != len(spec.Transitions) {
		t.Errorf("machine has %d transitions, spec %d", len(got), len(spec.Transitions))
	}
	for _, tr := range got {
		if !want[tr] {
			t.Errorf("transition %v is not in the spec", tr)
		}
	}
}

func TestStateSetsMatchSpec(t *testing.T) {
	spec := loadMachine(t)
	ours := map[string]Set{
		"STABLE_STATES":                   StableStates,
		"UNSTABLE_STATES":                 UnstableStates,
		"STUCK_STATES_TREATED_AS_FAIL":    StuckStatesTreatedAsFail,
		"UPDATE_ALLOWED_STATES":           UpdateAllowedStates,
		"DELETE_ALLOWED_STATES":           DeleteAllowedStates,
		"LOOKUP_ALLOWED_STATES":           LookupAllowedStates,
		"FASTTRACK_LOOKUP_ALLOWED_STATES": FastTrackLookupAllowedStates,
		"FAILURE_STATES":                  FailureStates,
		"SERVICING_STATES":                ServicingStates,
		"INSPECTION_STATES":               InspectionStates,
		"ALL_STATES":                      AllStates,
	}
	for name, want := range spec.StateSets {
		if name[0] == '_' {
			// Private tuples only feed the public frozensets checked below.
			continue
		}
		got, ok := ours[name]
		if !ok {
			t.Errorf("spec set %s has no Go counterpart", name)
			continue
		}
		delete(ours, name)
		if got.Ordered() != want.Ordered {
			t.Errorf("%s: ordered %v, spec %v", name, got.Ordered(), want.Ordered)
		}
		if !slices.Equal(got.Values(), want.Values) || got.Len() != want.Count {
			t.Errorf("%s:\n got %q\nwant %q", name, got.Values(), want.Values)
		}
		for _, v := range want.Values {
			if !got.Contains(v) {
				t.Errorf("%s does not contain %q", name, v)
			}
		}
		if got.Contains("no-such-state") {
			t.Errorf("%s contains an unknown state", name)
		}
	}
	for name := range ours {
		t.Errorf("Go set for %s is missing from the spec", name)
	}
	for _, s := range Provision().States() {
		stable, _ := Provision().IsStable(s)
		if stable != StableStates.Contains(s) {
			t.Errorf("%q: machine stable %v, StableStates %v", s, stable, StableStates.Contains(s))
		}
	}
}

func TestVerbsMatchSpec(t *testing.T) {
	spec := loadMachine(t)
	got := Verbs()
	if len(got) != len(spec.Verbs) {
		t.Errorf("verbs: %d, spec %d", len(got), len(spec.Verbs))
	}
	for target, event := range spec.Verbs {
		ev, ok := VerbEvent(target)
		if !ok || ev != event || got[target] != event {
			t.Errorf("verb %q: got %q (%v), want %q", target, ev, ok, event)
		}
	}
	if _, ok := VerbEvent(Rebuild); ok {
		t.Errorf("rebuild is handled by the API itself, not through VERBS")
	}
}

func TestConstantsMatchSpec(t *testing.T) {
	spec := loadMachine(t)
	provision := map[string]string{
		"NOSTATE": NoState, "ENROLL": Enroll, "VERIFYING": Verifying,
		"MANAGEABLE": Manageable, "AVAILABLE": Available, "ACTIVE": Active,
		"DEPLOY": Deploy, "DEPLOYWAIT": DeployWait, "DEPLOYING": Deploying,
		"DEPLOYFAIL": DeployFail, "DEPLOYDONE": DeployDone,
		"DEPLOYHOLD": DeployHold, "DELETING": Deleting, "DELETED": Deleted,
		"CLEANING": Cleaning, "UNDEPLOY": Undeploy, "CLEANWAIT": CleanWait,
		"CLEANFAIL": CleanFail, "CLEANHOLD": CleanHold, "ERROR": Error,
		"REBUILD": Rebuild, "INSPECTING": Inspecting,
		"INSPECTFAIL": InspectFail, "INSPECTWAIT": InspectWait,
		"ADOPTING": Adopting, "ADOPTFAIL": AdoptFail, "RESCUE": Rescue,
		"RESCUEFAIL": RescueFail, "RESCUEWAIT": RescueWait,
		"RESCUING": Rescuing, "UNRESCUEFAIL": UnrescueFail,
		"UNRESCUING": Unrescuing, "SERVICE": Service, "SERVICING": Servicing,
		"SERVICEWAIT": ServiceWait, "SERVICEFAIL": ServiceFail,
		"SERVICEHOLD": ServiceHold,
	}
	compare(t, "provision", provision, spec.Constants)
	if spec.Nostate != nil {
		t.Errorf("spec NOSTATE is %q, expected None", *spec.Nostate)
	}
	for _, s := range spec.States {
		if provision[s.Const] != s.Name {
			t.Errorf("machine state %q: constant %s is %q", s.Name, s.Const, provision[s.Const])
		}
	}
	for _, s := range spec.NotMachine {
		if Provision().HasState(s) {
			t.Errorf("%q must not be a machine state", s)
		}
	}
	compare(t, "power", map[string]string{
		"POWER_ON": PowerOn, "POWER_OFF": PowerOff, "REBOOT": Reboot,
		"SOFT_REBOOT": SoftReboot, "SOFT_POWER_OFF": SoftPowerOff,
	}, ptrs(spec.PowerStates))
	compare(t, "allocation", map[string]string{"ALLOCATING": Allocating}, ptrs(spec.Allocation))
	// CLEANING, DEPLOYING and RESCUE are history types too, but the spec
	// records them once, as provision constants, where they are checked.
	compare(t, "history", map[string]string{
		"PROVISIONING": HistoryProvisioning, "TAKEOVER": HistoryTakeover,
		"INTROSPECTION": HistoryIntrospection, "CONDUCTOR": HistoryConductor,
		"TRANSITION": HistoryTransition, "STARTFAIL": HistoryStartFail,
		"UNPROVISION": HistoryUnprovision, "ADOPTION": HistoryAdoption,
		"CONSOLE": HistoryConsole, "MONITORING": HistoryMonitoring,
		"VERIFY": HistoryVerify,
	}, ptrs(spec.History))
	if HistoryCleaning != spec.derefConst(t, "CLEANING") || HistoryDeploying != spec.derefConst(t, "DEPLOYING") || HistoryRescue != spec.derefConst(t, "RESCUE") {
		t.Errorf("history types shared with provision states differ from the spec")
	}
}

func (f machineFile) derefConst(t *testing.T, name string) string {
	t.Helper()
	v, ok := f.Constants[name]
	if !ok || v == nil {
		t.Fatalf("spec has no provision constant %s", name)
	}
	return *v
}

func ptrs(m map[string]string) map[string]*string {
	out := make(map[string]*string, len(m))
	for k, v := range m {
		out[k] = &v
	}
	return out
}

func compare(t *testing.T, kind string, ours map[string]string, spec map[string]*string) {
	t.Helper()
	if len(ours) != len(spec) {
		t.Errorf("%s constants: %d in Go, %d in spec", kind, len(ours), len(spec))
	}
	for name, v := range spec {
		got, ok := ours[name]
		if !ok {
			t.Errorf("%s constant %s has no Go counterpart", kind, name)
			continue
		}
		if got != deref(v) {
			t.Errorf("%s constant %s = %q, spec %q", kind, name, got, deref(v))
		}
	}
}

func TestBuildRejectsBadTables(t *testing.T) {
	cases := map[string]struct {
		states []stateSpec
		events []string
		trans  []Transition
	}{
		"unstable default target": {
			states: []stateSpec{{"a", false, NoState}, {"b", false, "a"}},
		},
		"target declared later": {
			states: []stateSpec{{"b", false, "a"}, {"a", true, NoState}},
		},
		"duplicate state": {
			states: []stateSpec{{"a", true, NoState}, {"a", true, NoState}},
		},
		"duplicate edge": {
			states: []stateSpec{{"a", true, NoState}, {"b", true, NoState}},
			events: []string{"go"},
			trans:  []Transition{{"a", "go", "b"}, {"a", "go", "a"}},
		},
		"undeclared event": {
			states: []stateSpec{{"a", true, NoState}},
			trans:  []Transition{{"a", "go", "a"}},
		},
	}
	for name, c := range cases {
		if _, err := build(c.states, c.events, c.trans); err == nil {
			t.Errorf("%s: table accepted", name)
		}
	}
}

func TestIsStableUnknownState(t *testing.T) {
	_, err := Provision().IsStable("deleted")
	var ise *InvalidStateError
	if !errors.As(err, &ise) || ise.Message != "State 'deleted' does not exist" {
		t.Errorf("IsStable(deleted) = %v", err)
	}
}
