// Package pyfmt prints and parses values the way Python does, for the
// texts upstream Ironic builds with str(), repr(), %-formatting, int() and
// json.dumps(): error messages, last_error values, query parameters and
// JSON bodies that clients compare byte for byte.
package pyfmt

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Str is Python's str(v).
func Str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	}
	return Repr(v)
}

// Repr is Python's repr(v); containers print their items with repr.
// Maps print in sorted key order (Python would keep insertion order, which
// a Go map does not have).
func Repr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return Quote(x)
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float32:
		return Float(float64(x))
	case float64:
		return Float(x)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x)
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	case []string:
		items := make([]string, len(x))
		for i, s := range x {
			items[i] = Quote(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case []any:
		items := make([]string, len(x))
		for i, s := range x {
			items[i] = Repr(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return Repr(m)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		items := make([]string, len(keys))
		for i, k := range keys {
			items[i] = Quote(k) + ": " + Repr(x[k])
		}
		return "{" + strings.Join(items, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// Float is Python's float repr: shortest round-trip digits, positional
// between 1e-4 and 1e16, always with a fraction or exponent.
func Float(f float64) string {
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
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// Quote is repr() of a str: single quotes unless the text has a single
// quote and no double quote; backslash escapes for quotes, backslash,
// \t \n \r and non-printable characters.
func Quote(s string) string {
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

// Int is Python's int() of a string, for values that fit an int:
// surrounding whitespace, an optional sign, ASCII digits with single "_"
// between them.
func Int(s string) (int, bool) {
	s = strings.TrimSpace(s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return 0, false
	}
	digits := strings.ReplaceAll(s, "_", "")
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// StrJSON is Str of a value decoded from JSON, which Python would have
// decoded with ints kept apart from floats: an integral float64 prints as
// an int.
func StrJSON(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ReprJSON(v)
}

// Ordered is a mapping that keeps its keys in order, as a Python dict keeps
// insertion order: ReprJSON prints its items in that order where a Go map
// can only be printed sorted.
type Ordered interface {
	Keys() []string
	Get(key string) (any, bool)
}

// ReprJSON is Repr of a value decoded from JSON (see StrJSON); containers
// apply the same rule to their items. A json.Number (a decoder's
// UseNumber) keeps its literal when it is an int and prints as Python's
// float otherwise; an Ordered prints in its own order.
func ReprJSON(v any) string { return jsonRepr{}.repr(v) }

// ReprJSONKeysFirst is ReprJSON where the keys of every plain map that
// appear in first print before the others, in first's order, and the rest
// sorted: for dicts upstream builds in a known order (a step dict is
// interface, step, args, priority…) that the Go map lost.
func ReprJSONKeysFirst(v any, first ...string) string { return jsonRepr{first: first}.repr(v) }

// jsonRepr holds the key order ReprJSON applies to plain maps.
type jsonRepr struct{ first []string }

func (p jsonRepr) repr(v any) string {
	switch x := v.(type) {
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			f, err := x.Float64()
			if err != nil {
				return string(x)
			}
			return Float(f)
		}
		return string(x)
	case float64:
		// Python's json kept ints apart from floats; an integral value
		// (in the range where float64 holds every int) was an int.
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			return strconv.FormatFloat(x, 'f', 0, 64)
		}
		return Float(x)
	case []any:
		items := make([]string, len(x))
		for i, s := range x {
			items[i] = p.repr(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case Ordered:
		keys := x.Keys()
		items := make([]string, len(keys))
		for i, k := range keys {
			val, _ := x.Get(k)
			items[i] = Quote(k) + ": " + p.repr(val)
		}
		return "{" + strings.Join(items, ", ") + "}"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		p.sortKeys(keys)
		items := make([]string, len(keys))
		for i, k := range keys {
			items[i] = Quote(k) + ": " + p.repr(x[k])
		}
		return "{" + strings.Join(items, ", ") + "}"
	}
	return Repr(v)
}

// sortKeys orders keys: those in p.first in that order, then the rest
// sorted.
func (p jsonRepr) sortKeys(keys []string) {
	sort.Slice(keys, func(i, j int) bool {
		a, b := slices.Index(p.first, keys[i]), slices.Index(p.first, keys[j])
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
}

// Tuple is Python's repr() of a tuple of str, with the trailing comma of a
// one-tuple: ('a',).
func Tuple(items []string) string {
	parts := make([]string, len(items))
	for i, s := range items {
		parts[i] = Quote(s)
	}
	if len(parts) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Truthy is Python's truth test of a value decoded from JSON.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case float64:
		return x != 0
	case int:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// AppendJSONString appends s as a JSON string the way Python's json.dumps
// (ensure_ascii) writes it: only printable ASCII (0x20-0x7e) is literal;
// \" \\ \n \r \t \b \f; everything else, DEL included, is \uXXXX in
// lowercase hex, with surrogate pairs above the BMP. Go's encoder differs
// (it keeps UTF-8 and escapes <, > and &). Invalid UTF-8 becomes \ufffd,
// as Python's errors="replace" decoding would leave it.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	b = AppendJSONStringContent(b, s)
	return append(b, '"')
}

// AppendJSONStringContent is AppendJSONString without the quotes, for a
// string written in parts.
func AppendJSONStringContent(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		if c == '"' || c == '\\' {
			b = append(b, '\\', c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		start = i
		switch r {
		case '\n':
			b = append(b, `\n`...)
			continue
		case '\r':
			b = append(b, `\r`...)
			continue
		case '\t':
			b = append(b, `\t`...)
			continue
		case '\b':
			b = append(b, `\b`...)
			continue
		case '\f':
			b = append(b, `\f`...)
			continue
		}
		if r > 0xffff {
			r -= 0x10000
			hi, lo := 0xd800+(r>>10)&0x3ff, 0xdc00+r&0x3ff
			b = append(b, '\\', 'u', hex[hi>>12&0xf], hex[hi>>8&0xf], hex[hi>>4&0xf], hex[hi&0xf])
			r = lo
		}
		b = append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	return append(b, s[start:]...)
}
