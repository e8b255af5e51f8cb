package driver

import "context"

// The capabilities below are implemented by the interfaces that drive
// ironic-python-agent (internal/driver/agent). They live here, beside
// Heartbeater and CleaningPreparer, so that the conductor finds every
// capability through this package and imports no concrete driver.

// AgentStepState is what the agent's command log says about the
// asynchronous step a flow waits for.
type AgentStepState int

// The states AgentStepper.PollStep reports.
const (
	// AgentStepRunning: the step is still running, or the agent is busy
	// with something else; the next heartbeat asks again.
	AgentStepRunning AgentStepState = iota
	// AgentStepFreshBoot: the agent has run no step since it booted, so
	// the flow continues (upstream _freshly_booted).
	AgentStepFreshBoot
	// AgentStepDone: the step succeeded.
	AgentStepDone
	// AgentStepRefreshed: the agent's hardware managers changed; the
	// steps were fetched again and the current step must run again.
	AgentStepRefreshed
	// AgentStepRebootRequested: the step succeeded and its agent
	// definition has reboot_requested; the flow goes on after
	// RebootToFinishStep and the rebooted agent's first heartbeat.
	AgentStepRebootRequested
)

// StepFailedError is PollStep's report that the step itself failed: the
// agent's command failed or ended in an unknown status, or the step's
// post step hook failed. Upstream hands its message to the flow's error
// handler as the node's last_error, unlike errors met while asking, so
// callers tell the two apart with errors.As.
type StepFailedError struct{ Msg string }

func (e *StepFailedError) Error() string { return e.Msg }

// AgentStepper is what the conductor's heartbeat handling needs from an
// agent-based deploy interface.
type AgentStepper interface {
	// RefreshSteps fetches the agent's steps of kind and caches them in
	// driver_internal_info["agent_cached_<kind>_steps"].
	RefreshSteps(ctx context.Context, task *Task, kind StepKind) error
	// PollStep reads the agent's command log; a non-nil error is the
	// failure of the current step, worded as upstream's last_error.
	PollStep(ctx context.Context, task *Task, kind StepKind) (AgentStepState, error)
	// ExecuteStep runs a step of the interface: a declared one, or an
	// in-band one the agent reported (which then runs asynchronously).
	ExecuteStep(ctx context.Context, task *Task, step Step) (string, error)
	// RebootToFinishStep reboots the node back into the ramdisk after a
	// step that asked for it.
	RebootToFinishStep(ctx context.Context, task *Task, kind StepKind) error
}

// RamdiskLogCollector is how the conductor keeps the agent's logs when a
// flow fails or, with [agent]/deploy_logs_collect = always, ends (upstream
// driver_utils.collect_ramdisk_logs, called from the step runners).
type RamdiskLogCollector interface {
	// CollectRamdiskLogs stores the running agent's logs, label naming
	// the flow; it never fails the caller.
	CollectRamdiskLogs(ctx context.Context, task *Task, label string)
	// DeployLogsCollect is [agent]/deploy_logs_collect.
	DeployLogsCollect() string
	// CollectsDeployLogs is upstream collect_deploy_logs: whether a failed
	// deployment keeps the ramdisk's logs (not for the ramdisk deploy,
	// whose instance is the ramdisk).
	CollectsDeployLogs() bool
}

// InterfaceSwitcher is upstream DeployInterface.switch_interface: called
// when a deployment (or an adoption) starts, before validation, so that
// an interface that stands for others can put the right one in its place
// (on the node and in task.Driver). The default does nothing.
type InterfaceSwitcher interface {
	SwitchInterface(ctx context.Context, task *Task) error
}

// InterfaceRestorer is upstream restore_interface: when cleaning ends,
// is skipped or fails, the node gets back the deploy interface a switch
// replaced.
type InterfaceRestorer interface {
	RestoreInterface(ctx context.Context, task *Task) error
}

// HookedInspector marks inspect interfaces whose data goes through the
// [inspector]/hooks before the rules.
type HookedInspector interface {
	InspectionHooks() bool
}

// RescueFinalizer is implemented by rescue interfaces that a heartbeat
// completes (upstream AgentRescue's _finalize_rescue, called from the
// rescue wait heartbeat).
type RescueFinalizer interface {
	FinalizeRescue(ctx context.Context, task *Task) error
}

// InstallerDeployer is a deploy interface whose deployment an installer
// performs and reports through the heartbeat API with agent_status
// (upstream PXEAnacondaDeploy): while the node waits in deploy wait, a
// "start" heartbeat keeps the deployment alive, "end" has the conductor
// call RebootToInstance and finish, anything else fails the deployment
// with the installer's agent_status_message.
type InstallerDeployer interface {
	RebootToInstance(ctx context.Context, task *Task) error
}
