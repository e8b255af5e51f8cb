package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/states"
)

// CustomAgent is upstream CustomAgentDeploy ("custom-agent"): it boots the
// agent ramdisk and runs the agent's deploy steps, but writes no image
// itself; the steps of a custom agent (or of the user's deploy_steps) do
// the provisioning. It then sets up the instance boot, stops the agent,
// moves the node to the tenant network and boots the instance.
type CustomAgent struct {
	base
}

var (
	_ driver.DeployInterface   = (*CustomAgent)(nil)
	_ driver.StepLister        = (*CustomAgent)(nil)
	_ driver.StepRunner        = (*CustomAgent)(nil)
	_ driver.CleaningPreparer  = (*CustomAgent)(nil)
	_ driver.ServicePreparer   = (*CustomAgent)(nil)
	_ driver.AgentStepper      = (*CustomAgent)(nil)
	_ driver.InterfaceRestorer = (*CustomAgent)(nil)
)

// NewCustomAgent builds the custom-agent deploy interface.
func NewCustomAgent(o Options) *CustomAgent { return &CustomAgent{base{opts: o, bootByConfig: true}} }

// Properties are upstream's COMMON_PROPERTIES of the agent deploys.
func (d *CustomAgent) Properties() map[string]string {
	return map[string]string{
		"deploy_kernel":            "UUID (from Glance) of the deployment kernel. Required.",
		"deploy_ramdisk":           "UUID (from Glance) of the ramdisk with agent that is used at deploy time. Required.",
		"image_http_proxy":         "URL of a proxy server for HTTP connections. Optional.",
		"image_https_proxy":        "URL of a proxy server for HTTPS connections. Optional.",
		"image_no_proxy":           "A comma-separated list of host names, IP addresses and domain names (with optional :port) that will be excluded from proxying. To denote a domain name, use a dot to prefix the domain name. This value will be ignored if ``image_http_proxy`` and ``image_https_proxy`` are not specified. Optional.",
		"image_download_source":    "Specifies whether direct deploy interface should try to use the image source directly or if ironic should cache the image on the conductor and serve it from ironic's own HTTP server. Accepted values are \"swift\", \"http\" and \"local\". Optional.",
		"deploy_forces_oob_reboot": "Whether Ironic should force a reboot of the Node via the out-of-band channel after deployment is complete. Provides compatibility with older deploy ramdisks. Defaults to False. Optional.",
		"agent_verify_ca":          "Either a Boolean value, a path to a CA_BUNDLE file or directory with certificates of trusted CAs. If set to True ironic will verify the agent's certificate; if False the driver will ignore verifying the SSL certificate. If it's a path the driver will use the specified certificate or one of the certificates in the directory. Defaults to True. Optional",
	}
}

// Steps declares the out-of-band deploy steps.
func (d *CustomAgent) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.DeployStep("deploy", 100),
		driver.DeployStep("prepare_instance_boot", 60),
		driver.DeployStep("tear_down_agent", 40),
		driver.DeployStep("switch_to_tenant_network", 30),
		driver.DeployStep("boot_instance", 20),
	}
}

// ListSteps adds the agent's reported steps to the declared ones.
func (d *CustomAgent) ListSteps(_ context.Context, task *driver.Task, kind driver.StepKind) ([]driver.StepSpec, error) {
	return d.listSteps(task, kind, d.Steps()), nil
}

// listSteps is upstream get_<kind>_steps with agent_base.get_steps: the
// declared steps of kind, then the agent's cached ones of the deploy
// interface; a reported step with a declared name is the declared one.
func (b *base) listSteps(task *driver.Task, kind driver.StepKind, declaredSteps []driver.StepSpec) []driver.StepSpec {
	var out []driver.StepSpec
	declared := map[string]bool{}
	for _, s := range declaredSteps {
		if s.Kind == kind {
			out = append(out, s)
			declared[s.Name] = true
		}
	}
	for _, s := range b.cachedSteps(task.Node, kind, driver.KindDeploy) {
		if !declared[s.Name] {
			out = append(out, s)
		}
	}
	return out
}

