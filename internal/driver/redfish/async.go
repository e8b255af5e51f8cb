package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// Steps that leave a job on the BMC return the flow's wait state with the
// async step flags set; the conductor's driver periodic polls them through
// driver.AsyncStepPoller. What the jobs are lives in driver_internal_info
// under upstream's keys (raid_configs, redfish_fw_updates,
// redfish_bios_state), so that a node taken over from upstream carries on.

// asyncFlags are the driver_internal_info keys of the flow the node is in
// (upstream async_steps' CLEANING_*, DEPLOYMENT_*, SERVICING_*). The
// servicing ramdisk flag is service_disable_ramdisk, not servicing_*: it
// is the key do_node_service writes and is_ramdisk_disabled reads.
type asyncFlags struct {
	reboot, skip, polling, disableRamdisk, wait string
}

func flagsOf(n *model.Node) asyncFlags {
	switch n.ProvisionState {
	case states.Deploying, states.DeployWait:
		return asyncFlags{model.DIIDeploymentReboot, model.DIISkipCurrentDeployStep, model.DIIDeploymentPolling, "", states.DeployWait}
	case states.Servicing, states.ServiceWait:
		return asyncFlags{model.DIIServicingReboot, model.DIISkipCurrentServiceStep, model.DIIServicingPolling, model.DIIServiceDisableRamdisk, states.ServiceWait}
	}
	return asyncFlags{model.DIICleaningReboot, model.DIISkipCurrentCleanStep, model.DIICleaningPolling, model.DIICleaningDisableRamdisk, states.CleanWait}
}

// setAsyncStepFlags is upstream set_async_step_flags: only the flags given
// (non-nil) are written.
func setAsyncStepFlags(n *model.Node, reboot, skip, polling *bool) {
	f := flagsOf(n)
	for key, v := range map[string]*bool{f.reboot: reboot, f.skip: skip, f.polling: polling} {
		if v != nil {
			n.InternalInfo().Set(key, *v)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// rebootToFinishStep is upstream reboot_to_finish_step: the ramdisk is
// prepared again unless the step runs without one, the node reboots, and
// the flow's wait state is returned.
func rebootToFinishStep(ctx context.Context, task *driver.Task) (string, error) {
	n := task.Node
	f := flagsOf(n)
	if off, _ := n.InternalInfo().Bool(f.disableRamdisk); !off && task.Driver != nil && task.Driver.Boot != nil {
		if err := task.Driver.Boot.PrepareRamdisk(ctx, task, map[string]any{}); err != nil {
			return "", err
		}
	}
	if err := rebootNode(ctx, task, 0); err != nil {
		return "", err
	}
	return f.wait, nil
}

// rebootNode is node_power_action(task, REBOOT) as drivers call it.
func rebootNode(ctx context.Context, task *driver.Task, timeout time.Duration) error {
	if task.Driver == nil || task.Driver.Power == nil {
		return fmt.Errorf("reboot node %s: no power interface", task.Node.UUID)
	}
	if err := task.Driver.Power.Reboot(ctx, task, timeout); err != nil {
		return fmt.Errorf("reboot node %s: %w", task.Node.UUID, err)
	}
	task.Node.PowerState = states.PowerOn
	return nil
}

// Redfish task states a task monitor may report (sushy TASK_STATE_*).
const (
	taskStateCompleted = "Completed"
	taskStateStarting  = "Starting"
	taskStateRunning   = "Running"
	taskStatePending   = "Pending"
	taskStateNew       = "New"
)

// taskInfo is what a task monitor answered (sushy TaskMonitor and its
// Task): whether the operation is still processing (202) and the task's
// state, status and messages.
type taskInfo struct {
	processing bool
	state      string
	status     string
	messages   []string
}

// succeeded is upstream's test of a finished task: Completed with health
// OK or Warning.
func (t *taskInfo) succeeded() bool {
	return t.state == taskStateCompleted && (t.status == "OK" || t.status == "Warning")
}

// inProgress is a task not yet in a terminal state.
func (t *taskInfo) inProgress() bool {
	switch t.state {
	case taskStateNew, taskStateRunning, taskStateStarting, taskStatePending:
		return true
	}
	return false
}

// errTaskGone marks a task monitor the BMC no longer knows (sushy raises
// a RedfishError from get_task_monitor).
var errTaskGone = errors.New("task monitor not found")

// getTaskMonitor reads a task monitor. A monitor that vanished is
// errTaskGone; connection problems come back as ConnectionError.
func getTaskMonitor(cl *client, uri string) (*taskInfo, error) {
	resp, err := cl.Get(uri)
	if err != nil {
		var herr *HTTPError
		if errors.As(err, &herr) && (herr.Status == http.StatusNotFound || herr.Status == http.StatusGone) {
			return nil, fmt.Errorf("%w: %s", errTaskGone, uri)
		}
		return nil, err
	}
	defer resp.Body.Close()
	info := &taskInfo{processing: resp.StatusCode == http.StatusAccepted}
	var doc struct {
		TaskState  string
		TaskStatus string
		Messages   []struct{ Message, MessageId string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil && !info.processing {
		// A finished operation may answer with its result instead of
		// the task; nothing says it failed.
		doc.TaskState, doc.TaskStatus = taskStateCompleted, "OK"
	}
	info.state, info.status = doc.TaskState, doc.TaskStatus
	if info.state == "" && !info.processing {
		info.state, info.status = taskStateCompleted, "OK"
	}
	for _, m := range doc.Messages {
		msg := m.Message
		if msg == "" || strings.EqualFold(msg, "unknown") || strings.EqualFold(msg, "unknown error") {
			msg = m.MessageId
		}
		if msg != "" {
			info.messages = append(info.messages, msg)
		}
	}
	return info, nil
}

// isConnectionError tells a BMC that cannot be reached (sushy
// ConnectionError, Ironic RedfishConnectionError) from one that answered.
func isConnectionError(err error) bool {
	var cerr *ConnectionError
	return errors.As(err, &cerr) || errs.Is(err, errs.ClassRedfishConnectionError)
}

// pyISOTime is Python's datetime.isoformat() of a naive UTC time, the form
// upstream stores start times in.
func pyISOTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000000")
	}
	return t.Format("2006-01-02T15:04:05")
}

// parseStoredTime reads a time stored by pyISOTime (or with an offset).
func parseStoredTime(s string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02T15:04:05.999999", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
