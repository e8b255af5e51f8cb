package states

import "fmt"

// InvalidStateError is Ironic's InvalidState: a state machine refused a
// start state, an event or a target. Message is the text upstream's
// automaton-based machine produces, which reaches API clients unchanged.
type InvalidStateError struct {
	Message string
}

func (e *InvalidStateError) Error() string { return e.Message }

func invalidState(format string, args ...any) error {
	return &InvalidStateError{Message: fmt.Sprintf(format, args...)}
}

// FSM is one node's position in a machine: its current state and the
// stable state it is heading for. It is two small integers and a pointer to
// the shared definition, so a task copies it freely instead of cloning the
// machine as upstream does. The zero value is an uninitialized FSM over the
// provision machine.
//
// States are stored as index+1 so that 0 means "none" in the zero value.
type FSM struct {
	m       *Machine
	current int8
	target  int8
}

// NewFSM returns an uninitialized FSM over m.
func (m *Machine) NewFSM() FSM { return FSM{m: m} }

func (f *FSM) machine() *Machine {
	if f.m == nil {
		return provision
	}
	return f.m
}

func (f *FSM) name(ix int8) string {
	if ix == 0 {
		return NoState
	}
	return f.machine().names[ix-1]
}

// validateTarget accepts NoState or a stable state of the machine.
func (f *FSM) validateTarget(target string) (int8, error) {
	if target == NoState {
		return 0, nil
	}
	m := f.machine()
	i, ok := m.stateIx[target]
	if !ok {
		return 0, invalidState("Target state '%s' does not exist", target)
	}
	if !m.stable[i] {
		return 0, invalidState("Target state '%s' is not a 'stable' state", target)
	}
	return i + 1, nil
}

// Initialize places the FSM in start (a node's provision_state) heading for
// target (its target_provision_state); with no target it heads for start's
// default target. An unknown start fails with nothing changed. A target
// that is not a stable state fails after the current state was set, with
// the previous target left in place, as upstream does.
//
// Upstream treats None as "no target" and would reject an empty string;
// here NoState ("") is the Go spelling of None.
func (f *FSM) Initialize(start, target string) error {
	m := f.machine()
	s, ok := m.stateIx[start]
	if !ok {
		return invalidState("Can not start from a undefined state '%s'", start)
	}
	f.m = m
	f.current = s + 1
	t, err := f.validateTarget(target)
	if err != nil {
		return err
	}
	if t == 0 {
		t = m.target[s] + 1
	}
	f.target = t
	return nil
}

// ProcessEvent moves the FSM along event and updates the target:
// reaching the target clears it, entering a state with a default target
// adopts that default, and a non-empty targetState overrides both.
//
// An event with no transition fails with nothing changed. An override that
// is not a stable state fails after the move, leaving the FSM in the new
// state with the default target; the caller must not save the node then
// (in Ironic the task fails and nothing is written).
func (f *FSM) ProcessEvent(event string, targetState *string) error {
	if f.current == 0 {
		return invalidState("Can not process event '%s'; the state machine hasn't been initialized", event)
	}
	m := f.machine()
	to := m.step(f.name(f.current), event)
	if to == none {
		return invalidState("Can not transition from state '%s' on event '%s' (no defined transition)", f.name(f.current), event)
	}
	f.current = to + 1
	if f.target == f.current {
		f.target = 0
	}
	if m.target[to] != none {
		f.target = m.target[to] + 1
	}
	if targetState != nil && *targetState != NoState {
		t, err := f.validateTarget(*targetState)
		if err != nil {
			return err
		}
		f.target = t
	}
	return nil
}

// IsActionableEvent reports whether event has a transition from the
// current state; false when the FSM is not initialized.
func (f *FSM) IsActionableEvent(event string) bool {
	if f.current == 0 {
		return false
	}
	return f.machine().step(f.name(f.current), event) != none
}

// CurrentState returns the current state, NoState before Initialize.
func (f *FSM) CurrentState() string { return f.name(f.current) }

// TargetState returns the state the FSM is heading for, or NoState.
func (f *FSM) TargetState() string { return f.name(f.target) }

// TaskTarget returns what the conductor stores in target_provision_state
// after an event: nothing when the node came to rest in a stable state and
// no asynchronous callback will carry on, otherwise the FSM target.
func (f *FSM) TaskTarget(hasCallback bool) string {
	if !hasCallback && f.current != 0 && f.machine().stable[f.current-1] {
		return NoState
	}
	return f.TargetState()
}
