package states

import "fmt"

// stateSpec declares one machine state: whether it is stable (a state the
// node rests in until asked to move) and the stable state it heads for by
// default while it is not.
type stateSpec struct {
	name          string
	stable        bool
	defaultTarget string
}

// machineStates are declared in upstream's order of add_state; a default
// target must be declared (and stable) before a state may name it.
var machineStates = [...]stateSpec{
	{Enroll, true, NoState},
	{Manageable, true, NoState},
	{Available, true, NoState},
	{Active, true, NoState},
	{Error, true, NoState},
	{Rescue, true, NoState},
	{Verifying, false, Manageable},
	{Deploying, false, Active},
	{DeployWait, false, Active},
	{DeployFail, false, Active},
	{DeployHold, false, Active},
	{Cleaning, false, Available},
	{CleanWait, false, Available},
	{CleanFail, false, Available},
	{CleanHold, false, Available},
	{Deleting, false, Available},
	{Inspecting, false, Manageable},
	{InspectFail, false, Manageable},
	{InspectWait, false, Manageable},
	{Adopting, false, Active},
	{AdoptFail, false, Active},
	{Rescuing, false, Rescue},
	{RescueWait, false, Rescue},
	{RescueFail, false, Rescue},
	{Unrescuing, false, Active},
	{UnrescueFail, false, Active},
	{Servicing, false, Active},
	{ServiceWait, false, Active},
	{ServiceFail, false, Active},
	{ServiceHold, false, Active},
}

// machineEvents are the events any transition may name.
var machineEvents = [...]string{
	EventAbort, EventAdopt, EventClean, EventDelete, EventDeploy, EventDone,
	EventFail, EventHold, EventInspect, EventManage, EventProvide,
	EventRebuild, EventRescue, EventResume, EventService, EventUnhold,
	EventUnrescue, EventWait,
}

// Transition is one edge of the provision state machine.
type Transition struct {
	From, Event, To string
}

// machineTransitions are grouped by source state; at most one edge leaves a
// state on a given event.
var machineTransitions = [...]Transition{
	{Enroll, EventManage, Verifying},

	{Manageable, EventProvide, Cleaning},
	{Manageable, EventClean, Cleaning},
	{Manageable, EventInspect, Inspecting},
	{Manageable, EventAdopt, Adopting},

	{Available, EventDeploy, Deploying},
	{Available, EventManage, Manageable},

	{Active, EventRebuild, Deploying},
	{Active, EventDelete, Deleting},
	{Active, EventRescue, Rescuing},
	{Active, EventService, Servicing},

	{Error, EventRebuild, Deploying},
	{Error, EventDelete, Deleting},

	{Rescue, EventRescue, Rescuing},
	{Rescue, EventDelete, Deleting},
	{Rescue, EventUnrescue, Unrescuing},

	{Verifying, EventDone, Manageable},
	{Verifying, EventFail, Enroll},

	{Deploying, EventFail, DeployFail},
	{Deploying, EventWait, DeployWait},
	{Deploying, EventHold, DeployHold},
	{Deploying, EventDone, Active},

	{DeployWait, EventHold, DeployHold},
	{DeployWait, EventResume, Deploying},
	{DeployWait, EventFail, DeployFail},
	{DeployWait, EventAbort, DeployFail},
	{DeployWait, EventDelete, Deleting},

	{DeployFail, EventRebuild, Deploying},
	{DeployFail, EventDeploy, Deploying},
	{DeployFail, EventDelete, Deleting},

	{DeployHold, EventUnhold, DeployWait},
	{DeployHold, EventAbort, DeployFail},

	{Cleaning, EventDone, Available},
	{Cleaning, EventFail, CleanFail},
	{Cleaning, EventWait, CleanWait},
	{Cleaning, EventHold, CleanHold},
	// Manual cleaning ends in manageable rather than available.
	{Cleaning, EventManage, Manageable},

	{CleanWait, EventFail, CleanFail},
	{CleanWait, EventAbort, CleanFail},
	{CleanWait, EventHold, CleanHold},
	{CleanWait, EventResume, Cleaning},

	{CleanFail, EventManage, Manageable},

	{CleanHold, EventAbort, CleanFail},
	{CleanHold, EventUnhold, CleanWait},

	{Deleting, EventFail, Error},
	{Deleting, EventClean, Cleaning},

	{Inspecting, EventDone, Manageable},
	{Inspecting, EventFail, InspectFail},
	{Inspecting, EventWait, InspectWait},

	{InspectFail, EventManage, Manageable},
	{InspectFail, EventInspect, Inspecting},

	{InspectWait, EventDone, Manageable},
	{InspectWait, EventFail, InspectFail},
	{InspectWait, EventAbort, InspectFail},
	{InspectWait, EventResume, Inspecting},

	{Adopting, EventDone, Active},
	{Adopting, EventFail, AdoptFail},

	{AdoptFail, EventAdopt, Adopting},
	{AdoptFail, EventManage, Manageable},

	{Rescuing, EventDone, Rescue},
	{Rescuing, EventWait, RescueWait},
	{Rescuing, EventFail, RescueFail},

	{RescueWait, EventResume, Rescuing},
	{RescueWait, EventFail, RescueFail},
	{RescueWait, EventAbort, RescueFail},
	{RescueWait, EventDelete, Deleting},

	{RescueFail, EventRescue, Rescuing},
	{RescueFail, EventUnrescue, Unrescuing},
	{RescueFail, EventDelete, Deleting},

	{Unrescuing, EventDone, Active},
	{Unrescuing, EventFail, UnrescueFail},

	{UnrescueFail, EventRescue, Rescuing},
	{UnrescueFail, EventUnrescue, Unrescuing},
	{UnrescueFail, EventDelete, Deleting},

	{Servicing, EventDone, Active},
	{Servicing, EventFail, ServiceFail},
	{Servicing, EventWait, ServiceWait},
	{Servicing, EventHold, ServiceHold},

	{ServiceWait, EventHold, ServiceHold},
	{ServiceWait, EventResume, Servicing},
	{ServiceWait, EventFail, ServiceFail},
	{ServiceWait, EventAbort, ServiceFail},
	{ServiceWait, EventDelete, Deleting},

	{ServiceFail, EventService, Servicing},
	{ServiceFail, EventRescue, Rescuing},
	{ServiceFail, EventWait, ServiceWait},
	{ServiceFail, EventHold, ServiceHold},
	{ServiceFail, EventDelete, Deleting},
	// Aborting a failed service returns the node to active as it was.
	{ServiceFail, EventAbort, Active},

	{ServiceHold, EventService, Servicing},
	{ServiceHold, EventUnhold, ServiceWait},
	{ServiceHold, EventFail, ServiceFail},
	{ServiceHold, EventAbort, ServiceFail},
}

