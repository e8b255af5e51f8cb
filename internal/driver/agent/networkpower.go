package agent

import (
	"context"

	"github.com/openkeel/ironic/internal/driver"
)

// A Smart NIC's ports are configured by the Neutron agent running on the
// NIC, which only runs while the node is powered: upstream's
// power_state_for_network_configuration powers such a node on (to its
// firmware setup, so that nothing boots) around a network change, then
// waits twice the agent's polling interval ([agent]/
// neutron_agent_poll_interval) for the agent to apply the change before
// powering it back off.

// withNetworkPower runs fn, the network change, with the node powered on
// when its network interface needs it, restoring the power state after.
// As upstream's context manager, a failed change leaves the power as it
// is.
func (b *base) withNetworkPower(ctx context.Context, task *driver.Task, fn func() error) error {
	restore, err := powerOnIfNeeded(ctx, task)
	if err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	return b.restorePowerIfNeeded(ctx, task, restore)
}

// powerOnIfNeeded is upstream's power_on_node_if_needed: a node that is
// off while its network interface needs it on is set to boot to its
// firmware once and powered on. It returns the state to restore, "" when
// nothing changed.
func powerOnIfNeeded(ctx context.Context, task *driver.Task) (string, error) {
	pn, ok := task.Driver.Network.(driver.NetworkPowerNeeder)
	if !ok || !pn.NeedPowerOn(ctx, task) {
		return "", nil
	}
	current, err := task.Driver.Power.GetPowerState(ctx, task)
	if err != nil {
		return "", asUpstream(err, "get power state")
	}
	if current != "power off" {
		return "", nil
	}
	if err := task.Driver.Management.SetBootDevice(ctx, task, "bios", false); err != nil {
		return "", asUpstream(err, "set boot device")
	}
	if err := ensurePoweredOn(ctx, task, "power on"); err != nil {
		return "", err
	}
	return current, nil
}

// restorePowerIfNeeded is upstream's restore_power_state_if_needed: after
// twice [agent]/neutron_agent_poll_interval, the node goes back to the
// state powerOnIfNeeded found it in.
func (b *base) restorePowerIfNeeded(ctx context.Context, task *driver.Task, restore string) error {
	if restore == "" {
		return nil
	}
	if err := b.opts.clock().Sleep(ctx, 2*b.opts.NeutronAgentPollInterval); err != nil {
		return err
	}
	return ensurePoweredOff(ctx, task)
}
