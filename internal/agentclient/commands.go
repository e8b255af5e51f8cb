package agentclient

import (
	"context"
	"fmt"
	"time"

	"github.com/openkeel/ironic/internal/errs"
)

// NodeView is what the step commands tell the agent about the node: upstream
// sends node.as_dict(secure=True) (secrets masked; deploy steps leave the
// configdrive unmasked) and port.as_dict() of every port. The caller builds
// it because the masking rules belong to the layer that renders nodes.
type NodeView struct {
	Node  map[string]any
	Ports []map[string]any
	// HardwareManagerVersion is what the agent reported with its steps
	// (driver_internal_info.hardware_manager_version); a step to execute
	// carries it back so that the agent can tell whether its hardware
	// managers changed since.
	HardwareManagerVersion any
}

func (v NodeView) params() map[string]any {
	ports := v.Ports
	if ports == nil {
		ports = []map[string]any{}
	}
	node := v.Node
	if node == nil {
		node = map[string]any{}
	}
	return map[string]any{"node": node, "ports": ports}
}

func (v NodeView) stepParams(step map[string]any, versionKey string) map[string]any {
	p := v.params()
	p["step"] = step
	p[versionKey] = v.HardwareManagerVersion
	return p
}

// GetCleanSteps asks for the agent's clean steps; the result holds
// {"clean_steps": {manager: [steps]}, "hardware_manager_version": {…}}.
func (c *Client) GetCleanSteps(ctx context.Context, tgt Target, view NodeView) (*CommandResult, error) {
	return c.Command(ctx, tgt, "clean.get_clean_steps", view.params(), Wait)
}

// ExecuteCleanStep starts a clean step; the agent answers RUNNING and the
// outcome is read from the command status at later heartbeats.
func (c *Client) ExecuteCleanStep(ctx context.Context, tgt Target, step map[string]any, view NodeView) (*CommandResult, error) {
	return c.Command(ctx, tgt, "clean.execute_clean_step", view.stepParams(step, "clean_version"), Async)
}

// GetDeploySteps asks for the agent's deploy steps.
func (c *Client) GetDeploySteps(ctx context.Context, tgt Target, view NodeView) (*CommandResult, error) {
	return c.Command(ctx, tgt, "deploy.get_deploy_steps", view.params(), Wait)
}

// ExecuteDeployStep starts a deploy step (write_image is one).
func (c *Client) ExecuteDeployStep(ctx context.Context, tgt Target, step map[string]any, view NodeView) (*CommandResult, error) {
	return c.Command(ctx, tgt, "deploy.execute_deploy_step", view.stepParams(step, "deploy_version"), Async)
}

// GetServiceSteps asks for the agent's service steps. An agent that does
// not know the command answers with an API error; as upstream, that is
// reported as a result without command_result (upstream returns its
// empty step list outside command_result, so callers find none).
func (c *Client) GetServiceSteps(ctx context.Context, tgt Target, view NodeView) (*CommandResult, error) {
	r, err := c.Command(ctx, tgt, "service.get_service_steps", view.params(), Wait)
	if err != nil && errs.Is(err, errs.ClassAgentAPIError) {
		c.opts.log().Warn("unable to retrieve service steps; please upgrade your ironic-python-agent", "node", tgt.NodeUUID)
		return &CommandResult{}, nil
	}
	return r, err
}

// ExecuteServiceStep starts a service step.
func (c *Client) ExecuteServiceStep(ctx context.Context, tgt Target, step map[string]any, view NodeView) (*CommandResult, error) {
	return c.Command(ctx, tgt, "service.execute_service_step", view.stepParams(step, "service_version"), Async)
}

