package conductor

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/openkeel/ironic/internal/conductor/steps"
	"github.com/openkeel/ironic/internal/conductor/task"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
)

// reservedSteps are resolved by the conductor, never by a driver.
var reservedSteps = []string{"power_on", "power_off", "reboot", "hold", "wait"}

// driverSteps collects the node's steps of kind as step dicts.
func (c *Conductor) driverSteps(ctx context.Context, t *task.Task, kind driver.StepKind, enabled, sorted bool) ([]map[string]any, error) {
	opts := steps.Options{Enabled: enabled, Sort: sorted, Overrides: c.priorityOverrides[kind]}
	got, err := steps.Collect(ctx, t.DriverTask(), t.Driver, kind, opts)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, len(got))
	for i, s := range got {
		out[i] = stepDict(s)
	}
	return out, nil
}

// stepDict is a step's dict with argsinfo as plain JSON values.
func stepDict(s driver.Step) map[string]any {
	m := s.Map()
	if ai, ok := m["argsinfo"].(map[string]driver.ArgInfo); ok {
		plain := map[string]any{}
		for k, v := range ai {
			e := map[string]any{"description": v.Description}
			if v.Required != nil {
				e["required"] = *v.Required
			}
			plain[k] = e
		}
		m["argsinfo"] = plain
	}
	return m
}

// validateUserSteps checks user steps against the driver's (upstream
// _validate_user_steps): unknown steps (unless skipMissing), unexpected
// or missing arguments, ramdisk needs, core deploy step overrides and
// duplicates, all reported at once joined by "; " in one
// InvalidParameterValue. Reserved steps are kept in place unvalidated;
// clean and service steps take priority and abortable from the driver.
func validateUserSteps(userSteps, driverSteps []map[string]any, stepType, prefix string, skipMissing, disableRamdisk bool) ([]map[string]any, error) {
	byID := map[string]map[string]any{}
	for _, s := range driverSteps {
		byID[stepID(s)] = s
	}
	var problems []string
	var result []map[string]any
	for _, us := range userSteps {
		us = cloneMap(us)
		// Steps for the children are checked by the API against the
		// caller's rights on each child and validated by the children's
		// drivers when they run: they are kept in place, as reserved
		// steps are.
		if executeOnChildNodes(us) {
			result = append(result, us)
			continue
		}
		if name, _ := us["step"].(string); slices.Contains(reservedSteps, name) {
			result = append(result, us)
			continue
		}
		ds, ok := byID[stepID(us)]
		if !ok {
			if !skipMissing {
				problems = append(problems, fmt.Sprintf("node does not support this %s step: %s", stepType, pyRepr(us)))
			}
			continue
		}
		problems = append(problems, validateUserStep(us, ds, stepType, disableRamdisk)...)
		result = append(result, us)
	}
	if stepType == "deploy" {
		counts := map[string]int{}
		var dups []string
		for _, s := range result {
			id := stepID(s)
			counts[id]++
			if counts[id] == 2 {
				dups = append(dups, id)
			}
		}
		if len(dups) > 0 {
			problems = append(problems, fmt.Sprintf("deploy steps from all deploy templates matching this node's instance traits cannot have the same interface and step. Duplicate deploy steps for %s", strings.Join(dups, ", ")))
		}
	}
	if len(problems) > 0 {
		return nil, errs.InvalidParameterValue(prefix + strings.Join(problems, "; "))
	}
	return result, nil
}

// validateUserStep is upstream _validate_user_step for one step.
func validateUserStep(us, ds map[string]any, stepType string, disableRamdisk bool) []string {
	var problems []string
	argsinfo, _ := ds["argsinfo"].(map[string]any)
	userArgs, _ := us["args"].(map[string]any)
	var unexpected []string
	for k := range userArgs {
		if _, ok := argsinfo[k]; !ok {
			unexpected = append(unexpected, k)
		}
	}
	sort.Strings(unexpected)
	if len(unexpected) > 0 {
		problems = append(problems, fmt.Sprintf("%s step %s has these unexpected arguments: %s", stepType, pyRepr(us), strings.Join(unexpected, ", ")))
	}
	priority := intValue(us["priority"])
	if stepType != "deploy" || priority > 0 {
		var names []string
		for k := range argsinfo {
			names = append(names, k)
		}
		sort.Strings(names)
		var missing []string
		for _, name := range names {
			info, _ := argsinfo[name].(map[string]any)
			if req, _ := info["required"].(bool); req {
				if _, ok := userArgs[name]; !ok {
					msg := name
					if d, _ := info["description"].(string); d != "" {
						msg += " (" + d + ")"
					}
					missing = append(missing, msg)
				}
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("%s step %s is missing these required arguments: %s", stepType, pyRepr(us), strings.Join(missing, ", ")))
		}
		needs, ok := ds["requires_ramdisk"].(bool)
		if disableRamdisk && (!ok || needs) {
			problems = append(problems, fmt.Sprintf("%s step %s requires booting a ramdisk", stepType, pyRepr(us)))
		}
	}
	if stepType != "deploy" {
		ab, _ := ds["abortable"].(bool)
		us["abortable"] = ab
		us["priority"] = intValue(ds["priority"])
	} else if priority > 0 && ds["interface"] == "deploy" && ds["step"] == "deploy" {
		problems = append(problems, fmt.Sprintf("deploy step %s on interface %s is a core step and cannot be overridden by user steps. It may be disabled by setting the priority to 0", us["step"], us["interface"]))
	}
	return problems
}

