package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stmcginnis/gofish/common"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// Firmware is upstream RedfishFirmware: the update step sends each image
// to the UpdateService's SimpleUpdate, one component at a time, and the
// conductor's periodic follows the BMC's task monitor (PollAsyncStep),
// rebooting where the component needs it; the firmware components (BIOS,
// BMC, NICs) are read for firmware_information.
type Firmware struct {
	core *core
}

var (
	_ driver.FirmwareInterface       = (*Firmware)(nil)
	_ driver.StepRunner              = (*Firmware)(nil)
	_ driver.AsyncStepPoller         = (*Firmware)(nil)
	_ driver.AsyncStepDiscarder      = (*Firmware)(nil)
	_ driver.FirmwareComponentReader = (*Firmware)(nil)
)

// Firmware component names (upstream redfish_utils BIOS, BMC, NIC prefix).
const (
	componentBIOS = "bios"
	componentBMC  = "bmc"
	componentNIC  = "nic"
	nicPrefix     = "nic:"
)

// driver_internal_info keys of a firmware update, as upstream names them.
const (
	fwUpdatesKey          = model.DIIRedfishFirmwareUpdates
	fwUpdateStartKey      = model.DIIRedfishFirmwareUpdateStart
	fwCleanupKey          = model.DIIFirmwareCleanup
	bmcVersionBeforeKey   = model.DIIBMCFirmwareVersionBefore
	fwRebootRequestedKey  = model.DIIFirmwareRebootRequested
	biosRebootTriggered   = "bios_reboot_triggered"
	bmcUpdateCompleted    = "bmc_update_completed"
	nicRebootTriggered    = "nic_reboot_triggered"
	nicNeedsPostReboot    = "nic_needs_post_completion_reboot"
	nicStartingTimestamp  = "nic_starting_timestamp"
	bmcVersionChecking    = "bmc_version_checking"
	bmcCheckStartTime     = "bmc_check_start_time"
	fwComponentTypeKey    = "component_type"
	fwWaitKey             = "wait"
	fwWaitStartKey        = "wait_start_time"
	fwTaskMonitorKey      = "task_monitor"
	fwPowerTimeoutKey     = "power_timeout"
	simpleUpdateActionKey = "#UpdateService.SimpleUpdate"
)

var firmwareSettingsArgs = map[string]driver.ArgInfo{
	"settings": driver.Required("A list of dicts with firmware components to be updated"),
}

// Properties are the common redfish driver_info properties.
func (f *Firmware) Properties() map[string]string { return Properties() }

// Validate checks driver_info.
func (f *Firmware) Validate(_ context.Context, task *driver.Task) error {
	_, err := ParseDriverInfo(task.Node, &f.core.opts)
	return err
}

// Steps declares update as a clean, deploy and service step.
func (f *Firmware) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.CleanStep("update", 0).WithArgs(firmwareSettingsArgs),
		driver.DeployStep("update", 0).WithArgs(firmwareSettingsArgs).WithAbortable(false),
		driver.ServiceStep("update").WithArgs(firmwareSettingsArgs).WithRequiresRamdisk(false),
	}
}

// StepHandlers maps the declared steps to their implementations.
func (f *Firmware) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"update": func(ctx context.Context, task *driver.Task, args map[string]any) (string, error) {
			settings, err := settingsArg(args["settings"])
			if err != nil {
				return "", driver.InvalidParameterValue("Invalid firmware update %s. Errors: %s", pyfmt.ReprJSON(args["settings"]), err)
			}
			return f.Update(ctx, task, settings)
		},
	}
}

// validateFirmwareSettings is upstream's JSON schema of the update step:
// a non-empty list of {component, url[, wait]} with component bios, bmc
// or nic:<id>.
func validateFirmwareSettings(settings []map[string]any) error {
	fail := func(format string, a ...any) error {
		return driver.InvalidParameterValue("Invalid firmware update %s. Errors: %s", pyfmt.ReprJSON(settingsList(settings)),
			fmt.Sprintf(format, a...))
	}
	if len(settings) == 0 {
		return fail("[] should be non-empty")
	}
	for _, s := range settings {
		for k := range s {
			if !slices.Contains([]string{"component", "url", "wait"}, k) {
				return fail("Additional properties are not allowed ('%s' was unexpected)", k)
			}
		}
		for _, k := range []string{"component", "url"} {
			if _, ok := s[k]; !ok {
				return fail("'%s' is a required property", k)
			}
		}
		comp, ok := s["component"].(string)
		if !ok || (comp != componentBIOS && comp != componentBMC && !strings.HasPrefix(comp, nicPrefix)) {
			return fail("%s is not valid under any of the given schemas", pyfmt.ReprJSON(s["component"]))
		}
		if u, ok := s["url"].(string); !ok || u == "" {
			return fail("%s is too short", pyfmt.ReprJSON(s["url"]))
		}
		if w, ok := s["wait"]; ok {
			n, isNum := w.(float64)
			if iw, isInt := w.(int); isInt {
				n, isNum = float64(iw), true
			}
			if !isNum || n != float64(int64(n)) {
				return fail("%s is not of type 'integer'", pyfmt.ReprJSON(w))
			}
			if n < 1 {
				return fail("%s is less than the minimum of 1", pyfmt.ReprJSON(w))
			}
		}
	}
	return nil
}

