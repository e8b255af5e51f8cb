package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/model"
)

// RAID is upstream RedfishRAID: logical disks of target_raid_config become
// Volumes POSTed to the Storage controller's Volumes collection. A BMC
// that answers with 202 and a task monitor is followed by the conductor's
// periodic (PollAsyncStep) after a reboot, as upstream does.
type RAID struct {
	core *core
}

var (
	_ driver.RAIDInterface       = (*RAID)(nil)
	_ driver.RAIDConfigValidator = (*RAID)(nil)
	_ driver.StepRunner          = (*RAID)(nil)
)

var (
	raidCreateArgs = map[string]driver.ArgInfo{
		"create_root_volume":     driver.Optional("This specifies whether to create the root volume. Defaults to `True`."),
		"create_nonroot_volumes": driver.Optional("This specifies whether to create the non-root volumes. Defaults to `True`."),
		"delete_existing": driver.Optional("Setting this to `True` indicates to delete existing RAID configuration " +
			"prior to creating the new configuration. Default value is `False`."),
	}
	raidApplyArgs = map[string]driver.ArgInfo{
		"raid_config": driver.Required("The RAID configuration to apply."),
		"create_root_volume": driver.Optional("Setting this to 'False' indicates not to create root volume that is " +
			"specified in 'raid_config'. Default value is 'True'."),
		"create_nonroot_volumes": driver.Optional("Setting this to 'False' indicates not to create non-root volumes " +
			"(all except the root volume) in 'raid_config'. Default value is 'True'."),
		"delete_existing": driver.Optional("Setting this to 'True' indicates to delete existing RAID configuration " +
			"prior to creating the new configuration. Default value is 'True'."),
	}
)

// Properties are the common redfish driver_info properties.
func (r *RAID) Properties() map[string]string { return Properties() }

// Validate checks driver_info.
func (r *RAID) Validate(_ context.Context, task *driver.Task) error {
	_, err := ParseDriverInfo(task.Node, &r.core.opts)
	return err
}

// Steps declares upstream's decorated steps: create and delete as clean
// steps, apply and delete as deploy steps, apply and delete as service
// steps.
func (r *RAID) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.CleanStep("create_configuration", 0).WithArgs(raidCreateArgs),
		driver.CleanStep("delete_configuration", 0),
		driver.DeployStep("apply_configuration", 0).WithArgs(raidApplyArgs),
		driver.DeployStep("delete_configuration", 0),
		driver.ServiceStep("apply_configuration").WithArgs(raidApplyArgs),
		driver.ServiceStep("delete_configuration"),
	}
}

// StepHandlers maps the declared steps to their implementations.
func (r *RAID) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"create_configuration": func(ctx context.Context, task *driver.Task, args map[string]any) (string, error) {
			return r.CreateConfiguration(ctx, task, boolArg(args, "create_root_volume", true),
				boolArg(args, "create_nonroot_volumes", true), boolArg(args, "delete_existing", false))
		},
		"delete_configuration": func(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
			return r.DeleteConfiguration(ctx, task)
		},
		"apply_configuration": func(ctx context.Context, task *driver.Task, args map[string]any) (string, error) {
			cfg, ok := args["raid_config"].(map[string]any)
			if !ok {
				return "", driver.InvalidParameterValue("raid_config must be a dictionary, got %v", args["raid_config"])
			}
			// Upstream's redfish override defaults create_nonroot_volumes
			// to False, unlike its argsinfo text.
			return r.ApplyConfiguration(ctx, task, cfg, boolArg(args, "create_root_volume", true),
				boolArg(args, "create_nonroot_volumes", false), boolArg(args, "delete_existing", false))
		},
	}
}

func boolArg(args map[string]any, name string, def bool) bool {
	if v, ok := args[name].(bool); ok {
		return v
	}
	return def
}

// ValidateRAIDConfig is the base check, then SCSI disks are refused:
// Redfish RAID does not support them.
func (r *RAID) ValidateRAIDConfig(_ context.Context, _ *driver.Task, raidConfig map[string]any) error {
	if err := driver.ValidateRAIDConfig(raidConfig); err != nil {
		return err
	}
	disks, _ := raidConfig["logical_disks"].([]any)
	for _, d := range disks {
		if ld, _ := d.(map[string]any); ld["interface_type"] == "scsi" {
			return driver.InvalidParameterValue("interface type `scsi` not supported by Redfish RAID")
		}
	}
	return nil
}

