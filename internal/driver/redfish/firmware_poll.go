package redfish

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
)

// AsyncStepInterval is [redfish]/firmware_update_status_interval.
func (f *Firmware) AsyncStepInterval() time.Duration { return f.core.opts.FirmwareUpdateStatusInterval }

// AsyncStepPending is upstream's predicate: redfish_fw_updates is set.
func (f *Firmware) AsyncStepPending(n *model.Node) bool { return len(fwUpdates(n)) > 0 }

func (f *Firmware) now() time.Time { return f.core.opts.clock().Now().UTC() }

// elapsed is how long ago a stored start time was.
func (f *Firmware) elapsed(stored any) (time.Duration, bool) {
	s, _ := stored.(string)
	t, ok := parseStoredTime(s)
	if !ok {
		return 0, false
	}
	return f.now().Sub(t), true
}

// PollAsyncStep is upstream _check_node_redfish_firmware_update: the
// overall timeout, the wait after an update, then the task monitor of the
// current update; a finished update moves to the next image, the last one
// resumes the step.
func (f *Firmware) PollAsyncStep(ctx context.Context, task *driver.Task) (driver.AsyncStepStatus, error) {
	n := task.Node
	updates := fwUpdates(n)
	if len(updates) == 0 {
		return driver.AsyncStepRunning, nil
	}
	if err := f.checkOverallTimeout(ctx, task); err != nil {
		return driver.AsyncStepRunning, err
	}
	cur := updates[0]
	if err := f.core.withConnection(ctx, task, func(cl *client, _ DriverInfo) error {
		_, err := simpleUpdateTarget(cl)
		return err
	}); err != nil {
		// A BMC updating its own firmware is away for a while.
		task.Logger().Warn("unable to communicate with the firmware update service, trying again later",
			"node", n.UUID, "error", err)
		return driver.AsyncStepRunning, nil
	}
	if done, _ := cur[bmcUpdateCompleted].(bool); done {
		task.Logger().Info("BMC firmware update completed and the node rebooted, continuing with the next component", "node", n.UUID)
		delete(cur, bmcUpdateCompleted)
		storeUpdates(n, updates)
		return f.continueUpdates(ctx, task, updates)
	}
	// Progress is being watched: the wait timeout must not fire.
	n.ProvisionUpdatedAt = ptr(f.now())
	if start, ok := cur[fwWaitStartKey]; ok {
		wait, _ := jsonInt(cur[fwWaitKey])
		if el, ok := f.elapsed(start); !ok || el >= time.Duration(wait)*time.Second {
			delete(cur, fwWaitKey)
			delete(cur, fwWaitStartKey)
			storeUpdates(n, updates)
			return f.handleWaitCompletion(ctx, task, updates)
		}
		return driver.AsyncStepRunning, nil
	}
	return f.handleUpdateTask(ctx, task, updates)
}

// checkOverallTimeout is upstream _check_overall_timeout.
func (f *Firmware) checkOverallTimeout(ctx context.Context, task *driver.Task) error {
	n := task.Node
	limit := f.core.opts.FirmwareUpdateOverallTimeout
	if limit <= 0 {
		return nil
	}
	el, ok := f.elapsed(n.InternalInfo().Get(fwUpdateStartKey))
	if !ok || el < limit {
		return nil
	}
	f.clearUpdates(ctx, task)
	return stepError("Firmware update on node %s has exceeded the overall timeout of %d seconds. Elapsed time: %d seconds.",
		n.UUID, int(limit/time.Second), int(el/time.Second))
}

// clearUpdates is upstream _clear_updates: the staged images are cleaned
// up with the update state.
func (f *Firmware) clearUpdates(ctx context.Context, task *driver.Task) {
	n := task.Node
	f.cleanupFirmware(ctx, task)
	for _, k := range []string{fwUpdatesKey, fwUpdateStartKey, fwCleanupKey, bmcVersionBeforeKey, fwRebootRequestedKey} {
		n.InternalInfo().Delete(k)
	}
}

// reboot is node_power_action(REBOOT) with the update's power timeout.
func (f *Firmware) reboot(ctx context.Context, task *driver.Task, upd map[string]any) error {
	secs, _ := jsonInt(upd[fwPowerTimeoutKey])
	return rebootNode(ctx, task, time.Duration(secs)*time.Second)
}

