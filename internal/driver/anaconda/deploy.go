// Package anaconda is upstream's anaconda deploy interface
// (drivers/modules/pxe.py PXEAnacondaDeploy): the node boots the
// installer (kernel, ramdisk and stage2) with a kickstart the boot
// interface renders, and the installer's heartbeats (agent_status start,
// end or error) carry the deployment to active or to deploy failed.
// Cleaning, servicing and rescue use the agent ramdisk as the agent
// deploys do.
package anaconda

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/agent"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// Name is the interface's name in the registry and on nodes.
const Name = "anaconda"

// Deploy is upstream PXEAnacondaDeploy. It is the agent deploys'
// AgentBaseMixin for cleaning, servicing and tear down (CustomAgent's),
// with its own single deploy step and its own heartbeat handling while
// the installer runs.
type Deploy struct {
	*agent.CustomAgent
	// images builds instance_info for the image (upstream
	// build_instance_info_for_deploy); nil until Configure.
	images InstanceInfoBuilder
}

// InstanceInfoBuilder is build_instance_info_for_deploy: the direct
// deploy interface's, which resolves the image into image_url.
type InstanceInfoBuilder interface {
	BuildInstanceInfo(ctx context.Context, task *driver.Task) error
}

var (
	_ driver.DeployInterface   = (*Deploy)(nil)
	_ driver.StepLister        = (*Deploy)(nil)
	_ driver.StepRunner        = (*Deploy)(nil)
	_ driver.InstallerDeployer = (*Deploy)(nil)
)

// New builds the anaconda deploy interface.
func New(ao agent.Options) *Deploy { return &Deploy{CustomAgent: agent.NewCustomAgent(ao)} }

// Register adds the anaconda deploy interface to r. It resolves images
// through the registered direct deploy interface, so it is registered
// after that one is configured.
func Register(r *driver.Registry, ao agent.Options) error {
	d := New(ao)
	impl, ok := r.Implementation(driver.KindDeploy, "direct")
	if !ok {
		return errors.New("register anaconda deploy: the direct deploy interface is not registered")
	}
	b, ok := impl.(InstanceInfoBuilder)
	if !ok {
		return fmt.Errorf("register anaconda deploy: the direct deploy interface (%T) builds no instance_info", impl)
	}
	d.images = b
	if err := r.Register(driver.KindDeploy, Name, d); err != nil {
		return fmt.Errorf("register anaconda deploy: %w", err)
	}
	return nil
}

// Properties: upstream's get_properties answers none.
func (d *Deploy) Properties() map[string]string { return map[string]string{} }

// Steps is upstream's one deploy step.
func (d *Deploy) Steps() []driver.StepSpec {
	return []driver.StepSpec{driver.DeployStep("deploy", 100)}
}

// ListSteps: the declared deploy step; cleaning and servicing steps are
// the agent's, as for the agent deploys.
func (d *Deploy) ListSteps(ctx context.Context, task *driver.Task, kind driver.StepKind) ([]driver.StepSpec, error) {
	if kind == driver.StepDeploy {
		return d.Steps(), nil
	}
	return d.CustomAgent.ListSteps(ctx, task, kind)
}

// StepHandlers maps the declared step.
func (d *Deploy) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"deploy": func(ctx context.Context, t *driver.Task, _ map[string]any) (string, error) { return d.Deploy(ctx, t) },
	}
}

// ExecuteStep runs the deploy step; other kinds go to the agent.
func (d *Deploy) ExecuteStep(ctx context.Context, task *driver.Task, step driver.Step) (string, error) {
	if step.Kind != driver.StepDeploy {
		return d.CustomAgent.ExecuteStep(ctx, task, step)
	}
	fn, ok := d.StepHandlers()[step.Name]
	if !ok {
		return "", fmt.Errorf("Deploy step %s.%s has not been found.", step.Interface, step.Name)
	}
	return fn(ctx, task, step.Args)
}

// Validate is upstream's: the boot interface's validation, which checks
// what the kickstart boot needs.
func (d *Deploy) Validate(ctx context.Context, task *driver.Task) error {
	return task.Driver.Boot.Validate(ctx, task)
}

// CollectsDeployLogs: no agent runs while the installer does, so a failed
// deployment has no ramdisk logs to keep (upstream fails it with
// collect_logs=False).
func (d *Deploy) CollectsDeployLogs() bool { return false }

// Deploy is upstream's deploy step: the node is powered off, its boot is
// pointed at the installer (the boot interface's prepare_instance for the
// kickstart boot option writes the kickstart and boot configuration),
// and it is powered on; the installer's heartbeats go on from there.
func (d *Deploy) Deploy(ctx context.Context, task *driver.Task) (string, error) {
	if err := powerOff(ctx, task); err != nil {
		return "", err
	}
	if err := task.Driver.Boot.PrepareInstance(ctx, task); err != nil {
		return "", err
	}
	if err := powerOn(ctx, task); err != nil {
		return "", err
	}
	task.Logger().InfoContext(ctx, "deployment setup done, waiting for the installer", "node", task.Node.UUID)
	return states.DeployWait, nil
}

