package states

import "slices"

// Set is a fixed collection of state names. Upstream defines some as tuples
// (their order is kept) and some as frozensets (held sorted here, since
// Python gives them no order). The contents cannot be changed.
type Set struct {
	values  []string
	ordered bool
}

func tuple(v ...string) Set     { return Set{values: v, ordered: true} }
func frozenset(v ...string) Set { return Set{values: slices.Sorted(slices.Values(v))} }

// Contains reports whether state is in the set. The sets are small (at most
// a few dozen short strings), so a scan beats hashing.
func (s Set) Contains(state string) bool { return slices.Contains(s.values, state) }

// Values returns a copy of the members: in upstream order for a tuple,
// sorted for a frozenset.
func (s Set) Values() []string { return slices.Clone(s.values) }

// Len is the number of members.
func (s Set) Len() int { return len(s.values) }

// Ordered reports whether upstream defines the set as a tuple, whose order
// callers may rely on.
func (s Set) Ordered() bool { return s.ordered }

var (
	// StableStates will not change unless a request asks for it.
	StableStates = tuple(Enroll, Manageable, Available, Active, Error, Rescue)

	// UnstableStates can change without an external request.
	UnstableStates = tuple(Deploying, DeployWait, Cleaning, CleanWait, Verifying,
		Deleting, Inspecting, InspectWait, Adopting, Rescuing, RescueWait,
		Unrescuing, Servicing, ServiceWait)

	// StuckStatesTreatedAsFail cannot be resumed after their conductor dies;
	// a node left in one is moved to the matching failure state.
	StuckStatesTreatedAsFail = tuple(Deploying, Cleaning, Verifying, Inspecting,
		Adopting, Rescuing, Unrescuing, Deleting, Servicing)

	// UpdateAllowedStates are transitional states in which a node may still
	// be updated. Upstream lists Service (a verb, not a state) here; it is
	// kept so the set answers as upstream's does.
	UpdateAllowedStates = tuple(DeployFail, Inspecting, InspectFail, InspectWait,
		CleanFail, Error, Verifying, AdoptFail, RescueFail, UnrescueFail,
		Service, ServiceHold, ServiceFail)

	// DeleteAllowedStates are the states in which a node may be deleted.
	DeleteAllowedStates = tuple(Manageable, Enroll, AdoptFail)

	// LookupAllowedStates are the states in which the agent lookup API
	// answers for a node.
	LookupAllowedStates = frozenset(Deploying, DeployWait, Cleaning, CleanWait,
		Inspecting, InspectWait, Rescuing, RescueWait, ServiceWait)

	// FastTrackLookupAllowedStates widen LookupAllowedStates when fast track
	// is enabled.
	FastTrackLookupAllowedStates = frozenset(Enroll, Manageable, Available,
		Deploying, DeployWait, Cleaning, CleanWait, Inspecting, InspectWait,
		Rescuing, RescueWait, Servicing, ServiceWait, ServiceHold)

	// FailureStates are the "... failed" states.
	FailureStates = frozenset(DeployFail, CleanFail, InspectFail, RescueFail,
		UnrescueFail, AdoptFail, ServiceFail)

	// ServicingStates are the states of a servicing operation.
	ServicingStates = frozenset(Servicing, ServiceWait, ServiceHold, ServiceFail)

	// InspectionStates are the states of an inspection.
	InspectionStates = frozenset(Inspecting, InspectWait, InspectFail)

	// AllStates are the values a node's provision_state may hold: every
	// machine state plus the historic Deleted and DeployDone.
	AllStates = frozenset(Active, AdoptFail, Adopting, Available, CleanFail,
		CleanHold, CleanWait, Cleaning, Deleted, Deleting, DeployDone,
		DeployFail, DeployHold, Deploying, Enroll, Error, InspectFail,
		InspectWait, Inspecting, Manageable, Rescue, RescueFail, RescueWait,
		Rescuing, ServiceFail, ServiceHold, ServiceWait, Servicing,
		UnrescueFail, Unrescuing, Verifying, DeployWait)
)

// verbs maps a target accepted by PUT /v1/nodes/{node}/states/provision to
// the machine event it fires, in upstream's order.
var verbs = [...]struct{ target, event string }{
	{Active, EventDeploy},
	{Deploy, EventDeploy},
	{Deleted, EventDelete},
	{Undeploy, EventDelete},
	{"manage", EventManage},
	{"provide", EventProvide},
	{"inspect", EventInspect},
	{"abort", EventAbort},
	{"clean", EventClean},
	{"adopt", EventAdopt},
	{Rescue, EventRescue},
	{"unrescue", EventUnrescue},
	{"unhold", EventUnhold},
	{Service, EventService},
}

// VerbEvent returns the event fired by an API provisioning target (upstream
// VERBS), and whether the target is known.
func VerbEvent(target string) (string, bool) {
	for _, v := range verbs {
		if v.target == target {
			return v.event, true
		}
	}
	return "", false
}

// Verbs returns a copy of the API target → event mapping.
func Verbs() map[string]string {
	m := make(map[string]string, len(verbs))
	for _, v := range verbs {
		m[v.target] = v.event
	}
	return m
}