// ApplyConfiguration is upstream apply_configuration: the configuration
// becomes the node's target_raid_config and is created.
func (r *RAID) ApplyConfiguration(ctx context.Context, task *driver.Task, raidConfig map[string]any,
	createRoot, createNonroot, deleteExisting bool) (string, error) {
	if err := r.ValidateRAIDConfig(ctx, task, raidConfig); err != nil {
		return "", err
	}
	task.Node.TargetRAIDConfig = raidConfig
	return r.CreateConfiguration(ctx, task, createRoot, createNonroot, deleteExisting)
}

// CreateConfiguration creates the logical disks of target_raid_config as
// Volumes, grouped by controller; deleteExisting is accepted and ignored,
// as upstream does. When the BMC runs a creation as a task, the other
// volumes of that controller wait for it (raid_configs pending) and the
// node reboots to apply it.
func (r *RAID) CreateConfiguration(ctx context.Context, task *driver.Task, createRoot, createNonroot, _ bool) (string, error) {
	n := task.Node
	lds, err := parseLogicalDisks(n)
	if err != nil {
		return "", err
	}
	var cfg raidConfigs
	err = r.core.withConnection(ctx, task, func(cl *client, info DriverInfo) error {
		sys, err := fetchSystem(cl, info)
		if err != nil {
			return redfishError(err.Error())
		}
		disks, storages, err := physicalDisks(cl, sys)
		if err != nil {
			task.Logger().Error("cannot get the list of physical disks", "node", n.UUID, "error", err)
			return redfishError(err.Error())
		}
		volumes, err := findConfiguration(lds, disks)
		if err != nil {
			task.Logger().Error("Redfish driver failed to create RAID configuration", "node", n.UUID, "error", err)
			return err
		}
		var create []*logicalDisk
		for _, ld := range volumes {
			if (createRoot && ld.isRoot) || (createNonroot && !ld.isRoot) {
				create = append(create, ld)
			}
		}
		if hook := r.core.ext.BeforeRAIDCreate; hook != nil {
			changed, err := hook(ctx, task, &Session{cl: cl, sys: sys}, drivesByController(create))
			if err != nil {
				return err
			}
			if changed {
				if disks, storages, err = physicalDisks(cl, sys); err != nil {
					return redfishError(err.Error())
				}
				if create, err = revalidateLogicalDisks(create, disks); err != nil {
					return err
				}
			}
		}
		slices.SortStableFunc(create, func(a, b *logicalDisk) int { return strings.Compare(a.controller, b.controller) })
		cfg, err = submitCreate(cl, task, storages, disks, create)
		return err
	})
	if err != nil {
		return "", err
	}
	return r.finishSubmit(ctx, task, cfg)
}

// finishSubmit is the end of upstream create/delete_configuration: the
// flags for the periodic, then a reboot to run the BMC's tasks, or the
// node's raid_config read back when everything was done at once.
func (r *RAID) finishSubmit(ctx context.Context, task *driver.Task, cfg raidConfigs) (string, error) {
	async := len(cfg.monitors) > 0
	if async {
		task.Node.InternalInfo().Set(raidConfigsKey, cfg.toMap())
	}
	setAsyncStepFlags(task.Node, ptr(async), ptr(true), ptr(true))
	if async {
		return rebootToFinishStep(ctx, task)
	}
	return "", r.readBackRAIDConfig(ctx, task)
}

// readBackRAIDConfig is update_raid_config on its own connection.
func (r *RAID) readBackRAIDConfig(ctx context.Context, task *driver.Task) error {
	return r.core.withConnection(ctx, task, func(cl *client, info DriverInfo) error {
		sys, err := fetchSystem(cl, info)
		if err != nil {
			return redfishError(err.Error())
		}
		return updateRAIDConfig(cl, sys, task.Node, r.core.opts.clock().Now().UTC().Format("2006-01-02 15:04:05.000000"))
	})
}

