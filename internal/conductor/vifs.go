package conductor

import (
	"context"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
)

// VifAttach attaches a VIF through the network interface (upstream
// vif_attach).
func (c *Conductor) VifAttach(ctx context.Context, _ string, nodeID string, vifInfo map[string]any) error {
	t, err := c.acquire(ctx, nodeID, "attach vif", false)
	if err != nil {
		return err
	}
	defer t.Release()
	dt := t.DriverTask()
	if err := t.Driver.Network.Validate(ctx, dt); err != nil {
		return err
	}
	// A failure is recorded in the node's history, as upstream; the node
	// itself is not saved, so last_error keeps its value.
	if err := t.Driver.Network.VifAttach(ctx, dt, vifInfo); err != nil {
		vif, _ := vifInfo["id"].(string)
		record(ctx, t, fmt.Sprintf("Failed to attach VIF %s to node %s. Error: %s", vif, nodeID, err), t.Node.ProvisionState, true)
		return err
	}
	return nil
}

// VifDetach detaches a VIF (upstream vif_detach).
func (c *Conductor) VifDetach(ctx context.Context, _ string, nodeID, vifID string) error {
	t, err := c.acquire(ctx, nodeID, "detach vif", false)
	if err != nil {
		return err
	}
	defer t.Release()
	dt := t.DriverTask()
	if err := t.Driver.Network.Validate(ctx, dt); err != nil {
		return err
	}
	return t.Driver.Network.VifDetach(ctx, dt, vifID)
}

// VifList lists the node's VIFs (upstream vif_list, shared lock).
func (c *Conductor) VifList(ctx context.Context, _ string, nodeID string) ([]map[string]any, error) {
	t, err := c.tasks.Acquire(ctx, nodeID, task.AcquireOptions{Shared: true, Purpose: "list vifs"})
	if err != nil {
		return nil, err
	}
	defer t.Release()
	dt := t.DriverTask()
	if err := t.Driver.Network.Validate(ctx, dt); err != nil {
		return nil, err
	}
	return t.Driver.Network.VifList(ctx, dt)
}
