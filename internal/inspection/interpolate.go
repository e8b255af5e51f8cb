package inspection

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/openkeel/ironic/internal/model"
)

// sensitiveFields are masked as "***" when rules read the data through
// interpolation (upstream SENSITIVE_FIELDS).
var sensitiveFields = map[string]bool{"password": true, "auth_token": true, "bmc_password": true}

// scope is what "{...}" fields resolve against: node, inventory,
// plugin_data and, in loops, item.
type scope struct {
	node   map[string]any
	values map[string]any
	mask   bool
}

func newScope(n *model.Node, inventory, pluginData map[string]any, mask bool) (*scope, error) {
	raw, err := json.Marshal(n)
	if err != nil {
		return nil, fmt.Errorf("encode node: %w", err)
	}
	var nm map[string]any
	if err := json.Unmarshal(raw, &nm); err != nil {
		return nil, fmt.Errorf("decode node: %w", err)
	}
	return &scope{node: nm, mask: mask, values: map[string]any{"inventory": inventory, "plugin_data": pluginData}}, nil
}

func (s *scope) withItem(item any) *scope {
	v := make(map[string]any, len(s.values)+1)
	for k, x := range s.values {
		v[k] = x
	}
	v["item"] = item
	return &scope{node: s.node, values: v, mask: s.mask}
}

// errMissing is Python's KeyError during str.format.
type errMissing struct{ field string }

func (e errMissing) Error() string { return "missing field " + e.field }

// format is Python's str.format over the scope for the replacement field
// grammar rules use: name, then .attr (node only: attribute access on a
// dict fails) and [key] (digits index lists) parts, {{ and }} escapes.
func (s *scope) format(str string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(str); i++ {
		c := str[i]
		switch {
		case c == '{' && i+1 < len(str) && str[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(str) && str[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(str[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("single '{' encountered in format string")
			}
			v, err := s.resolve(str[i+1 : i+end])
			if err != nil {
				return "", err
			}
			b.WriteString(pyStr(v))
			i += end
		case c == '}':
			return "", fmt.Errorf("single '}' encountered in format string")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func (s *scope) resolve(field string) (any, error) {
	field, _, _ = strings.Cut(field, "!")
	field, _, _ = strings.Cut(field, ":")
	n := strings.IndexAny(field, ".[")
	if n < 0 {
		n = len(field)
	}
	name := field[:n]
	var cur any
	isNode := name == "node"
	switch {
	case isNode:
		cur = s.node
	default:
		v, ok := s.values[name]
		if !ok {
			return nil, errMissing{name}
		}
		cur = v
	}
	rest := field[n:]
	first := true
	for rest != "" {
		var key string
		attr := rest[0] == '.'
		if attr {
			rest = rest[1:]
			e := strings.IndexAny(rest, ".[")
			if e < 0 {
				e = len(rest)
			}
			key, rest = rest[:e], rest[e:]
			if !(isNode && first) {
				return nil, fmt.Errorf("object has no attribute %q", key)
			}
		} else {
			e := strings.IndexByte(rest, ']')
			if e < 0 {
				return nil, fmt.Errorf("missing ']' in format string")
			}
			key, rest = rest[1:e], rest[e+1:]
			if isNode && first {
				return nil, fmt.Errorf("'Node' object is not subscriptable")
			}
		}
		first = false
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[key]
			if !ok {
				if attr {
					return nil, fmt.Errorf("object has no attribute %q", key)
				}
				return nil, errMissing{key}
			}
			if s.mask && sensitiveFields[key] {
				v = "***"
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil {
				return nil, fmt.Errorf("list indices must be integers")
			}
			if i < 0 || i >= len(c) {
				return nil, fmt.Errorf("list index out of range")
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("object is not subscriptable")
		}
	}
	return cur, nil
}

// interpolate is upstream interpolate_variables: strings are formatted
// (left as they are when formatting fails; None for a missing field under
// is-empty), dicts and lists recursively.
func (s *scope) interpolate(v any, op string) any {
	switch x := v.(type) {
	case string:
		out, err := s.format(x)
		if err != nil {
			if _, ok := err.(errMissing); ok && op == "is-empty" {
				return nil
			}
			return x
		}
		return out
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			ks, _ := s.interpolate(k, op).(string)
			if ks == "" {
				ks = k
			}
			m[ks] = s.interpolate(e, op)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = s.interpolate(e, op)
		}
		return l
	}
	return v
}

// pyStr is Python's str() of a JSON value.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// pyRepr is Python's repr() of a JSON value.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		if strings.Contains(x, "'") && !strings.Contains(x, `"`) {
			return `"` + x + `"`
		}
		return "'" + strings.ReplaceAll(strings.ReplaceAll(x, `\`, `\\`), "'", `\'`) + "'"
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pyRepr(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}
