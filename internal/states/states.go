// Package states holds Ironic's provision, power and allocation state names,
// the state sets the API and conductor consult, the API verbs, and the
// provision state machine (see machine.go and fsm.go).
//
// Values are upstream's exact strings: they are stored in the database and
// sent on the wire, so clients compare against them literally. Upstream's
// NOSTATE (Python None) is the empty string here; the store maps it to NULL.
package states

// NoState means "no state known" (upstream NOSTATE, None): an unknown power
// state, or no target in the target_*_state fields.
const NoState = ""

// Provision states. The names follow upstream's constants (DEPLOYWAIT is
// DeployWait, and so on); the values are what the database holds.
const (
	Enroll       = "enroll"
	Verifying    = "verifying"
	Manageable   = "manageable"
	Available    = "available"
	Active       = "active"
	DeployWait   = "wait call-back"
	Deploying    = "deploying"
	DeployFail   = "deploy failed"
	DeployHold   = "deploy hold"
	Deleting     = "deleting"
	Cleaning     = "cleaning"
	CleanWait    = "clean wait"
	CleanFail    = "clean failed"
	CleanHold    = "clean hold"
	Error        = "error"
	Inspecting   = "inspecting"
	InspectFail  = "inspect failed"
	InspectWait  = "inspect wait"
	Adopting     = "adopting"
	AdoptFail    = "adopt failed"
	Rescue       = "rescue"
	RescueFail   = "rescue failed"
	RescueWait   = "rescue wait"
	Rescuing     = "rescuing"
	UnrescueFail = "unrescue failed"
	Unrescuing   = "unrescuing"
	Servicing    = "servicing"
	ServiceWait  = "service wait"
	ServiceFail  = "service failed"
	ServiceHold  = "service hold"
)

// Provision constants that are not states of the machine. Some are API
// targets (Deploy, Undeploy, Rebuild, Service), some are historic values a
// database taken over from an old Ironic may still hold (Deleted,
// DeployDone), which is why AllStates lists the latter two.
const (
	// Deploy is the API's alias of Active as a provisioning target.
	Deploy = "deploy"
	// DeployDone was Juno's target_provision_state during deployment.
	DeployDone = "deploy complete"
	// Deleted was Juno's target_provision_state during tear down.
	Deleted = "deleted"
	// Undeploy is the API's alias of Deleted as a provisioning target.
	Undeploy = "undeploy"
	// Rebuild is an API verb, never a state.
	Rebuild = "rebuild"
	// Service is the API target that starts servicing.
	Service = "service"
)

// Power states. An error is reported with Error and an unknown power state
// with NoState, as upstream reuses those.
const (
	PowerOn      = "power on"
	PowerOff     = "power off"
	Reboot       = "rebooting"
	SoftReboot   = "soft rebooting"
	SoftPowerOff = "soft power off"
)

// Allocating is the state of an allocation being processed; allocations
// otherwise reuse Active (fulfilled) and Error (failed).
const Allocating = "allocating"

// Node history event types (the event_type column of node_history). Three
// of upstream's names share their value with a provision state; they are
// repeated here under the history prefix so callers need not know that.
const (
	HistoryProvisioning  = "provisioning"
	HistoryCleaning      = "cleaning"
	HistoryDeploying     = "deploying"
	HistoryTakeover      = "takeover"
	HistoryIntrospection = "introspection"
	HistoryRescue        = "rescue"
	HistoryConductor     = "conductor"
	HistoryTransition    = "transition"
	HistoryStartFail     = "startup failure"
	HistoryUnprovision   = "unprovision"
	HistoryAdoption      = "adoption"
	HistoryConsole       = "console"
	HistoryMonitoring    = "monitoring"
	HistoryVerify        = "verify"
)

// Events of the provision state machine.
const (
	EventAbort    = "abort"
	EventAdopt    = "adopt"
	EventClean    = "clean"
	EventDelete   = "delete"
	EventDeploy   = "deploy"
	EventDone     = "done"
	EventFail     = "fail"
	EventHold     = "hold"
	EventInspect  = "inspect"
	EventManage   = "manage"
	EventProvide  = "provide"
	EventRebuild  = "rebuild"
	EventRescue   = "rescue"
	EventResume   = "resume"
	EventService  = "service"
	EventUnhold   = "unhold"
	EventUnrescue = "unrescue"
	EventWait     = "wait"
)
