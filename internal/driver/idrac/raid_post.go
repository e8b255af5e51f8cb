package idrac

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/redfish"
	"github.com/openkeel/ironic/internal/model"
)

// driver_internal_info keys of upstream DracRedfishRAID: the task monitors
// of the iDRAC jobs a RAID deletion left (foreign configuration cleared,
// controllers converted to RAID mode) and which of the two is running.
const (
	raidTaskMonitorURIs = "raid_task_monitor_uris"
	raidConfigSubstep   = "raid_config_substep"
	substepClearForeign = "clear_foreign_config"
)

// noForeignConfig is the message id of the iDRAC's answer to a foreign
// configuration clearing when there is none.
const noForeignConfig = "STOR018"

// raidStorage is a Storage the post-deletion steps read.
type raidStorage struct {
	ODataID            string `json:"@odata.id"`
	ID                 string `json:"Id"`
	Controllers        *odataLink
	Drives             []odataLink
	StorageControllers []struct {
		Name               string
		SupportedRAIDTypes []string
	}
}

// raidStorages lists the storages of the system whose controller does
// RAID (sushy's _get_storage_list), BOSS cards left out when noBOSS.
func raidStorages(s *redfish.Session, noBOSS bool) ([]*raidStorage, error) {
	var sys struct{ Storage odataLink }
	if err := s.GetJSON(s.SystemPath(), &sys); err != nil {
		return nil, err
	}
	if sys.Storage.ODataID == "" {
		return nil, nil
	}
	var coll struct{ Members []odataLink }
	if err := s.GetJSON(sys.Storage.ODataID, &coll); err != nil {
		return nil, err
	}
	var out []*raidStorage
	for _, m := range coll.Members {
		st := &raidStorage{}
		if err := s.GetJSON(m.ODataID, st); err != nil {
			return nil, err
		}
		if len(st.StorageControllers) == 0 || len(st.StorageControllers[0].SupportedRAIDTypes) == 0 {
			continue
		}
		if noBOSS && strings.Contains(strings.ToUpper(st.StorageControllers[0].Name), "BOSS") {
			continue
		}
		out = append(out, st)
	}
	return out, nil
}

