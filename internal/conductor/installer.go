package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// heartbeatInstaller is upstream PXEAnacondaDeploy._heartbeat_deploy_wait:
// the installer's recorded agent_status says where it is. "start" keeps
// the deployment from timing out; "end" boots the installed instance and
// finishes the deployment; any other status fails it with the installer's
// message as last_error.
func (c *Conductor) heartbeatInstaller(ctx context.Context, t *task.Task, inst driver.InstallerDeployer) error {
	n := t.Node
	ii := n.InternalInfo()
	status, msg := ii.String(model.DIIAgentStatus), ii.String(model.DIIAgentStatusMessage)
	switch status {
	case "start":
		t.Log().InfoContext(ctx, "the installer started the deployment", "message", msg)
		now := c.clock.Now().UTC()
		n.ProvisionUpdatedAt = &now
		return t.Save(ctx)
	case "end":
		t.Log().InfoContext(ctx, "the installer ended the deployment", "message", msg)
		return c.rebootToInstance(ctx, t, inst)
	}
	t.Log().ErrorContext(ctx, "the installer failed the deployment", "status", status, "message", msg)
	c.setFailedState(ctx, t, msg)
	return nil
}

// rebootToInstance is upstream reboot_to_instance: the deployment resumes,
// the interface boots the instance, and the node goes active. Upstream
// moves the node with a bare "done" and leaves deploy_step set; here the
// deployment ends as every other does, its step records dropped.
func (c *Conductor) rebootToInstance(ctx context.Context, t *task.Task, inst driver.InstallerDeployer) error {
	n := t.Node
	if err := t.ProcessEvent(ctx, states.EventResume, task.EventOptions{}); err != nil {
		return err
	}
	if err := inst.RebootToInstance(ctx, t.DriverTask()); err != nil {
		msg := fmt.Sprintf("An error occurred after deployment, while preparing to reboot the node %s: %s", n.UUID, err)
		t.Log().ErrorContext(ctx, msg)
		c.setFailedState(ctx, t, msg)
		return nil
	}
	return c.finishDeploy(ctx, t)
}
