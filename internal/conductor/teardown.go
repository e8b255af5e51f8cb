package conductor

import (
	"context"
	"errors"
	"fmt"

	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
)

// DoNodeTearDown starts unprovisioning (upstream do_node_tear_down):
// refused for a protected node; the worker tears the instance down, then
// the node goes through (automated) cleaning towards available.
func (c *Conductor) DoNodeTearDown(ctx context.Context, _ string, nodeID string) error {
	if err := c.concurrentActionLimit(ctx, actionUnprovisioning); err != nil {
		return err
	}
	t, err := c.acquire(ctx, nodeID, "node tear down", false)
	if err != nil {
		return err
	}
	defer t.Release()
	n := t.Node
	n.InternalInfo().Delete(model.DIIAgentURL)
	if n.Protected {
		return errs.New(errs.ClassNodeProtected, map[string]any{"node": n.UUID})
	}
	if err := t.Driver.Power.Validate(ctx, t.DriverTask()); err != nil {
		if errs.Is(err, errs.ClassInvalidParameterValue) {
			return errs.NewMessage(errs.ClassInstanceDeployFailure, fmt.Sprintf("Failed to validate power driver interface. Can not delete instance. Error: %s", err))
		}
		return err
	}
	initial := n.ProvisionState
	err = t.ProcessEvent(ctx, states.EventDelete, task.EventOptions{
		Spawner: c.spawner(), ErrHandler: task.ProvisioningErrorHandler,
		Work: task.Work{Name: "_do_node_tear_down", Fn: func(ctx context.Context, t *task.Task) error {
			return c.doNodeTearDown(ctx, t, initial)
		}},
	})
	if errs.Is(err, errs.ClassInvalidState) {
		return errs.InvalidStateRequested(states.EventDelete, n.UUID, n.ProvisionState)
	}
	if err != nil {
		return err
	}
	return t.End()
}

// doNodeTearDown is upstream _do_node_tear_down: rescue clean-up when
// coming from a rescue state, console stop, deploy clean_up and
// tear_down; the instance data is dropped whatever happens; a failure
// fails the node (error) with "Failed to tear down: <error>". Then the
// allocation is deleted and cleaning starts.
func (c *Conductor) doNodeTearDown(ctx context.Context, t *task.Task, initial string) error {
	n := t.Node
	dt := t.DriverTask()
	err := func() error {
		switch initial {
		case states.RescueWait, states.Rescue, states.UnrescueFail, states.RescueFail:
			if rc, ok := t.Driver.Rescue.(driver.RescueCleaner); ok {
				if err := rc.CleanUp(ctx, dt); err != nil {
					return err
				}
			}
		}
		if n.ConsoleEnabled {
			if err := t.Driver.Console.StopConsole(ctx, dt); err != nil {
				return err
			}
		}
		if err := t.Driver.Deploy.CleanUp(ctx, dt); err != nil {
			return err
		}
		_, err := t.Driver.Deploy.TearDown(ctx, dt)
		return err
	}()
	n.InstanceInfo = map[string]any{}
	n.InstanceUUID = nil
	n.InstanceName = nil
	wipeDeployInternalInfo(n)
	n.InternalInfo().Delete(model.DIIInstance, model.DIIRootUUIDOrDiskID, model.DIIIsWholeDiskImage, model.DIIIsSourceAPath, model.DIIDeployBootMode)
	if b, _ := n.InternalInfo().Bool(model.DIIAutomaticLessee); b {
		n.Lessee = nil
		n.InternalInfo().Delete(model.DIIAutomaticLessee)
	}
	if err != nil {
		record(ctx, t, fmt.Sprintf("Failed to tear down: %s", err), states.HistoryUnprovision, true)
		if perr := t.ProcessEvent(ctx, states.EventFail, task.EventOptions{}); perr != nil {
			return errors.Join(err, perr)
		}
		return err
	}
	t.Log().InfoContext(ctx, "successfully unprovisioned node")
	if err := t.Save(ctx); err != nil {
		return err
	}
	if n.AllocationID != nil {
		if err := c.store.DeleteAllocation(ctx, *n.AllocationID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("delete allocation of node %s: %w", n.UUID, err)
		}
		if err := t.Refresh(ctx); err != nil {
			return err
		}
	}
	// After an abort from deploy hold the node is in deploy failed, where
	// upstream's clean event fails the worker; the node stays there, torn
	// down, until an undeploy cleans it.
	if n.ProvisionState != states.Deleting {
		return nil
	}
	if err := t.ProcessEvent(ctx, states.EventClean, task.EventOptions{}); err != nil {
		return err
	}
	steps, disableRamdisk, err := c.automatedCleaningRunbook(ctx, t)
	if err != nil {
		// Upstream's worker raises here and leaves the node where it is;
		// failing the cleaning says why and lets the operator retry.
		c.cleaningErrorHandler(ctx, t, err.Error(), cleanErrOpts{setFail: true})
		return nil
	}
	return c.doNodeClean(ctx, t, steps, disableRamdisk, false)
}
