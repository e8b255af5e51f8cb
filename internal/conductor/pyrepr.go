package conductor

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Several upstream messages interpolate Python values (a step dict, a tuple
// of states); clients show last_error and fault strings verbatim, so they
// are rendered as Python's repr() would.

// stepKeyOrder is the order keys of a step dict appear in when upstream
// builds or copies it: the user's JSON order is lost in a Go map, so the
// usual one is assumed.
var stepKeyOrder = []string{"interface", "step", "args", "priority", "abortable", "argsinfo", "requires_ramdisk"}

// pyRepr renders v as Python's repr().
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return pyStr(x)
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		if x == float64(int64(x)) {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = pyStr(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = pyRepr(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.SliceStable(keys, func(i, j int) bool {
			a, b := slices.Index(stepKeyOrder, keys[i]), slices.Index(stepKeyOrder, keys[j])
			switch {
			case a >= 0 && b >= 0:
				return a < b
			case a >= 0:
				return true
			case b >= 0:
				return false
			}
			return keys[i] < keys[j]
		})
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = pyStr(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// pyTuple renders a tuple of strings.
func pyTuple(items []string) string {
	parts := make([]string, len(items))
	for i, s := range items {
		parts[i] = pyStr(s)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// pyStr quotes s as Python does: single quotes unless s holds one and no
// double quote.
func pyStr(s string) string {
	q := "'"
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = `"`
	}
	var b strings.Builder
	b.WriteString(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case string(r) == q:
			b.WriteString(`\` + q)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(q)
	return b.String()
}
