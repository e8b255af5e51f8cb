// Package agent holds the deploy interfaces that drive ironic-python-agent
// (IPA) in the ramdisk: the agent's in-band steps are listed from what the
// agent reported, executed through its command API, and polled at each
// heartbeat (upstream drivers/modules/agent_base.py).
package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// Options configure the agent-based interfaces.
type Options struct {
	Client *agentclient.Client
	// ErasePriority and EraseMetadataPriority override the agent's
	// priorities of erase_devices and erase_devices_metadata
	// ([deploy]/erase_devices_priority, erase_devices_metadata_priority);
	// nil keeps the agent's.
	ErasePriority         *int
	EraseMetadataPriority *int
	// DeployForcesOOBReboot is the default of driver_info's
	// deploy_forces_oob_reboot.
	DeployForcesOOBReboot bool
	// DefaultBootMode is [deploy]/default_boot_mode.
	DefaultBootMode string
	// FastTrack lets an operation reuse the ramdisk left running by the
	// previous one.
	FastTrack driver.FastTrack
	// CleanParams are the driver_internal_info entries upstream's
	// agent_add_clean_params records for the agent's erase steps
	// (agent_erase_devices_iterations and the like), from [deploy].
	CleanParams map[string]any
	// Autodetect configures the autodetect deploy interface.
	Autodetect AutodetectOptions
	// Bootc holds the pull credentials of the bootc deploy interface.
	Bootc BootcOptions
	// UnmanagedAgentBoot is [agent]/manage_agent_boot false: the agent
	// ramdisk boots by other means, so the custom-agent, direct and bootc
	// interfaces neither prepare nor clean up its boot for cleaning.
	UnmanagedAgentBoot bool
	// PostDeployGetPowerStateRetries and ...RetryInterval are the [agent]
	// options of the same names: after standby.power_off the power state
	// is read that many more times, that far apart, before the node is
	// powered off out of band. Zero reads it once (the zero Options of
	// tests); the builtin wiring sets upstream's 6 and 5 s.
	PostDeployGetPowerStateRetries       int
	PostDeployGetPowerStateRetryInterval time.Duration
	// NeutronAgentPollInterval is [agent]/neutron_agent_poll_interval: a
	// node powered on for a Smart NIC's network change is powered off
	// again twice this long after it (networkpower.go).
	NeutronAgentPollInterval time.Duration
	// Clock paces those reads and waits; nil means the real clock.
	Clock clock.Clock
}

func (o *Options) clock() clock.Clock {
	if o.Clock == nil {
		return clock.Real{}
	}
	return o.Clock
}

// Register adds the agent-based interfaces to r.
func Register(r *driver.Registry, o Options) error {
	if o.Client == nil {
		o.Client = agentclient.New(agentclient.DefaultOptions())
	}
	if o.DefaultBootMode == "" {
		o.DefaultBootMode = "uefi"
	}
	if err := r.Register(driver.KindDeploy, "direct", NewDirect(o)); err != nil {
		return fmt.Errorf("register direct deploy: %w", err)
	}
	if err := r.Register(driver.KindDeploy, "custom-agent", NewCustomAgent(o)); err != nil {
		return fmt.Errorf("register custom-agent deploy: %w", err)
	}
	if err := r.Register(driver.KindDeploy, "ramdisk", NewRamdisk(o)); err != nil {
		return fmt.Errorf("register ramdisk deploy: %w", err)
	}
	if err := r.Register(driver.KindDeploy, "bootc", NewBootc(o)); err != nil {
		return fmt.Errorf("register bootc deploy: %w", err)
	}
	return RegisterAutodetect(r, o.Autodetect)
}

// base is upstream AgentBaseMixin: steps reported by the agent, their
// execution, and the ramdisk boot for cleaning.
type base struct {
	opts Options
	// bootByConfig is upstream CustomAgentDeploy.should_manage_boot, which
	// leaves the agent boot to [agent]/manage_agent_boot; the other agent
	// interfaces always manage it (AgentBaseMixin's).
	bootByConfig bool
}

// managesBoot is upstream should_manage_boot: whether the agent ramdisk's
// boot is prepared and cleaned up here.
func (b *base) managesBoot() bool { return !b.bootByConfig || !b.opts.UnmanagedAgentBoot }

func (b *base) client() *agentclient.Client { return b.opts.Client }

