package driver

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// StepKind is the flow a step belongs to: upstream's four step decorators.
type StepKind string

// The four step kinds.
const (
	StepClean   StepKind = "clean"
	StepDeploy  StepKind = "deploy"
	StepService StepKind = "service"
	StepVerify  StepKind = "verify"
)

// StepKinds lists the step kinds.
var StepKinds = []StepKind{StepClean, StepDeploy, StepService, StepVerify}

// ArgInfo describes one argument a step accepts (upstream argsinfo entry).
// Required is a pointer because upstream distinguishes an absent "required"
// key (optional, rendered without the key) from an explicit false.
type ArgInfo struct {
	Description string `json:"description"`
	Required    *bool  `json:"required,omitempty"`
}

// Required and Optional build the two explicit forms of ArgInfo.
func Required(description string) ArgInfo {
	t := true
	return ArgInfo{Description: description, Required: &t}
}

// Optional is an ArgInfo with an explicit "required": false.
func Optional(description string) ArgInfo {
	f := false
	return ArgInfo{Description: description, Required: &f}
}

// StepSpec declares one decorated step method of an implementation, as
// upstream's @clean_step / @deploy_step / @service_step / @verify_step do.
// A method decorated twice (clean and service) is declared twice.
type StepSpec struct {
	Kind      StepKind
	Name      string
	Priority  int
	Abortable bool
	ArgsInfo  map[string]ArgInfo
	// RequiresRamdisk applies to clean and service steps only (upstream
	// default true).
	RequiresRamdisk bool
}

// CleanStep declares a step with upstream's @clean_step defaults
// (abortable false, requires_ramdisk true).
func CleanStep(name string, priority int) StepSpec {
	return StepSpec{Kind: StepClean, Name: name, Priority: priority, RequiresRamdisk: true}
}

// DeployStep declares a step with upstream's @deploy_step defaults
// (abortable true).
func DeployStep(name string, priority int) StepSpec {
	return StepSpec{Kind: StepDeploy, Name: name, Priority: priority, Abortable: true}
}

// ServiceStep declares a step with upstream's @service_step defaults
// (priority 0, abortable false, requires_ramdisk true).
func ServiceStep(name string) StepSpec {
	return StepSpec{Kind: StepService, Name: name, RequiresRamdisk: true}
}

// VerifyStep declares a verify step.
func VerifyStep(name string, priority int) StepSpec {
	return StepSpec{Kind: StepVerify, Name: name, Priority: priority}
}

// WithArgs returns s with argsinfo set.
func (s StepSpec) WithArgs(args map[string]ArgInfo) StepSpec { s.ArgsInfo = args; return s }

// WithAbortable returns s with abortable set.
func (s StepSpec) WithAbortable(v bool) StepSpec { s.Abortable = v; return s }

// WithRequiresRamdisk returns s with requires_ramdisk set.
func (s StepSpec) WithRequiresRamdisk(v bool) StepSpec { s.RequiresRamdisk = v; return s }

// Step is a step as the conductor handles it: the dict upstream builds in
// BaseInterface.__new__ (plus args when a user or template supplies them).
// Which keys exist depends on the kind; see Map.
type Step struct {
	Kind            StepKind
	Interface       Kind
	Name            string
	Priority        int
	Abortable       bool
	ArgsInfo        map[string]ArgInfo
	RequiresRamdisk bool
	Args            map[string]any
}

// ID is upstream's step id "<interface>.<step>".
func (s Step) ID() string { return string(s.Interface) + "." + s.Name }

// NewStep turns a declaration of an interface of kind iface into a Step.
func NewStep(iface Kind, spec StepSpec) Step {
	return Step{
		Kind: spec.Kind, Interface: iface, Name: spec.Name, Priority: spec.Priority,
		Abortable: spec.Abortable, ArgsInfo: spec.ArgsInfo, RequiresRamdisk: spec.RequiresRamdisk,
	}
}

// Map renders the step with exactly the keys upstream's step dict has for
// its kind: clean/service carry step, priority, abortable, argsinfo,
// interface, requires_ramdisk; deploy drops requires_ramdisk; verify has only
// step, priority and interface. args is added when set.
func (s Step) Map() map[string]any {
	m := map[string]any{"step": s.Name, "priority": s.Priority, "interface": string(s.Interface)}
	if s.Kind != StepVerify {
		m["abortable"] = s.Abortable
		if s.ArgsInfo == nil {
			m["argsinfo"] = nil
		} else {
			m["argsinfo"] = s.ArgsInfo
		}
	}
	if s.Kind == StepClean || s.Kind == StepService {
		m["requires_ramdisk"] = s.RequiresRamdisk
	}
	if s.Args != nil {
		m["args"] = s.Args
	}
	return m
}

// StepFunc runs one step. It returns "" when the step finished
// synchronously, or the wait state (e.g. "clean wait") when it continues
// asynchronously, as upstream step methods return None or states.*WAIT.
type StepFunc func(ctx context.Context, task *Task, args map[string]any) (string, error)

// StepRunner is implemented by interfaces that declare steps: it maps each
// declared step name to the function that runs it.
type StepRunner interface {
	StepHandlers() map[string]StepFunc
}

// StepLister is implemented by interfaces whose step list is decided at run
// time (upstream overrides of get_<kind>_steps, e.g. agent-based deploy
// interfaces returning the steps the ramdisk reported). When present it
// replaces the declared Steps() for that interface.
type StepLister interface {
	ListSteps(ctx context.Context, task *Task, kind StepKind) ([]StepSpec, error)
}

// StepsOf returns the steps of kind an interface offers for the task, as
// upstream's get_<kind>_steps does. Declared steps come in method-name order
// (upstream collects them with inspect.getmembers, which sorts by name), so
// ties in the conductor's stable sort break the same way; a StepLister's
// order is kept as given.
func StepsOf(ctx context.Context, task *Task, iface Kind, impl Interface, kind StepKind) ([]Step, error) {
	var specs []StepSpec
	if l, ok := impl.(StepLister); ok {
		var err error
		specs, err = l.ListSteps(ctx, task, kind)
		if err != nil {
			return nil, fmt.Errorf("get %s steps of %s interface: %w", kind, iface, err)
		}
	} else {
		for _, s := range impl.Steps() {
			if s.Kind == kind {
				specs = append(specs, s)
			}
		}
		slices.SortStableFunc(specs, func(a, b StepSpec) int { return strings.Compare(a.Name, b.Name) })
	}
	out := make([]Step, 0, len(specs))
	for _, s := range specs {
		s.Kind = kind
		out = append(out, NewStep(iface, s))
	}
	return out, nil
}

// ExecuteStep runs a step on the interface it belongs to.
func ExecuteStep(ctx context.Context, task *Task, impl Interface, step Step) (string, error) {
	r, ok := impl.(StepRunner)
	if !ok {
		return "", InvalidParameterValue("Interface %s has no step %s", step.Interface, step.Name)
	}
	fn, ok := r.StepHandlers()[step.Name]
	if !ok {
		return "", InvalidParameterValue("Interface %s has no step %s", step.Interface, step.Name)
	}
	return fn(ctx, task, step.Args)
}

// NoSteps is embedded by implementations that declare no steps.
type NoSteps struct{}

// Steps returns nothing.
func (NoSteps) Steps() []StepSpec { return nil }
