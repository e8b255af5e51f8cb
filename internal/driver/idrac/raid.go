package idrac

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/redfish"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
)

// RAID is upstream DracRedfishRAID: the redfish RAID interface that first
// waits for the iDRAC to take real-time operations and converts the
// drives of new volumes to RAID mode (convertDrivesToRAID).
type RAID struct {
	*redfish.RAID
	dell *dell
}

var _ driver.StepRunner = (*RAID)(nil)

// Waits of upstream _retry_till_realtime_ready.
const (
	realtimeAttempts = 30
	realtimeInterval = 10 * time.Second
	raidJobPoll      = time.Second
)

// Steps are upstream's: create and delete are clean steps that run
// without the ramdisk, delete is a deploy step too, and apply stays the
// redfish deploy and service step; the iDRAC override of delete drops the
// redfish service step of that name.
func (r *RAID) Steps() []driver.StepSpec {
	var out []driver.StepSpec
	for _, s := range r.RAID.Steps() {
		switch {
		case s.Kind == driver.StepClean && (s.Name == "create_configuration" || s.Name == "delete_configuration"):
			s = s.WithRequiresRamdisk(false)
		case s.Kind == driver.StepService && s.Name == "delete_configuration":
			continue
		}
		out = append(out, s)
	}
	return out
}

// StepHandlers are the redfish handlers, each after the wait for
// real-time readiness; a deletion is followed by postDelete.
func (r *RAID) StepHandlers() map[string]driver.StepFunc {
	out := maps.Clone(r.RAID.StepHandlers())
	for name, fn := range out {
		out[name] = func(ctx context.Context, task *driver.Task, args map[string]any) (string, error) {
			if err := r.dell.waitRealtimeReady(ctx, task); err != nil {
				return "", err
			}
			state, err := fn(ctx, task, args)
			if err != nil || name != "delete_configuration" {
				return state, err
			}
			return r.postDelete(ctx, task, state)
		}
	}
	return out
}

// waitRealtimeReady is upstream _wait_till_realtime_ready: a node whose
// step runs without the ramdisk is powered on if off, then the iDRAC is
// asked until real-time operations are ready; when they never are, the
// step goes on anyway, as upstream.
func (d *dell) waitRealtimeReady(ctx context.Context, task *driver.Task) error {
	n := task.Node
	noRamdisk, _ := n.InternalInfo().Bool(model.DIICleaningDisableRamdisk)
	if svc, _ := n.InternalInfo().Bool(model.DIIServiceDisableRamdisk); svc {
		noRamdisk = true
	}
	if noRamdisk && task.Driver != nil && task.Driver.Power != nil {
		cur, err := task.Driver.Power.GetPowerState(ctx, task)
		if err != nil {
			return err
		}
		if cur == states.PowerOff {
			if err := task.Driver.Power.SetPowerState(ctx, task, states.PowerOn, 0); err != nil {
				return err
			}
			n.PowerState = states.PowerOn
		}
	}
	for i := 1; i <= realtimeAttempts; i++ {
		ready := false
		err := d.execOEM(ctx, task, "get real-time ready status", func(_ context.Context, s *redfish.Session, mgr *dellManager) error {
			var err error
			ready, err = remoteServicesReady(s, mgr, "RTStatus")
			return err
		})
		if err != nil {
			return err
		}
		if ready {
			return nil
		}
		if i < realtimeAttempts {
			if err := d.set.Clock().Sleep(ctx, realtimeInterval); err != nil {
				return err
			}
		}
	}
	task.Logger().Debug("retries exceeded while waiting for real-time ready, proceeding without it", "node", n.UUID)
	return nil
}

