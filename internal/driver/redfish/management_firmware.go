package redfish

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// The management interface's update_firmware step (deprecated upstream in
// favour of the firmware interface): each image goes to SimpleUpdate in
// turn with a reboot, followed through driver_internal_info
// firmware_updates by the conductor's periodic.

const mgmtFirmwareUpdatesKey = model.DIIFirmwareUpdates

var (
	_ driver.AsyncStepPoller    = (*Management)(nil)
	_ driver.AsyncStepDiscarder = (*Management)(nil)
)

// validateFirmwareImages is upstream's update_firmware schema: a list of
// {url, checksum[, wait][, source]}.
func validateFirmwareImages(images []map[string]any) error {
	fail := func(format string, a ...any) error {
		return driver.InvalidParameterValue("Invalid firmware update %s. Errors: %s", pyfmt.ReprJSON(settingsList(images)),
			fmt.Sprintf(format, a...))
	}
	for _, img := range images {
		for k := range img {
			if !slices.Contains([]string{"url", "checksum", "wait", "source"}, k) {
				return fail("Additional properties are not allowed ('%s' was unexpected)", k)
			}
		}
		for _, k := range []string{"url", "checksum"} {
			v, ok := img[k]
			if !ok {
				return fail("'%s' is a required property", k)
			}
			if s, isStr := v.(string); !isStr {
				return fail("%s is not of type 'string'", pyfmt.ReprJSON(v))
			} else if s == "" {
				return fail("'' is too short")
			}
		}
		if w, ok := img["wait"]; ok {
			n, isInt := jsonInt(w)
			if f, isFloat := w.(float64); !isInt || (isFloat && f != float64(n)) {
				return fail("%s is not of type 'integer'", pyfmt.ReprJSON(w))
			}
			if n < 1 {
				return fail("%s is less than the minimum of 1", pyfmt.ReprJSON(w))
			}
		}
		if s, ok := img["source"]; ok && !slices.Contains([]any{"http", "local", "swift"}, s) {
			return fail("%s is not one of ['http', 'local', 'swift']", pyfmt.ReprJSON(s))
		}
	}
	return nil
}

// firmwareHelper gives the management interface the firmware interface's
// BMC calls on the same connections.
func (m *Management) firmwareHelper(source string) *Firmware {
	if source == "" {
		return &Firmware{core: m.core}
	}
	c := *m.core
	c.opts.FirmwareSource = source
	return &Firmware{core: &c}
}

// UpdateFirmware is the update_firmware step: the first image is sent, the
// node reboots, and the periodic takes it from there.
func (m *Management) UpdateFirmware(ctx context.Context, task *driver.Task, images []map[string]any) (string, error) {
	if err := validateFirmwareImages(images); err != nil {
		return "", err
	}
	if len(images) == 0 {
		// Upstream's schema lets an empty list through and then fails on
		// its first item; the failure is said plainly here.
		return "", driver.InvalidParameterValue("Invalid firmware update []. Errors: no firmware image given")
	}
	if err := requireExclusive(task); err != nil {
		return "", err
	}
	n := task.Node
	task.Logger().Warn("The 'management' interface is deprecated for updating firmware, please migrate to the " +
		"'firmware' interface for updating firmware.")
	updates := make([]map[string]any, 0, len(images))
	for _, img := range images {
		c := make(map[string]any, len(img))
		for k, v := range img {
			c[k] = v
		}
		updates = append(updates, c)
	}
	if err := m.applyFirmwareUpdate(ctx, task, updates); err != nil {
		return "", err
	}
	setAsyncStepFlags(n, ptr(true), ptr(true), ptr(true))
	return rebootToFinishStep(ctx, task)
}

// applyFirmwareUpdate is upstream _apply_firmware_update.
func (m *Management) applyFirmwareUpdate(ctx context.Context, task *driver.Task, updates []map[string]any) error {
	upd := updates[0]
	source, _ := upd["source"].(string)
	f := m.firmwareHelper(source)
	if err := f.submitSimpleUpdate(ctx, task, upd, true); err != nil {
		return err
	}
	// The firmware interface's power timeout is not part of this flow.
	delete(upd, fwPowerTimeoutKey)
	task.Node.InternalInfo().Set(mgmtFirmwareUpdatesKey, settingsList(updates))
	return nil
}

func mgmtFirmwareUpdates(n *model.Node) []map[string]any {
	list, _ := n.InternalInfo().Get(mgmtFirmwareUpdatesKey).([]any)
	out := make([]map[string]any, 0, len(list))
	for _, item := range list {
		if u, ok := item.(map[string]any); ok {
			out = append(out, u)
		}
	}
	return out
}

// AsyncStepInterval is [redfish]/firmware_update_status_interval.
func (m *Management) AsyncStepInterval() time.Duration {
	return m.core.opts.FirmwareUpdateStatusInterval
}

