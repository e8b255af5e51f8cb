// Package steps collects and orders the clean, deploy, service and verify
// steps of a node's interfaces the way upstream ironic/conductor/steps.py
// does: interfaces are visited in the order of the priority table of the
// flow, priority overrides are applied, disabled (priority 0) steps are
// dropped for automated runs, and the rest is sorted stably, descending on
// (step priority, interface priority).
package steps

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/driver"
)

// InterfacePriority ranks an interface's steps against another's when both
// have the same step priority: higher runs first.
type InterfacePriority struct {
	Kind     driver.Kind
	Priority int
}

// The priority tables of upstream (CLEANING_INTERFACE_PRIORITY and friends).
// Their order is also the collection order, which decides ties that remain
// after sorting.
var (
	cleaning = []InterfacePriority{
		{driver.KindVendor, 7}, {driver.KindPower, 6}, {driver.KindManagement, 5},
		{driver.KindFirmware, 4}, {driver.KindDeploy, 3}, {driver.KindBIOS, 2}, {driver.KindRAID, 1},
	}
	deploying = []InterfacePriority{
		{driver.KindVendor, 7}, {driver.KindPower, 6}, {driver.KindManagement, 5},
		{driver.KindFirmware, 4}, {driver.KindDeploy, 3}, {driver.KindBIOS, 2}, {driver.KindRAID, 1},
	}
	// servicing is the cleaning table with network added last, as upstream
	// copies the cleaning dict and then adds the key.
	servicing = append(slices.Clone(cleaning), InterfacePriority{driver.KindNetwork, 8})
	verifying = []InterfacePriority{
		{driver.KindPower, 13}, {driver.KindManagement, 12}, {driver.KindFirmware, 11},
		{driver.KindInspect, 10}, {driver.KindDeploy, 9}, {driver.KindBoot, 8}, {driver.KindBIOS, 7},
		{driver.KindRAID, 6}, {driver.KindVendor, 5}, {driver.KindNetwork, 4}, {driver.KindStorage, 3},
		{driver.KindConsole, 2}, {driver.KindRescue, 1},
	}
)

// Table returns (a copy of) the priority table of a step kind.
func Table(kind driver.StepKind) []InterfacePriority {
	switch kind {
	case driver.StepClean:
		return slices.Clone(cleaning)
	case driver.StepDeploy:
		return slices.Clone(deploying)
	case driver.StepService:
		return slices.Clone(servicing)
	case driver.StepVerify:
		return slices.Clone(verifying)
	}
	return nil
}

// Source gives the node's implementation of each kind (nil when none);
// *driver.Interfaces is one.
type Source interface {
	Get(kind driver.Kind) driver.Interface
}

// Options shape a collection.
type Options struct {
	// Enabled drops steps whose priority is 0 after overrides (automated
	// runs); negative priorities are kept and sort last.
	Enabled bool
	// Sort orders the steps descending on (priority, interface priority).
	Sort bool
	// Overrides replace the priority of "<interface>.<step>" before the
	// Enabled filter ([conductor]clean_step_priority_override and
	// verify_step_priority_override).
	Overrides map[string]int
}

// Collect gathers the steps of kind from src as upstream's _get_steps does.
func Collect(ctx context.Context, task *driver.Task, src Source, kind driver.StepKind, opts Options) ([]driver.Step, error) {
	table := Table(kind)
	if table == nil {
		return nil, fmt.Errorf("collect steps: unknown step kind %q", kind)
	}
	var steps []driver.Step
	for _, ip := range table {
		impl := src.Get(ip.Kind)
		if impl == nil {
			continue
		}
		got, err := driver.StepsOf(ctx, task, ip.Kind, impl, kind)
		if err != nil {
			return nil, err
		}
		steps = append(steps, got...)
	}
	if len(opts.Overrides) > 0 {
		for i := range steps {
			if p, ok := opts.Overrides[steps[i].ID()]; ok {
				steps[i].Priority = p
			}
		}
	}
	if opts.Enabled {
		steps = slices.DeleteFunc(steps, func(s driver.Step) bool { return s.Priority == 0 })
	}
	if opts.Sort {
		Sort(steps, table)
	}
	return steps, nil
}

// Sort orders steps descending on (priority, interface priority) in place,
// keeping the collection order of exact ties (Python's sorted(...,
// reverse=True) is stable too).
func Sort(steps []driver.Step, table []InterfacePriority) {
	rank := map[driver.Kind]int{}
	for _, ip := range table {
		rank[ip.Kind] = ip.Priority
	}
	slices.SortStableFunc(steps, func(a, b driver.Step) int {
		if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
			return c
		}
		return cmp.Compare(rank[b.Interface], rank[a.Interface])
	})
}

// CleaningSteps returns the node's clean steps (upstream
// _get_cleaning_steps); automated cleaning uses enabled and sorted.
func CleaningSteps(ctx context.Context, task *driver.Task, enabled, sorted bool, overrides map[string]int) ([]driver.Step, error) {
	return Collect(ctx, task, task.Driver, driver.StepClean, Options{Enabled: enabled, Sort: sorted, Overrides: overrides})
}

// DeploymentSteps returns the node's deploy steps (no overrides upstream).
func DeploymentSteps(ctx context.Context, task *driver.Task, enabled, sorted bool) ([]driver.Step, error) {
	return Collect(ctx, task, task.Driver, driver.StepDeploy, Options{Enabled: enabled, Sort: sorted})
}

// ServiceSteps returns the node's service steps, never sorted: operators
// give service steps explicitly and in their own order.
func ServiceSteps(ctx context.Context, task *driver.Task, enabled bool) ([]driver.Step, error) {
	return Collect(ctx, task, task.Driver, driver.StepService, Options{Enabled: enabled})
}

// VerifySteps returns the node's verify steps; verification on manage uses
// enabled and sorted.
func VerifySteps(ctx context.Context, task *driver.Task, enabled, sorted bool, overrides map[string]int) ([]driver.Step, error) {
	return Collect(ctx, task, task.Driver, driver.StepVerify, Options{Enabled: enabled, Sort: sorted, Overrides: overrides})
}

// PriorityOverrides converts [conductor]clean_step_priority_override or
// verify_step_priority_override (an oslo.config multi-valued Dict, merged by
// the config loader: "interface.step" → priority text) into priorities.
// An empty value is ignored, as upstream ignores a falsy override; "0"
// disables the step. A value that is not an integer is an error here, at
// start-up, where upstream would fail when cleaning starts.
func PriorityOverrides(option map[string]string) (map[string]int, error) {
	out := make(map[string]int, len(option))
	for key, val := range option {
		val = strings.TrimSpace(val)
		if val == "" {
			continue
		}
		p, err := strconv.Atoi(val)
		if err != nil {
			return nil, fmt.Errorf("step priority override %s: %w", key, err)
		}
		out[key] = p
	}
	return out, nil
}
