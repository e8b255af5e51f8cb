package inspection

import (
	"fmt"
	"os"

	"gopkg.in/yaml.v3"
)

// LoadBuiltInRules reads [inspection_rules]/built_in_rules: a YAML list
// of rules; rules without a uuid get synthetic ones numbered from zero
// (upstream get_built_in_rules). An empty path means none. Only rules of
// phase is kept.
func LoadBuiltInRules(path, phase string) ([]Rule, error) {
	if path == "" {
		return nil, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("built-in rules file: %w", err)
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse built-in rules file %s: %w", path, err)
	}
	list, ok := jsonish(doc).([]any)
	if !ok {
		return nil, fmt.Errorf("Built-in rules file (%s) should contain a list of rules", path)
	}
	var out []Rule
	synthetic := 0
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("built-in rule is not a mapping: %s", pyRepr(it))
		}
		r := Rule{}
		if u, ok := m["uuid"].(string); ok {
			r.UUID = u
		} else {
			r.UUID = fmt.Sprintf("00000000-0000-0000-0000-%012x", synthetic)
			synthetic++
		}
		if p, ok := num(m["priority"]); ok {
			r.Priority = int(p)
		}
		r.Sensitive, _ = m["sensitive"].(bool)
		if r.Conditions, err = opList(m["conditions"]); err != nil {
			return nil, fmt.Errorf("built-in rule %s conditions: %w", r.UUID, err)
		}
		if r.Actions, err = opList(m["actions"]); err != nil {
			return nil, fmt.Errorf("built-in rule %s actions: %w", r.UUID, err)
		}
		if len(r.Actions) == 0 {
			return nil, fmt.Errorf("built-in rule %s has no actions", r.UUID)
		}
		p, _ := m["phase"].(string)
		if p == "" {
			p = "main"
		}
		if p == phase {
			out = append(out, r)
		}
	}
	return out, nil
}

func opList(v any) ([]map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("expected a list, got %s", pyType(v))
	}
	out := make([]map[string]any, 0, len(l))
	for _, it := range l {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("expected a mapping, got %s", pyType(it))
		}
		if _, ok := m["op"].(string); !ok {
			return nil, fmt.Errorf("operation must contain 'op' key")
		}
		out = append(out, m)
	}
	return out, nil
}

// jsonish turns YAML's decoded values into the JSON shapes the engine
// works on (numbers as float64).
func jsonish(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonish(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = jsonish(e)
		}
		return x
	case int:
		return float64(x)
	}
	return v
}
