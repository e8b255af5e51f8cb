package agent

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/openkeel/ironic/internal/agentclient"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
	"github.com/openkeel/ironic/internal/states"
)

// RAIDOptions configure the agent RAID interface.
type RAIDOptions struct {
	Client *agentclient.Client
	// CreatePriority and DeletePriority are [deploy]/
	// create_configuration_priority and delete_configuration_priority:
	// when set they replace the agent's priorities of those clean steps.
	CreatePriority *int
	DeletePriority *int
	// Now stamps raid_config's last_updated; nil is time.Now.
	Now func() time.Time
}

// RAID is upstream AgentRAID: RAID is built and removed in band by the
// agent's clean (and deploy) steps; the steps are the ones the agent
// reported, and the node's raid_config follows what the agent answered.
type RAID struct {
	b    base
	opts RAIDOptions
}

var (
	_ driver.RAIDInterface       = (*RAID)(nil)
	_ driver.RAIDConfigValidator = (*RAID)(nil)
	_ driver.StepRunner          = (*RAID)(nil)
	_ driver.StepLister          = (*RAID)(nil)
	_ PostStepHooker             = (*RAID)(nil)
)

// NewRAID returns the agent RAID interface.
func NewRAID(o RAIDOptions) *RAID {
	if o.Client == nil {
		o.Client = agentclient.New(agentclient.DefaultOptions())
	}
	return &RAID{b: base{opts: Options{Client: o.Client}}, opts: o}
}

// RegisterRAID adds the agent RAID interface to r.
func RegisterRAID(r *driver.Registry, o RAIDOptions) error {
	if err := r.Register(driver.KindRAID, "agent", NewRAID(o)); err != nil {
		return fmt.Errorf("register agent raid: %w", err)
	}
	return nil
}

var raidApplyArgs = map[string]driver.ArgInfo{
	"raid_config": driver.Required("The RAID configuration to apply."),
	"delete_existing": driver.Optional("Setting this to 'True' indicates to delete existing RAID configuration " +
		"prior to creating the new configuration. Default value is 'True'."),
}

// Properties: the interface reads nothing from driver_info.
func (r *RAID) Properties() map[string]string { return map[string]string{} }

// Steps are the decorated methods: create and delete as clean steps (no
// argsinfo), apply as a deploy and a service step.
func (r *RAID) Steps() []driver.StepSpec {
	return []driver.StepSpec{
		driver.CleanStep("create_configuration", 0),
		driver.CleanStep("delete_configuration", 0),
		driver.DeployStep("apply_configuration", 0).WithArgs(raidApplyArgs),
		driver.ServiceStep("apply_configuration").WithArgs(raidApplyArgs),
	}
}

// ListSteps is AgentRAID's get_clean_steps and get_deploy_steps: the raid
// steps the agent reported, with the configured clean priorities; other
// kinds keep the declared steps.
func (r *RAID) ListSteps(_ context.Context, task *driver.Task, kind driver.StepKind) ([]driver.StepSpec, error) {
	switch kind {
	case driver.StepClean:
		return cachedStepsWith(task.Node, kind, driver.KindRAID, map[string]*int{
			"create_configuration": r.opts.CreatePriority,
			"delete_configuration": r.opts.DeletePriority,
		}), nil
	case driver.StepDeploy:
		return cachedStepsWith(task.Node, kind, driver.KindRAID, nil), nil
	}
	var out []driver.StepSpec
	for _, s := range r.Steps() {
		if s.Kind == kind {
			out = append(out, s)
		}
	}
	return out, nil
}

// Validate checks target_raid_config when one is set.
func (r *RAID) Validate(ctx context.Context, task *driver.Task) error {
	if len(task.Node.TargetRAIDConfig) == 0 {
		return nil
	}
	return r.ValidateRAIDConfig(ctx, task, task.Node.TargetRAIDConfig)
}

// ValidateRAIDConfig is the base check: upstream's agent RAID interface
// has none of its own.
func (r *RAID) ValidateRAIDConfig(_ context.Context, _ *driver.Task, raidConfig map[string]any) error {
	return driver.ValidateRAIDConfig(raidConfig)
}