// StepHandlers maps the declared deploy steps.
func (d *CustomAgent) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"deploy":                   func(ctx context.Context, t *driver.Task, _ map[string]any) (string, error) { return d.Deploy(ctx, t) },
		"prepare_instance_boot":    d.prepareInstanceBoot,
		"tear_down_agent":          d.tearDownAgent,
		"switch_to_tenant_network": d.switchToTenantNetwork,
		"boot_instance":            d.bootInstance,
	}
}

// ExecuteStep runs a declared deploy step, or hands an in-band step to the
// agent.
func (d *CustomAgent) ExecuteStep(ctx context.Context, task *driver.Task, step driver.Step) (string, error) {
	return d.executeStep(ctx, task, step, d.StepHandlers())
}

// executeStep is upstream execute_deploy_step: out-of-band steps win over
// in-band ones of the same name, and an in-band deploy step needs a
// running agent (one whose deploy steps are cached).
func (b *base) executeStep(ctx context.Context, task *driver.Task, step driver.Step, handlers map[string]driver.StepFunc) (string, error) {
	if step.Kind == driver.StepDeploy {
		if fn, ok := handlers[step.Name]; ok {
			return fn(ctx, task, step.Args)
		}
		if task.Node.InternalInfo().Get(cachedKey(driver.StepDeploy)) == nil {
			return "", fmt.Errorf("Deploy step %s.%s has not been found. Agent is not running.", step.Interface, step.Name)
		}
	}
	cur := currentStep(task.Node, step.Kind)
	if cur == nil || cur["step"] != step.Name {
		cur = map[string]any{"step": step.Name, "interface": string(step.Interface), "args": step.Args}
	}
	return b.executeInband(ctx, task, step.Kind, cur)
}

// Validate checks the boot interface.
func (d *CustomAgent) Validate(ctx context.Context, task *driver.Task) error {
	return task.Driver.Boot.Validate(ctx, task)
}

// Deploy boots the ramdisk; the agent's first heartbeat fetches its deploy
// steps and continues. Under fast track the running agent's steps are
// fetched now and the deployment goes on without a reboot.
func (d *CustomAgent) Deploy(ctx context.Context, task *driver.Task) (string, error) {
	if d.opts.FastTrack.Active(ctx, task) {
		task.Logger().DebugContext(ctx, "performing a fast track deployment", "node", task.Node.UUID)
		if err := d.RefreshSteps(ctx, task, driver.StepDeploy); err != nil {
			return "", err
		}
		return "", nil
	}
	if !task.Driver.Storage.ShouldWriteImage(ctx, task) {
		return "", nil
	}
	if err := rebootToRamdisk(ctx, task, nil); err != nil {
		return "", err
	}
	return "wait call-back", nil
}

// prepareInstanceBoot only prepares the boot interface for the instance.
func (d *CustomAgent) prepareInstanceBoot(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	if err := task.Driver.Boot.PrepareInstance(ctx, task); err != nil {
		return "", fmt.Errorf("Failed to prepare instance for booting: %w", err)
	}
	return "", nil
}

// tearDownAgent stops the agent: soft power off through the agent, then
// out of band when the node stays on past the [agent] wait (or at once
// after a sync when driver_info asks for it).
func (d *CustomAgent) tearDownAgent(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	n := task.Node
	if d.client().DeployLogsCollect() == agentclient.LogsAlways {
		d.client().CollectRamdiskLogs(ctx, targetFor(n), "")
	}
	if n.DisablePowerOff {
		// The node stays on: the agent makes itself unusable instead, and
		// boot_instance resets the node into the instance.
		task.Logger().InfoContext(ctx, "node does not support power off, locking down the agent", "node", n.UUID)
		if err := d.client().Lockdown(ctx, targetFor(n), true); err != nil {
			return "", fmt.Errorf("lock down the agent: %w", err)
		}
		return "", nil
	}
	if !canPowerOn(ctx, task) {
		task.Logger().InfoContext(ctx, "power interface does not support power on, using reboot to switch to the instance", "node", n.UUID)
		if _, err := d.client().Sync(ctx, targetFor(n)); err != nil {
			return "", fmt.Errorf("sync before the reboot: %w", err)
		}
		return "", rebootNode(ctx, task, "reboot")
	}
	oob := d.opts.DeployForcesOOBReboot
	if v, ok := n.DriverInfo["deploy_forces_oob_reboot"].(bool); ok {
		oob = v
	}
	if !oob {
		return "", d.softPowerOff(ctx, task)
	}
	if _, err := d.client().Sync(ctx, targetFor(n)); err != nil {
		task.Logger().WarnContext(ctx, "sync before out-of-band power off failed", "node", n.UUID, "error", err)
	}
	return "", ensurePoweredOff(ctx, task)
}

