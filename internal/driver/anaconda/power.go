package anaconda

import (
	"context"
	"fmt"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// powerOff is upstream's node_power_action(POWER_OFF): refused for a node
// that must stay on, skipped for one already off. Any agent the node ran
// is forgotten with the power action; a pregenerated token (the
// installer's, in its kickstart) stays.
func powerOff(ctx context.Context, task *driver.Task) error {
	n := task.Node
	if n.DisablePowerOff {
		return errs.New(errs.ClassPowerStateFailure, map[string]any{"pstate": "power off"})
	}
	return setPower(ctx, task, "power off")
}

// powerOn is node_power_action(POWER_ON).
func powerOn(ctx context.Context, task *driver.Task) error { return setPower(ctx, task, "power on") }

func setPower(ctx context.Context, task *driver.Task, state string) error {
	n := task.Node
	cur, err := task.Driver.Power.GetPowerState(ctx, task)
	if err != nil {
		return err
	}
	ii := n.InternalInfo()
	ii.Delete(model.DIIAgentURL, model.DIIAgentCachedDeploySteps, model.DIIAgentCachedCleanSteps, model.DIIAgentVerifyCA, model.DIIAgentStartAttempted)
	if !ii.AgentTokenPregenerated() {
		ii.Delete(model.DIIAgentSecretToken)
	}
	if cur != state {
		if err := task.Driver.Power.SetPowerState(ctx, task, state, 0); err != nil {
			return err
		}
	}
	n.PowerState = state
	return nil
}

// withNetworkPower is upstream power_state_for_network_configuration: a
// network interface that configures ports only on a running node gets
// the node powered on for fn, and off again after.
func withNetworkPower(ctx context.Context, task *driver.Task, fn func() error) error {
	pn, ok := task.Driver.Network.(driver.NetworkPowerNeeder)
	if !ok || !pn.NeedPowerOn(ctx, task) {
		return fn()
	}
	if err := powerOn(ctx, task); err != nil {
		return err
	}
	if err := fn(); err != nil {
		return err
	}
	return powerOff(ctx, task)
}

// configureSecureBoot is upstream configure_secure_boot_if_needed: with
// the secure_boot capability requested, UEFI secure boot is turned on; a
// management interface without secure boot support is left alone.
func configureSecureBoot(ctx context.Context, task *driver.Task) error {
	if !strings.EqualFold(driver.Capability(task.Node.InstanceInfo["capabilities"], "secure_boot"), "true") {
		return nil
	}
	sb, ok := task.Driver.Management.(driver.SecureBootManager)
	if !ok {
		task.Logger().DebugContext(ctx, "secure boot requested but the management interface does not support it", "node", task.Node.UUID)
		return nil
	}
	if err := sb.SetSecureBootState(ctx, task, true); err != nil {
		return fmt.Errorf("enable secure boot: %w", err)
	}
	return nil
}
