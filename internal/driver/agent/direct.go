package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
)

// Direct is upstream AgentDeploy ("direct"): the agent downloads the image
// itself and writes it; the conductor's deploy steps boot the ramdisk
// (deploy), ask for the write (write_image), set up the boot
// (prepare_instance_boot), stop the agent (tear_down_agent), move the node
// to the tenant network and boot the instance.
type Direct struct {
	base
}

var (
	_ driver.DeployInterface  = (*Direct)(nil)
	_ driver.StepLister       = (*Direct)(nil)
	_ driver.StepRunner       = (*Direct)(nil)
	_ driver.CleaningPreparer = (*Direct)(nil)
	_ driver.ServicePreparer  = (*Direct)(nil)
	_ Stepper                 = (*Direct)(nil)
)

// NewDirect builds the direct deploy interface.
func NewDirect(o Options) *Direct { return &Direct{base{opts: o}} }

// Properties are the agent deploy's driver_info options.
func (d *Direct) Properties() map[string]string {
	return map[string]string{
		"deploy_forces_oob_reboot": "Whether Ironic should force a reboot of the Node via the out-of-band channel after deployment is complete. Provides compatibility with older deploy ramdisks. Defaults to False. Optional.",
	}
}

// Steps declares the out-of-band deploy steps in upstream's order.
func (d *Direct) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.DeployStep("deploy", 100),
		driver.DeployStep("write_image", 80),
		driver.DeployStep("prepare_instance_boot", 60),
		driver.DeployStep("tear_down_agent", 40),
		driver.DeployStep("switch_to_tenant_network", 30),
		driver.DeployStep("boot_instance", 20),
	}
}

// ListSteps adds the agent's reported steps of the deploy interface to the
// declared ones (upstream get_<kind>_steps with agent_base.get_steps); a
// reported step with a declared name is the declared one.
func (d *Direct) ListSteps(_ context.Context, task *driver.Task, kind driver.StepKind) ([]driver.StepSpec, error) {
	var out []driver.StepSpec
	declared := map[string]bool{}
	for _, s := range d.Steps() {
		if s.Kind == kind {
			out = append(out, s)
			declared[s.Name] = true
		}
	}
	for _, s := range d.cachedSteps(task.Node, kind, driver.KindDeploy) {
		if !declared[s.Name] {
			out = append(out, s)
		}
	}
	return out, nil
}

// StepHandlers maps the declared deploy steps.
func (d *Direct) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"deploy":                   func(ctx context.Context, t *driver.Task, _ map[string]any) (string, error) { return d.Deploy(ctx, t) },
		"write_image":              d.writeImage,
		"prepare_instance_boot":    d.prepareInstanceBoot,
		"tear_down_agent":          d.tearDownAgent,
		"switch_to_tenant_network": d.switchToTenantNetwork,
		"boot_instance":            d.bootInstance,
	}
}

// ExecuteStep runs a declared deploy step, or hands an in-band step to the
// agent.
func (d *Direct) ExecuteStep(ctx context.Context, task *driver.Task, step driver.Step) (string, error) {
	if step.Kind == driver.StepDeploy {
		if fn, ok := d.StepHandlers()[step.Name]; ok {
			return fn(ctx, task, step.Args)
		}
	}
	cur := currentStep(task.Node, step.Kind)
	if cur == nil || cur["step"] != step.Name {
		cur = map[string]any{"step": step.Name, "interface": string(step.Interface), "args": step.Args}
	}
	return d.executeInband(ctx, task, step.Kind, cur)
}

// Validate checks the boot interface and that there is an image to write
// with a way to verify it.
func (d *Direct) Validate(ctx context.Context, task *driver.Task) error {
	if err := task.Driver.Boot.Validate(ctx, task); err != nil {
		return err
	}
	if !task.Driver.Storage.ShouldWriteImage(ctx, task) {
		return nil
	}
	ii := task.Node.InstanceInfo
	src, _ := ii["image_source"].(string)
	if src == "" {
		return driver.MissingParameterValue("Node %s failed to validate deploy image info. Some parameters were missing. Missing are: ['instance_info.image_source']", task.Node.UUID)
	}
	if isURL(src) && ii["image_checksum"] == nil && ii["image_os_hash_value"] == nil {
		return driver.MissingParameterValue("image_source's image_checksum must be provided in instance_info for node %s", task.Node.UUID)
	}
	return nil
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "file://")
}