// nodeView is node.as_dict(secure=True): secrets in driver_info and
// instance_info masked. Ports are left empty: the driver task carries none.
func nodeView(n *model.Node) agentclient.NodeView {
	raw, err := json.Marshal(n)
	m := map[string]any{}
	if err == nil {
		_ = json.Unmarshal(raw, &m)
	}
	for _, field := range []string{"driver_info", "instance_info"} {
		if sub, ok := m[field].(map[string]any); ok {
			for k := range sub {
				if isSecret(k) {
					sub[k] = "******"
				}
			}
		}
	}
	if dii, ok := m["driver_internal_info"].(map[string]any); ok {
		delete(dii, model.DIIAgentSecretToken)
	}
	return agentclient.NodeView{Node: m, HardwareManagerVersion: n.InternalInfo().Get(model.DIIHardwareManagerVersion)}
}

func isSecret(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "password") || strings.HasSuffix(k, "_key") || k == "configdrive"
}

func cachedKey(kind driver.StepKind) string { return "agent_cached_" + string(kind) + "_steps" }

// RefreshSteps asks the agent for its steps of kind and caches them by
// interface, with the hardware manager version the agent expects back.
func (b *base) RefreshSteps(ctx context.Context, task *driver.Task, kind driver.StepKind) error {
	n := task.Node
	var (
		res *agentclient.CommandResult
		err error
	)
	view := nodeView(n)
	switch kind {
	case driver.StepClean:
		res, err = b.client().GetCleanSteps(ctx, targetFor(n), view)
	case driver.StepDeploy:
		res, err = b.client().GetDeploySteps(ctx, targetFor(n), view)
	case driver.StepService:
		res, err = b.client().GetServiceSteps(ctx, targetFor(n), view)
	default:
		return fmt.Errorf("agent has no %s steps", kind)
	}
	if err != nil {
		return fmt.Errorf("get %s steps from the agent of node %s: %w", kind, n.UUID, err)
	}
	result := res.ResultMap()
	byManager, _ := result[string(kind)+"_steps"].(map[string]any)
	if result == nil || (byManager == nil && kind != driver.StepService) {
		return fmt.Errorf("agent on node %s returned invalid %s steps: %v", n.UUID, kind, res.Result)
	}
	byIface := map[string]any{}
	for _, steps := range byManager {
		list, _ := steps.([]any)
		for _, s := range list {
			step, ok := s.(map[string]any)
			if !ok {
				continue
			}
			iface, _ := step["interface"].(string)
			cur, _ := byIface[iface].([]any)
			byIface[iface] = append(cur, step)
		}
	}
	n.InternalInfo().Set(model.DIIHardwareManagerVersion, result["hardware_manager_version"])
	n.InternalInfo().Set(cachedKey(kind), byIface)
	return nil
}

// cachedSteps turns the agent's cached steps of interface iface into step
// declarations. The deploy interface's clean steps take the erase
// priorities configured; other interfaces pass their own overrides.
func (b *base) cachedSteps(n *model.Node, kind driver.StepKind, iface driver.Kind) []driver.StepSpec {
	var overrides map[string]*int
	if kind == driver.StepClean && iface == driver.KindDeploy {
		overrides = map[string]*int{
			"erase_devices":          b.opts.ErasePriority,
			"erase_devices_metadata": b.opts.EraseMetadataPriority,
		}
	}
	return cachedStepsWith(n, kind, iface, overrides)
}

// cachedStepsWith is upstream agent_base.get_steps: the cached steps of
// iface, a non-nil override replacing the priority of the step it names.
func cachedStepsWith(n *model.Node, kind driver.StepKind, iface driver.Kind, overrides map[string]*int) []driver.StepSpec {
	byIface, _ := n.InternalInfo().Get(cachedKey(kind)).(map[string]any)
	list, _ := byIface[string(iface)].([]any)
	var out []driver.StepSpec
	for _, s := range list {
		step, ok := s.(map[string]any)
		if !ok {
			continue
		}
		name, _ := step["step"].(string)
		prio := toInt(step["priority"])
		if p := overrides[name]; p != nil {
			prio = *p
		}
		abortable, _ := step["abortable"].(bool)
		spec := driver.StepSpec{Kind: kind, Name: name, Priority: prio, Abortable: abortable, RequiresRamdisk: true}
		if ai, ok := step["argsinfo"].(map[string]any); ok {
			spec.ArgsInfo = argsInfo(ai)
		}
		out = append(out, spec)
	}
	return out
}

