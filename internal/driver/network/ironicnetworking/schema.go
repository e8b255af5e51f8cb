package ironicnetworking

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// objectSchema is the subset of JSON Schema master's SWITCHPORT_SCHEMA
// and LAG_SCHEMA use: typed properties, required keys, no others, and
// the mode-dependent rule on allowed_vlans.
type objectSchema struct {
	required []string
	// strings are the string properties with their allowed values (nil:
	// any string up to maxLen).
	strings map[string][]string
	maxLen  map[string]int
	// ints are the integer properties with their bounds.
	ints map[string][2]int
}

var switchportSchema = objectSchema{
	required: []string{"mode", "native_vlan"},
	strings:  map[string][]string{"mode": {"access", "trunk", "hybrid"}, "lag_name": nil},
	maxLen:   map[string]int{"lag_name": 255},
	ints:     map[string][2]int{"native_vlan": {1, 4094}, "mtu": {math.MinInt, 9216}},
}

var lagSchema = objectSchema{
	required: []string{"mode", "aggregation_mode"},
	strings:  map[string][]string{"mode": {"access", "trunk", "hybrid"}, "aggregation_mode": {"lacp", "static"}},
	ints:     map[string][2]int{"native_vlan": {1, 4094}, "mtu": {math.MinInt, 9216}},
}

// checkSchema returns the first violation, worded as python-jsonschema's
// message (without its schema dump), or "".
func checkSchema(v map[string]any, s objectSchema) string {
	for _, k := range s.required {
		if _, ok := v[k]; !ok {
			return fmt.Sprintf("'%s' is a required property", k)
		}
	}
	var extra []string
	for k := range v {
		_, isStr := s.strings[k]
		_, isInt := s.ints[k]
		if !isStr && !isInt && k != "allowed_vlans" {
			extra = append(extra, "'"+k+"'")
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		verb := "was"
		if len(extra) > 1 {
			verb = "were"
		}
		return fmt.Sprintf("Additional properties are not allowed (%s %s unexpected)", strings.Join(extra, ", "), verb)
	}
	for k, enum := range s.strings {
		raw, ok := v[k]
		if !ok {
			continue
		}
		str, isStr := raw.(string)
		switch {
		case !isStr:
			return fmt.Sprintf("%s is not of type 'string'", pyRepr(raw))
		case enum != nil && !slices.Contains(enum, str):
			return fmt.Sprintf("'%s' is not one of %s", str, pyStrList(enum))
		case s.maxLen[k] > 0 && len(str) > s.maxLen[k]:
			return fmt.Sprintf("'%s' is too long", str)
		}
	}
	for k, bounds := range s.ints {
		raw, ok := v[k]
		if !ok {
			continue
		}
		if msg := checkInt(raw, bounds); msg != "" {
			return msg
		}
	}
	mode, _ := v["mode"].(string)
	allowed, has := v["allowed_vlans"]
	if mode == "access" && has {
		return fmt.Sprintf("%s should not be valid under {'required': ['allowed_vlans']}", pyRepr(v))
	}
	if (mode == "trunk" || mode == "hybrid") && !has {
		return "'allowed_vlans' is a required property"
	}
	if has {
		l, ok := allowed.([]any)
		if !ok {
			return fmt.Sprintf("%s is not of type 'array'", pyRepr(allowed))
		}
		if len(l) == 0 {
			return "[] should be non-empty"
		}
		if len(l) > 100 {
			return fmt.Sprintf("%s is too long", pyRepr(l))
		}
		for i, item := range l {
			if msg := checkInt(item, [2]int{1, 4094}); msg != "" {
				return msg
			}
			for _, other := range l[:i] {
				if reflect.DeepEqual(other, item) {
					return fmt.Sprintf("%s has non-unique elements", pyRepr(l))
				}
			}
		}
	}
	return ""
}

func checkInt(raw any, bounds [2]int) string {
	if num, isNum := raw.(json.Number); isNum {
		// The API decodes bodies with UseNumber.
		if f, err := num.Float64(); err == nil {
			raw = f
		}
	}
	f, ok := raw.(float64)
	if !ok || f != math.Trunc(f) {
		return fmt.Sprintf("%s is not of type 'integer'", pyRepr(raw))
	}
	n := int(f)
	if n < bounds[0] {
		return fmt.Sprintf("%d is less than the minimum of %d", n, bounds[0])
	}
	if n > bounds[1] {
		return fmt.Sprintf("%d is greater than the maximum of %d", n, bounds[1])
	}
	return ""
}

// pyRepr prints a JSON value roughly as Python's repr, for messages.
func pyRepr(v any) string {
	switch x := v.(type) {
	case string:
		return "'" + x + "'"
	case float64:
		if x == math.Trunc(x) {
			return fmt.Sprintf("%d", int64(x))
		}
		return fmt.Sprint(x)
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "True"
		}
		return "False"
	case nil:
		return "None"
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
			parts[i] = "'" + k + "': " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// pyStrList prints strings as Python prints a list of str.
func pyStrList(v []string) string {
	parts := make([]string, len(v))
	for i, s := range v {
		parts[i] = "'" + s + "'"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// equalJSON compares two decoded JSON values.
func equalJSON(a, b any) bool { return reflect.DeepEqual(a, b) }