// submitCreate is upstream _submit_create_configuration: per controller,
// volumes are created in order until the BMC answers with a task; the
// rest of that controller's volumes wait in pending.
func submitCreate(cl *client, task *driver.Task, storages map[string]*storageDoc, disks []*physDisk, create []*logicalDisk) (raidConfigs, error) {
	cfg := raidConfigs{operation: "create", pending: map[string][]map[string]any{}}
	blocked := map[string]bool{}
	for _, ld := range create {
		if blocked[ld.controller] {
			cfg.pending[ld.controller] = append(cfg.pending[ld.controller], ld.toMap())
			continue
		}
		monitor, err := createVolume(cl, task, storages, disks, ld)
		if err != nil {
			return cfg, err
		}
		if monitor != "" {
			cfg.monitors = append(cfg.monitors, monitor)
			blocked[ld.controller] = true
		}
	}
	return cfg, nil
}

// DeleteConfiguration deletes every RAID volume of every RAID controller.
func (r *RAID) DeleteConfiguration(ctx context.Context, task *driver.Task) (string, error) {
	var cfg raidConfigs
	err := r.core.withConnection(ctx, task, func(cl *client, info DriverInfo) error {
		var err error
		cfg, err = submitDelete(cl, task, info)
		return err
	})
	if err != nil {
		return "", err
	}
	return r.finishSubmit(ctx, task, cfg)
}

