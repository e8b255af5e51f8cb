package errs

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pyPercent evaluates Python's `template % kw` for the mapping form
// (%(name)s, %(name)d, %(name)r, %%). ok is false where Python raises
// (missing key, a non-number for %d, an unsupported conversion); upstream
// then falls back to the raw template.
func pyPercent(tmpl string, kw map[string]any) (string, bool) {
	if !strings.Contains(tmpl, "%") {
		return tmpl, true
	}
	var b strings.Builder
	for i := 0; i < len(tmpl); i++ {
		c := tmpl[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(tmpl) {
			return "", false
		}
		if tmpl[i] == '%' {
			b.WriteByte('%')
			continue
		}
		if tmpl[i] != '(' {
			return "", false
		}
		end := strings.IndexByte(tmpl[i:], ')')
		if end < 0 {
			return "", false
		}
		name := tmpl[i+1 : i+end]
		i += end + 1
		left := false
		for i < len(tmpl) && strings.IndexByte("-#0 +", tmpl[i]) >= 0 {
			left = left || tmpl[i] == '-'
			i++
		}
		width := 0
		for i < len(tmpl) && tmpl[i] >= '0' && tmpl[i] <= '9' {
			width = width*10 + int(tmpl[i]-'0')
			i++
		}
		if i >= len(tmpl) {
			return "", false
		}
		v, present := kw[name]
		if !present {
			return "", false
		}
		var s string
		switch tmpl[i] {
		case 's':
			s = pyStr(v)
		case 'r':
			s = pyRepr(v)
		case 'd', 'i':
			n, isNum := pyIntegral(v)
			if !isNum {
				return "", false
			}
			s = n
		default:
			return "", false
		}
		if pad := width - utf8.RuneCountInString(s); pad > 0 {
			if left {
				s += strings.Repeat(" ", pad)
			} else {
				s = strings.Repeat(" ", pad) + s
			}
		}
		b.WriteString(s)
	}
	return b.String(), true
}

// pyIntegral is what %d prints for v: integers, bools as 1/0, floats
// truncated; anything else is a TypeError in Python.
func pyIntegral(v any) (string, bool) {
	switch n := v.(type) {
	case bool:
		if n {
			return "1", true
		}
		return "0", true
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(n), true
	case float32:
		return pyIntegral(float64(n))
	case float64:
		if math.IsInf(n, 0) || math.IsNaN(n) {
			return "", false
		}
		return strconv.FormatFloat(math.Trunc(n), 'f', 0, 64), true
	}
	return "", false
}

// pyStr is Python's str(v) for the values our code passes as kwargs.
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	}
	return pyRepr(v)
}

// pyRepr is Python's repr(v); containers print their items with repr.
// Maps print in sorted key order (Python would keep insertion order, which
// a Go map does not have).
func pyRepr(v any) string {
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
	case float32:
		return pyFloat(float64(x))
	case float64:
		return pyFloat(x)
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x)
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	case []string:
		items := make([]string, len(x))
		for i, s := range x {
			items[i] = pyQuote(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case []any:
		items := make([]string, len(x))
		for i, s := range x {
			items[i] = pyRepr(s)
		}
		return "[" + strings.Join(items, ", ") + "]"
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return pyRepr(m)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		items := make([]string, len(keys))
		for i, k := range keys {
			items[i] = pyQuote(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(items, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// pyFloat is Python's float repr: shortest round-trip digits, positional
// between 1e-4 and 1e16, always with a fraction or exponent.
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
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// pyQuote is repr() of a str: single quotes unless the text has a single
// quote and no double quote; backslash escapes for quotes, backslash,
// \t \n \r and non-printable characters.
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