// handleUpdateTask is upstream _handle_firmware_update_task.
func (f *Firmware) handleUpdateTask(ctx context.Context, task *driver.Task, updates []map[string]any) (driver.AsyncStepStatus, error) {
	n := task.Node
	cur := updates[0]
	imageURL, _ := cur["url"].(string)
	comp, _ := cur["component"].(string)
	ctype := componentType(comp)
	monitor, _ := cur[fwTaskMonitorKey].(string)
	var info *taskInfo
	err := f.core.withConnection(ctx, task, func(cl *client, _ DriverInfo) error {
		var err error
		info, err = getTaskMonitor(cl, monitor)
		return err
	})
	switch {
	case err != nil && isConnectionError(err):
		task.Logger().Warn("unable to communicate with the task monitor service, trying again later", "node", n.UUID, "error", err)
		return driver.AsyncStepRunning, nil
	case err != nil && isGone(err):
		task.Logger().Warn("firmware update completed, but success of the update is unknown; assuming it was successful",
			"node", n.UUID, "firmware_image", imageURL)
		if ctype == componentBIOS && cur[biosRebootTriggered] != true {
			// No BMC job queue to ask: staging is taken to have worked
			// and the reboot applies it.
			cur[biosRebootTriggered] = true
			storeUpdates(n, updates)
			return driver.AsyncStepRunning, f.reboot(ctx, task, cur)
		}
		return f.continueUpdates(ctx, task, updates)
	case err != nil:
		task.Logger().Warn("unable to get the firmware update task, trying again later", "node", n.UUID, "error", err)
		return driver.AsyncStepRunning, nil
	}
	if !info.inProgress() && !info.processing {
		return f.handleTaskCompletion(ctx, task, updates, info)
	}
	if ctype == componentBIOS && cur[biosRebootTriggered] != true &&
		(info.state == taskStateStarting || info.state == taskStateRunning || info.state == taskStatePending) {
		task.Logger().Info("BIOS firmware update task has started, rebooting to apply the update", "node", n.UUID, "state", info.state)
		cur[biosRebootTriggered] = true
		storeUpdates(n, updates)
		return driver.AsyncStepRunning, f.reboot(ctx, task, cur)
	}
	if ctype == componentNIC {
		return f.handleNICStarting(ctx, task, updates, info)
	}
	task.Logger().Debug("firmware update in progress", "node", n.UUID, "firmware_image", imageURL)
	return driver.AsyncStepRunning, nil
}

// handleNICStarting is upstream _handle_nic_task_starting: a NIC whose
// update runs is rebooted once it completes; one that stays Starting for
// firmware_update_nic_starting_wait needs the reboot to start at all.
func (f *Firmware) handleNICStarting(ctx context.Context, task *driver.Task, updates []map[string]any, info *taskInfo) (driver.AsyncStepStatus, error) {
	n := task.Node
	cur := updates[0]
	switch info.state {
	case taskStateRunning:
		delete(cur, nicStartingTimestamp)
		delete(cur, nicRebootTriggered)
		cur[nicNeedsPostReboot] = true
		storeUpdates(n, updates)
	case taskStateStarting:
		if cur[nicRebootTriggered] == true {
			return driver.AsyncStepRunning, nil
		}
		started, ok := cur[nicStartingTimestamp]
		if !ok {
			cur[nicStartingTimestamp] = pyISOTime(f.now())
			storeUpdates(n, updates)
			task.Logger().Debug("NIC firmware update task is starting, waiting to see whether it needs a reboot", "node", n.UUID)
			return driver.AsyncStepRunning, nil
		}
		if el, ok := f.elapsed(started); ok && el < f.core.opts.FirmwareUpdateNICStartingWait {
			return driver.AsyncStepRunning, nil
		}
		task.Logger().Info("NIC firmware update task stayed in Starting, rebooting to start the update", "node", n.UUID)
		cur[nicRebootTriggered] = true
		delete(cur, nicStartingTimestamp)
		storeUpdates(n, updates)
		return driver.AsyncStepRunning, f.reboot(ctx, task, cur)
	}
	return driver.AsyncStepRunning, nil
}

// handleTaskCompletion is upstream _handle_task_completion: a failed task
// fails the step with the BMC's messages.
func (f *Firmware) handleTaskCompletion(ctx context.Context, task *driver.Task, updates []map[string]any, info *taskInfo) (driver.AsyncStepStatus, error) {
	n := task.Node
	cur := updates[0]
	imageURL, _ := cur["url"].(string)
	if !info.succeeded() {
		f.clearUpdates(ctx, task)
		return driver.AsyncStepRunning, stepError("Firmware update failed for node %s, firmware %s. Error: %s",
			n.UUID, imageURL, strings.Join(info.messages, ",  "))
	}
	task.Logger().Debug("redfish task completed", "node", n.UUID, "firmware_image", imageURL, "messages", strings.Join(info.messages, ", "))
	comp, _ := cur["component"].(string)
	switch componentType(comp) {
	case componentBMC:
		return f.handleBMCCompletion(ctx, task, updates)
	case componentNIC:
		f.nicCompleted(n, cur)
	case componentBIOS:
		if cur[biosRebootTriggered] != true {
			// Some BMCs finish staging before the first poll: the
			// reboot that applies the firmware happens now.
			task.Logger().Info("BIOS firmware update task completed before the reboot, rebooting now", "node", n.UUID)
			cur[biosRebootTriggered] = true
			storeUpdates(n, updates)
			return driver.AsyncStepRunning, f.reboot(ctx, task, cur)
		}
		delete(cur, biosRebootTriggered)
	}
	return f.continueUpdates(ctx, task, updates)
}