func settingsList(settings []map[string]any) []any {
	out := make([]any, 0, len(settings))
	for _, s := range settings {
		out = append(out, s)
	}
	return out
}

// componentType is upstream get_component_type: bios, bmc, nic or "".
func componentType(component string) string {
	switch {
	case component == componentBIOS, component == componentBMC:
		return component
	case strings.HasPrefix(component, nicPrefix):
		return componentNIC
	}
	return ""
}

// Update is the update step: the first image goes to SimpleUpdate, the
// rest wait in redfish_fw_updates for the periodic.
func (f *Firmware) Update(ctx context.Context, task *driver.Task, settings []map[string]any) (string, error) {
	if err := validateFirmwareSettings(settings); err != nil {
		return "", err
	}
	if err := requireExclusive(task); err != nil {
		return "", err
	}
	n := task.Node
	task.Logger().Debug("updating firmware", "node", n.UUID, "components", len(settings))
	updates := make([]map[string]any, 0, len(settings))
	for _, s := range settings {
		c := make(map[string]any, len(s))
		for k, v := range s {
			c[k] = v
		}
		updates = append(updates, c)
	}
	if err := f.executeUpdate(ctx, task, updates); err != nil {
		return "", err
	}
	n.InternalInfo().Set(fwUpdateStartKey, pyISOTime(f.core.opts.clock().Now()))
	return flagsOf(n).wait, nil
}

