package errs

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/openkeel/ironic/internal/pyfmt"
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
			s = pyfmt.Str(v)
		case 'r':
			s = pyfmt.Repr(v)
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