// Prepare is upstream's prepare: a deployment validates the network,
// powers the node off, moves it to the provisioning network (the
// installer fetches the kickstart and stage2 from the conductor's HTTP
// server), attaches volumes and resolves the image into instance_info;
// an active node taken over, or one leaving rescue, gets its boot back.
func (d *Deploy) Prepare(ctx context.Context, task *driver.Task) error {
	n := task.Node
	switch n.ProvisionState {
	case states.Deploying:
		if err := task.Driver.Network.Validate(ctx, task); err != nil {
			return err
		}
		if err := powerOff(ctx, task); err != nil {
			return err
		}
		if err := withNetworkPower(ctx, task, func() error {
			if err := task.Driver.Network.UnconfigureTenantNetworks(ctx, task); err != nil {
				return fmt.Errorf("unconfigure tenant networks: %w", err)
			}
			return task.Driver.Network.AddProvisioningNetwork(ctx, task)
		}); err != nil {
			return err
		}
		if err := task.Driver.Storage.AttachVolumes(ctx, task); err != nil {
			return err
		}
		return d.buildInstanceInfo(ctx, task)
	case states.Active, states.Unrescuing:
		return task.Driver.Boot.PrepareInstance(ctx, task)
	}
	return nil
}

// buildInstanceInfo is build_instance_info_for_deploy. An image_source
// ending in "/" is an installation tree, not an image (upstream's
// is_source_a_path): the installer is pointed at it as it is.
func (d *Deploy) buildInstanceInfo(ctx context.Context, task *driver.Task) error {
	n := task.Node
	src, _ := n.InstanceInfo["image_source"].(string)
	if strings.HasSuffix(src, "/") && (strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")) {
		n.InternalInfo().Set(model.DIIIsSourceAPath, true)
		n.InstanceInfo["image_url"] = src
		return nil
	}
	n.InternalInfo().Delete(model.DIIIsSourceAPath)
	if d.images == nil {
		return errs.NewMessage(errs.ClassInstanceDeployFailure, "the anaconda deploy interface has no image service configured")
	}
	return d.images.BuildInstanceInfo(ctx, task)
}

// RebootToInstance is upstream reboot_to_instance, after the installer's
// "end": the installer's boot files go, the node powers off, boots from
// its disk (in secure boot when asked) on the tenant networks.
func (d *Deploy) RebootToInstance(ctx context.Context, task *driver.Task) error {
	if err := d.CleanUp(ctx, task); err != nil {
		return err
	}
	if err := powerOff(ctx, task); err != nil {
		return err
	}
	if err := task.Driver.Management.SetBootDevice(ctx, task, "disk", true); err != nil {
		// Upstream's try_set_boot_device: only an IPMI BMC in UEFI mode
		// is forgiven, whose persistent setting may not stick anyway.
		if !errs.Is(err, errs.ClassIPMIFailure) || bootMode(task.Node) != "uefi" {
			return err
		}
		task.Logger().WarnContext(ctx, "could not set the boot device to disk in UEFI mode", "node", task.Node.UUID, "error", err)
	}
	if err := configureSecureBoot(ctx, task); err != nil {
		return err
	}
	if err := withNetworkPower(ctx, task, func() error {
		if err := task.Driver.Network.RemoveProvisioningNetwork(ctx, task); err != nil {
			return err
		}
		return task.Driver.Network.ConfigureTenantNetworks(ctx, task)
	}); err != nil {
		return err
	}
	return powerOn(ctx, task)
}

// CleanUp is upstream's clean_up: the agent deploys' (boot files), then
// the installer's records of the deployment.
func (d *Deploy) CleanUp(ctx context.Context, task *driver.Task) error {
	if err := d.CustomAgent.CleanUp(ctx, task); err != nil {
		return err
	}
	task.Node.InternalInfo().Delete(DIIStage2, DIIKSTemplate)
	return nil
}

// The driver_internal_info keys of a kickstart deployment: the stage2
// image and kickstart template in use, kept so that a change of
// instance_info during the deployment changes nothing.
const (
	DIIStage2     = "stage2"
	DIIKSTemplate = "ks_template"
)

// bootMode is the node's boot mode as far as the deploy needs it: the
// one recorded for the deployment, else the requested capability.
func bootMode(n *model.Node) string {
	if m := n.InternalInfo().String(model.DIIDeployBootMode); m != "" {
		return m
	}
	return driver.Capability(n.Properties["capabilities"], "boot_mode")
}