func argsInfo(raw map[string]any) map[string]driver.ArgInfo {
	out := map[string]driver.ArgInfo{}
	for k, v := range raw {
		m, _ := v.(map[string]any)
		d, _ := m["description"].(string)
		ai := driver.ArgInfo{Description: d}
		if r, ok := m["required"].(bool); ok {
			ai.Required = &r
		}
		out[k] = ai
	}
	return out
}

func toInt(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case int:
		return x
	case json.Number:
		i, _ := x.Int64()
		return int(i)
	}
	return 0
}

// currentStep is node.<kind>_step.
func currentStep(n *model.Node, kind driver.StepKind) map[string]any {
	switch kind {
	case driver.StepClean:
		return n.CleanStep
	case driver.StepDeploy:
		return n.DeployStep
	case driver.StepService:
		return n.ServiceStep
	}
	return nil
}

func waitState(kind driver.StepKind) string {
	switch kind {
	case driver.StepClean:
		return "clean wait"
	case driver.StepService:
		return "service wait"
	}
	return "wait call-back"
}

// executeInband starts step on the agent (upstream agent_base.execute_step)
// and answers the flow's wait state: the outcome arrives with a heartbeat.
func (b *base) executeInband(ctx context.Context, task *driver.Task, kind driver.StepKind, step map[string]any) (string, error) {
	n := task.Node
	view := nodeView(n)
	var (
		res *agentclient.CommandResult
		err error
	)
	switch kind {
	case driver.StepClean:
		res, err = b.client().ExecuteCleanStep(ctx, targetFor(n), step, view)
	case driver.StepDeploy:
		res, err = b.client().ExecuteDeployStep(ctx, targetFor(n), step, view)
	case driver.StepService:
		res, err = b.client().ExecuteServiceStep(ctx, targetFor(n), step, view)
	default:
		return "", fmt.Errorf("agent cannot run %s steps", kind)
	}
	if err != nil {
		return "", fmt.Errorf("agent %s step %s.%s: %w", kind, step["interface"], step["step"], err)
	}
	if res.Status == "" {
		return "", fmt.Errorf("Agent on node %s returned bad command result: %v", n.UUID, res.Error)
	}
	return waitState(kind), nil
}

// PollStep is the command-log half of upstream process_next_step.
func (b *base) PollStep(ctx context.Context, task *driver.Task, kind driver.StepKind) (driver.AgentStepState, error) {
	n := task.Node
	cmds, err := b.client().GetCommandsStatus(ctx, targetFor(n), agentclient.StatusOptions{})
	if err != nil {
		return driver.AgentStepRunning, fmt.Errorf("read the agent's command status: %w", err)
	}
	if freshlyBooted(cmds, kind) {
		return driver.AgentStepFreshBoot, nil
	}
	last := cmds[len(cmds)-1]
	if last.Name != "execute_"+string(kind)+"_step" || last.Status == agentclient.StatusRunning {
		return driver.AgentStepRunning, nil
	}
	cur := currentStep(n, kind)
	switch last.Status {
	case agentclient.StatusFailed:
		return driver.AgentStepRunning, &driver.StepFailedError{Msg: fmt.Sprintf("%s step %s.%s failed on node %s. %s",
			titleKind(kind), cur["interface"], cur["step"], n.UUID, agentclient.CommandError(&last))}
	case agentclient.StatusVersionMismatch, "VERSION_MISMATCH":
		if err := b.RefreshSteps(ctx, task, kind); err != nil {
			return driver.AgentStepRunning, err
		}
		return driver.AgentStepRefreshed, nil
	case agentclient.StatusSucceeded:
		reported, _ := last.ResultMap()[string(kind)+"_step"].(map[string]any)
		if reported == nil || reported["step"] != cur["step"] || reported["interface"] != cur["interface"] {
			// An earlier step's command; the current one has not started.
			return driver.AgentStepRunning, nil
		}
		if err := runPostStepHook(ctx, task, kind, cur, &last); err != nil {
			return driver.AgentStepRunning, &driver.StepFailedError{Msg: err.Error()}
		}
		if rebootRequested(n, kind, cur) {
			return driver.AgentStepRebootRequested, nil
		}
		return driver.AgentStepDone, nil
	}
	return driver.AgentStepRunning, &driver.StepFailedError{Msg: fmt.Sprintf("Agent returned unknown status for %s step %s on node %s : %s.",
		kind, pyfmt.ReprJSON(cur), n.UUID, last.Status)}
}