// postDelete is upstream post_delete_configuration: the foreign
// configuration of the RAID controllers is cleared; when that needs a
// reboot the step waits for its jobs, otherwise controllers in non-RAID
// mode are converted to RAID mode.
func (r *RAID) postDelete(ctx context.Context, task *driver.Task, state string) (string, error) {
	n := task.Node
	async := false
	err := r.dell.set.WithSession(ctx, task, func(s *redfish.Session) error {
		monitors, reboot, err := r.dell.clearForeignConfig(ctx, s)
		if err != nil {
			return err
		}
		if reboot {
			redfish.SetAsyncStepFlags(n, true, true, true)
			n.InternalInfo().Set(raidTaskMonitorURIs, monitors)
			n.InternalInfo().Set(raidConfigSubstep, substepClearForeign)
			async = true
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if async {
		if !redfish.RamdiskDisabled(n) && task.Driver != nil && task.Driver.Boot != nil {
			if err := task.Driver.Boot.PrepareRamdisk(ctx, task, map[string]any{}); err != nil {
				return "", err
			}
		}
		return redfish.AsyncWaitState(n), nil
	}
	if next, err := r.convertControllers(ctx, task); err != nil || next != "" {
		return next, err
	}
	return state, nil
}

// clearForeignConfig is sushy's clear_foreign_config and upstream's
// _clear_foreign_config: DellRaidService.ClearForeignConfig for every RAID
// controller but BOSS ones; the iDRAC answers STOR018 when there is none.
// When one job is a RAID configuration job (it runs at the next reboot),
// the monitors are returned to be polled; real-time jobs are awaited.
func (d *dell) clearForeignConfig(ctx context.Context, s *redfish.Session) ([]string, bool, error) {
	storages, err := raidStorages(s, true)
	if err != nil {
		return nil, false, redfishError("%s", err)
	}
	var monitors []string
	for _, st := range storages {
		target, err := d.raidServiceAction(s, "ClearForeignConfig")
		if err != nil {
			return nil, false, redfishError("%s", err)
		}
		resp, err := s.Post(target, map[string]any{"TargetFQDD": st.ID})
		var herr *redfish.HTTPError
		if errors.As(err, &herr) && herr.Status == http.StatusBadRequest &&
			slices.ContainsFunc(herr.MessageIDs(), func(id string) bool { return strings.Contains(id, noForeignConfig) }) {
			continue
		}
		if err != nil {
			return nil, false, redfishError("%s", err)
		}
		_ = resp.Body.Close()
		mon, err := d.taskOfJob(s, resp.Header.Get("Location"))
		if err != nil {
			return nil, false, redfishError("%s", err)
		}
		monitors = append(monitors, mon)
	}
	for _, mon := range monitors {
		var job struct {
			Oem struct{ Dell struct{ JobType string } }
		}
		if err := s.GetJSON(mon, &job); err != nil {
			return nil, false, redfishError("%s", err)
		}
		if job.Oem.Dell.JobType == "RAIDConfiguration" {
			return monitors, true, nil
		}
	}
	for _, mon := range monitors {
		if err := d.awaitJob(ctx, s, mon); err != nil {
			return nil, false, err
		}
	}
	return nil, false, nil
}

// convertControllers is upstream _convert_controller_to_raid_mode: the
// first controller of each storage that reports a Dell ControllerMode other
// than RAID (PERC 9 and 10 in HBA mode) is switched to RAID mode at the
// next reset, and the node reboots to apply it.
func (r *RAID) convertControllers(ctx context.Context, task *driver.Task) (string, error) {
	n := task.Node
	var monitors []string
	err := r.dell.set.WithSession(ctx, task, func(s *redfish.Session) error {
		storages, err := raidStorages(s, false)
		if err != nil {
			return redfishError("%s", err)
		}
		for _, st := range storages {
			if st.Controllers == nil || st.Controllers.ODataID == "" {
				task.Logger().Warn("storage has no Controllers: controllers in non-RAID mode stay so; the iDRAC "+
					"may be too old", "node", n.UUID, "storage", st.ID)
				continue
			}
			mon, err := convertController(s, st.Controllers.ODataID)
			if err != nil {
				return redfishError("%s", err)
			}
			if mon != "" {
				monitors = append(monitors, mon)
			}
		}
		return nil
	})
	if err != nil || len(monitors) == 0 {
		return "", err
	}
	redfish.SetAsyncStepFlags(n, true, true, true)
	n.InternalInfo().Set(raidTaskMonitorURIs, monitors)
	return redfish.RebootToFinishStep(ctx, task)
}

// convertController patches the first controller of a collection to RAID
// mode (sushy's DellStorageControllerExtension.convert_to_raid) and
// returns the task monitor of the change, "" when there is nothing to do.
func convertController(s *redfish.Session, collection string) (string, error) {
	var coll struct{ Members []odataLink }
	if err := s.GetJSON(collection, &coll); err != nil {
		return "", err
	}
	if len(coll.Members) == 0 {
		return "", nil
	}
	path := coll.Members[0].ODataID
	var c struct {
		Oem struct {
			Dell struct {
				DellStorageController struct{ ControllerMode string }
			}
		}
	}
	if err := s.GetJSON(path, &c); err != nil {
		return "", err
	}
	mode := c.Oem.Dell.DellStorageController.ControllerMode
	if mode == "" || mode == "RAID" {
		return "", nil
	}
	resp, err := s.Patch(path, map[string]any{
		"Oem": map[string]any{"Dell": map[string]any{"DellStorageController": map[string]any{"ControllerMode": "RAID"}}},
		"@Redfish.SettingsApplyTime": map[string]any{
			"@odata.type": "#Settings.v1_0_0.PreferredApplyTime", "ApplyTime": "OnReset"},
	})
	if err != nil {
		return "", err
	}
	_ = resp.Body.Close()
	return monitorPath(resp.Header.Get("Location")), nil
}

// raidServiceAction is the target of a DellRaidService action of the
// node's system.
func (d *dell) raidServiceAction(s *redfish.Session, action string) (string, error) {
	var sys struct {
		Links struct {
			Oem struct {
				Dell struct{ DellRaidService odataLink }
			}
		}
	}
	if err := s.GetJSON(s.SystemPath(), &sys); err != nil {
		return "", err
	}
	svc := sys.Links.Oem.Dell.DellRaidService.ODataID
	if svc == "" {
		return "", &missingError{attr: "Links/Oem/Dell/DellRaidService", path: s.SystemPath()}
	}
	var doc struct {
		Actions map[string]actionTarget
	}
	if err := s.GetJSON(svc, &doc); err != nil {
		return "", err
	}
	target := doc.Actions["#DellRaidService."+action].Target
	if target == "" {
		return "", &missingError{attr: "Actions/#DellRaidService." + action + "/target", path: svc}
	}
	return target, nil
}

// taskOfJob is sushy's _get_task_monitor_from_dell_job: the TaskService
// task whose Id is the last element of the job's Location.
func (d *dell) taskOfJob(s *redfish.Session, loc string) (string, error) {
	if loc == "" {
		return "", &extensionError{msg: "Response does not include Location in header"}
	}
	jobID := loc[strings.LastIndex(loc, "/")+1:]
	var tasks struct{ Members []odataLink }
	if err := s.GetJSON("/redfish/v1/TaskService/Tasks", &tasks); err != nil {
		return "", err
	}
	for _, m := range tasks.Members {
		if strings.HasSuffix(m.ODataID, "/"+jobID) {
			return m.ODataID, nil
		}
	}
	return "", &extensionError{msg: "Did not find task by id " + jobID}
}

// taskMonitorURIs is raid_task_monitor_uris.
func taskMonitorURIs(n *model.Node) []string {
	// A list set in this process is still a []string; one read back
	// from the database is a []any.
	var out []string
	switch list := n.InternalInfo().Get(raidTaskMonitorURIs).(type) {
	case []string:
		out = append(out, list...)
	case []any:
		for _, v := range list {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// AsyncStepInterval polls both the redfish volume tasks and the iDRAC
// jobs: upstream runs them in two periodics, [redfish]/
// raid_config_status_interval and [drac]/
// query_raid_config_job_status_interval apart; the conductor has one per
// interface, so the shorter of the two serves both.
func (r *RAID) AsyncStepInterval() time.Duration {
	a, b := r.RAID.AsyncStepInterval(), r.dell.opts.QueryRAIDConfigJobStatusInterval
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}

// AsyncStepPending is the redfish predicate (raid_configs) or upstream's
// drac one (raid_task_monitor_uris).
func (r *RAID) AsyncStepPending(n *model.Node) bool {
	return len(taskMonitorURIs(n)) > 0 || r.RAID.AsyncStepPending(n)
}

// raidTasksFailed is the message upstream's error handler records.
type raidTasksFailed struct{ msg string }

func (e *raidTasksFailed) Error() string { return e.msg }

// PollAsyncStep is upstream _check_raid_tasks_status for a node with iDRAC
// jobs and the redfish poll otherwise. One failed job fails the step;
// once all are done, a foreign configuration clearing is followed by the
// controllers' conversion, and the step resumes.
func (r *RAID) PollAsyncStep(ctx context.Context, task *driver.Task) (driver.AsyncStepStatus, error) {
	n := task.Node
	uris := taskMonitorURIs(n)
	if len(uris) == 0 {
		return r.RAID.PollAsyncStep(ctx, task)
	}
	var running, failed []string
	err := r.dell.set.WithSession(ctx, task, func(s *redfish.Session) error {
		for _, uri := range uris {
			t, err := s.TaskMonitor(uri)
			if err != nil {
				return err
			}
			if t.Processing {
				running = append(running, uri)
				continue
			}
			if t.State != "Completed" || (t.Status != "OK" && t.Status != "Warning") {
				failed = append(failed, fmt.Sprintf("Task %s. Message: '%s'.", uri, strings.Join(t.Messages, ", ")))
			}
		}
		return nil
	})
	if err != nil {
		task.Logger().Warn("unable to check the iDRAC RAID jobs, trying again later", "node", n.UUID, "error", err)
		return driver.AsyncStepRunning, nil
	}
	if len(failed) > 0 {
		n.InternalInfo().Delete(raidTaskMonitorURIs)
		msg := "Failed RAID configuration tasks: " + strings.Join(failed, ", ")
		task.Logger().Error("RAID configuration task failed", "node", n.UUID, "error", msg)
		return driver.AsyncStepRunning, &raidTasksFailed{msg: msg}
	}
	if len(running) > 0 {
		n.InternalInfo().Set(raidTaskMonitorURIs, running)
		return driver.AsyncStepRunning, nil
	}
	n.InternalInfo().Delete(raidTaskMonitorURIs)
	if n.InternalInfo().String(raidConfigSubstep) == substepClearForeign {
		n.InternalInfo().Delete(raidConfigSubstep)
		next, err := r.convertControllers(ctx, task)
		if err != nil {
			return driver.AsyncStepRunning, err
		}
		if next != "" {
			return driver.AsyncStepRunning, nil
		}
	}
	return driver.AsyncStepDone, nil
}