// submitDelete is upstream _submit_delete_configuration: every RAID
// volume is deleted; the tasks the BMC answers with are kept.
func submitDelete(cl *client, task *driver.Task, info DriverInfo) (raidConfigs, error) {
	n := task.Node
	cfg := raidConfigs{operation: "delete"}
	sys, err := fetchSystem(cl, info)
	if err != nil {
		return cfg, redfishError(err.Error())
	}
	docs, err := storageDocs(cl, sys)
	if err != nil {
		task.Logger().Error("cannot get the list of volumes to delete", "node", n.UUID, "error", err)
		return cfg, redfishError(err.Error())
	}
	for _, st := range docs {
		vols, err := volumeDocs(cl, st)
		if err != nil {
			return cfg, redfishError(err.Error())
		}
		for _, v := range vols {
			if v.RAIDType == "" && (v.VolumeType == "" || v.VolumeType == "RawDevice") {
				continue
			}
			resp, err := cl.Delete(v.ODataID)
			if err != nil {
				return cfg, redfishError(err.Error())
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusAccepted {
				cfg.monitors = append(cfg.monitors, taskMonitorURI(resp))
			}
		}
	}
	return cfg, nil
}

// taskMonitorURI is where a 202 answer says to follow the operation: its
// Location, else the task it returned.
func taskMonitorURI(resp *http.Response) string {
	if loc := resp.Header.Get("Location"); loc != "" {
		if u, err := url.Parse(loc); err == nil && u.IsAbs() {
			return u.RequestURI()
		}
		return loc
	}
	var doc struct {
		TaskMonitor string
		ODataID     string `json:"@odata.id"`
	}
	if json.NewDecoder(resp.Body).Decode(&doc) == nil {
		if doc.TaskMonitor != "" {
			return doc.TaskMonitor
		}
		return doc.ODataID
	}
	return ""
}

// createVolume is upstream create_virtual_disk: the Volume request goes to
// the first RAID controller holding one of the volume's drives. It returns
// the task monitor when the BMC runs the creation as a task.
func createVolume(cl *client, task *driver.Task, storages map[string]*storageDoc, disks []*physDisk, ld *logicalDisk) (string, error) {
	var st *storageDoc
	for _, d := range disks {
		if slices.Contains(ld.physical, d.id) {
			st = storages[d.storage]
			break
		}
	}
	if st == nil {
		return "", redfishError(fmt.Sprintf("No storage controller found for node %s", task.Node.UUID))
	}
	level := raidLevels[ld.level]
	payload := map[string]any{"Encrypted": false, "VolumeType": level.volumeType, "RAIDType": level.raidType,
		"CapacityBytes": ld.sizeBytes}
	if len(ld.physical) > 0 {
		links := []any{}
		for _, id := range ld.physical {
			for _, d := range disks {
				if d.id == id && d.storage == st.ID {
					links = append(links, map[string]any{"@odata.id": d.path})
				}
			}
		}
		payload["Links"] = map[string]any{"Drives": links}
	}
	var coll struct {
		ApplyTime struct{ SupportedValues []string } `json:"@Redfish.OperationApplyTimeSupport"`
	}
	if err := cl.getJSON(st.Volumes.ODataID, &coll); err != nil {
		return "", redfishError(err.Error())
	}
	switch {
	case slices.Contains(coll.ApplyTime.SupportedValues, "Immediate"):
		payload["@Redfish.OperationApplyTime"] = "Immediate"
	case slices.Contains(coll.ApplyTime.SupportedValues, "OnReset"):
		payload["@Redfish.OperationApplyTime"] = "OnReset"
	}
	task.Logger().Debug("payload for RAID logical disk creation", "node", task.Node.UUID, "payload", payload)
	resp, err := cl.Post(st.Volumes.ODataID, payload)
	if err != nil {
		task.Logger().Error("Redfish driver failed to create virtual disk", "node", task.Node.UUID, "error", err)
		return "", redfishError(errText(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusAccepted {
		return taskMonitorURI(resp), nil
	}
	return "", nil
}

// updateRAIDConfig is upstream update_raid_config: raid_config lists the
// RAID volumes the BMC now has.
func updateRAIDConfig(cl *client, sys *system, n *model.Node, now string) error {
	docs, err := storageDocs(cl, sys)
	if err != nil {
		return redfishError(err.Error())
	}
	lds := []any{}
	for _, st := range docs {
		vols, err := volumeDocs(cl, st)
		if err != nil {
			return redfishError(err.Error())
		}
		for _, v := range vols {
			if v.RAIDType == "" {
				continue
			}
			level := ""
			for _, k := range raidLevelOrder {
				if raidLevels[k].raidType == v.RAIDType {
					level = k
					break
				}
			}
			lds = append(lds, map[string]any{"id": v.ID, "name": v.Name, "controller": st.ID,
				"size_gb": v.CapacityBytes / gib, "raid_level": level})
		}
	}
	n.RAIDConfig = map[string]any{"logical_disks": lds, "last_updated": now}
	return nil
}

// raidLevel is upstream's RAID_LEVELS entry.
type raidLevel struct {
	minDisks, maxDisks, overhead int
	spanned                      bool
	volumeType, raidType         string
	spanType                     string
}

var raidLevelOrder = []string{"0", "1", "5", "6", "1+0", "5+0", "6+0"}

var raidLevels = map[string]raidLevel{
	"0":   {minDisks: 1, maxDisks: 1000, volumeType: "NonRedundant", raidType: "RAID0"},
	"1":   {minDisks: 2, maxDisks: 2, overhead: 1, volumeType: "Mirrored", raidType: "RAID1"},
	"5":   {minDisks: 3, maxDisks: 1000, overhead: 1, volumeType: "StripedWithParity", raidType: "RAID5"},
	"6":   {minDisks: 4, maxDisks: 1000, overhead: 2, volumeType: "StripedWithParity", raidType: "RAID6"},
	"1+0": {spanned: true, volumeType: "SpannedMirrors", raidType: "RAID10", spanType: "1"},
	"5+0": {spanned: true, volumeType: "SpannedStripesWithParity", raidType: "RAID50", spanType: "5"},
	"6+0": {spanned: true, volumeType: "SpannedStripesWithParity", raidType: "RAID60", spanType: "6"},
}

// spanLevel resolves a spanned level to its span's level, as upstream's
// _raid_level_overhead/_min_disks/_max_disks do.
func spanLevel(level string, spans int) (raidLevel, error) {
	info, ok := raidLevels[level]
	if !ok {
		return raidLevel{}, redfishError(fmt.Sprintf("RAID level %s is not supported by the driver. Supported RAID levels: %s",
			level, strings.Join(raidLevelOrder, ", ")))
	}
	if info.spanned {
		if spans <= 1 {
			return raidLevel{}, redfishError("Spanned RAID volumes cannot contain a single span")
		}
		info = raidLevels[info.spanType]
	}
	return info, nil
}

func calculateSpans(level string, disks int) (int, error) {
	switch level {
	case "0", "1", "5", "6":
		return 1, nil
	case "5+0", "6+0":
		return 2, nil
	case "1+0":
		return disks >> 1, nil
	}
	return 0, redfishError(fmt.Sprintf(`Cannot calculate spans for RAID level "%s"`, level))
}
