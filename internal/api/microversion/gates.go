package microversion

// Gate is one upstream allow_* check: true from Min (and, when Before is
// set, only below Before), plus the single minors in AlsoAt.
// RequiresObject names an object capability upstream also checks, which
// only fails during a rolling upgrade with pinned object versions; callers
// pass that answer to AllowsWith.
type Gate struct {
	Name           string
	Min            int
	Before         int
	AlsoAt         []int
	RequiresObject string
}

// Allows reports whether v passes the version part of the gate.
func (g Gate) Allows(v Version) bool {
	for _, m := range g.AlsoAt {
		if v.Minor == m {
			return true
		}
	}
	return v.Minor >= g.Min && (g.Before == 0 || v.Minor < g.Before)
}

// AllowsWith is Allows combined with the object capability check of gates
// that have a RequiresObject.
func (g Gate) AllowsWith(v Version, objectSupported bool) bool {
	return g.Allows(v) && (g.RequiresObject == "" || objectSupported)
}

// NewContinueInspectionEndpoint is upstream's
// new_continue_inspection_endpoint: the version that lists
// /v1/continue_inspection (AllowContinueInspectionEndpoint also serves it
// at 1.1 for Inspector compatibility).
var NewContinueInspectionEndpoint = Gate{Name: "new_continue_inspection_endpoint", Min: Minor84ContinueInspection}

// GateByName returns the allow_* gate with upstream's function name.
func GateByName(name string) (Gate, bool) {
	for _, g := range Gates {
		if g.Name == name {
			return g, true
		}
	}
	return Gate{}, false
}

// Link is a /v1 root link shown from the version its gate allows.
type Link struct {
	Name string
	Gate Gate
}

// AlwaysLinks are the /v1 root links shown at every version.
var AlwaysLinks = []string{"chassis", "nodes", "ports", "drivers"}

// VersionedLinks are the gated /v1 root links, in upstream order
// (VERSIONED_CONTROLLERS).
var VersionedLinks = []Link{
	{"portgroups", AllowPortgroups},
	{"volume", AllowVolume},
	{"lookup", AllowRamdiskEndpoints},
	{"heartbeat", AllowRamdiskEndpoints},
	{"conductors", AllowExposeConductors},
	{"allocations", AllowAllocations},
	{"events", AllowExposeEvents},
	{"deploy_templates", AllowDeployTemplates},
	{"shards", AllowShardsEndpoint},
	{"runbooks", AllowRunbooks},
	{"inspection_rules", AllowInspectionRules},
	{"continue_inspection", NewContinueInspectionEndpoint},
}

// RootLinks returns the resource links of the /v1 document at v, in
// upstream's order.
func RootLinks(v Version) []string {
	out := append([]string(nil), AlwaysLinks...)
	for _, l := range VersionedLinks {
		if l.Gate.Allows(v) {
			out = append(out, l.Name)
		}
	}
	return out
}

// MinVerbVersions is upstream's MIN_VERB_VERSIONS: the first minor at which
// a provision verb (the internal verb, states.VERBS values) is accepted.
var MinVerbVersions = map[string]int{
	"manage":   Minor4ManageableState,
	"provide":  Minor4ManageableState,
	"inspect":  Minor6InspectState,
	"abort":    Minor13AbortVerb,
	"clean":    Minor15ManualClean,
	"adopt":    Minor17AdoptVerb,
	"rescue":   Minor38RescueInterface,
	"unrescue": Minor38RescueInterface,
	"deploy":   Minor73DeployUndeployVerbs,
	"delete":   Minor73DeployUndeployVerbs,
}

// VerbAllowed is check_allow_management_verbs: verbs without an entry are
// allowed at every version (their own gates apply elsewhere).
func VerbAllowed(verb string, v Version) bool {
	m, ok := MinVerbVersions[verb]
	return !ok || v.Minor >= m
}
