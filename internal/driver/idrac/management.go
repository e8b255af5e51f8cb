package idrac

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/driver/redfish"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/states"
)

// Management is upstream DracRedfishManagement: the redfish management
// interface with the iDRAC job queue and reset steps.
type Management struct {
	*redfish.Management
	dell *dell
}

var _ driver.StepRunner = (*Management)(nil)

// clearAllJobs is the job id that clears the whole Lifecycle Controller
// job queue.
const clearAllJobs = "JID_CLEARALL"

// Waits of sushy's reset_idrac: the iDRAC is probed every
// idracProbeInterval until it stops answering (twice in a row) and
// answers again (three times in a row), each within idracProbeRetries
// probes; then, after idracReadyWait, its Lifecycle Controller is asked
// every idracReadyInterval, idracReadyRetries times at most, whether it is
// ready.
const (
	idracProbeInterval = 10 * time.Second
	idracProbeRetries  = 24
	idracReadyWait     = 60 * time.Second
	idracReadyInterval = 10 * time.Second
	idracReadyRetries  = 96
)

// Steps are the redfish management steps and upstream's three Dell
// steps, each a clean step without the ramdisk and a verify step.
func (m *Management) Steps() []driver.StepSpec {
	out := m.Management.Steps()
	for _, name := range []string{"clear_job_queue", "known_good_state", "reset_idrac"} {
		out = append(out, driver.CleanStep(name, 0).WithRequiresRamdisk(false), driver.VerifyStep(name, 0))
	}
	return out
}

// StepHandlers are the redfish handlers and the Dell steps'.
func (m *Management) StepHandlers() map[string]driver.StepFunc {
	out := maps.Clone(m.Management.StepHandlers())
	out["clear_job_queue"] = func(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
		return "", m.ClearJobQueue(ctx, task)
	}
	out["reset_idrac"] = func(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
		return "", m.ResetIDRAC(ctx, task)
	}
	out["known_good_state"] = func(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
		return "", m.KnownGoodState(ctx, task)
	}
	return out
}

// tolerateInVerify is upstream's handling of a Dell step's RedfishError:
// an iDRAC lacking the service gets a hint in the log, and while the node
// is verifying the error is only logged, so that enrolling an old iDRAC
// does not fail.
func tolerateInVerify(task *driver.Task, err error, service, what string) error {
	if err == nil {
		return nil
	}
	e, ok := errs.As(err)
	if !ok || (e.Class != errs.ClassRedfishError && e.Class != errs.ClassRedfishConnectionError) {
		return err
	}
	if strings.Contains(e.Message, "Oem/Dell/"+service+" is missing") {
		task.Logger().Warn("iDRAC does not support "+what+" using the idrac-redfish driver. "+
			"If using iDRAC9, consider upgrading firmware.", "node", task.Node.UUID)
	}
	if task.Node.ProvisionState != states.Verifying {
		return err
	}
	task.Logger().Warn("ignoring the failure of an iDRAC step while verifying", "node", task.Node.UUID, "error", err)
	return nil
}

// ClearJobQueue is upstream clear_job_queue: the DellJobService deletes
// every job of the Lifecycle Controller queue.
func (m *Management) ClearJobQueue(ctx context.Context, task *driver.Task) error {
	err := m.dell.execOEM(ctx, task, "clear job queue", func(_ context.Context, s *redfish.Session, mgr *dellManager) error {
		svc, err := mgr.service("DellJobService")
		if err != nil {
			return err
		}
		var doc struct {
			Actions map[string]actionTarget
		}
		if err := s.GetJSON(svc, &doc); err != nil {
			return err
		}
		target := doc.Actions["#DellJobService.DeleteJobQueue"].Target
		if target == "" {
			return &missingError{attr: "Actions/#DellJobService.DeleteJobQueue/target", path: svc}
		}
		resp, err := s.Post(target, map[string]any{"JobID": clearAllJobs})
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		task.Logger().Info("deleted the iDRAC job", "node", task.Node.UUID, "job", clearAllJobs)
		return nil
	})
	return tolerateInVerify(task, err, "DellJobService", "clearing Lifecycle Controller job queue")
}

// ResetIDRAC is upstream reset_idrac: a graceful iDRAC reset, a wait for
// the iDRAC to go away, come back and report its Lifecycle Controller
// ready, then for the system to be readable again.
func (m *Management) ResetIDRAC(ctx context.Context, task *driver.Task) error {
	err := m.dell.execOEM(ctx, task, "reset iDRAC", m.dell.resetIDRAC)
	if err == nil {
		err = m.dell.set.WithSession(ctx, task, func(*redfish.Session) error { return nil })
	}
	if err == nil {
		task.Logger().Info("reset iDRAC done", "node", task.Node.UUID)
	}
	return tolerateInVerify(task, err, "DelliDRACCardService", "iDRAC reset")
}