// nicCompleted is upstream _handle_nic_update_completion: unless the
// reboot already happened while the task started, one is requested.
func (f *Firmware) nicCompleted(n *model.Node, cur map[string]any) {
	if cur[nicRebootTriggered] != true {
		n.InternalInfo().Set(fwRebootRequestedKey, true)
	}
	delete(cur, nicNeedsPostReboot)
	delete(cur, nicStartingTimestamp)
	delete(cur, nicRebootTriggered)
}

// handleWaitCompletion is upstream _handle_wait_completion.
func (f *Firmware) handleWaitCompletion(ctx context.Context, task *driver.Task, updates []map[string]any) (driver.AsyncStepStatus, error) {
	n := task.Node
	cur := updates[0]
	if checking, _ := cur[bmcVersionChecking].(bool); checking {
		delete(cur, bmcVersionChecking)
		storeUpdates(n, updates)
		return f.handleBMCCompletion(ctx, task, updates)
	}
	if cur[fwComponentTypeKey] == componentBMC {
		monitor, _ := cur[fwTaskMonitorKey].(string)
		var info *taskInfo
		err := f.core.withConnection(ctx, task, func(cl *client, _ DriverInfo) error {
			var err error
			info, err = getTaskMonitor(cl, monitor)
			return err
		})
		if err == nil && info.processing {
			task.Logger().Debug("BMC firmware update wait expired but the task is still processing", "node", n.UUID)
			return driver.AsyncStepRunning, nil
		}
		if err == nil && !info.succeeded() {
			f.clearUpdates(ctx, task)
			imageURL, _ := cur["url"].(string)
			return driver.AsyncStepRunning, stepError("Firmware update failed for node %s, firmware %s. Error: %s",
				n.UUID, imageURL, strings.Join(info.messages, ",  "))
		}
		return f.handleBMCCompletion(ctx, task, updates)
	}
	if comp, _ := cur["component"].(string); len(updates) == 1 && componentType(comp) == "" {
		n.InternalInfo().Set(fwRebootRequestedKey, true)
	}
	return f.continueUpdates(ctx, task, updates)
}

// handleBMCCompletion is upstream _handle_bmc_update_completion: the BMC
// update is done when its version changed; without a change after the
// wait, the node reboots at the end (unless the version is readable and
// the same: a no-op update).
func (f *Firmware) handleBMCCompletion(ctx context.Context, task *driver.Task, updates []map[string]any) (driver.AsyncStepStatus, error) {
	n := task.Node
	cur := updates[0]
	current, readable := f.bmcFirmwareVersion(ctx, task)
	before, hadBefore := n.InternalInfo().Get(bmcVersionBeforeKey).(string)
	if readable && hadBefore && current != before {
		n.InternalInfo().Delete(bmcVersionBeforeKey)
		if len(updates) > 1 {
			// Some hardware applies NIC firmware only after the host
			// rebooted following a BMC update.
			task.Logger().Info("BMC firmware update complete, rebooting before the next component", "node", n.UUID)
			cur[bmcUpdateCompleted] = true
			storeUpdates(n, updates)
			return driver.AsyncStepRunning, rebootNode(ctx, task, 0)
		}
		task.Logger().Info("BMC firmware version changed, update complete", "node", n.UUID, "old", before, "new", current)
		return f.continueUpdates(ctx, task, updates)
	}
	if el, ok := f.elapsed(cur[bmcCheckStartTime]); ok {
		limit := f.core.opts.FirmwareUpdateRebootDelay
		if w, ok := jsonInt(cur[fwWaitKey]); ok {
			limit = time.Duration(w) * time.Second
		}
		if el >= limit {
			if readable && hadBefore && current == before {
				task.Logger().Info("BMC firmware version did not change, continuing without reboot", "node", n.UUID, "version", current)
			} else {
				task.Logger().Warn("BMC firmware version check timed out, will reboot to complete the update", "node", n.UUID)
				n.InternalInfo().Set(fwRebootRequestedKey, true)
				setAsyncStepFlags(n, ptr(true), nil, ptr(true))
			}
			n.InternalInfo().Delete(bmcVersionBeforeKey)
			return f.continueUpdates(ctx, task, updates)
		}
	}
	cur[fwWaitKey] = int(f.core.opts.FirmwareUpdateBMCVersionCheckInterval / time.Second)
	cur[fwWaitStartKey] = pyISOTime(f.now())
	cur[bmcVersionChecking] = true
	storeUpdates(n, updates)
	return driver.AsyncStepRunning, nil
}

