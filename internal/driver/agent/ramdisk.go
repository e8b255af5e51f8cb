package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/pyfmt"
	"github.com/openkeel/ironic/internal/states"
)

// Ramdisk is upstream RamdiskDeploy ("ramdisk"): the instance is a ramdisk
// booted over the network, so deploying writes nothing and only points
// the boot interface at the instance's kernel and ramdisk (its "ramdisk"
// boot option) and powers the node on. Cleaning and servicing still run
// through the agent.
type Ramdisk struct {
	base
}

var (
	_ driver.DeployInterface   = (*Ramdisk)(nil)
	_ driver.StepLister        = (*Ramdisk)(nil)
	_ driver.StepRunner        = (*Ramdisk)(nil)
	_ driver.CleaningPreparer  = (*Ramdisk)(nil)
	_ driver.ServicePreparer   = (*Ramdisk)(nil)
	_ driver.AgentStepper      = (*Ramdisk)(nil)
	_ driver.InterfaceRestorer = (*Ramdisk)(nil)
)

// NewRamdisk builds the ramdisk deploy interface.
func NewRamdisk(o Options) *Ramdisk { return &Ramdisk{base{opts: o}} }

// Properties: the ramdisk deploy takes no driver_info options.
func (d *Ramdisk) Properties() map[string]string { return map[string]string{} }

// Steps declares the single deploy step.
func (d *Ramdisk) Steps() []driver.StepSpec {
	return []driver.StepSpec{driver.DeployStep("deploy", 100)}
}

// ListSteps: deploy steps are the declared one only (upstream does not
// override get_deploy_steps here); clean and service steps are the
// agent's.
func (d *Ramdisk) ListSteps(_ context.Context, task *driver.Task, kind driver.StepKind) ([]driver.StepSpec, error) {
	if kind == driver.StepDeploy {
		return d.Steps(), nil
	}
	return d.cachedSteps(task.Node, kind, driver.KindDeploy), nil
}

// StepHandlers maps the deploy step.
func (d *Ramdisk) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"deploy": func(ctx context.Context, t *driver.Task, _ map[string]any) (string, error) { return d.Deploy(ctx, t) },
	}
}

// ExecuteStep runs the deploy step, or an in-band clean or service step on
// the agent.
func (d *Ramdisk) ExecuteStep(ctx context.Context, task *driver.Task, step driver.Step) (string, error) {
	if step.Kind == driver.StepDeploy {
		fn, ok := d.StepHandlers()[step.Name]
		if !ok {
			return "", fmt.Errorf("Deploy step %s.%s has not been found.", step.Interface, step.Name)
		}
		return fn(ctx, task, step.Args)
	}
	return d.executeStep(ctx, task, step, nil)
}

// capabilities is how a boot interface lists upstream's capabilities.
type capabilities interface {
	Capabilities() []string
}

func bootCapable(task *driver.Task, capability string) bool {
	c, ok := task.Driver.Boot.(capabilities)
	return ok && slices.Contains(c.Capabilities(), capability)
}

// Validate needs a boot interface able to boot a ramdisk instance.
func (d *Ramdisk) Validate(ctx context.Context, task *driver.Task) error {
	if !bootCapable(task, "ramdisk_boot") {
		return driver.InvalidParameterValue("Invalid configuration: The boot interface must have the `ramdisk_boot` capability. You are using an incompatible boot interface.")
	}
	return task.Driver.Boot.Validate(ctx, task)
}

// Deploy powers off, configures the tenant networks, prepares the instance
// boot and powers on; the deployment is done when it returns.
func (d *Ramdisk) Deploy(ctx context.Context, task *driver.Task) (string, error) {
	n := task.Node
	if n.InstanceInfo["configdrive"] != nil && !bootCapable(task, "ramdisk_boot_configdrive") {
		task.Logger().WarnContext(ctx, "a configuration drive is present in the ramdisk deployment request but the boot interface cannot use it; it is ignored",
			"node", n.UUID, "boot_interface", n.BootInterface)
	}
	if err := ensurePoweredOff(ctx, task); err != nil {
		return "", err
	}
	if err := task.Driver.Network.ConfigureTenantNetworks(ctx, task); err != nil {
		return "", asUpstream(err, "configure tenant networks")
	}
	if err := task.Driver.Boot.PrepareInstance(ctx, task); err != nil {
		return "", asUpstream(err, "prepare instance boot")
	}
	if err := ensurePoweredOn(ctx, task, "power on instance"); err != nil {
		return "", err
	}
	task.Logger().InfoContext(ctx, "deployment setup done", "node", n.UUID)
	return "", nil
}

// Prepare powers a deploying node off and attaches its volumes; an active
// node (conductor take-over) or one leaving rescue gets its instance boot
// back.
func (d *Ramdisk) Prepare(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if err := driver.PopulateStorageDriverInternalInfo(ctx, task); err != nil {
		return err
	}
	if n.ProvisionState == states.Deploying {
		if err := task.Driver.Network.Validate(ctx, task); err != nil {
			return err
		}
		if err := ensurePoweredOff(ctx, task); err != nil {
			return err
		}
		if err := task.Driver.Storage.AttachVolumes(ctx, task); err != nil {
			return asUpstream(err, "attach volumes")
		}
	}
	if n.ProvisionState == states.Active || n.ProvisionState == states.Unrescuing {
		if err := task.Driver.Boot.PrepareInstance(ctx, task); err != nil {
			return asUpstream(err, "prepare instance boot")
		}
	}
	return nil
}

// TearDown is the agent deploys' common tear down, which upstream's
// ramdisk deploy inherits.
func (d *Ramdisk) TearDown(ctx context.Context, task *driver.Task) (string, error) {
	return d.tearDown(ctx, task)
}

// CleanUp is the agent deploys' common clean up.
func (d *Ramdisk) CleanUp(ctx context.Context, task *driver.Task) error {
	return d.cleanUp(ctx, task)
}

// TakeOver has nothing to do: Prepare restored the instance boot.
func (d *Ramdisk) TakeOver(context.Context, *driver.Task) error { return nil }

// SupportsDeploy is upstream's detection for autodetect: a ramdisk deploy
// is asked for with instance_info's ironic_ramdisk_deploy next to a
// boot_iso, or next to a kernel and a ramdisk. Upstream also reads
// those from a Glance image's properties; the agent interfaces have no
// image service to ask, which is upstream's failed lookup: not supported.
func (d *Ramdisk) SupportsDeploy(_ context.Context, task *driver.Task) bool {
	ii := task.Node.InstanceInfo
	if !pyfmt.Truthy(ii["ironic_ramdisk_deploy"]) {
		return false
	}
	return pyfmt.Truthy(ii["boot_iso"]) || (pyfmt.Truthy(ii["kernel"]) && pyfmt.Truthy(ii["ramdisk"]))
}
