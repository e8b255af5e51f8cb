package apiutil

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// PyRepr is Python's repr() of a decoded JSON value, as upstream's
// messages print request values: json.Number keeps its literal (an integer
// or a float repr), a *Dict its key order; a plain map prints in sorted key
// order because Go maps have none.
func PyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return pyQuote(x)
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			f, err := x.Float64()
			if err != nil {
				return string(x)
			}
			return pyFloat(f)
		}
		return string(x)
	case float64:
		// Values read back from JSON columns lost the int/float
		// distinction; integral ones were Python ints.
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			return strconv.FormatFloat(x, 'f', 0, 64)
		}
		return pyFloat(x)
	case int, int64, int32:
		return fmt.Sprint(x)
	case []any:
		items := make([]string, len(x))
		for i, s := range x {
			items[i] = PyRepr(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case []string:
		items := make([]string, len(x))
		for i, s := range x {
			items[i] = pyQuote(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case *Dict:
		items := make([]string, 0, x.Len())
		for _, k := range x.keys {
			items = append(items, pyQuote(k)+": "+PyRepr(x.vals[k]))
		}
		return "{" + strings.Join(items, ", ") + "}"
	case map[string]any:
		return PyRepr(sortedDict(x))
	}
	return fmt.Sprint(v)
}

func sortedDict(m map[string]any) *Dict {
	d := NewDict()
	for _, k := range sortedKeys(m) {
		d.Set(k, m[k])
	}
	return d
}

// pyFloat is Python's float repr.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// pyQuote is repr() of a str.
func pyQuote(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f || unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