// updates reads redfish_fw_updates.
func fwUpdates(n *model.Node) []map[string]any {
	list, _ := n.InternalInfo().Get(fwUpdatesKey).([]any)
	out := make([]map[string]any, 0, len(list))
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func storeUpdates(n *model.Node, updates []map[string]any) {
	n.InternalInfo().Set(fwUpdatesKey, settingsList(updates))
}

// executeUpdate is upstream _execute_firmware_update: SimpleUpdate for the
// first image, then the monitoring its component type needs.
func (f *Firmware) executeUpdate(ctx context.Context, task *driver.Task, updates []map[string]any) error {
	n := task.Node
	upd := updates[0]
	if err := f.submitSimpleUpdate(ctx, task, upd, false); err != nil {
		return err
	}
	storeUpdates(n, updates)
	n.InternalInfo().Delete(bmcVersionBeforeKey)
	n.InternalInfo().Delete(fwRebootRequestedKey)
	comp, _ := upd["component"].(string)
	switch componentType(comp) {
	case componentBMC:
		// The BMC restarts into its new firmware by itself: its version
		// is watched instead of rebooting the node.
		if v, ok := f.bmcFirmwareVersion(ctx, task); ok {
			n.InternalInfo().Set(bmcVersionBeforeKey, v)
		}
		if _, ok := upd[fwWaitKey]; !ok {
			upd[fwWaitKey] = int(f.core.opts.FirmwareUpdateRebootDelay / time.Second)
		}
		now := pyISOTime(f.core.opts.clock().Now())
		upd[fwWaitStartKey], upd[bmcCheckStartTime], upd[fwComponentTypeKey] = now, now, componentBMC
		setAsyncStepFlags(n, ptr(false), nil, ptr(true))
	case componentNIC:
		setAsyncStepFlags(n, ptr(false), nil, ptr(true))
	case componentBIOS:
		setAsyncStepFlags(n, ptr(true), nil, ptr(true))
	default:
		// Upstream's _setup_default_update_monitoring: an update that
		// names no wait waits the node's
		// firmware_update_unresponsive_bmc_wait, else
		// [redfish]/firmware_update_wait_unresponsive_bmc, before its
		// reboot.
		if _, ok := upd[fwWaitKey]; !ok {
			wait, _ := jsonInt(n.DriverInfo["firmware_update_unresponsive_bmc_wait"])
			if s, ok := n.DriverInfo["firmware_update_unresponsive_bmc_wait"].(string); ok {
				wait, _ = strconv.Atoi(s)
			}
			if wait == 0 {
				wait = int(f.core.opts.FirmwareUpdateWaitUnresponsiveBMC / time.Second)
			}
			upd[fwWaitKey] = wait
		}
		setAsyncStepFlags(n, ptr(true), nil, ptr(true))
	}
	storeUpdates(n, updates)
	return nil
}

// submitSimpleUpdate is upstream _submit_simple_update: the image, staged
// as firmware_source says (stageFirmware), goes to SimpleUpdate with
// Targets when the BMC has several systems; the task monitor goes into
// the update and where the image was staged into firmware_cleanup.
// verify checks the download against the update's checksum
// (update_firmware).
func (f *Firmware) submitSimpleUpdate(ctx context.Context, task *driver.Task, upd map[string]any, verify bool) error {
	n := task.Node
	upd[fwPowerTimeoutKey] = int(f.core.opts.FirmwareUpdateRebootDelay / time.Second)
	imageURL, _ := upd["url"].(string)
	checksum, _ := upd["checksum"].(string)
	componentURL, staged, err := f.stageFirmware(ctx, task, imageURL, checksum, verify)
	if err != nil {
		return err
	}
	err = f.core.withConnection(ctx, task, func(cl *client, info DriverInfo) error {
		target, err := simpleUpdateTarget(cl)
		if err != nil {
			task.Logger().Error("the attribute #UpdateService.SimpleUpdate is missing", "node", n.UUID, "error", err)
			return redfishError(err.Error())
		}
		systems, err := cl.c.systemsPath(cl)
		if err != nil {
			return redfishError(err.Error())
		}
		coll, err := common.GetCollection(cl, systems)
		if err != nil {
			task.Logger().Error("failed getting the Redfish Systems collection", "node", n.UUID, "error", err)
			return redfishError(err.Error())
		}
		body := map[string]any{"ImageURI": componentURL}
		if len(coll.ItemLinks) > 1 && info.SystemID != "" {
			body["Targets"] = []string{info.SystemID}
		}
		task.Logger().Debug("applying new firmware", "node", n.UUID, "component", upd["component"], "url", imageURL)
		resp, err := cl.Post(target, body)
		if err != nil {
			return redfishError(errText(err))
		}
		defer resp.Body.Close()
		monitor := taskMonitorURI(resp)
		if monitor == "" {
			return redfishError(fmt.Sprintf("the BMC of node %s started no task for the firmware update of %s", n.UUID, imageURL))
		}
		upd[fwTaskMonitorKey] = monitor
		return nil
	})
	recordStaging(n, staged)
	if err != nil && staged != "" {
		// Upstream leaves what it staged behind when the BMC refuses
		// the update; nothing would use it again.
		f.cleanupFirmware(ctx, task)
		n.InternalInfo().Delete(fwCleanupKey)
	}
	return err
}

// simpleUpdateTarget reads the UpdateService's SimpleUpdate action.
func simpleUpdateTarget(cl *client) (string, error) {
	var root struct{ UpdateService common.Link }
	if err := cl.getJSON(cl.c.info.RootPrefix, &root); err != nil {
		return "", err
	}
	if root.UpdateService == "" {
		return "", fmt.Errorf("The attribute UpdateService is missing from the resource %s", cl.c.info.RootPrefix)
	}
	var svc struct {
		Actions map[string]struct {
			Target string `json:"target"`
		}
	}
	if err := cl.getJSON(root.UpdateService.String(), &svc); err != nil {
		return "", err
	}
	a, ok := svc.Actions[simpleUpdateActionKey]
	if !ok || a.Target == "" {
		return "", fmt.Errorf("The attribute %s is missing from the resource %s", simpleUpdateActionKey, root.UpdateService)
	}
	return a.Target, nil
}

// managerFirmware is the part of the Manager the firmware code reads.
type managerFirmware struct {
	FirmwareVersion string
	Model           string
}

func (f *Firmware) readManager(ctx context.Context, task *driver.Task) (*managerFirmware, error) {
	sys, err := f.core.getSystem(ctx, task)
	if err != nil {
		return nil, err
	}
	managers := sys.links("ManagedBy")
	if len(managers) == 0 {
		return nil, redfishError("Couldn't find any Sushy Manager")
	}
	var m managerFirmware
	if err := sys.cl.getJSON(managers[0], &m); err != nil {
		return nil, redfishError(err.Error())
	}
	return &m, nil
}

// bmcFirmwareVersion is upstream _get_current_bmc_version: a BMC busy
// restarting answers nothing, which is not an error.
func (f *Firmware) bmcFirmwareVersion(ctx context.Context, task *driver.Task) (string, bool) {
	m, err := f.readManager(ctx, task)
	if err != nil {
		task.Logger().Debug("BMC temporarily unresponsive", "node", task.Node.UUID, "error", err)
		return "", false
	}
	return m.FirmwareVersion, true
}

// CacheFirmwareComponents reads the components; storing them is the
// conductor's part (through FirmwareComponents).
func (f *Firmware) CacheFirmwareComponents(ctx context.Context, task *driver.Task) error {
	_, err := f.FirmwareComponents(ctx, task)
	return err
}

// FirmwareComponents is upstream cache_firmware_components without the
// writes: the system's BiosVersion, the manager's FirmwareVersion and the
// firmware package of each network adapter controller.
func (f *Firmware) FirmwareComponents(ctx context.Context, task *driver.Task) ([]model.FirmwareComponent, error) {
	n := task.Node
	sys, err := f.core.getSystem(ctx, task)
	if err != nil {
		return nil, err
	}
	var out []model.FirmwareComponent
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	if sys.BIOSVersion != "" {
		out = append(out, model.FirmwareComponent{NodeID: n.ID, Component: componentBIOS, CurrentVersion: str(sys.BIOSVersion)})
	} else {
		task.Logger().Debug("could not retrieve BiosVersion", "node", n.UUID, "system", sys.ID)
	}
	if managers := sys.links("ManagedBy"); len(managers) > 0 {
		var m managerFirmware
		switch err := sys.cl.getJSON(managers[0], &m); {
		case err != nil:
			task.Logger().Warn("no manager available to retrieve firmware from the BMC", "node", n.UUID, "error", err)
		case m.FirmwareVersion != "":
			out = append(out, model.FirmwareComponent{NodeID: n.ID, Component: componentBMC,
				CurrentVersion: str(m.FirmwareVersion), Model: str(m.Model)})
		default:
			task.Logger().Debug("could not retrieve the manager's FirmwareVersion", "node", n.UUID)
		}
	} else {
		task.Logger().Warn("no manager available to retrieve firmware from the BMC", "node", n.UUID)
	}
	nics, err := nicComponents(sys)
	if err != nil {
		task.Logger().Warn("unable to access NetworkAdapters", "node", n.UUID, "error", err)
	}
	for _, c := range nics {
		c.NodeID = n.ID
		out = append(out, c)
	}
	if len(out) == 0 {
		msg := fmt.Sprintf("Cannot retrieve firmware for node %s: no supported components", n.UUID)
		task.Logger().Error(msg)
		return nil, errs.NewMessage(errs.ClassUnsupportedDriverExtension, msg)
	}
	return out, nil
}

// nicComponents is upstream retrieve_nic_components: one component per
// network adapter controller reporting a firmware package, named after
// the adapter's serial number (or identity).
func nicComponents(sys *system) ([]model.FirmwareComponent, error) {
	var out []model.FirmwareComponent
	for _, chassisPath := range sys.links("Chassis") {
		var ch struct{ NetworkAdapters common.Link }
		if err := sys.cl.getJSON(chassisPath, &ch); err != nil {
			return out, err
		}
		if ch.NetworkAdapters == "" {
			continue
		}
		coll, err := common.GetCollection(sys.cl, ch.NetworkAdapters.String())
		if err != nil {
			return out, err
		}
		for _, p := range coll.ItemLinks {
			var a struct {
				ID           string `json:"Id"`
				SerialNumber string
				Manufacturer string
				Model        string
				Controllers  []struct{ FirmwarePackageVersion string }
			}
			if err := sys.cl.getJSON(p, &a); err != nil {
				return out, err
			}
			for _, c := range a.Controllers {
				if c.FirmwarePackageVersion == "" {
					continue
				}
				id := a.SerialNumber
				if id == "" {
					id = a.ID
				}
				v := c.FirmwarePackageVersion
				fc := model.FirmwareComponent{Component: nicPrefix + id, CurrentVersion: &v}
				if a.Manufacturer != "" {
					fc.Vendor = &a.Manufacturer
				}
				if a.Model != "" {
					fc.Model = &a.Model
				}
				if a.SerialNumber != "" {
					fc.SerialNumber = &a.SerialNumber
				}
				out = append(out, fc)
			}
		}
		break
	}
	return out, nil
}

// stepFailure is a step failure whose message is upstream's last_error as
// is (the conductor hands it to the flow's error handler).
type stepFailure struct{ msg string }

func (e *stepFailure) Error() string { return e.msg }

func stepError(format string, a ...any) error { return &stepFailure{msg: fmt.Sprintf(format, a...)} }

// isGone tells a task monitor the BMC no longer has.
func isGone(err error) bool {
	var herr *HTTPError
	return errors.Is(err, errTaskGone) || (errors.As(err, &herr) && herr.Status == http.StatusNotFound)
}

// jsonInt reads a number stored in driver_internal_info.
func jsonInt(v any) (int, bool) {
	switch x := v.(type) {
	case float64:
		return int(x), true
	case int:
		return x, true
	case int64:
		return int(x), true
	case json.Number:
		i, err := x.Int64()
		return int(i), err == nil
	}
	return 0, false
}
