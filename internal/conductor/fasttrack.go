package conductor

import (
	"context"
	"fmt"
	"time"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
)

// fastTrack is [deploy]/fast_track on the conductor's clock, the one
// heartbeats are stamped with.
func (c *Conductor) fastTrack() driver.FastTrack {
	return driver.FastTrack{
		Enabled: c.cfg.BoolOf(config.DeployFastTrack),
		Timeout: time.Duration(c.cfg.IntOf(config.DeployFastTrackTimeout)) * time.Second,
		Now:     c.clock.Now,
	}
}

// keepAgentIfFastTrack runs wipe, keeping the agent's URL, token and
// certificate when fast track applies to the node (upstream
// wipe_<flow>_internal_info skip wipe_token_and_url when fast_track_able),
// so the next operation can reach the running ramdisk.
func (c *Conductor) keepAgentIfFastTrack(ctx context.Context, t *task.Task, wipe func()) {
	n := t.Node
	if !c.fastTrack().Able(ctx, t.DriverTask()) {
		wipe()
		return
	}
	kept := map[string]any{}
	for _, k := range []string{model.DIIAgentSecretToken, model.DIIAgentSecretTokenPregenerated, model.DIIAgentURL, model.DIIAgentVerifyCA} {
		if v, ok := n.InternalInfo().Lookup(k); ok {
			kept[k] = v
		}
	}
	wipe()
	for k, v := range kept {
		n.InternalInfo().Set(k, v)
	}
}

// validateAgentDeploySteps is upstream deployments.validate_deploy_steps,
// run once the agent has reported its deploy steps: the user's and the
// templates' steps are validated against them, and the deploy step list
// is computed again with them, keeping the current step and index.
func (c *Conductor) validateAgentDeploySteps(ctx context.Context, t *task.Task) error {
	if err := c.validateUserDeploySteps(ctx, t, nil, false); err != nil {
		return err
	}
	list, err := c.deploymentSteps(ctx, t, false)
	if err != nil {
		return err
	}
	t.Node.InternalInfo().Set(model.DIIDeploySteps, stepsValue(list))
	return nil
}

// fastTrackStepsFailed: a deploy step that fetched the running agent's
// steps without a reboot (a fast-track deploy) leaves them unvalidated;
// they are validated and merged into the step list before the next step,
// as continue_node_deploy does after a first heartbeat. True when that
// failed and the deployment was failed.
func (c *Conductor) fastTrackStepsFailed(ctx context.Context, t *task.Task, f *stepFlow) bool {
	n := t.Node
	if f.kind != driver.StepDeploy || n.InternalInfo().BoolOr(model.DIIStepsValidated, false) || n.InternalInfo().Get(model.DIIAgentCachedDeploySteps) == nil {
		return false
	}
	if err := c.validateAgentDeploySteps(ctx, t); err != nil {
		c.deployingErrorHandler(ctx, t, fmt.Sprintf("Failed to validate the final deploy steps list for node %s: %s", n.UUID, err), "", true)
		return true
	}
	n.InternalInfo().Set(model.DIIStepsValidated, true)
	return false
}