// rebootRequested tells whether the agent declared step with
// reboot_requested (upstream keeps the agent's step dictionaries whole;
// the step list here keeps the fields every interface has, so the
// agent's own declaration is looked up).
func rebootRequested(n *model.Node, kind driver.StepKind, step map[string]any) bool {
	if b, ok := step["reboot_requested"].(bool); ok {
		return b
	}
	byIface, _ := n.InternalInfo().Get(cachedKey(kind)).(map[string]any)
	list, _ := byIface[fmt.Sprint(step["interface"])].([]any)
	for _, s := range list {
		if m, ok := s.(map[string]any); ok && m["step"] == step["step"] {
			b, _ := m["reboot_requested"].(bool)
			return b
		}
	}
	return false
}

// RebootToFinishStep is upstream deploy_utils.reboot_to_finish_step:
// unless the flow runs without a ramdisk, the ramdisk is prepared again
// (after a power off under fast track, so that the node really boots it);
// then the node reboots and the agent's token and URL are dropped, unless
// the token was pre-generated.
func (b *base) RebootToFinishStep(ctx context.Context, task *driver.Task, kind driver.StepKind) error {
	n := task.Node
	disableRamdisk := false
	switch kind {
	case driver.StepClean:
		disableRamdisk, _ = n.InternalInfo().Bool(model.DIICleaningDisableRamdisk)
	case driver.StepService:
		disableRamdisk, _ = n.InternalInfo().Bool(model.DIIServiceDisableRamdisk)
	}
	if disableRamdisk {
		return rebootNode(ctx, task, "reboot")
	}
	if b.opts.FastTrack.Active(ctx, task) && !n.DisablePowerOff {
		task.Logger().DebugContext(ctx, "forcing power off for a clean reboot into the agent image", "node", n.UUID)
		if err := ensurePoweredOff(ctx, task); err != nil {
			return err
		}
	}
	return rebootToRamdisk(ctx, task, nil)
}

func titleKind(kind driver.StepKind) string {
	s := string(kind)
	return strings.ToUpper(s[:1]) + s[1:]
}

// freshlyBooted: the agent has run nothing but step listings since it
// booted.
func freshlyBooted(cmds []agentclient.CommandResult, kind driver.StepKind) bool {
	for _, c := range cmds {
		if c.Name != "get_"+string(kind)+"_steps" && c.Name != "get_clean_steps" && c.Name != "get_deploy_steps" && c.Name != "get_service_steps" {
			return false
		}
	}
	return true
}

// rebootToRamdisk boots the node into the agent ramdisk: a new ramdisk
// session, so the previous agent's token and URL are dropped.
func rebootToRamdisk(ctx context.Context, task *driver.Task, params map[string]any) error {
	if err := task.Driver.Boot.PrepareRamdisk(ctx, task, params); err != nil {
		return asUpstream(err, "prepare ramdisk")
	}
	return rebootNode(ctx, task, "reboot into the ramdisk")
}