// Deploy boots the ramdisk; the agent's first heartbeat continues the
// deployment with write_image.
func (d *Direct) Deploy(ctx context.Context, task *driver.Task) (string, error) {
	if err := rebootToRamdisk(ctx, task, nil); err != nil {
		return "", err
	}
	return "wait call-back", nil
}

// imageInfo is what standby's write_image needs (upstream
// build_instance_info_for_deploy / _get_image_info).
func imageInfo(n *model.Node) map[string]any {
	ii := n.InstanceInfo
	src, _ := ii["image_source"].(string)
	info := map[string]any{
		"id":                src,
		"urls":              []any{ii["image_url"]},
		"disk_format":       ii["image_disk_format"],
		"container_format":  "bare",
		"stream_raw_images": true,
	}
	if ii["image_url"] == nil {
		info["urls"] = []any{src}
	}
	if v := ii["image_checksum"]; v != nil {
		info["checksum"] = v
	}
	for _, k := range []string{"image_os_hash_algo", "image_os_hash_value"} {
		if v := ii[k]; v != nil {
			info[strings.TrimPrefix(k, "image_")] = v
		}
	}
	whole := wholeDisk(n)
	info["disk_label"] = nil
	if !whole {
		for _, k := range []string{"root_gb", "swap_mb", "ephemeral_mb", "ephemeral_format"} {
			info[k] = ii[k]
		}
		info["root_mb"] = 1024 * toInt(ii["root_gb"])
	}
	info["image_type"] = map[bool]string{true: "whole-disk", false: "partition"}[whole]
	return info
}

// wholeDisk: a partition image names its kernel and ramdisk; anything
// else is written as a whole disk (upstream's image_type default).
func wholeDisk(n *model.Node) bool {
	if t, ok := n.InstanceInfo["image_type"].(string); ok {
		return t != "partition"
	}
	return n.InstanceInfo["kernel"] == nil
}

// writeImage asks the agent to write the image, through its in-band
// write_image deploy step.
func (d *Direct) writeImage(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	if !task.Driver.Storage.ShouldWriteImage(ctx, task) {
		return "", nil
	}
	n := task.Node
	setDII(n, "is_whole_disk_image", wholeDisk(n))
	step := map[string]any{
		"step": "write_image", "interface": "deploy",
		"args": map[string]any{"image_info": imageInfo(n), "configdrive": n.InstanceInfo["configdrive"]},
	}
	return d.executeInband(ctx, task, driver.StepDeploy, step)
}

// bootMode is instance_info.deploy_boot_mode, then the boot_mode
// capability, then [deploy]/default_boot_mode.
func (d *Direct) bootMode(n *model.Node) string {
	if m, ok := n.InstanceInfo["deploy_boot_mode"].(string); ok && m != "" {
		return m
	}
	if caps, ok := n.Properties["capabilities"].(string); ok {
		for _, kv := range strings.Split(caps, ",") {
			if k, v, ok := strings.Cut(kv, ":"); ok && strings.TrimSpace(k) == "boot_mode" {
				return strings.TrimSpace(v)
			}
		}
	}
	return d.opts.DefaultBootMode
}