// continueUpdates is upstream _continue_updates: wait if the update asks
// for it; after the last image, reboot if requested, check the BMC is
// stable and resume the step; otherwise start the next image.
func (f *Firmware) continueUpdates(ctx context.Context, task *driver.Task, updates []map[string]any) (driver.AsyncStepStatus, error) {
	n := task.Node
	cur := updates[0]
	if wait, _ := jsonInt(cur[fwWaitKey]); wait > 0 {
		cur[fwWaitStartKey] = pyISOTime(f.now())
		storeUpdates(n, updates)
		return driver.AsyncStepRunning, nil
	}
	if len(updates) == 1 {
		rebootRequested, _ := n.InternalInfo().Bool(fwRebootRequestedKey)
		f.clearUpdates(ctx, task)
		task.Logger().Info("firmware updates completed", "node", n.UUID)
		if rebootRequested {
			if err := f.reboot(ctx, task, cur); err != nil {
				return driver.AsyncStepRunning, err
			}
		}
		if err := f.validateResourcesStability(ctx, task); err != nil {
			return driver.AsyncStepRunning, err
		}
		return driver.AsyncStepDone, nil
	}
	if err := f.validateResourcesStability(ctx, task); err != nil {
		return driver.AsyncStepRunning, err
	}
	rest := updates[1:]
	if err := f.executeUpdate(ctx, task, rest); err != nil {
		return driver.AsyncStepRunning, err
	}
	if reboot, ok := n.InternalInfo().Get(flagsOf(n).reboot).(bool); !ok || reboot {
		return driver.AsyncStepRunning, f.reboot(ctx, task, rest[0])
	}
	task.Logger().Debug("component requested no immediate reboot, polling", "node", n.UUID)
	return driver.AsyncStepRunning, nil
}

// validateResourcesStability is upstream _validate_resources_stability:
// the system, its manager and chassis must answer a number of times in a
// row before the next update or the end of the step.
func (f *Firmware) validateResourcesStability(ctx context.Context, task *driver.Task) error {
	o := f.core.opts
	if o.FirmwareUpdateRequiredSuccesses == 0 || o.FirmwareUpdateResourceValidationTimeout == 0 {
		task.Logger().Info("BMC resource validation disabled", "node", task.Node.UUID)
		return nil
	}
	clock := o.clock()
	end := clock.Now().Add(o.FirmwareUpdateResourceValidationTimeout)
	successes := 0
	var last error
	for clock.Now().Before(end) {
		err := f.core.withConnection(ctx, task, func(cl *client, info DriverInfo) error {
			sys, err := fetchSystem(cl, info)
			if err != nil {
				return err
			}
			if _, err := sys.manager(); err != nil {
				return err
			}
			_, err = sys.chassis()
			return err
		})
		if err == nil {
			successes++
			if successes >= o.FirmwareUpdateRequiredSuccesses {
				return nil
			}
		} else {
			successes, last = 0, err
		}
		if err := clock.Sleep(ctx, o.FirmwareUpdateValidationInterval); err != nil {
			return fmt.Errorf("validate BMC resources of node %s: %w", task.Node.UUID, err)
		}
	}
	msg := fmt.Sprintf("BMC resources failed to stabilize within %d seconds for node %s",
		int(o.FirmwareUpdateResourceValidationTimeout/time.Second), task.Node.UUID)
	if last != nil {
		msg += ", last error: " + errText(last)
	}
	return redfishError(msg)
}

// AsyncStepFailInterval is [redfish]/firmware_update_fail_interval.
func (f *Firmware) AsyncStepFailInterval() time.Duration {
	return f.core.opts.FirmwareUpdateFailInterval
}

// DiscardAsyncStep is upstream _query_update_failed: the remaining updates
// are dropped.
func (f *Firmware) DiscardAsyncStep(ctx context.Context, task *driver.Task) error {
	task.Logger().Error("firmware update failed, discarding remaining firmware updates", "node", task.Node.UUID)
	f.clearUpdates(ctx, task)
	return nil
}