// asUpstream returns err as it is when it carries an Ironic exception: the
// other interfaces word those as upstream does, and upstream's
// conductor puts them in last_error without a word of the deploy
// interface's. Any other error is wrapped with what was being done.
func asUpstream(err error, doing string) error {
	if err == nil {
		return nil
	}
	if _, ok := errs.As(err); ok {
		return err
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// tearDown is upstream AgentBaseMixin.tear_down: the node is powered off
// unless it cannot be, its volumes are detached, and it leaves the
// tenant networks and any provisioning ports a failed deployment left,
// so that nothing of the instance stays bound to it during cleaning.
// The node's volume targets are destroyed with the storage
// configuration, as upstream's tear_down_storage_configuration does.
func (b *base) tearDown(ctx context.Context, task *driver.Task) (string, error) {
	if !task.Node.DisablePowerOff {
		if err := ensurePoweredOff(ctx, task); err != nil {
			return "", err
		}
	}
	if err := task.Driver.Storage.DetachVolumes(ctx, task); err != nil {
		return "", asUpstream(err, "detach volumes")
	}
	if task.VolumeTargets != nil {
		if err := task.VolumeTargets.DestroyAll(ctx); err != nil {
			return "", err
		}
	}
	task.Node.InternalInfo().Delete(model.DIIBootFromVolume)
	task.Node.InternalInfo().Delete(model.DIIBootFromVolumeDeploy)
	err := b.withNetworkPower(ctx, task, func() error {
		if err := task.Driver.Network.UnconfigureTenantNetworks(ctx, task); err != nil {
			return asUpstream(err, "unconfigure tenant networks")
		}
		if err := task.Driver.Network.RemoveProvisioningNetwork(ctx, task); err != nil {
			return asUpstream(err, "remove provisioning network")
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return "deleted", nil
}

// cleanUp is upstream AgentBaseMixin.clean_up: the ramdisk (when its
// boot is managed here) and instance boot files go; a node that tear down
// cannot power off is rebooted so that it no longer runs the instance.
func (b *base) cleanUp(ctx context.Context, task *driver.Task) error {
	if b.managesBoot() {
		if err := task.Driver.Boot.CleanUpRamdisk(ctx, task); err != nil {
			return asUpstream(err, "clean up ramdisk")
		}
	}
	if err := task.Driver.Boot.CleanUpInstance(ctx, task); err != nil {
		return asUpstream(err, "clean up instance")
	}
	if task.Node.DisablePowerOff {
		return rebootNode(ctx, task, "reboot")
	}
	return nil
}

// ensurePoweredOff is upstream's node_power_action to power off, which
// every agent interface powers off through: it is refused for a node that
// must stay on, and a node already off is not sent the action. The agent
// is forgotten before the action either way, as it cannot have survived
// it, and the node may have been turned off behind our back.
func ensurePoweredOff(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if n.DisablePowerOff {
		task.Logger().ErrorContext(ctx, "refusing to power off node with disable_power_off flag set", "node", n.UUID)
		return errs.New(errs.ClassPowerStateFailure, map[string]any{"pstate": "power off"})
	}
	current, err := task.Driver.Power.GetPowerState(ctx, task)
	if err != nil {
		return asUpstream(err, "get power state")
	}
	wipeOnPowerAction(n)
	if current != "power off" {
		if err := task.Driver.Power.SetPowerState(ctx, task, "power off", 0); err != nil {
			return asUpstream(err, "power off")
		}
	}
	n.PowerState = "power off"
	return nil
}

// ensurePoweredOn is upstream's node_power_action to power on: a node
// already on is not sent the action. doing words a failed action.
func ensurePoweredOn(ctx context.Context, task *driver.Task, doing string) error {
	current, err := task.Driver.Power.GetPowerState(ctx, task)
	if err != nil {
		return asUpstream(err, "get power state")
	}
	if current != "power on" {
		if err := task.Driver.Power.SetPowerState(ctx, task, "power on", 0); err != nil {
			return asUpstream(err, doing)
		}
	}
	task.Node.PowerState = "power on"
	return nil
}

// powerOnOrReboot is how upstream ends power_off_and_on and inband
// inspection or servicing: the node is powered on, or reset when it must
// stay on (and so was never powered off).
func powerOnOrReboot(ctx context.Context, task *driver.Task) error {
	if task.Node.DisablePowerOff {
		return rebootNode(ctx, task, "reboot")
	}
	return ensurePoweredOn(ctx, task, "power on")
}

// rebootNode is upstream's node_power_action to reboot, which is never
// skipped: the agent is forgotten and the node reset.
func rebootNode(ctx context.Context, task *driver.Task, doing string) error {
	wipeOnPowerAction(task.Node)
	if err := task.Driver.Power.Reboot(ctx, task, 0); err != nil {
		return asUpstream(err, doing)
	}
	task.Node.PowerState = "power on"
	return nil
}

// wipeOnPowerAction is upstream wipe_internal_info_on_power_off, which
// every power action does: the agent that answered at agent_url is gone,
// but a pre-generated token stays, as the ramdisk about to boot was
// given it on its virtual media and lookup will not hand out another.
func wipeOnPowerAction(n *model.Node) {
	ii := n.InternalInfo()
	ii.Delete(model.DIIAgentURL, model.DIIAgentCachedDeploySteps, model.DIIAgentCachedCleanSteps, model.DIIAgentVerifyCA, model.DIIAgentStartAttempted)
	if !ii.AgentTokenPregenerated() {
		ii.Delete(model.DIIAgentSecretToken)
	}
}

// PrepareCleaning is upstream prepare_inband_cleaning: the cleaning
// network is added, the clean parameters recorded for the agent and the
// ramdisk prepared (when its boot is managed here; else the node boots it
// by other means); the node is then rebooted into it and the agent's
// first heartbeat starts the steps. Under fast track, with the agent of
// an earlier operation still alive and the node on, there is no reboot:
// the running agent's clean steps are fetched and cleaning goes on at
// once ("" instead of clean wait).
func (b *base) PrepareCleaning(ctx context.Context, task *driver.Task) (string, error) {
	if err := task.Driver.Network.AddCleaningNetwork(ctx, task); err != nil {
		return "", asUpstream(err, "add cleaning network")
	}
	for k, v := range b.opts.CleanParams {
		task.Node.InternalInfo().Set(k, v)
	}
	if b.managesBoot() {
		task.Node.InternalInfo().Set(model.DIIAgentStartAttempted, true)
		if err := task.Driver.Boot.PrepareRamdisk(ctx, task, nil); err != nil {
			return "", asUpstream(err, "prepare ramdisk")
		}
	}
	// Preparing the ramdisk may have powered the node off, so fast track
	// is decided after it, as upstream does.
	if b.opts.FastTrack.Active(ctx, task) {
		if err := b.RefreshSteps(ctx, task, driver.StepClean); err != nil {
			return "", err
		}
		return "", nil
	}
	if err := rebootNode(ctx, task, "reboot into the ramdisk"); err != nil {
		return "", err
	}
	return "clean wait", nil
}

// TearDownCleaning powers the node off and removes the ramdisk (when its
// boot is managed here) and the cleaning network (upstream
// tear_down_inband_cleaning). Under fast track
// the node stays on with its agent, for the deployment to reuse; one that
// must stay on is reset out of the ramdisk at the end instead.
func (b *base) TearDownCleaning(ctx context.Context, task *driver.Task) error {
	n := task.Node
	fastTrack := b.opts.FastTrack.Active(ctx, task)
	// A node whose cleaning failed stays on, in maintenance, so that the
	// operator can look at the ramdisk that failed.
	keepOn := fastTrack || (n.Fault != nil && *n.Fault == "clean failure")
	if !keepOn && !n.DisablePowerOff {
		if err := ensurePoweredOff(ctx, task); err != nil {
			return err
		}
	}
	if b.managesBoot() {
		if err := task.Driver.Boot.CleanUpRamdisk(ctx, task); err != nil {
			return asUpstream(err, "clean up ramdisk")
		}
	}
	if err := task.Driver.Network.RemoveCleaningNetwork(ctx, task); err != nil {
		return asUpstream(err, "remove cleaning network")
	}
	if !keepOn && n.DisablePowerOff {
		return rebootNode(ctx, task, "reboot")
	}
	return nil
}

// PrepareService is upstream prepare_inband_service: with the node
// powered off (one that must stay on is reset at the end instead), the
// instance boot goes, the node leaves its tenant networks for the
// servicing network and the ramdisk is prepared; powered on, it boots
// the agent, whose first heartbeat starts the steps.
func (b *base) PrepareService(ctx context.Context, task *driver.Task) (string, error) {
	var add func(context.Context, *driver.Task) error
	if nw, ok := task.Driver.Network.(driver.ServicingNetworker); ok {
		add = nw.AddServicingNetwork
	}
	if err := bootRamdiskFromInstance(ctx, task, add, "add servicing network", nil, "prepare ramdisk"); err != nil {
		return "", err
	}
	return "service wait", nil
}

// bootRamdiskFromInstance is what upstream's rescue and
// prepare_inband_service share: with the node powered off (one that must
// stay on is reset at the end instead), the instance boot goes, the node
// leaves its tenant networks for the operation's network (add, when the
// network interface has one) and the ramdisk is prepared with params;
// then the node is powered on into it.
func bootRamdiskFromInstance(ctx context.Context, task *driver.Task, add func(context.Context, *driver.Task) error,
	addDoing string, params map[string]any, prepareDoing string) error {
	if !task.Node.DisablePowerOff {
		if err := ensurePoweredOff(ctx, task); err != nil {
			return err
		}
	}
	if err := task.Driver.Boot.CleanUpInstance(ctx, task); err != nil {
		return asUpstream(err, "clean up instance boot")
	}
	if err := task.Driver.Network.UnconfigureTenantNetworks(ctx, task); err != nil {
		return asUpstream(err, "unconfigure tenant networks")
	}
	if add != nil {
		if err := add(ctx, task); err != nil {
			return asUpstream(err, addDoing)
		}
	}
	if err := task.Driver.Boot.PrepareRamdisk(ctx, task, params); err != nil {
		return asUpstream(err, prepareDoing)
	}
	return powerOnOrReboot(ctx, task)
}

// TearDownService is upstream tear_down_service: a node that cannot be
// powered off has its agent locked down, as far as it still runs; the
// node is powered off and the ramdisk removed. After a failed step that
// is all, the node is left for the operator; otherwise it goes back to
// its tenant networks and is powered on (reset, when it must stay on)
// into the instance.
func (b *base) TearDownService(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if n.DisablePowerOff {
		task.Logger().DebugContext(ctx, "locking down the agent before exiting servicing", "node", n.UUID)
		if err := b.client().Lockdown(ctx, targetFor(n), false); err != nil {
			return fmt.Errorf("lock down the agent: %w", err)
		}
	}
	serviceFailure := n.Fault != nil && *n.Fault == "service failure"
	if !serviceFailure && !n.DisablePowerOff {
		if err := ensurePoweredOff(ctx, task); err != nil {
			return err
		}
	}
	if err := task.Driver.Boot.CleanUpRamdisk(ctx, task); err != nil {
		return asUpstream(err, "clean up ramdisk")
	}
	if serviceFailure {
		return nil
	}
	if nw, ok := task.Driver.Network.(driver.ServicingNetworker); ok {
		if err := nw.RemoveServicingNetwork(ctx, task); err != nil {
			return asUpstream(err, "remove servicing network")
		}
	}
	if err := task.Driver.Network.ConfigureTenantNetworks(ctx, task); err != nil {
		return asUpstream(err, "configure tenant networks")
	}
	if err := task.Driver.Boot.PrepareInstance(ctx, task); err != nil {
		return asUpstream(err, "prepare instance boot")
	}
	return powerOnOrReboot(ctx, task)
}

// softPowerOff is upstream agent.soft_power_off: the agent is told to
// power the machine off, then the power state is read up to
// [agent]/post_deploy_get_power_state_retries more times,
// post_deploy_get_power_state_retry_interval apart, because the ramdisk
// syncs and flushes the disks it wrote before the machine goes off (39 s
// measured with IPA in a VM); a hard power off in the middle of that can
// corrupt the image. Only a node still on after the last read is powered
// off out of band. The power state is read even when the command failed,
// since the request may have gone through with its answer lost.
func (b *base) softPowerOff(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if _, err := b.client().PowerOff(ctx, targetFor(n)); err != nil {
		class := fmt.Sprintf("%T", err)
		if e, ok := errs.As(err); ok {
			class = string(e.Class)
		}
		task.Logger().WarnContext(ctx, fmt.Sprintf("Failed to soft power off node %s. %s: %s", n.UUID, class, err), "node", n.UUID)
	}
	off, err := b.waitPowerOff(ctx, task)
	if err != nil {
		return fmt.Errorf("wait for node %s to power off: %w", n.UUID, err)
	}
	if off {
		n.PowerState = "power off"
		n.InternalInfo().WipeAgentTokenAndURL()
		return nil
	}
	timeout := b.opts.PostDeployGetPowerStateRetryInterval * time.Duration(b.opts.PostDeployGetPowerStateRetries)
	task.Logger().WarnContext(ctx, fmt.Sprintf("Failed to soft power off node %s in at least %d seconds. Forcing hard power off and proceeding.", n.UUID, int(timeout/time.Second)), "node", n.UUID)
	return ensurePoweredOff(ctx, task)
}

// waitPowerOff reads the power state until it is off, at most retries+1
// times, interval apart on the interfaces' clock; a failed read counts as
// not off yet, as upstream's tenacity loop retries on exceptions. The
// error is the context's, when it ends first.
func (b *base) waitPowerOff(ctx context.Context, task *driver.Task) (bool, error) {
	for i := range max(b.opts.PostDeployGetPowerStateRetries, 0) + 1 {
		if i > 0 {
			if err := b.opts.clock().Sleep(ctx, b.opts.PostDeployGetPowerStateRetryInterval); err != nil {
				return false, err
			}
		}
		st, err := task.Driver.Power.GetPowerState(ctx, task)
		if err == nil && st == "power off" {
			return true, nil
		}
		if err != nil {
			task.Logger().DebugContext(ctx, "reading the power state while waiting for the agent to power off failed", "node", task.Node.UUID, "error", err)
		}
	}
	return false, nil
}