// AsyncStepPending is upstream's predicate: firmware_updates is set.
func (m *Management) AsyncStepPending(n *model.Node) bool { return len(mgmtFirmwareUpdates(n)) > 0 }

// PollAsyncStep is upstream _check_node_firmware_update.
func (m *Management) PollAsyncStep(ctx context.Context, task *driver.Task) (driver.AsyncStepStatus, error) {
	n := task.Node
	updates := mgmtFirmwareUpdates(n)
	if len(updates) == 0 {
		return driver.AsyncStepRunning, nil
	}
	cur := updates[0]
	imageURL, _ := cur["url"].(string)
	f := m.firmwareHelper("")
	if err := m.core.withConnection(ctx, task, func(cl *client, _ DriverInfo) error {
		_, err := simpleUpdateTarget(cl)
		return err
	}); err != nil {
		task.Logger().Warn("unable to communicate with the firmware update service, trying again later",
			"node", n.UUID, "error", err)
		return driver.AsyncStepRunning, nil
	}
	if start, ok := cur[fwWaitStartKey]; ok {
		wait, _ := jsonInt(cur[fwWaitKey])
		if el, ok := f.elapsed(start); ok && el < time.Duration(wait)*time.Second {
			return driver.AsyncStepRunning, nil
		}
		delete(cur, fwWaitKey)
		delete(cur, fwWaitStartKey)
		return m.continueFirmwareUpdates(ctx, task, updates)
	}
	monitor, _ := cur[fwTaskMonitorKey].(string)
	var info *taskInfo
	err := m.core.withConnection(ctx, task, func(cl *client, _ DriverInfo) error {
		var err error
		info, err = getTaskMonitor(cl, monitor)
		return err
	})
	switch {
	case err != nil && isConnectionError(err):
		task.Logger().Warn("unable to reach the firmware update task monitor, trying again later", "node", n.UUID, "error", err)
		return driver.AsyncStepRunning, nil
	case err != nil:
		task.Logger().Warn("firmware update completed, but success of the update is unknown; assuming it was successful",
			"node", n.UUID, "firmware_image", imageURL, "error", err)
		return m.continueFirmwareUpdates(ctx, task, updates)
	case info.processing:
		task.Logger().Debug("firmware update in progress", "node", n.UUID, "firmware_image", imageURL)
		return driver.AsyncStepRunning, nil
	case !info.succeeded():
		m.clearFirmwareUpdates(ctx, task)
		return driver.AsyncStepRunning, stepError("Firmware update failed for node %s, firmware %s. Error: %s",
			n.UUID, imageURL, strings.Join(info.messages, ",  "))
	}
	task.Logger().Info("firmware update succeeded", "node", n.UUID, "firmware_image", imageURL,
		"messages", strings.Join(info.messages, ", "))
	return m.continueFirmwareUpdates(ctx, task, updates)
}

// continueFirmwareUpdates is upstream _continue_firmware_updates.
func (m *Management) continueFirmwareUpdates(ctx context.Context, task *driver.Task, updates []map[string]any) (driver.AsyncStepStatus, error) {
	n := task.Node
	cur := updates[0]
	if wait, _ := jsonInt(cur[fwWaitKey]); wait > 0 {
		cur[fwWaitStartKey] = pyISOTime(m.core.opts.clock().Now())
		n.InternalInfo().Set(mgmtFirmwareUpdatesKey, settingsList(updates))
		return driver.AsyncStepRunning, nil
	}
	if len(updates) == 1 {
		m.clearFirmwareUpdates(ctx, task)
		task.Logger().Info("firmware updates completed", "node", n.UUID)
		return driver.AsyncStepDone, nil
	}
	rest := updates[1:]
	if err := m.applyFirmwareUpdate(ctx, task, rest); err != nil {
		return driver.AsyncStepRunning, err
	}
	return driver.AsyncStepRunning, rebootNode(ctx, task, 0)
}

// AsyncStepFailInterval is [redfish]/firmware_update_fail_interval.
func (m *Management) AsyncStepFailInterval() time.Duration {
	return m.core.opts.FirmwareUpdateFailInterval
}

// DiscardAsyncStep is upstream _query_firmware_update_failed.
func (m *Management) DiscardAsyncStep(ctx context.Context, task *driver.Task) error {
	task.Logger().Warn("firmware update failed, discarding remaining firmware updates", "node", task.Node.UUID)
	m.clearFirmwareUpdates(ctx, task)
	return nil
}

// clearFirmwareUpdates is upstream _clear_firmware_updates: the staged
// images are cleaned up with the update state.
func (m *Management) clearFirmwareUpdates(ctx context.Context, task *driver.Task) {
	m.firmwareHelper("").cleanupFirmware(ctx, task)
	task.Node.InternalInfo().Delete(mgmtFirmwareUpdatesKey)
	task.Node.InternalInfo().Delete(fwCleanupKey)
}