// prepareInstanceBoot installs the bootloader through the agent when the
// image needs one (a partition image, or a UEFI whole disk image with an
// EFI partition), then prepares the instance boot.
func (d *Direct) prepareInstanceBoot(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	n := task.Node
	mode := d.bootMode(n)
	setDII(n, "deploy_boot_mode", mode)
	res, err := d.client().GetPartitionUUIDs(ctx, n)
	if err != nil {
		return "", fmt.Errorf("get partition UUIDs from the agent: %w", err)
	}
	uuids := res.ResultMap()
	root, _ := uuids["root uuid"].(string)
	efi, _ := uuids["efi system partition uuid"].(string)
	if root != "" {
		setDII(n, "root_uuid_or_disk_id", root)
	}
	whole := wholeDisk(n)
	if (!whole && root != "") || (whole && mode == "uefi" && efi != "") {
		p := agentclient.BootloaderParams{RootUUID: root, TargetBootMode: mode, EFISystemPartUUID: efi}
		r, err := d.client().InstallBootloader(ctx, n, p)
		if err != nil {
			return "", fmt.Errorf("Failed to install a bootloader when deploying node %s. Error: %w", n.UUID, err)
		}
		if r.Status == agentclient.StatusFailed {
			return "", fmt.Errorf("Failed to install a bootloader when deploying node %s. Error: %s", n.UUID, agentclient.CommandError(r))
		}
	}
	if err := task.Driver.Boot.PrepareInstance(ctx, task); err != nil {
		return "", fmt.Errorf("prepare instance boot: %w", err)
	}
	return "", nil
}

// tearDownAgent stops the agent: soft power off through the agent, then
// out of band when the node stays on (or when driver_info asks for it).
func (d *Direct) tearDownAgent(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	n := task.Node
	oob := d.opts.DeployForcesOOBReboot
	if v, ok := n.DriverInfo["deploy_forces_oob_reboot"].(bool); ok {
		oob = v
	}
	if !oob {
		if _, err := d.client().PowerOff(ctx, n); err == nil {
			if d.waitPowerOff(ctx, task, 3, 0) {
				n.PowerState = "power off"
				wipeTokenAndURL(n)
				return "", nil
			}
		} else {
			task.Logger().WarnContext(ctx, "soft power off through the agent failed, powering off out of band", "node", n.UUID, "error", err)
		}
	} else if _, err := d.client().Sync(ctx, n); err != nil {
		task.Logger().WarnContext(ctx, "sync before out-of-band power off failed", "node", n.UUID, "error", err)
	}
	return "", powerOff(ctx, task)
}

func (d *Direct) switchToTenantNetwork(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	if err := task.Driver.Network.RemoveProvisioningNetwork(ctx, task); err != nil {
		return "", fmt.Errorf("remove provisioning network: %w", err)
	}
	if err := task.Driver.Network.ConfigureTenantNetworks(ctx, task); err != nil {
		return "", fmt.Errorf("configure tenant networks: %w", err)
	}
	return "", nil
}

func (d *Direct) bootInstance(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
	if err := task.Driver.Power.SetPowerState(ctx, task, "power on", 0); err != nil {
		return "", fmt.Errorf("power on instance: %w", err)
	}
	task.Node.PowerState = "power on"
	return "", nil
}

// TearDown powers the node off and answers "deleted".
func (d *Direct) TearDown(ctx context.Context, task *driver.Task) (string, error) {
	if err := powerOff(ctx, task); err != nil {
		return "", err
	}
	return "deleted", nil
}

// Prepare attaches the provisioning network.
func (d *Direct) Prepare(ctx context.Context, task *driver.Task) error {
	if err := task.Driver.Network.AddProvisioningNetwork(ctx, task); err != nil {
		return fmt.Errorf("add provisioning network: %w", err)
	}
	return nil
}

// CleanUp removes the ramdisk and instance boot files.
func (d *Direct) CleanUp(ctx context.Context, task *driver.Task) error {
	if err := task.Driver.Boot.CleanUpRamdisk(ctx, task); err != nil {
		return fmt.Errorf("clean up ramdisk: %w", err)
	}
	if err := task.Driver.Boot.CleanUpInstance(ctx, task); err != nil {
		return fmt.Errorf("clean up instance: %w", err)
	}
	return nil
}

// TakeOver has nothing to do: an active node boots from its disk.
func (d *Direct) TakeOver(context.Context, *driver.Task) error { return nil }