func intValue(v any) int {
	switch x := v.(type) {
	case int:
		return x
	case int64:
		return int(x)
	case float64:
		return int(x)
	}
	return 0
}

// checkDisallowedSteps refuses user steps in [api]/disallow_<kind>_steps.
func (c *Conductor) checkDisallowedSteps(userSteps []map[string]any, stepType string) error {
	disallowed := c.cfg.List("api", "disallow_"+stepType+"_steps")
	for _, s := range userSteps {
		if slices.Contains(disallowed, stepID(s)) {
			return errs.New(errs.ClassStepNotAllowed, map[string]any{"step": stepID(s), "step_type": stepType})
		}
	}
	return nil
}

// filterDisallowed drops the steps the operator disallows.
func (c *Conductor) filterDisallowed(list []map[string]any, stepType string) []map[string]any {
	disallowed := c.cfg.List("api", "disallow_"+stepType+"_steps")
	if len(disallowed) == 0 {
		return list
	}
	return slices.DeleteFunc(list, func(s map[string]any) bool { return slices.Contains(disallowed, stepID(s)) })
}

// templateSteps returns the deploy steps of the deploy templates named by
// instance_info["traits"], with the templates' names.
func (c *Conductor) templateSteps(ctx context.Context, t *task.Task) ([]map[string]any, []string, error) {
	raw, _ := t.Node.InstanceInfo["traits"].([]any)
	var names []string
	for _, v := range raw {
		if s, ok := v.(string); ok {
			names = append(names, s)
		}
	}
	if len(names) == 0 {
		return nil, nil, nil
	}
	templates, err := c.store.GetDeployTemplatesByNames(ctx, names)
	if err != nil {
		return nil, nil, fmt.Errorf("load deploy templates: %w", err)
	}
	var out []map[string]any
	var tnames []string
	for _, tpl := range templates {
		tnames = append(tnames, tpl.Name)
		for _, s := range tpl.Steps {
			out = append(out, map[string]any{"interface": s.Interface, "step": s.Step, "args": s.Args, "priority": s.Priority})
		}
	}
	return out, tnames, nil
}

// validateUserDeploySteps validates the deploy templates' steps and the
// user's deploy steps (those given, else the ones stored on the node).
func (c *Conductor) validateUserDeploySteps(ctx context.Context, t *task.Task, deploySteps []map[string]any, skipMissing bool) error {
	_, _, err := c.userAndTemplateDeploySteps(ctx, t, deploySteps, skipMissing)
	return err
}

func (c *Conductor) userAndTemplateDeploySteps(ctx context.Context, t *task.Task, deploySteps []map[string]any, skipMissing bool) (user, tpl []map[string]any, err error) {
	drv, err := c.driverSteps(ctx, t, driver.StepDeploy, false, false)
	if err != nil {
		return nil, nil, err
	}
	tsteps, tnames, err := c.templateSteps(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	prefix := fmt.Sprintf("Validation of deploy steps from deploy templates matching this node's instance traits failed. Matching deploy templates: %s. Errors: ", strings.Join(tnames, ","))
	tpl, err = validateUserSteps(tsteps, drv, "deploy", prefix, skipMissing, false)
	if err != nil {
		return nil, nil, err
	}
	if len(deploySteps) == 0 {
		deploySteps = t.Node.InternalInfo().Steps(model.DIIUserDeploySteps)
	}
	if len(deploySteps) > 0 {
		user, err = validateUserSteps(deploySteps, drv, "deploy", `Validation of deploy steps from "deploy steps" argument failed.`, skipMissing, false)
		if err != nil {
			return nil, nil, err
		}
	}
	return user, tpl, nil
}

// deploymentSteps composes the deploy steps (upstream
// _get_all_deployment_steps): user steps, then template steps the user
// did not give, replace the driver's; disabled ones are dropped; the rest
// is sorted by the deploy key.
func (c *Conductor) deploymentSteps(ctx context.Context, t *task.Task, skipMissing bool) ([]map[string]any, error) {
	user, tpl, err := c.userAndTemplateDeploySteps(ctx, t, nil, skipMissing)
	if err != nil {
		return nil, err
	}
	given := map[string]bool{}
	for _, s := range user {
		given[stepID(s)] = true
	}
	for _, s := range tpl {
		if !given[stepID(s)] {
			user = append(user, s)
		}
	}
	given = map[string]bool{}
	for _, s := range user {
		given[stepID(s)] = true
	}
	drv, err := c.driverSteps(ctx, t, driver.StepDeploy, true, false)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, s := range drv {
		if !given[stepID(s)] {
			out = append(out, s)
		}
	}
	for _, s := range user {
		if intValue(s["priority"]) > 0 {
			out = append(out, s)
		}
	}
	sortStepDicts(out, driver.StepDeploy)
	return c.filterDisallowed(out, "deploy"), nil
}

// sortStepDicts orders step dicts descending on (priority, interface
// priority), stably, as the steps package does for driver steps.
func sortStepDicts(list []map[string]any, kind driver.StepKind) {
	rank := map[string]int{}
	for _, ip := range steps.Table(kind) {
		rank[string(ip.Kind)] = ip.Priority
	}
	sort.SliceStable(list, func(i, j int) bool {
		pi, pj := intValue(list[i]["priority"]), intValue(list[j]["priority"])
		if pi != pj {
			return pi > pj
		}
		ii, _ := list[i]["interface"].(string)
		ij, _ := list[j]["interface"].(string)
		return rank[ii] > rank[ij]
	})
}