// BootloaderParams are install_bootloader's arguments; empty UUIDs are
// sent as null.
type BootloaderParams struct {
	RootUUID          string
	TargetBootMode    string
	EFISystemPartUUID string
	PrepBootPartUUID  string
	// SoftwareRAID says the root is on a software RAID: an agent too old
	// to take target_boot_mode cannot be used then in UEFI mode.
	SoftwareRAID bool
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// InstallBootloader runs image.install_bootloader and polls it to the
// end. An agent that rejects target_boot_mode is asked again without it,
// unless UEFI on software RAID needs it.
func (c *Client) InstallBootloader(ctx context.Context, tgt Target, p BootloaderParams) (*CommandResult, error) {
	params := map[string]any{
		"root_uuid":            nullable(p.RootUUID),
		"efi_system_part_uuid": nullable(p.EFISystemPartUUID),
		"prep_boot_part_uuid":  nullable(p.PrepBootPartUUID),
		"target_boot_mode":     p.TargetBootMode,
	}
	r, err := c.Command(ctx, tgt, "image.install_bootloader", params, Poll)
	if err == nil || !errs.Is(err, errs.ClassAgentAPIError) {
		return r, err
	}
	if p.TargetBootMode == "uefi" && p.SoftwareRAID {
		c.opts.log().Error("unable to pass UEFI boot mode to an out of date agent ramdisk; the ramdisk needs ironic-python-agent 6.0.0 or later", "node", tgt.NodeUUID)
		return nil, err
	}
	delete(params, "target_boot_mode")
	c.opts.log().Warn("failed to install bootloader on first attempt, falling back to the older agent format", "node", tgt.NodeUUID)
	return c.Command(ctx, tgt, "image.install_bootloader", params, Poll)
}

// GetPartitionUUIDs returns the partitions the agent created while
// writing a partition image ("root uuid", "efi system partition uuid",
// "PReP Boot partition uuid").
func (c *Client) GetPartitionUUIDs(ctx context.Context, tgt Target) (*CommandResult, error) {
	return c.Command(ctx, tgt, "standby.get_partition_uuids", map[string]any{}, Wait)
}

// PowerOff shuts the ramdisk's operating system down (soft power off).
func (c *Client) PowerOff(ctx context.Context, tgt Target) (*CommandResult, error) {
	return c.Command(ctx, tgt, "standby.power_off", map[string]any{}, Async)
}

// Reboot reboots the machine from the ramdisk (standby.run_image).
func (c *Client) Reboot(ctx context.Context, tgt Target) (*CommandResult, error) {
	return c.Command(ctx, tgt, "standby.run_image", map[string]any{}, Async)
}

// Sync flushes the ramdisk's file system buffers to disk.
func (c *Client) Sync(ctx context.Context, tgt Target) (*CommandResult, error) {
	return c.Command(ctx, tgt, "standby.sync", map[string]any{}, Wait)
}

// CollectSystemLogs fetches the ramdisk's logs; the result holds
// {"system_logs": <base64 gzipped tarball>}.
func (c *Client) CollectSystemLogs(ctx context.Context, tgt Target) (*CommandResult, error) {
	return c.Command(ctx, tgt, "log.collect_system_logs", map[string]any{}, Wait)
}

// FinalizeRescue hands the hashed rescue password to the agent, which
// then stops serving its API. An agent too old for hashes gets the plain
// password only when [conductor]/require_rescue_password_hashed is off.
func (c *Client) FinalizeRescue(ctx context.Context, tgt Target, pw RescuePassword) (*CommandResult, error) {
	if pw.Hashed == "" {
		return nil, errs.NewMessage(errs.ClassIronicException, "Agent rescue requires rescue_password in instance_info")
	}
	r, err := c.Command(ctx, tgt, "rescue.finalize_rescue", map[string]any{"rescue_password": pw.Hashed, "hashed": true}, Async)
	if err == nil || !errs.Is(err, errs.ClassAgentAPIError) {
		return r, err
	}
	if c.opts.RequireRescuePasswordHashed {
		return nil, errs.NewMessage(errs.ClassInstanceRescueFailure, "Unable to rescue node due to an out of date agent ramdisk. Please contact the administrator to update the rescue ramdisk to contain an ironic-python-agent version of at least 6.0.0.")
	}
	return c.Command(ctx, tgt, "rescue.finalize_rescue", map[string]any{"rescue_password": pw.Plain}, Async)
}

// Lockdown makes the agent unusable (system.lockdown) after syncing its
// disks, then waits for it to stop answering: at most
// [agent]/post_deploy_get_power_state_retries more checks,
// post_deploy_get_power_state_retry_interval apart. With
// failIfUnavailable false, an agent that is already gone is success.
func (c *Client) Lockdown(ctx context.Context, tgt Target, failIfUnavailable bool) error {
	log := c.opts.log()
	if !failIfUnavailable {
		_, err := c.GetCommandsStatus(ctx, tgt, StatusOptions{ExpectErrors: true})
		if err != nil && errs.Is(err, errs.ClassAgentConnectionFailed) {
			log.Debug("agent is already down when trying to lock down the node", "node", tgt.NodeUUID)
			return nil
		}
		if err != nil {
			log.Error("unexpected error checking the agent status, proceeding with lockdown", "node", tgt.NodeUUID, "error", err)
		}
	}
	if _, err := c.Sync(ctx, tgt); err != nil {
		return err
	}
	if _, err := c.Command(ctx, tgt, "system.lockdown", map[string]any{}, Async); err != nil {
		log.Error("failed to lock down node", "node", tgt.NodeUUID, "error", err)
		return err
	}
	tries := c.opts.PostDeployGetPowerStateRetries + 1
	var lastErr error
	for i := range attempts(tries) {
		if i > 0 {
			if err := c.opts.clock().Sleep(ctx, c.opts.PostDeployGetPowerStateRetryInterval); err != nil {
				return fmt.Errorf("waiting for the agent of node %s to lock down: %w", tgt.NodeUUID, err)
			}
		}
		_, lastErr = c.GetCommandsStatus(ctx, tgt, StatusOptions{ExpectErrors: true})
		if lastErr != nil && errs.Is(lastErr, errs.ClassAgentConnectionFailed) {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for the agent of node %s to lock down: %w", tgt.NodeUUID, ctx.Err())
		}
		log.Debug("agent is still available, waiting for the lockdown to take effect", "node", tgt.NodeUUID)
	}
	if lastErr != nil {
		log.Error("failed to lock down node", "node", tgt.NodeUUID, "error", lastErr)
		return lastErr
	}
	log.Error("failed to lock down node: agent is still available", "node", tgt.NodeUUID,
		"timeout", c.opts.PostDeployGetPowerStateRetryInterval*(time.Duration(tries-1)))
	return errs.New(errs.ClassAgentCommandTimeout, map[string]any{"command": "system.lockdown", "node": tgt.NodeUUID})
}