func (d *CustomAgent) switchToTenantNetwork(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	return "", d.withNetworkPower(ctx, task, func() error {
		if err := task.Driver.Network.RemoveProvisioningNetwork(ctx, task); err != nil {
			return asUpstream(err, "remove provisioning network")
		}
		if err := task.Driver.Network.ConfigureTenantNetworks(ctx, task); err != nil {
			return asUpstream(err, "configure tenant networks")
		}
		return nil
	})
}

// bootInstance powers the instance on; a node that cannot be powered off
// still runs the locked-down agent and is reset instead, and one whose
// power interface cannot power on was rebooted by tear_down_agent.
func (d *CustomAgent) bootInstance(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	switch {
	case task.Node.DisablePowerOff:
		return "", rebootNode(ctx, task, "reboot into the instance")
	case canPowerOn(ctx, task):
		return "", ensurePoweredOn(ctx, task, "power on instance")
	}
	task.Logger().DebugContext(ctx, "not trying to power on a node that does not support powering on, assuming already running", "node", task.Node.UUID)
	return "", nil
}

// canPowerOn tells whether the power interface lists power on among its
// states; not knowing is taken as yes.
func canPowerOn(ctx context.Context, task *driver.Task) bool {
	supported, err := task.Driver.Power.GetSupportedPowerStates(ctx, task)
	return err != nil || slices.Contains(supported, "power on")
}

// TearDown is the agent deploys' common tear down.
func (d *CustomAgent) TearDown(ctx context.Context, task *driver.Task) (string, error) {
	return d.tearDown(ctx, task)
}

// Prepare is upstream CustomAgentDeploy.prepare. A deployment validates
// the network, powers the node off (unless fast track reuses its running
// agent or it cannot be powered off), moves it from the tenant networks
// (a rebuild's) to the provisioning network when an image is to be
// written, and attaches its volumes; the ramdisk is prepared when the
// deploy step boots it. An active node taken over by this conductor, or
// one leaving rescue or being adopted, gets its instance boot back.
func (d *CustomAgent) Prepare(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if err := driver.PopulateStorageDriverInternalInfo(ctx, task); err != nil {
		return err
	}
	switch n.ProvisionState {
	case states.Deploying:
		if err := task.Driver.Network.Validate(ctx, task); err != nil {
			return err
		}
		fastTrack := d.opts.FastTrack.Active(ctx, task)
		if !fastTrack && !n.DisablePowerOff {
			if err := ensurePoweredOff(ctx, task); err != nil {
				return err
			}
		}
		if task.Driver.Storage.ShouldWriteImage(ctx, task) {
			// A rebuild leaves the tenant network configured; a fast-track
			// deployment keeps the running ramdisk's power as it is.
			change := func() error {
				if err := task.Driver.Network.UnconfigureTenantNetworks(ctx, task); err != nil {
					return asUpstream(err, "unconfigure tenant networks")
				}
				if err := task.Driver.Network.AddProvisioningNetwork(ctx, task); err != nil {
					return asUpstream(err, "add provisioning network")
				}
				return nil
			}
			if fastTrack {
				if err := change(); err != nil {
					return err
				}
			} else if err := d.withNetworkPower(ctx, task, change); err != nil {
				return err
			}
		}
		if err := task.Driver.Storage.AttachVolumes(ctx, task); err != nil {
			return asUpstream(err, "attach volumes")
		}
	case states.Active, states.Unrescuing, states.Adopting:
		if err := task.Driver.Boot.PrepareInstance(ctx, task); err != nil {
			return asUpstream(err, "prepare instance boot")
		}
	}
	return nil
}

// CleanUp is the agent deploys' common clean up.
func (d *CustomAgent) CleanUp(ctx context.Context, task *driver.Task) error {
	return d.cleanUp(ctx, task)
}

// TakeOver has nothing to do: an active node boots from its disk.
func (d *CustomAgent) TakeOver(context.Context, *driver.Task) error { return nil }