// none marks "no state" in the index-based tables.
const none int8 = -1

// Machine is the immutable definition of a state machine: states indexed by
// small integers, and a dense [state][event] table of next states. One
// definition is shared by every FSM; an FSM only carries two indexes.
type Machine struct {
	names   []string
	stable  []bool
	target  []int8 // default target per state, none when it has none
	events  []string
	next    [][]int8 // next[state][event], none when undefined
	stateIx map[string]int8
	eventIx map[string]int8
}

// provision is built once at start and never changed afterwards.
var provision = mustBuild(machineStates[:], machineEvents[:], machineTransitions[:])

// Provision returns the provision state machine definition.
func Provision() *Machine { return provision }

func mustBuild(ss []stateSpec, events []string, ts []Transition) *Machine {
	m, err := build(ss, events, ts)
	if err != nil {
		panic(fmt.Sprintf("provision state machine table: %v", err))
	}
	return m
}

// build checks the declarations as upstream's add_state/add_transition do:
// a default target must be an already declared stable state, names are
// unique, and transitions connect declared states.
func build(ss []stateSpec, events []string, ts []Transition) (*Machine, error) {
	m := &Machine{
		stateIx: make(map[string]int8, len(ss)),
		eventIx: make(map[string]int8, len(events)),
		events:  append([]string(nil), events...),
	}
	for i, e := range events {
		if _, dup := m.eventIx[e]; dup {
			return nil, fmt.Errorf("event %q declared twice", e)
		}
		m.eventIx[e] = int8(i)
	}
	for i, s := range ss {
		if _, dup := m.stateIx[s.name]; dup {
			return nil, fmt.Errorf("state %q declared twice", s.name)
		}
		t := none
		if s.defaultTarget != NoState {
			ti, ok := m.stateIx[s.defaultTarget]
			if !ok || !m.stable[ti] {
				return nil, fmt.Errorf("state %q: default target %q is not a declared stable state", s.name, s.defaultTarget)
			}
			t = ti
		}
		m.stateIx[s.name] = int8(i)
		m.names = append(m.names, s.name)
		m.stable = append(m.stable, s.stable)
		m.target = append(m.target, t)
	}
	m.next = make([][]int8, len(ss))
	for i := range m.next {
		row := make([]int8, len(events))
		for j := range row {
			row[j] = none
		}
		m.next[i] = row
	}
	for _, t := range ts {
		from, okf := m.stateIx[t.From]
		to, okt := m.stateIx[t.To]
		ev, oke := m.eventIx[t.Event]
		if !okf || !okt || !oke {
			return nil, fmt.Errorf("transition %v names an undeclared state or event", t)
		}
		if m.next[from][ev] != none {
			return nil, fmt.Errorf("transition %v: %q already has an edge on %q", t, t.From, t.Event)
		}
		m.next[from][ev] = to
	}
	return m, nil
}

// States returns the machine's states in declaration order.
func (m *Machine) States() []string { return append([]string(nil), m.names...) }

// Events returns the events the machine knows.
func (m *Machine) Events() []string { return append([]string(nil), m.events...) }

// Transitions returns every edge, by source state in declaration order and
// then by event.
func (m *Machine) Transitions() []Transition {
	var out []Transition
	for from, row := range m.next {
		for ev, to := range row {
			if to != none {
				out = append(out, Transition{From: m.names[from], Event: m.events[ev], To: m.names[to]})
			}
		}
	}
	return out
}

// HasState reports whether state is a state of the machine.
func (m *Machine) HasState(state string) bool {
	_, ok := m.stateIx[state]
	return ok
}

// IsStable reports whether a machine state is stable; an unknown state is
// an InvalidState error, as upstream's is_stable raises.
func (m *Machine) IsStable(state string) (bool, error) {
	i, ok := m.stateIx[state]
	if !ok {
		return false, invalidState("State '%s' does not exist", state)
	}
	return m.stable[i], nil
}

// DefaultTarget returns the stable state a machine state heads for by
// default, or NoState (also for stable and unknown states).
func (m *Machine) DefaultTarget(state string) string {
	i, ok := m.stateIx[state]
	if !ok || m.target[i] == none {
		return NoState
	}
	return m.names[m.target[i]]
}

// Next returns the state reached from state on event, and whether that
// transition exists.
func (m *Machine) Next(state, event string) (string, bool) {
	to := m.step(state, event)
	if to == none {
		return NoState, false
	}
	return m.names[to], true
}

func (m *Machine) step(state, event string) int8 {
	s, ok := m.stateIx[state]
	if !ok {
		return none
	}
	e, ok := m.eventIx[event]
	if !ok {
		return none
	}
	return m.next[s][e]
}
