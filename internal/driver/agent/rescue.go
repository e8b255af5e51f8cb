package agent

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
)

// RescueOptions configures the agent rescue interface.
type RescueOptions struct {
	Client *agentclient.Client
	// HashAlgorithm is [conductor]/rescue_password_hash_algorithm.
	HashAlgorithm string
}

// Rescue is upstream AgentRescue: the node boots the agent ramdisk on the
// rescuing network, and the first heartbeat in rescue wait finalizes the
// rescue on the agent (rescue.finalize_rescue with the hashed password).
type Rescue struct {
	o RescueOptions
}

var (
	_ driver.RescueInterface = (*Rescue)(nil)
	_ driver.RescueFinalizer = (*Rescue)(nil)
)

// RegisterRescue adds the "agent" rescue interface.
func RegisterRescue(r *driver.Registry, o RescueOptions) error {
	if o.Client == nil {
		o.Client = agentclient.New(agentclient.DefaultOptions())
	}
	if o.HashAlgorithm == "" {
		o.HashAlgorithm = "sha256"
	}
	if err := r.Register(driver.KindRescue, "agent", &Rescue{o: o}); err != nil {
		return fmt.Errorf("register agent rescue: %w", err)
	}
	return nil
}

// Properties has no driver_info keys.
func (r *Rescue) Properties() map[string]string { return map[string]string{} }

// Steps declares none.
func (r *Rescue) Steps() []driver.StepSpec { return nil }

// Validate checks the rescuing network, the boot interface's rescue
// support and that a rescue password was given.
func (r *Rescue) Validate(ctx context.Context, task *driver.Task) error {
	if nw, ok := task.Driver.Network.(driver.RescuingNetworker); ok {
		if err := nw.ValidateRescue(ctx, task); err != nil {
			return err
		}
	}
	if bv, ok := task.Driver.Boot.(driver.RescueValidator); ok {
		if err := bv.ValidateRescue(ctx, task); err != nil {
			return err
		}
	}
	if p, _ := task.Node.InstanceInfo["rescue_password"].(string); p == "" {
		return errs.NewMessage(errs.ClassMissingParameterValue, fmt.Sprintf("Node %s is missing 'rescue_password' in instance_info", task.Node.UUID))
	}
	return nil
}

// Rescue powers off (a node that must stay on is reset at the end
// instead), leaves the tenant networks for the rescuing one, boots the
// ramdisk and waits for it (rescue wait).
func (r *Rescue) Rescue(ctx context.Context, task *driver.Task) (string, error) {
	n := task.Node
	if p, _ := n.InstanceInfo["rescue_password"].(string); p != "" {
		hashed, err := driver.HashRescuePassword(p, r.o.HashAlgorithm)
		if err != nil {
			return "", err
		}
		n.InstanceInfo["hashed_rescue_password"] = hashed
	}
	var add func(context.Context, *driver.Task) error
	if nw, ok := task.Driver.Network.(driver.RescuingNetworker); ok {
		add = nw.AddRescuingNetwork
	}
	if err := bootRamdiskFromInstance(ctx, task, add, "add rescuing network", map[string]any{}, "prepare rescue ramdisk"); err != nil {
		return "", err
	}
	return "rescue wait", nil
}

// Unrescue powers off (or resets at the end, as Rescue), tears the
// rescue down, goes back to the tenant networks and boots the instance.
func (r *Rescue) Unrescue(ctx context.Context, task *driver.Task) (string, error) {
	if !task.Node.DisablePowerOff {
		if err := ensurePoweredOff(ctx, task); err != nil {
			return "", err
		}
	}
	if err := r.CleanUp(ctx, task); err != nil {
		return "", err
	}
	if err := task.Driver.Network.ConfigureTenantNetworks(ctx, task); err != nil {
		return "", asUpstream(err, "configure tenant networks")
	}
	if err := task.Driver.Boot.PrepareInstance(ctx, task); err != nil {
		return "", asUpstream(err, "prepare instance boot")
	}
	if err := powerOnOrReboot(ctx, task); err != nil {
		return "", err
	}
	return "active", nil
}

// CleanUp drops the rescue password, the ramdisk and the rescuing
// network.
func (r *Rescue) CleanUp(ctx context.Context, task *driver.Task) error {
	delete(task.Node.InstanceInfo, "rescue_password")
	delete(task.Node.InstanceInfo, "hashed_rescue_password")
	if err := task.Driver.Boot.CleanUpRamdisk(ctx, task); err != nil {
		return asUpstream(err, "clean up rescue ramdisk")
	}
	if nw, ok := task.Driver.Network.(driver.RescuingNetworker); ok {
		if err := nw.RemoveRescuingNetwork(ctx, task); err != nil {
			return asUpstream(err, "remove rescuing network")
		}
	}
	return nil
}

// FinalizeRescue asks the agent to set up the rescue user (upstream
// _finalize_rescue); anything but SUCCEEDED fails the rescue.
func (r *Rescue) FinalizeRescue(ctx context.Context, task *driver.Task) error {
	n := task.Node
	instance := "None"
	if n.InstanceUUID != nil {
		instance = *n.InstanceUUID
	}
	res, err := r.o.Client.FinalizeRescue(ctx, targetFor(n), rescuePassword(n))
	if err != nil {
		return errs.New(errs.ClassInstanceRescueFailure, map[string]any{"node": n.UUID, "instance": instance, "reason": err.Error()})
	}
	if res == nil || res.Status != agentclient.StatusSucceeded {
		reason := "None"
		if res != nil {
			reason = agentclient.CommandError(res)
		}
		return errs.New(errs.ClassInstanceRescueFailure, map[string]any{"node": n.UUID, "instance": instance,
			"reason": fmt.Sprintf("Agent returned bad result for command finalize_rescue: %s", reason)})
	}
	return nil
}
