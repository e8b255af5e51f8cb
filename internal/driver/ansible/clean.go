package ansible

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/pyfmt"
)

// cleanStep is one step of the clean steps file: its declaration and
// the default value of each argument (upstream's "value"), which
// automated cleaning, having no arguments of its own, runs with.
type cleanStep struct {
	spec     driver.StepSpec
	defaults map[string]any
}

// cleanStepsPath is upstream's: the file's base name inside the node's
// playbooks directory.
func (d *Deploy) cleanStepsPath(n *model.Node) (string, error) {
	file := d.opts.DefaultCleanStepsConfig
	if v, ok := n.DriverInfo["ansible_clean_steps_config"].(string); ok && v != "" {
		file = v
	}
	dir, err := d.playbooksDir(n)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(file)), nil
}

// cleanSteps is upstream _get_clean_steps for the deploy interface: the
// file's steps of interface deploy, in the file's order, with
// [deploy]/erase_devices_priority and erase_devices_metadata_priority
// replacing their steps' priorities when set.
func (d *Deploy) cleanSteps(n *model.Node) ([]cleanStep, error) {
	path, err := d.cleanStepsPath(n)
	if err != nil {
		return nil, err
	}
	raw, err := loadCleanSteps(path)
	if err != nil {
		return nil, cleaningFailure(n, fmt.Sprintf("Failed to load clean steps from file %s: %s", path, err))
	}
	if err := validateCleanSteps(raw); err != nil {
		return nil, cleaningFailure(n, err.Error())
	}
	override := map[string]*int{"erase_devices": d.erasePriority, "erase_devices_metadata": d.eraseMetadataPriority}
	var out []cleanStep
	for _, params := range raw {
		if params["interface"] != string(driver.KindDeploy) {
			continue
		}
		name := params["name"].(string) // validated
		priority := intOf(params["priority"])
		if p := override[name]; p != nil {
			priority = *p
		}
		s := cleanStep{spec: driver.CleanStep(name, priority), defaults: map[string]any{}}
		args, _ := params["args"].(map[string]any)
		if len(args) > 0 {
			s.spec.ArgsInfo = map[string]driver.ArgInfo{}
		}
		for arg, v := range args {
			info, _ := v.(map[string]any)
			ai := driver.ArgInfo{}
			ai.Description, _ = info["description"].(string)
			if req, ok := info["required"].(bool); ok {
				ai.Required = &req
			}
			s.spec.ArgsInfo[arg] = ai
			s.defaults[arg] = info["value"]
		}
		out = append(out, s)
	}
	return out, nil
}

// loadCleanSteps reads the YAML list of steps at path, each step a
// mapping.
func loadCleanSteps(path string) ([]map[string]any, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Upstream's text is Python's for a missing file.
		return nil, fmt.Errorf("[Errno 2] No such file or directory: %s", pyfmt.Repr(path))
	}
	if err != nil {
		return nil, err
	}
	var raw []map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// validateCleanSteps is upstream _validate_clean_steps: every step needs