// convertDrivesToRAID is upstream pre_create_configuration with sushy's
// change_physical_disk_state(RAID): the drives of each controller that
// are in non-RAID mode (their volume is a raw device) are converted by
// DellRaidService.ConvertToRAID, one job per controller, each awaited up
// to [drac]/raid_job_timeout. BOSS controllers have no RAID mode and are
// left alone.
func (d *dell) convertDrivesToRAID(ctx context.Context, task *driver.Task, s *redfish.Session, drives map[string][]string) (bool, error) {
	storages, err := raidStorages(s, false)
	if err != nil {
		return false, redfishError("%s", err)
	}
	var jobs []string
	for _, controller := range slices.Sorted(maps.Keys(drives)) {
		i := slices.IndexFunc(storages, func(st *raidStorage) bool { return st.ID == controller })
		if i < 0 {
			return false, redfishError("Couldn't find storage by '%s'", controller)
		}
		st := storages[i]
		if strings.Contains(strings.ToUpper(st.StorageControllers[0].Name), "BOSS") {
			continue
		}
		var raw []string
		for _, l := range st.Drives {
			id := l.ODataID[strings.LastIndex(l.ODataID, "/")+1:]
			if !slices.Contains(drives[controller], id) {
				continue
			}
			isRaw, err := rawDevice(s, l.ODataID)
			if err != nil {
				return false, redfishError("%s", err)
			}
			if isRaw {
				raw = append(raw, id)
			}
		}
		if len(raw) == 0 {
			continue
		}
		job, err := d.convertToRAID(s, raw)
		if err != nil {
			return false, redfishError("%s", err)
		}
		task.Logger().Info("converting drives to RAID mode", "node", task.Node.UUID, "drives", raw, "job", job)
		jobs = append(jobs, job)
	}
	for _, job := range jobs {
		if err := d.awaitJob(ctx, s, job); err != nil {
			return false, err
		}
	}
	return len(jobs) > 0, nil
}

// rawDevice tells whether a drive is in non-RAID mode: its first volume
// is a raw device or has no RAID type (sushy's _filter_disks_not_in_mode).
func rawDevice(s *redfish.Session, drive string) (bool, error) {
	var doc struct {
		Links struct{ Volumes []odataLink }
	}
	if err := s.GetJSON(drive, &doc); err != nil {
		return false, err
	}
	if len(doc.Links.Volumes) == 0 {
		return false, nil
	}
	var vol struct {
		VolumeType string
		RAIDType   *string
	}
	if err := s.GetJSON(doc.Links.Volumes[0].ODataID, &vol); err != nil {
		return false, err
	}
	return vol.VolumeType == "RawDevice" || vol.RAIDType == nil, nil
}

// convertToRAID posts DellRaidService.ConvertToRAID and returns the
// monitor of the task the iDRAC's job shows as: the TaskService task whose
// Id is the job's (sushy's _get_task_monitor_from_dell_job).
func (d *dell) convertToRAID(s *redfish.Session, drives []string) (string, error) {
	target, err := d.raidServiceAction(s, "ConvertToRAID")
	if err != nil {
		return "", err
	}
	resp, err := s.Post(target, map[string]any{"PDArray": drives})
	if err != nil {
		return "", err
	}
	_ = resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", &extensionError{msg: fmt.Sprintf("Response %s does not include Location in header", target)}
	}
	return d.taskOfJob(s, loc)
}

// awaitJob polls a task until it is no longer processing (sushy's
// TaskMonitor.wait), at most [drac]/raid_job_timeout.
func (d *dell) awaitJob(ctx context.Context, s *redfish.Session, monitor string) error {
	clk := d.set.Clock()
	deadline := clk.Now().Add(d.opts.RAIDJobTimeout)
	for {
		resp, err := s.Get(monitor)
		if err != nil {
			return redfishError("%s", err)
		}
		var t struct{ TaskState, TaskStatus string }
		derr := json.NewDecoder(resp.Body).Decode(&t)
		_ = resp.Body.Close()
		if derr != nil {
			return redfishError("Task %s: %s", monitor, derr)
		}
		if resp.StatusCode != 202 {
			return nil
		}
		if !clk.Now().Before(deadline) {
			return redfishError("Timeout reached while waiting for the task %s to complete", monitor)
		}
		if err := clk.Sleep(ctx, retryAfter(resp, clk.Now(), raidJobPoll)); err != nil {
			return err
		}
	}
}
