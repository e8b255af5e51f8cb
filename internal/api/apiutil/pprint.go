package apiutil

import (
	"regexp"
	"sort"
	"strings"

	"github.com/openkeel/ironic/internal/pyfmt"
)

// pprintWidth is the width jsonschema gives pprint.pformat when it prints
// a schema or an instance in str(ValidationError).
const pprintWidth = 72

// PPrint is Python's pprint.pformat(v, width=72, sort_dicts=False) of a
// value decoded from JSON: its repr when it fits the width, else dicts
// and lists one item a line and long strings split at spaces into
// adjacent literals. Dicts print in their own order (*Dict), plain maps
// sorted.
func PPrint(v any) string {
	var b strings.Builder
	pprinter{out: &b}.format(v, 0, 0, 1)
	return b.String()
}

type pprinter struct{ out *strings.Builder }

// format is PrettyPrinter._format: indent is the column v starts at,
// allowance the room the closing brackets after v need, level the
// nesting depth (1 at the top).
func (p pprinter) format(v any, indent, allowance, level int) {
	rep := PyRepr(v)
	if len(rep) <= pprintWidth-indent-allowance {
		p.out.WriteString(rep)
		return
	}
	switch x := v.(type) {
	case pyfmt.Ordered:
		keys := x.Keys()
		vals := make([]any, len(keys))
		for i, k := range keys {
			vals[i], _ = x.Get(k)
		}
		p.dict(keys, vals, indent, allowance, level)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		vals := make([]any, len(keys))
		for i, k := range keys {
			vals[i] = x[k]
		}
		p.dict(keys, vals, indent, allowance, level)
	case []any:
		p.list(x, indent, allowance, level)
	case string:
		p.str(x, rep, indent, allowance, level)
	default:
		p.out.WriteString(rep)
	}
}

// dict is _pprint_dict with _format_dict_items.
func (p pprinter) dict(keys []string, vals []any, indent, allowance, level int) {
	p.out.WriteString("{")
	indent++
	allowance++
	for i, k := range keys {
		last := i == len(keys)-1
		rep := PyRepr(k)
		p.out.WriteString(rep + ": ")
		a := 1
		if last {
			a = allowance
		}
		p.format(vals[i], indent+len(rep)+2, a, level+1)
		if !last {
			p.out.WriteString(",\n" + strings.Repeat(" ", indent))
		}
	}
	p.out.WriteString("}")
}

// list is _pprint_list with _format_items (not compact).
func (p pprinter) list(items []any, indent, allowance, level int) {
	p.out.WriteString("[")
	indent++
	allowance++
	for i, it := range items {
		last := i == len(items)-1
		if i > 0 {
			p.out.WriteString(",\n" + strings.Repeat(" ", indent))
		}
		a := 1
		if last {
			a = allowance
		}
		p.format(it, indent, a, level+1)
	}
	p.out.WriteString("]")
}

var wordAndSpace = regexp.MustCompile(`\S*\s*`)

// str is _pprint_str: a string too long for its line is split after
// whitespace into literals that each fit, one a line (in parentheses at
// the top level).
func (p pprinter) str(s, rep string, indent, allowance, level int) {
	if s == "" {
		p.out.WriteString(rep)
		return
	}
	if level == 1 {
		indent++
		allowance++
	}
	maxWidth1, maxWidth := pprintWidth-indent, pprintWidth-indent
	lines := splitLinesKeepEnds(s)
	var chunks []string
	for i, line := range lines {
		lineRep := PyRepr(line)
		if i == len(lines)-1 {
			maxWidth1 -= allowance
		}
		if len(lineRep) <= maxWidth1 {
			chunks = append(chunks, lineRep)
			continue
		}
		parts := wordAndSpace.FindAllString(line, -1)
		if n := len(parts); n > 0 && parts[n-1] == "" {
			parts = parts[:n-1]
		}
		maxWidth2 := maxWidth
		current := ""
		for j, part := range parts {
			candidate := current + part
			if j == len(parts)-1 && i == len(lines)-1 {
				maxWidth2 -= allowance
			}
			if len(PyRepr(candidate)) > maxWidth2 {
				if current != "" {
					chunks = append(chunks, PyRepr(current))
				}
				current = part
			} else {
				current = candidate
			}
		}
		if current != "" {
			chunks = append(chunks, PyRepr(current))
		}
	}
	if len(chunks) == 1 {
		p.out.WriteString(rep)
		return
	}
	if level == 1 {
		p.out.WriteString("(")
	}
	p.out.WriteString(strings.Join(chunks, "\n"+strings.Repeat(" ", indent)))
	if level == 1 {
		p.out.WriteString(")")
	}
}

// splitLinesKeepEnds is str.splitlines(True) for the line ends JSON text
// carries.
func splitLinesKeepEnds(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexAny(s, "\n\r")
		if i < 0 {
			out = append(out, s)
			break
		}
		end := i + 1
		if s[i] == '\r' && end < len(s) && s[end] == '\n' {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
