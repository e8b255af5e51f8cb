package apiutil

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/errs"
)

// ValidateStepDoc is upstream's deploy template validator, which runbooks
// reuse with its message: the schema under arg, no two steps with the
// same interface and step, a UUID that is one.
func ValidateStepDoc(schema *Schema, arg string, m map[string]any) error {
	if err := schema.Validate(arg, m); err != nil {
		return err
	}
	type key struct{ iface, step string }
	seen := map[key]int{}
	var dups []string
	for _, s := range m["steps"].([]any) {
		st := s.(map[string]any)
		k := key{st["interface"].(string), st["step"].(string)}
		seen[k]++
		if seen[k] == 2 {
			dups = append(dups, fmt.Sprintf("interface: %s, step: %s", k.iface, k.step))
		}
	}
	if len(dups) > 0 {
		return errs.New(errs.ClassInvalidDeployTemplate, map[string]any{"err": "Duplicate deploy steps. A template cannot have multiple deploy steps with the same interface and step. Duplicates: " + strings.Join(dups, "; ")})
	}
	if u, ok := m["uuid"].(string); ok && !collection.IsUUIDLike(u) {
		return errs.InvalidParameterValue("Expected UUID for uuid: " + u)
	}
	return nil
}

// ValidatePatchedStepDoc is patched_validate_with_schema for a patched
// document with steps: each step is pruned to and checked against
// stepSchema, then the document is pruned to schema and validated as
// ValidateStepDoc does.
func ValidatePatchedStepDoc(doc map[string]any, schema, stepSchema *Schema) error {
	if st, ok := doc["steps"].([]any); ok {
		for _, s := range st {
			if sm, ok := s.(map[string]any); ok {
				Prune(sm, stepSchema.Properties())
			}
			if err := stepSchema.Validate("patch", s); err != nil {
				return err
			}
		}
	}
	Prune(doc, schema.Properties())
	return ValidateStepDoc(schema, "patch", doc)
}

// Prune drops the keys a schema does not declare, the side effect of
// upstream's patched_validate_with_schema.
func Prune(m map[string]any, keep []string) {
	for k := range m {
		if !slices.Contains(keep, k) {
			delete(m, k)
		}
	}
}

// MaskStepArgs masks the arguments of the steps d lists, which may carry
// secrets (BIOS passwords and the like).
func MaskStepArgs(d *Dict) {
	v, ok := d.Get("steps")
	if !ok {
		return
	}
	for _, s := range v.([]*Dict) {
		if a, _ := s.Get("args"); Truthy(a) {
			s.Set("args", MaskDict(a.(map[string]any)))
		}
	}
}

// EchoStepNumbers sets the priority or order (nKey) of each rendered step
// of d back to what the creation request m wrote: upstream answers with
// the object it created, before the database turned a number given as a
// string into an integer.
func EchoStepNumbers(d *Dict, m map[string]any, nKey string) {
	v, ok := d.Get("steps")
	if !ok {
		return
	}
	for i, s := range v.([]*Dict) {
		s.Set(nKey, m["steps"].([]any)[i].(map[string]any)[nKey])
	}
}

// KeepMaskingSteps is the sanitizing of deploy templates and runbooks:
// only fields kept, the arguments of their steps masked.
func KeepMaskingSteps(fields []string) func(*Dict) {
	return func(d *Dict) {
		d.KeepOnly(fields)
		MaskStepArgs(d)
	}
}

// PatchRefused is upstream's PatchError for a whole patch a resource
// refuses for reason, the patch shown as the repr of its operation list.
func PatchRefused(ops []PatchOp, reason string) error {
	reprs := make([]string, len(ops))
	for i, op := range ops {
		reprs[i] = op.String()
	}
	return errs.New(errs.ClassPatchError, map[string]any{"patch": "[" + strings.Join(reprs, ", ") + "]", "reason": reason})
}

// StepDoc is one validated step document of a deploy template or runbook:
// N is its priority (deploy templates) or order (runbooks).
type StepDoc struct {
	Interface, Step string
	Args            map[string]any
	N               int
}

// StepDocs reads validated step documents, numbered by the key nKey.
func StepDocs(v any, nKey string) []StepDoc {
	var out []StepDoc
	for _, s := range v.([]any) {
		st := s.(map[string]any)
		out = append(out, StepDoc{Interface: st["interface"].(string), Step: st["step"].(string),
			Args: st["args"].(map[string]any), N: StepInteger(st[nKey])})
	}
	return out
}

// StepInteger is the integer the database makes of a validated priority
// or order (an integer or a string of digits).
func StepInteger(v any) int {
	switch p := v.(type) {
	case string:
		n, _ := strconv.Atoi(p)
		return n
	case float64:
		return int(p)
	case int:
		return p
	case int64:
		return int(p)
	}
	n, _ := strconv.Atoi(fmt.Sprint(v))
	return n
}
