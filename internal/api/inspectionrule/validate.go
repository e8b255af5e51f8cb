package inspectionrule

import (
	"fmt"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
)

// plugin is what rule validation knows of a condition operator or an
// action: the arguments of its __call__ (after the task), as upstream
// validates the args a rule gives against that signature.
type plugin struct {
	required, optional []string
	// needsPluginData marks actions that take the inspection data: upstream
	// adds an empty plugin_data argument to the rule's args when it
	// validates them, and that argument is stored with the rule.
	needsPluginData bool
}

// operators are upstream's condition operators (inspection_rules/
// operators.py OPERATORS); each may be inverted with a leading "!".
var operators = map[string]plugin{
	"eq":       {required: []string{"values"}, optional: []string{"force_strings"}},
	"lt":       {required: []string{"values"}, optional: []string{"force_strings"}},
	"gt":       {required: []string{"values"}, optional: []string{"force_strings"}},
	"is-empty": {required: []string{"value"}},
	"in-net":   {required: []string{"address", "subnet"}},
	"matches":  {required: []string{"value", "regex"}},
	"contains": {required: []string{"value", "regex"}},
	"one-of":   {required: []string{"value"}, optional: []string{"values"}},
	"is-none":  {required: []string{"value"}},
	"is-true":  {required: []string{"value"}},
	"is-false": {required: []string{"value"}},
}

// actions are upstream's rule actions (inspection_rules/actions.py
// ACTIONS).
var actions = map[string]plugin{
	"fail":                  {required: []string{"msg"}},
	"log":                   {required: []string{"msg"}, optional: []string{"level"}},
	"set-attribute":         {required: []string{"path", "value"}},
	"extend-attribute":      {required: []string{"path", "value"}, optional: []string{"unique"}},
	"del-attribute":         {required: []string{"path"}},
	"set-capability":        {required: []string{"name", "value"}},
	"unset-capability":      {required: []string{"name"}},
	"add-trait":             {required: []string{"name"}},
	"remove-trait":          {required: []string{"name"}},
	"set-plugin-data":       {required: []string{"path", "value", "plugin_data"}, needsPluginData: true},
	"extend-plugin-data":    {required: []string{"path", "value", "plugin_data"}, optional: []string{"unique"}, needsPluginData: true},
	"unset-plugin-data":     {required: []string{"path", "plugin_data"}, needsPluginData: true},
	"set-port-attribute":    {required: []string{"port_id", "path", "value"}},
	"extend-port-attribute": {required: []string{"port_id", "path", "value"}, optional: []string{"unique"}},
	"del-port-attribute":    {required: []string{"port_id", "path"}},
	"api-call":              {required: []string{"url"}, optional: []string{"headers", "proxies", "timeout", "retries", "backoff_factor"}},
}

// phases are the inspection phases a rule may run in.
var phases = []string{"main"}

// validationFailure is InspectionRuleValidationFailure. Upstream lets it
// escape as a 500; it reports a defect of the request, so it is answered
// as the client error it is.
func validationFailure(msg string) error {
	e := errs.NewMessage(errs.ClassInspectionRuleValidationFailure, msg)
	e.Code = 400
	return e
}

// validateArgs is Base.validate: the args (an object, or a deprecated
// positional list) must give every required argument and nothing the
// plugin does not take. The args of plugin_data actions are completed in
// place, as upstream does.
func (p plugin) validateArgs(holder map[string]any) error {
	var named map[string]any
	switch a := holder["args"].(type) {
	case map[string]any:
		if p.needsPluginData {
			a["plugin_data"] = map[string]any{}
		}
		named = a
	case []any:
		if p.needsPluginData {
			a = append(a, map[string]any{})
			holder["args"] = a
		}
		if len(a) < len(p.required) {
			// Upstream builds this message as a tuple and prints it.
			return validationFailure(fmt.Sprintf("('Not enough arguments provided. Missing: %%s', '%s')", strings.Join(p.required[len(a):], ", ")))
		}
		named = map[string]any{}
		for i, n := range p.required {
			named[n] = a[i]
		}
		for i, n := range p.optional {
			if len(p.required)+i < len(a) {
				named[n] = a[len(p.required)+i]
			}
		}
	default:
		return validationFailure("args must be either a list or dictionary")
	}
	var missing, unexpected []string
	for _, n := range p.required {
		if _, ok := named[n]; !ok {
			missing = append(missing, n)
		}
	}
	for n := range named {
		if !slices.Contains(p.required, n) && !slices.Contains(p.optional, n) {
			unexpected = append(unexpected, n)
		}
	}
	slices.Sort(unexpected)
	var msg []string
	if len(missing) > 0 {
		msg = append(msg, "missing required argument(s): "+strings.Join(missing, ", "))
	}
	if len(unexpected) > 0 {
		msg = append(msg, "unexpected argument(s): "+strings.Join(unexpected, ", "))
	}
	if len(msg) > 0 {
		return validationFailure(strings.Join(msg, "; "))
	}
	return nil
}

// validateRule is validation.validate_rule for a user-defined rule that
// passed the request schema: phase, priority, then each condition's and
// action's arguments; several problems are reported together.
func validateRule(rule map[string]any) error {
	var problems []string
	phase := "main"
	if p, ok := rule["phase"]; ok {
		phase = fmt.Sprint(p)
		if p == nil {
			phase = "None"
		}
	}
	if !slices.Contains(phases, phase) {
		problems = append(problems, fmt.Sprintf("Invalid phase: %s. Valid phases are: %s", phase, strings.Join(phases, ", ")))
	}
	if p, ok := rule["priority"]; ok {
		if n, isInt := toInt(p); isInt {
			if n < 0 {
				problems = append(problems, "Priority cannot be negative for user-defined rules.")
			}
			if n > 9999 {
				problems = append(problems, "Priority must be between 0 and 9999 for user-defined rules.")
			}
		}
	}
	conds, _ := rule["conditions"].([]any)
	for _, c := range conds {
		cm := c.(map[string]any)
		op := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(cm["op"].(string)), "!"))
		if err := operators[op].validateArgs(cm); err != nil {
			return err
		}
	}
	acts, _ := rule["actions"].([]any)
	for _, a := range acts {
		am := a.(map[string]any)
		if err := actions[am["op"].(string)].validateArgs(am); err != nil {
			return err
		}
	}
	switch len(problems) {
	case 0:
		return nil
	case 1:
		return errs.NewMessage(errs.ClassInvalid, problems[0])
	}
	return errs.NewMessage(errs.ClassInvalid, "Multiple validation errors occurred: "+strings.Join(problems, "; "))
}

// toInt reads a JSON integer whatever Go type holds it.
func toInt(v any) (int64, bool) {
	var n int64
	_, err := fmt.Sscan(fmt.Sprint(v), &n)
	return n, err == nil && fmt.Sprint(n) == fmt.Sprint(v)
}