// KnownGoodState is upstream known_good_state: reset the iDRAC, then
// clear its job queue.
func (m *Management) KnownGoodState(ctx context.Context, task *driver.Task) error {
	if err := m.ResetIDRAC(ctx, task); err != nil {
		return err
	}
	if err := m.ClearJobQueue(ctx, task); err != nil {
		return err
	}
	task.Logger().Info("reset iDRAC to known good state", "node", task.Node.UUID)
	return nil
}

// resetIDRAC is sushy's DellManagerExtension.reset_idrac(wait=True).
func (d *dell) resetIDRAC(ctx context.Context, s *redfish.Session, mgr *dellManager) error {
	svc, err := mgr.service("DelliDRACCardService")
	if err != nil {
		return err
	}
	var doc struct {
		Actions map[string]actionTarget
	}
	if err := s.GetJSON(svc, &doc); err != nil {
		return err
	}
	reset := doc.Actions["#DelliDRACCardService.iDRACReset"]
	if reset.Target == "" {
		return &missingError{attr: "Actions/#DelliDRACCardService.iDRACReset/target", path: svc}
	}
	if len(reset.Force) > 0 && !slices.Contains(reset.Force, "Graceful") {
		return &extensionError{msg: "Invalid value 'Graceful' for parameter 'value'. Valid values are: " +
			strings.Join(reset.Force, ", ")}
	}
	resp, err := s.Post(reset.Target, map[string]any{"Force": "Graceful"})
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if err := d.waitReachable(ctx, s, false, 2); err != nil {
		return err
	}
	if err := d.waitReachable(ctx, s, true, 3); err != nil {
		return err
	}
	if err := d.set.Clock().Sleep(ctx, idracReadyWait); err != nil {
		return err
	}
	return d.waitLCReady(ctx, s, mgr)
}

// waitReachable probes the iDRAC until it answers (alive) or not, count
// times in a row. sushy pings the host; the service root is what tells
// here that the iDRAC's web service is down or up.
func (d *dell) waitReachable(ctx context.Context, s *redfish.Session, alive bool, count int) error {
	clk := d.set.Clock()
	inRow := 0
	for range idracProbeRetries {
		var root map[string]any
		up := s.GetJSON("/redfish/v1", &root) == nil
		if up == alive {
			if inRow++; inRow == count {
				return nil
			}
		} else {
			inRow = 0
		}
		if err := clk.Sleep(ctx, idracProbeInterval); err != nil {
			return err
		}
	}
	state := "not pingable"
	if alive {
		state = "pingable"
	}
	return &extensionError{msg: "Timed out waiting iDRAC to become " + state}
}

// waitLCReady asks the Lifecycle Controller for its status until LCStatus
// is Ready.
func (d *dell) waitLCReady(ctx context.Context, s *redfish.Session, mgr *dellManager) error {
	for i := idracReadyRetries; i > 0; i-- {
		ready, err := remoteServicesReady(s, mgr, "LCStatus")
		if err != nil {
			return err
		}
		if ready {
			return nil
		}
		if i > 1 {
			if err := d.set.Clock().Sleep(ctx, idracReadyInterval); err != nil {
				return err
			}
		}
	}
	return &extensionError{msg: "Timed out waiting iDRAC to become ready after reset"}
}

// remoteServicesReady is DellLCService.GetRemoteServicesAPIStatus read for
// one field (LCStatus: the iDRAC takes commands; RTStatus: real-time
// operations are possible). An answer other than 200 is "not ready".
func remoteServicesReady(s *redfish.Session, mgr *dellManager, field string) (bool, error) {
	svc, err := mgr.service("DellLCService")
	if err != nil {
		return false, err
	}
	var doc struct {
		Actions map[string]actionTarget
	}
	if err := s.GetJSON(svc, &doc); err != nil {
		return false, err
	}
	target := doc.Actions["#DellLCService.GetRemoteServicesAPIStatus"].Target
	if target == "" {
		return false, &missingError{attr: "Actions/#DellLCService.GetRemoteServicesAPIStatus/target", path: svc}
	}
	resp, err := s.Post(target, map[string]any{})
	if err != nil {
		var herr *redfish.HTTPError
		if errors.As(err, &herr) {
			return false, nil
		}
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return false, nil
	}
	var status map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&status); err != nil {
		return false, &extensionError{msg: "Remote services status: " + err.Error()}
	}
	return status[field] == "Ready", nil
}