// a name and an interface, every required argument a value, and names
// are unique. All the missing fields are reported at once.
func validateCleanSteps(steps []map[string]any) error {
	var missing []string
	for _, step := range steps {
		name, _ := step["name"].(string)
		if name == "" {
			missing = append(missing, "name undefined, field name")
			continue
		}
		if _, ok := step["interface"]; !ok {
			missing = append(missing, fmt.Sprintf("name %s, field interface", name))
		}
		args, _ := step["args"].(map[string]any)
		for _, arg := range sortedKeys(args) {
			info, _ := args[arg].(map[string]any)
			if _, has := info["value"]; !has && info["required"] == true {
				missing = append(missing, fmt.Sprintf("name %s, field %s.value", name, arg))
			}
		}
	}
	if len(missing) > 0 {
		return errors.New("Malformed clean_steps file: " + strings.Join(missing, ", "))
	}
	seen := map[string]bool{}
	for _, step := range steps {
		seen[step["name"].(string)] = true
	}
	if len(seen) != len(steps) {
		return errors.New("Cleaning steps do not have unique names.")
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Upstream walks the YAML mapping in file order; yaml.v3 gives a
	// map, so the report is made stable by name instead.
	slices.Sort(keys)
	return keys
}

func cleaningFailure(n *model.Node, reason string) error {
	return errs.New(errs.ClassNodeCleaningFailure, map[string]any{"node": n.UUID, "reason": reason})
}

// executeCleanStep is upstream execute_clean_step: the clean playbook
// runs against the ramdisk with the step's tags, synchronously; the step
// is done when it returns. Automated cleaning passes no arguments, so
// the tags are the step's default from the clean steps file.
func (d *Deploy) executeCleanStep(ctx context.Context, task *driver.Task, step driver.Step) (string, error) {
	n := task.Node
	tagsArg, ok := step.Args["tags"]
	if !ok {
		steps, err := d.cleanSteps(n)
		if err != nil {
			return "", err
		}
		i := slices.IndexFunc(steps, func(s cleanStep) bool { return s.spec.Name == step.Name })
		if i < 0 {
			// Without tags the playbook would run every task, erasing
			// what the step never asked for.
			return "", cleaningFailure(n, fmt.Sprintf("clean step %s is not in the clean steps file and was given no tags", step.Name))
		}
		tagsArg = steps[i].defaults["tags"]
	}
	tags, err := stepTags(tagsArg)
	if err != nil {
		return "", errs.New(errs.ClassInvalidParameterValue, map[string]any{"err": fmt.Sprintf("clean step %s: %s", step.Name, err)})
	}
	var vars map[string]any
	if len(n.TargetRAIDConfig) > 0 {
		vars = map[string]any{"raid_config": n.TargetRAIDConfig}
	}
	task.Logger().DebugContext(ctx, "starting ansible clean step", "node", n.UUID, "step", step.Name, "tags", tags)
	if err := d.runPlaybook(ctx, n, "clean", vars, tags); err != nil {
		return "", err
	}
	task.Logger().InfoContext(ctx, "ansible completed the clean step", "node", n.UUID, "step", step.Name)
	return "", nil
}

// stepTags reads the tags argument: a list of tag names (none runs the
// whole playbook, as upstream).
func stepTags(v any) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []string:
		return x, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, t := range x {
			s, ok := t.(string)
			if !ok {
				return nil, fmt.Errorf("tags must be a list of strings, not %s", pyfmt.Repr(v))
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("tags must be a list of strings, not %s", pyfmt.Repr(v))
}

// PrepareCleaning is upstream prepare_cleaning: the cleaning network is
// added and the ramdisk prepared, then the node reboots into it and the
// first heartbeat of its agent starts the steps. Under fast track, with
// the ramdisk of an earlier operation still up, the steps start at once.
//
// Upstream first works out the node's clean steps and returns without
// booting the ramdisk when there are none; here the conductor sets the
// steps after this call, so the ramdisk boots and the cleaning without
// steps ends at its first heartbeat.
func (d *Deploy) PrepareCleaning(ctx context.Context, task *driver.Task) (string, error) {
	if err := task.Driver.Network.AddCleaningNetwork(ctx, task); err != nil {
		return "", fmt.Errorf("add cleaning network: %w", err)
	}
	task.Node.InternalInfo().Set(model.DIIAgentStartAttempted, true)
	if err := task.Driver.Boot.PrepareRamdisk(ctx, task, nil); err != nil {
		return "", fmt.Errorf("prepare ramdisk: %w", err)
	}
	if d.fastTrack.Active(ctx, task) {
		return "", nil
	}
	wipeOnPowerAction(task.Node)
	if err := task.Driver.Power.Reboot(ctx, task, 0); err != nil {
		return "", fmt.Errorf("reboot into the ramdisk: %w", err)
	}
	task.Node.PowerState = "power on"
	return "clean wait", nil
}
