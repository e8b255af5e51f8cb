package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
)

// Direct is upstream AgentDeploy ("direct"): custom-agent's steps plus
// write_image, where the agent downloads the image itself and writes it,
// and a prepare_instance_boot that installs the bootloader first.
type Direct struct {
	CustomAgent
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
func NewDirect(o Options) *Direct { return &Direct{CustomAgent{base{opts: o}}} }

// Steps declares the out-of-band deploy steps in upstream's order.
func (d *Direct) Steps() []driver.StepSpec {
	return append(d.CustomAgent.Steps(), driver.DeployStep("write_image", 80))
}

// ListSteps is CustomAgent's with write_image among the declared steps.
func (d *Direct) ListSteps(_ context.Context, task *driver.Task, kind driver.StepKind) ([]driver.StepSpec, error) {
	return d.listSteps(task, kind, d.Steps()), nil
}

// StepHandlers maps the declared deploy steps.
func (d *Direct) StepHandlers() map[string]driver.StepFunc {
	h := d.CustomAgent.StepHandlers()
	h["write_image"] = d.writeImage
	h["prepare_instance_boot"] = d.prepareInstanceBoot
	return h
}

// ExecuteStep runs a declared deploy step, or hands an in-band step to the
// agent.
func (d *Direct) ExecuteStep(ctx context.Context, task *driver.Task, step driver.Step) (string, error) {
	return d.executeStep(ctx, task, step, d.StepHandlers())
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
func (b *base) bootMode(n *model.Node) string {
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
	return b.opts.DefaultBootMode
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