// StepHandlers run the steps in band.
func (r *RAID) StepHandlers() map[string]driver.StepFunc {
	return map[string]driver.StepFunc{
		"create_configuration": func(ctx context.Context, task *driver.Task, args map[string]any) (string, error) {
			return r.CreateConfiguration(ctx, task, boolArg(args, "create_root_volume", true), boolArg(args, "create_nonroot_volumes", true), false)
		},
		"delete_configuration": func(ctx context.Context, task *driver.Task, _ map[string]any) (string, error) {
			return r.DeleteConfiguration(ctx, task)
		},
		"apply_configuration": func(ctx context.Context, task *driver.Task, args map[string]any) (string, error) {
			cfg, ok := args["raid_config"].(map[string]any)
			if !ok {
				return "", driver.InvalidParameterValue("RAID config validation error: %s is not of type 'object'", pyfmt.Repr(args["raid_config"]))
			}
			return r.applyConfiguration(ctx, task, cfg)
		},
	}
}

func boolArg(args map[string]any, name string, def bool) bool {
	switch v := args[name].(type) {
	case bool:
		return v
	case string:
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return def
}

// applyConfiguration validates the configuration and hands the current
// step to the agent, which builds it. Upstream's service step sends
// node.deploy_step, empty while servicing; the service step is sent here.
func (r *RAID) applyConfiguration(ctx context.Context, task *driver.Task, raidConfig map[string]any) (string, error) {
	if err := r.ValidateRAIDConfig(ctx, task, raidConfig); err != nil {
		return "", err
	}
	n := task.Node
	if states.ServicingStates.Contains(n.ProvisionState) {
		return r.b.executeInband(ctx, task, driver.StepService, n.ServiceStep)
	}
	return r.b.executeInband(ctx, task, driver.StepDeploy, n.DeployStep)
}

// CreateConfiguration sends the current clean step to the agent, with the
// target configuration filtered as asked recorded in
// driver_internal_info for it. deleteExisting is not an argument of
// upstream's agent step and is ignored.
func (r *RAID) CreateConfiguration(ctx context.Context, task *driver.Task, createRoot, createNonroot, _ bool) (string, error) {
	n := task.Node
	target, err := filterTargetRAIDConfig(n, createRoot, createNonroot)
	if err != nil {
		return "", err
	}
	n.InternalInfo().Set(model.DIITargetRAIDConfig, target)
	return r.b.executeInband(ctx, task, driver.StepClean, n.CleanStep)
}

// DeleteConfiguration sends the current clean step to the agent.
func (r *RAID) DeleteConfiguration(ctx context.Context, task *driver.Task) (string, error) {
	return r.b.executeInband(ctx, task, driver.StepClean, task.Node.CleanStep)
}

// PostStepHooks are upstream's post step hooks of the raid interface.
func (r *RAID) PostStepHooks(kind driver.StepKind) map[string]PostStepHook {
	created := PostStepHook{Name: "_create_configuration_final", Fn: r.createConfigurationFinal}
	switch kind {
	case driver.StepClean:
		return map[string]PostStepHook{
			"create_configuration": created,
			"delete_configuration": {Name: "_delete_configuration_final", Fn: deleteConfigurationFinal},
		}
	case driver.StepDeploy:
		return map[string]PostStepHook{"apply_configuration": created}
	}
	return nil
}

// createConfigurationFinal stores what the agent built as raid_config
// and updates the node's properties from its root volume.
func (r *RAID) createConfigurationFinal(_ context.Context, task *driver.Task, cmd *agentclient.CommandResult) error {
	n := task.Node
	key := "clean_result"
	if n.ProvisionState == states.DeployWait {
		key = "deploy_result"
	}
	result, _ := cmd.ResultMap()[key].(map[string]any)
	if len(result) == 0 {
		return errs.NewMessage(errs.ClassIronicException, fmt.Sprintf(
			"Agent ramdisk didn't return a proper command result while building RAID on %s. It returned '%s' after command execution.",
			n.UUID, pyfmt.Repr(commandDict(cmd))))
	}
	now := time.Now
	if r.opts.Now != nil {
		now = r.opts.Now
	}
	return updateRAIDInfo(n, result, now().UTC())
}

func deleteConfigurationFinal(_ context.Context, task *driver.Task, _ *agentclient.CommandResult) error {
	n := task.Node
	delete(n.Properties, "root_device")
	n.RAIDConfig = map[string]any{}
	return nil
}

// commandDict is the command as upstream's hooks receive it.
func commandDict(cmd *agentclient.CommandResult) map[string]any {
	return map[string]any{
		"id": cmd.ID, "command_name": cmd.Name, "command_status": cmd.Status,
		"command_error": cmd.Error, "command_result": cmd.Result,
	}
}

// filterTargetRAIDConfig is upstream raid.filter_target_raid_config.
func filterTargetRAIDConfig(n *model.Node, createRoot, createNonroot bool) (map[string]any, error) {
	if len(n.TargetRAIDConfig) == 0 {
		return nil, driver.MissingParameterValue("Node %s has no target RAID configuration.", n.UUID)
	}
	target := maps.Clone(n.TargetRAIDConfig)
	disks, _ := target["logical_disks"].([]any)
	var skipped []string
	keep := func(wantRoot bool) {
		var out []any
		for _, d := range disks {
			ld, _ := d.(map[string]any)
			if isRoot(ld) == wantRoot {
				out = append(out, d)
			}
		}
		disks = out
	}
	if !createRoot {
		keep(false)
		skipped = append(skipped, "skipping root volume")
	}
	if !createNonroot {
		keep(true)
		skipped = append(skipped, "skipping non-root volumes")
	}
	if len(disks) == 0 {
		return nil, driver.MissingParameterValue("Node %s has empty target RAID configuration after %s.", n.UUID, strings.Join(skipped, " and "))
	}
	if disks == nil {
		disks = []any{}
	}
	target["logical_disks"] = disks
	return target, nil
}

func isRoot(ld map[string]any) bool { return pyfmt.Truthy(ld["is_root_volume"]) }

// rootVolume returns the root logical disk, nil when there is none, and
// refuses several.
func rootVolume(cfg map[string]any) (map[string]any, error) {
	disks, _ := cfg["logical_disks"].([]any)
	var roots []map[string]any
	for _, d := range disks {
		if ld, ok := d.(map[string]any); ok && isRoot(ld) {
			roots = append(roots, ld)
		}
	}
	if len(roots) > 1 {
		return nil, driver.InvalidParameterValue("Raid config cannot have more than one root volume. %d root volumes were specified", len(roots))
	}
	if len(roots) == 0 {
		return nil, nil
	}
	return roots[0], nil
}

// updateRAIDInfo is upstream raid.update_raid_info: raid_config is the
// built configuration stamped with last_updated, and the root volume sets
// local_gb, root_device and the raid_level capability.
func updateRAIDInfo(n *model.Node, cfg map[string]any, now time.Time) error {
	root, err := rootVolume(cfg)
	if err != nil {
		return err
	}
	current := maps.Clone(cfg)
	current["last_updated"] = pyDatetime(now)
	n.RAIDConfig = current
	if root == nil {
		return nil
	}
	if n.Properties == nil {
		n.Properties = map[string]any{}
	}
	if size, ok := root["size_gb"]; ok && size != "MAX" {
		gb, ok := pyfmt.Int(fmt.Sprint(size))
		if !ok {
			return valueError(fmt.Sprintf("invalid literal for int() with base 10: %s", pyfmt.Repr(size)))
		}
		n.Properties["local_gb"] = gb
	}
	if hint, ok := root["root_device_hint"]; ok {
		n.Properties["root_device"] = hint
	}
	caps, err := updatedCapabilities(n.Properties["capabilities"], "raid_level", fmt.Sprint(root["raid_level"]))
	if err != nil {
		return err
	}
	n.Properties["capabilities"] = caps
	return nil
}

// pyDatetime is str() of a naive datetime: microseconds only when
// non-zero.
func pyDatetime(t time.Time) string {
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02 15:04:05")
	}
	return t.Format("2006-01-02 15:04:05.000000")
}

// valueError is a Python ValueError raised by upstream's helpers; its
// class name shows in the failure of a post step hook.
type valueError string

func (e valueError) Error() string { return string(e) }

// updatedCapabilities is utils.get_updated_capabilities for one key: the
// "k:v,…" string with key set, the other entries kept in order.
func updatedCapabilities(current any, key, value string) (string, error) {
	var s string
	switch c := current.(type) {
	case nil:
	case string:
		s = c
	default:
		return "", valueError(fmt.Sprintf("Invalid capabilities string '%s'.", pyfmt.Str(current)))
	}
	var parts []string
	replaced := false
	if s != "" {
		for item := range strings.SplitSeq(s, ",") {
			k, _, ok := strings.Cut(item, ":")
			if !ok {
				return "", valueError(fmt.Sprintf("Invalid capabilities string '%s'.", s))
			}
			if k == key {
				item, replaced = key+":"+value, true
			}
			parts = append(parts, item)
		}
	}
	if !replaced {
		parts = append(parts, key+":"+value)
	}
	return strings.Join(parts, ","), nil
}
