package conductor

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// The step execution loop shared by cleaning, deployment and servicing
// (upstream do_next_clean_step, do_next_deploy_step, do_next_service_step):
// the step list lives in driver_internal_info["<kind>_steps"], the index
// of the running step in "<kind>_step_index" and the step itself in
// node.<kind>_step. A step that returns nothing is done; one that returns
// the flow's wait state continues asynchronously (the driver calls
// continue_node_<kind> when it is done); an error fails the flow. What
// differs between the flows is their stepFlow (flow.go).

// collectRamdiskLogs is upstream driver_utils.collect_ramdisk_logs for
// agent-based deploy interfaces: it runs before the error handler tears
// the ramdisk down.
func (c *Conductor) collectRamdiskLogs(ctx context.Context, t *task.Task, label string) {
	if lc, ok := t.Driver.Deploy.(driver.RamdiskLogCollector); ok {
		lc.CollectRamdiskLogs(ctx, t.DriverTask(), label)
	}
}

// collectRamdiskLogsAlways collects at the successful end of a flow when
// [agent]/deploy_logs_collect is always.
func (c *Conductor) collectRamdiskLogsAlways(ctx context.Context, t *task.Task, label string) {
	if lc, ok := t.Driver.Deploy.(driver.RamdiskLogCollector); ok && lc.DeployLogsCollect() == agentclient.LogsAlways {
		lc.CollectRamdiskLogs(ctx, t.DriverTask(), label)
	}
}

// stepID is upstream's step_id: "<interface>.<step>".
func stepID(step map[string]any) string {
	i, _ := step["interface"].(string)
	s, _ := step["step"].(string)
	return i + "." + s
}

// runSteps executes the flow's steps from index on (none when index < 0),
// then finishes the flow.
func (c *Conductor) runSteps(ctx context.Context, t *task.Task, f *stepFlow, index int) error {
	n := t.Node
	for index >= 0 {
		steps := n.InternalInfo().Steps(f.stepsKey)
		if index >= len(steps) {
			break
		}
		step := cloneMap(steps[index])
		*f.current(n) = step
		n.InternalInfo().Set(f.indexKey, index)
		if err := t.Save(ctx); err != nil {
			return err
		}
		n.InternalInfo().Delete(f.pollKey)
		t.Log().InfoContext(ctx, "executing step", "kind", f.kind, "step", stepID(step), "index", index)
		var (
			handled, exit bool
			result        string
			err           error
		)
		if executeOnChildNodes(step) {
			handled = true
			result, err = c.executeStepOnChildNodes(ctx, t, f, step)
		} else {
			handled, exit, result, err = c.reservedStep(ctx, t, f, step)
		}
		if err == nil && !handled {
			result, err = c.executeStep(ctx, t, f.kind, step)
		}
		if err != nil {
			c.flowAborted(ctx, t, f, step)
			f.failStep(ctx, t, step, err)
			return nil
		}
		if exit {
			return nil
		}
		if f.failedInPlace != "" && n.ProvisionState == f.failedInPlace {
			return nil
		}
		switch result {
		case "":
			if f.afterStep != nil && f.afterStep(ctx, t) {
				return nil
			}
		case f.waitState:
			t.Log().InfoContext(ctx, "step being executed asynchronously, waiting for driver", "step", stepID(step))
			if n.ProvisionState != f.waitState {
				return f.event(ctx, t, states.EventWait)
			}
			return nil
		default:
			f.failInvalid(ctx, t, step, result)
			return nil
		}
		index++
	}
	return f.finish(ctx, t)
}

// executeStep runs a driver step on the interface it names.
func (c *Conductor) executeStep(ctx context.Context, t *task.Task, kind driver.StepKind, step map[string]any) (string, error) {
	ifaceName, _ := step["interface"].(string)
	name, _ := step["step"].(string)
	impl := t.Driver.Get(driver.Kind(ifaceName))
	if impl == nil {
		return "", fmt.Errorf("node has no %s interface", ifaceName)
	}
	args, _ := step["args"].(map[string]any)
	ds := driver.Step{Kind: kind, Interface: driver.Kind(ifaceName), Name: name, Args: args}
	if x, ok := impl.(driver.AgentStepper); ok {
		return x.ExecuteStep(ctx, t.DriverTask(), ds)
	}
	result, err := driver.ExecuteStep(ctx, t.DriverTask(), impl, ds)
	return c.afterBIOSStep(ctx, t, ds, result, err)
}

// reservedStep handles the step names the conductor resolves itself
// (upstream use_reserved_step_handler): power_on, power_off and reboot run
// a power action; hold moves the node to the hold state and stops; wait
// moves it to the wait state and stops, or with a "seconds" argument waits
// that long (at most [conductor]/max_conductor_wait_step_seconds) and
// resumes.
func (c *Conductor) reservedStep(ctx context.Context, t *task.Task, f *stepFlow, step map[string]any) (handled, exit bool, result string, err error) {
	name, _ := step["step"].(string)
	power := map[string]string{"power_on": states.PowerOn, "power_off": states.PowerOff, "reboot": states.Reboot}
	if st, ok := power[name]; ok {
		return true, false, "", c.nodePowerAction(ctx, t, st, 0)
	}
	switch name {
	case "hold":
		return true, true, "", f.event(ctx, t, states.EventHold)
	case "wait":
		if err := f.event(ctx, t, states.EventWait); err != nil {
			return true, true, "", err
		}
		args, _ := step["args"].(map[string]any)
		raw, ok := args["seconds"]
		if !ok {
			return true, true, "", nil
		}
		secs, err := strconv.Atoi(fmt.Sprint(raw))
		if err != nil {
			return true, true, "", fmt.Errorf("invalid wait seconds %v: %w", raw, err)
		}
		maxSecs := c.cfg.IntOf(config.ConductorMaxConductorWaitStepSeconds)
		if secs > maxSecs {
			warning := fmt.Sprintf("A wait time exceeding the configured maximum has been requested. Holding for %d, got %d.", secs, maxSecs)
			record(ctx, t, warning, t.Node.ProvisionState, false)
			secs = maxSecs
		}
		if err := c.clock.Sleep(ctx, time.Duration(secs)*time.Second); err != nil {
			return true, true, "", err
		}
		// Upstream stops the loop here after resuming; continuing with the
		// next step is what a timed wait is for.
		return true, false, "", f.event(ctx, t, states.EventResume)
	}
	return false, false, "", nil
}

// nextStepIndex is upstream update_next_step_index: the index of the step
// to run after an asynchronous one, -1 when none is left. The current step
// is skipped unless the driver set skip_current_<kind>_step to false.
func nextStepIndex(n *model.Node, f *stepFlow) int {
	skip := n.InternalInfo().BoolOr(f.skipKey, true)
	n.InternalInfo().Delete(f.skipKey, f.rebootKey, f.pollKey)
	if len(*f.current(n)) == 0 {
		return 0
	}
	ind, ok := n.InternalInfo().Int(f.indexKey)
	if !ok {
		return -1
	}
	if skip {
		ind++
	}
	if ind >= len(n.InternalInfo().Steps(f.stepsKey)) {
		return -1
	}
	return ind
}
