package states

import (
	"errors"
	"fmt"
	"testing"

	"github.com/openkeel/ironic/internal/spectest"
)

// fsmCase is a matrix or override case of state-machine-vectors.json.
type fsmCase struct {
	ID                 string  `json:"id"`
	State              string  `json:"state"`
	InitialTarget      *string `json:"initial_target"`
	Event              string  `json:"event"`
	TargetState        *string `json:"target_state"`
	Valid              bool    `json:"valid"`
	NewState           string  `json:"new_state"`
	FSMTarget          *string `json:"fsm_target"`
	NewStateStable     bool    `json:"new_state_stable"`
	Error              string  `json:"error"`
	Message            string  `json:"message"`
	StateAfterError    string  `json:"fsm_state_after_error"`
	TargetProvisioning struct {
		NoCallback   *string `json:"no_callback"`
		WithCallback *string `json:"with_callback"`
	} `json:"target_provision_state"`
}

type initCase struct {
	StartState  string  `json:"start_state"`
	TargetState *string `json:"target_state"`
	Valid       bool    `json:"valid"`
	FSMTarget   *string `json:"fsm_target"`
	Error       string  `json:"error"`
	Message     string  `json:"message"`
}

type vectorsFile struct {
	Counts struct {
		Matrix    int `json:"matrix_cases"`
		Valid     int `json:"matrix_valid"`
		Invalid   int `json:"matrix_invalid"`
		Overrides int `json:"override_cases"`
		Init      int `json:"initialize_cases"`
	} `json:"counts"`
	Matrix    []fsmCase  `json:"matrix"`
	Overrides []fsmCase  `json:"target_state_overrides"`
	Init      []initCase `json:"initialize_cases"`
}

func loadVectors(t *testing.T) vectorsFile {
	t.Helper()
	var v vectorsFile
	spectest.LoadJSON(t, vectorsSpec, &v)
	return v
}

func checkInvalidState(t *testing.T, err error, wantClass, wantMsg string) {
	t.Helper()
	if wantClass != "InvalidState" {
		t.Fatalf("vector expects error class %q; only InvalidState is known", wantClass)
	}
	var ise *InvalidStateError
	if !errors.As(err, &ise) {
		t.Fatalf("error = %v (%T), want InvalidState %q", err, err, wantMsg)
	}
	if ise.Message != wantMsg {
		t.Errorf("message:\n got %q\nwant %q", ise.Message, wantMsg)
	}
}

// replay runs one vector the way TaskManager does: initialize from the
// node's fields, process the event, then derive target_provision_state.
func replay(t *testing.T, c fsmCase) {
	t.Helper()
	var f FSM
	if err := f.Initialize(c.State, deref(c.InitialTarget)); err != nil {
		t.Fatalf("Initialize(%q, %q): %v", c.State, deref(c.InitialTarget), err)
	}
	actionable := f.IsActionableEvent(c.Event)
	if _, defined := Provision().Next(c.State, c.Event); actionable != defined {
		t.Errorf("IsActionableEvent(%q) = %v, machine defines it: %v", c.Event, actionable, defined)
	}
	startTarget := f.TargetState()
	err := f.ProcessEvent(c.Event, c.TargetState)
	if !c.Valid {
		checkInvalidState(t, err, c.Error, c.Message)
		if got := f.CurrentState(); got != c.StateAfterError {
			t.Errorf("state after error = %q, want %q", got, c.StateAfterError)
		}
		if c.StateAfterError == c.State && f.TargetState() != startTarget {
			t.Errorf("refused event changed the target from %q to %q", startTarget, f.TargetState())
		}
		return
	}
	if err != nil {
		t.Fatalf("ProcessEvent(%q): %v", c.Event, err)
	}
	if !actionable {
		t.Errorf("IsActionableEvent(%q) was false for a valid event", c.Event)
	}
	if got := f.CurrentState(); got != c.NewState {
		t.Errorf("new state = %q, want %q", got, c.NewState)
	}
	if got, want := f.TargetState(), deref(c.FSMTarget); got != want {
		t.Errorf("fsm target = %q, want %q", got, want)
	}
	if stable, _ := Provision().IsStable(f.CurrentState()); stable != c.NewStateStable {
		t.Errorf("new state stable = %v, want %v", stable, c.NewStateStable)
	}
	if got, want := f.TaskTarget(false), deref(c.TargetProvisioning.NoCallback); got != want {
		t.Errorf("target_provision_state without callback = %q, want %q", got, want)
	}
	if got, want := f.TaskTarget(true), deref(c.TargetProvisioning.WithCallback); got != want {
		t.Errorf("target_provision_state with callback = %q, want %q", got, want)
	}
}

