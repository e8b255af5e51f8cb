package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/clock"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// DefaultPowerWait is how long a reboot through the agent waits for the
// ramdisk to go down (upstream's _POWER_WAIT).
const DefaultPowerWait = 30 * time.Second

// PowerOptions configure the agent power interface.
type PowerOptions struct {
	Client *agentclient.Client
	// FastTrack is [deploy]/fast_track and fast_track_timeout: the
	// interface only works on a fast-track node whose agent is alive.
	FastTrack driver.FastTrack
	// Wait is the pause after the reboot command; zero is
	// DefaultPowerWait.
	Wait time.Duration
}

// Power is upstream AgentPower: the running agent is the only power
// control. The node is on while its agent heartbeats, and the one action
// is a soft reboot, which the agent performs by shutting its ramdisk
// down (standby.run_image).
//
// Upstream then waits for the agent to come back when the node is in
// DEPLOYING or CLEANING with a reboot flag set, releasing the lock so
// heartbeats get through. That wait reads the command status from the
// node it just removed agent_url from and so can only time out; the flows
// here resume from the rebooted agent's next heartbeat instead, and the
// wait is not reproduced.
type Power struct {
	opts PowerOptions
}

var (
	_ driver.PowerInterface = (*Power)(nil)
	_ driver.PowerSyncer    = (*Power)(nil)
)

// NewPower returns the agent power interface.
func NewPower(o PowerOptions) *Power {
	if o.Client == nil {
		o.Client = agentclient.New(agentclient.DefaultOptions())
	}
	if o.Wait == 0 {
		o.Wait = DefaultPowerWait
	}
	return &Power{opts: o}
}

// RegisterPower adds the agent power interface to r.
func RegisterPower(r *driver.Registry, o PowerOptions) error {
	if err := r.Register(driver.KindPower, "agent", NewPower(o)); err != nil {
		return fmt.Errorf("register agent power: %w", err)
	}
	return nil
}

// Properties: nothing is read from driver_info.
func (p *Power) Properties() map[string]string { return map[string]string{} }

// Steps: the interface declares none.
func (p *Power) Steps() []driver.StepSpec { return nil }

// Validate requires fast track on the node and a live agent.
func (p *Power) Validate(_ context.Context, task *driver.Task) error {
	on, err := p.opts.FastTrack.EnabledFor(task.Node)
	if err != nil {
		return err
	}
	if !on {
		return driver.InvalidParameterValue("Fast track mode must be enabled to use the agent power interface")
	}
	if !p.opts.FastTrack.AgentAlive(task.Node) {
		return driver.InvalidParameterValue("Agent seems offline for node %s, the agent power interface cannot be used", task.Node.UUID)
	}
	return nil
}

// SupportsPowerSync is false: the node cannot be powered on or off to
// match the database.
func (p *Power) SupportsPowerSync(context.Context, *driver.Task) bool { return false }

// GetSupportedPowerStates lists the reboots only.
func (p *Power) GetSupportedPowerStates(context.Context, *driver.Task) ([]string, error) {
	return []string{states.Reboot, states.SoftReboot}, nil
}

// GetPowerState is power on while the agent is alive, None (NoState)
// otherwise.
func (p *Power) GetPowerState(ctx context.Context, task *driver.Task) (string, error) {
	if p.opts.FastTrack.AgentAlive(task.Node) {
		return states.PowerOn, nil
	}
	task.Logger().ErrorContext(ctx, `node is not fast-track-able, cannot determine its power state via the "agent" power interface`, "node", task.Node.UUID)
	return states.NoState, nil
}

// SetPowerState reboots; every other state fails as upstream's does.
func (p *Power) SetPowerState(ctx context.Context, task *driver.Task, state string, timeout time.Duration) error {
	if state == states.Reboot || state == states.SoftReboot {
		return p.Reboot(ctx, task, timeout)
	}
	task.Logger().ErrorContext(ctx, `power state is not implemented by the "agent" power interface`, "node", task.Node.UUID, "state", state)
	return errs.New(errs.ClassPowerStateFailure, map[string]any{"pstate": state})
}

// Reboot asks the agent to reboot, forgets its URL and token (the new
// ramdisk gets new ones at lookup, unless the token was pregenerated),
// then gives the ramdisk time to go down.
func (p *Power) Reboot(ctx context.Context, task *driver.Task, _ time.Duration) error {
	n := task.Node
	if _, err := p.opts.Client.Reboot(ctx, targetFor(n)); err != nil {
		return err
	}
	if pre, _ := n.InternalInfo().Bool(model.DIIAgentSecretTokenPregenerated); !pre {
		n.InternalInfo().Delete(model.DIIAgentSecretToken)
	}
	n.InternalInfo().Delete(model.DIIAgentURL)
	task.Logger().DebugContext(ctx, "requested reboot via the agent, waiting for the node to power down", "node", n.UUID, "wait", p.opts.Wait)
	if err := clock.Sleep(ctx, p.opts.Wait); err != nil {
		return fmt.Errorf("waiting for node %s to reboot through its agent: %w", n.UUID, err)
	}
	return nil
}