func TestFSMMatrix(t *testing.T) {
	v := loadVectors(t)
	if len(v.Matrix) != v.Counts.Matrix {
		t.Fatalf("matrix has %d cases, counts say %d", len(v.Matrix), v.Counts.Matrix)
	}
	seen := make(map[[2]string]bool, len(v.Matrix))
	valid := 0
	for _, c := range v.Matrix {
		seen[[2]string{c.State, c.Event}] = true
		if c.Valid {
			valid++
		}
		if got, want := deref(c.InitialTarget), Provision().DefaultTarget(c.State); got != want {
			t.Errorf("%s/%s: vector starts with target %q, default target is %q", c.State, c.Event, got, want)
		}
		t.Run(c.State+"/"+c.Event, func(t *testing.T) { replay(t, c) })
	}
	// Every state × event pair of the machine must be covered exactly once.
	m := Provision()
	if want := len(m.States()) * len(m.Events()); len(seen) != want || len(v.Matrix) != want {
		t.Errorf("matrix covers %d distinct pairs in %d cases, machine has %d", len(seen), len(v.Matrix), want)
	}
	if valid != v.Counts.Valid || valid != len(m.Transitions()) || len(v.Matrix)-valid != v.Counts.Invalid {
		t.Errorf("valid cases %d, counts %d/%d, machine transitions %d", valid, v.Counts.Valid, v.Counts.Invalid, len(m.Transitions()))
	}
}

func TestFSMTargetStateOverrides(t *testing.T) {
	v := loadVectors(t)
	if len(v.Overrides) != v.Counts.Overrides {
		t.Fatalf("%d override cases, counts say %d", len(v.Overrides), v.Counts.Overrides)
	}
	for _, c := range v.Overrides {
		t.Run(c.ID, func(t *testing.T) { replay(t, c) })
	}
}

func TestFSMInitialize(t *testing.T) {
	v := loadVectors(t)
	if len(v.Init) != v.Counts.Init {
		t.Fatalf("%d initialize cases, counts say %d", len(v.Init), v.Counts.Init)
	}
	for i, c := range v.Init {
		t.Run(fmt.Sprintf("%d/%s", i, c.StartState), func(t *testing.T) {
			var f FSM
			err := f.Initialize(c.StartState, deref(c.TargetState))
			if !c.Valid {
				checkInvalidState(t, err, c.Error, c.Message)
				return
			}
			if err != nil {
				t.Fatalf("Initialize: %v", err)
			}
			if f.CurrentState() != c.StartState {
				t.Errorf("current = %q, want %q", f.CurrentState(), c.StartState)
			}
			if got, want := f.TargetState(), deref(c.FSMTarget); got != want {
				t.Errorf("target = %q, want %q", got, want)
			}
		})
	}
}

func TestFSMUninitialized(t *testing.T) {
	var f FSM
	if f.CurrentState() != NoState || f.TargetState() != NoState {
		t.Errorf("zero FSM = (%q, %q), want no state", f.CurrentState(), f.TargetState())
	}
	if f.IsActionableEvent(EventManage) {
		t.Errorf("an uninitialized FSM has no actionable event")
	}
	err := f.ProcessEvent(EventManage, nil)
	var ise *InvalidStateError
	if !errors.As(err, &ise) || ise.Message != "Can not process event 'manage'; the state machine hasn't been initialized" {
		t.Errorf("ProcessEvent on zero FSM = %v", err)
	}
}

// A task copies the node's FSM; moving the copy must leave the original
// where it was, which is what lets every task share one definition.
func TestFSMCopiesAreIndependent(t *testing.T) {
	base := Provision().NewFSM()
	if err := base.Initialize(Available, NoState); err != nil {
		t.Fatal(err)
	}
	task := base
	if err := task.ProcessEvent(EventDeploy, nil); err != nil {
		t.Fatal(err)
	}
	if base.CurrentState() != Available || task.CurrentState() != Deploying || task.TargetState() != Active {
		t.Errorf("base %q, task (%q, %q)", base.CurrentState(), task.CurrentState(), task.TargetState())
	}
}

// The empty override means "no override", as a falsy target_state does
// upstream.
func TestFSMEmptyOverrideIsNoOverride(t *testing.T) {
	var f FSM
	if err := f.Initialize(Manageable, NoState); err != nil {
		t.Fatal(err)
	}
	empty := NoState
	if err := f.ProcessEvent(EventClean, &empty); err != nil {
		t.Fatal(err)
	}
	if f.TargetState() != Available {
		t.Errorf("target = %q, want the default %q", f.TargetState(), Available)
	}
}

func BenchmarkProcessEvent(b *testing.B) {
	var f FSM
	manageable := Manageable
	for b.Loop() {
		if err := f.Initialize(CleanWait, Manageable); err != nil {
			b.Fatal(err)
		}
		if err := f.ProcessEvent(EventResume, &manageable); err != nil {
			b.Fatal(err)
		}
	}
}
