package inspection

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/pyfmt"
)

const gib = 1 << 30

// rootDeviceHook is upstream's root-device hook: root device hints pick
// the root disk (else the ramdisk's root_disk stands), local_gb is its
// size in whole GiB less one for partitioning when
// disk_partitioning_spacing; no root disk means a diskless node.
func rootDeviceHook(_ context.Context, r *hookRun) error {
	n := r.t.Node()
	if hints := n.Properties["root_device"]; pyfmt.Truthy(hints) {
		raw, ok := r.inventory["disks"]
		if !ok {
			return keyError("disks")
		}
		disks, err := diskList(raw)
		if err != nil {
			return err
		}
		skip, err := skippedDevices(r, disks)
		if err != nil {
			return err
		}
		candidates := disks
		if len(skip) > 0 {
			candidates = nil
			for _, d := range disks {
				if !skip[pyStr(d["name"])] {
					candidates = append(candidates, d)
				}
			}
		}
		found, err := findDevices(r, candidates, hints, true)
		if err != nil && !pyErrClass(err, "TypeError") && !pyErrClass(err, "ValueError") {
			return err
		}
		if err != nil {
			return errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf(
				"No disks could be found using root device hints %s for node %s because they failed to validate. Error: %s", pyStr(hints), n.UUID, err)})
		}
		if len(found) == 0 {
			return errs.New(errs.ClassHardwareInspectionFailure, map[string]any{"error": fmt.Sprintf("No disks satisfied root device hints for node %s", n.UUID)})
		}
		r.pluginData["root_disk"] = found[0]
	}
	var localGB any = int64(0)
	if disk := r.pluginData["root_disk"]; pyfmt.Truthy(disk) {
		d, ok := disk.(map[string]any)
		if !ok {
			return pyErr("TypeError", "'%s' object is not subscriptable", pyType(disk))
		}
		size, ok := d["size"]
		if !ok {
			return keyError("size")
		}
		gb, err := floorDivGiB(size)
		if err != nil {
			return err
		}
		if gb == 0 {
			r.log.Warn("The requested root disk is too small (smaller than 1 GiB) or its size cannot be detected", "root_disk", pyRepr(disk))
		} else if r.o.DiskPartitioningSpacing {
			gb--
		}
		localGB = gb
	} else {
		r.log.Info("No root device found for node, assuming node is diskless")
	}
	r.pluginData["local_gb"] = localGB
	setProperty(n, "local_gb", localGB)
	return nil
}

// floorDivGiB is Python's size // units.Gi for a JSON number.
func floorDivGiB(size any) (int64, error) {
	if i, ok := jsonInt(size); ok {
		q := i / gib
		if i%gib != 0 && i < 0 {
			q--
		}
		return q, nil
	}
	if f, ok := size.(float64); ok {
		return int64(math.Floor(f / gib)), nil
	}
	if _, ok := size.(bool); ok {
		return 0, nil
	}
	return 0, pyErr("TypeError", "unsupported operand type(s) for //: '%s' and 'int'", pyType(size))
}

func diskList(v any) ([]map[string]any, error) {
	return pyDicts(v, func(it any) error {
		return pyErr("AttributeError", "'%s' object has no attribute 'get'", pyType(it))
	})
}

// skippedDevices is upstream _get_skip_list_for_node: the names of the
// disks any hint set of properties skip_block_devices matches. A hint
// that does not validate fails the hook.
func skippedDevices(r *hookRun, disks []map[string]any) (map[string]bool, error) {
	raw := r.t.Node().Properties["skip_block_devices"]
	if !pyfmt.Truthy(raw) {
		return nil, nil
	}
	list, err := pyList(raw)
	if err != nil {
		return nil, err
	}
	skip := map[string]bool{}
	for _, h := range list {
		found, err := findDevices(r, disks, h, false)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, d := range found {
			name := pyStr(d["name"])
			if !skip[name] {
				names = append(names, name)
			}
			skip[name] = true
		}
		if len(names) > 0 {
			r.log.Warn("Using hint skipping devices", "hint", pyStr(h), "devices", strings.Join(names, ","))
		}
	}
	return skip, nil
}

// hintTypes are upstream's VALID_ROOT_DEVICE_HINTS, in its order.
var hintTypes = []KeyValue{
	{"size", "int"}, {"model", "str"}, {"wwn", "str"}, {"serial", "str"}, {"vendor", "str"},
	{"wwn_with_extension", "str"}, {"wwn_vendor_extension", "str"}, {"name", "str"},
	{"rotational", "bool"}, {"hctl", "str"}, {"by_path", "str"},
}

func hintType(name string) string {
	for _, kv := range hintTypes {
		if kv.Key == name {
			return kv.Value
		}
	}
	return ""
}

// parsedHint is one hint after upstream parse_root_device_hints: a spec
// for the matcher, or a Boolean.
type parsedHint struct {
	name    string
	typ     string
	spec    string
	boolean bool
}

// parseRootDeviceHints is upstream parse_root_device_hints. Hints are
// kept in name order, as a Go map has no other.
func parseRootDeviceHints(raw any) ([]parsedHint, error) {
	hints, ok := raw.(map[string]any)
	if !ok {
		return nil, pyErr("ValueError", "The hints \"%s\" are invalid. Valid hints are: \"%s\"", pyStr(raw), validHintNames())
	}
	names := make([]string, 0, len(hints))
	var invalid []string
	for k := range hints {
		names = append(names, k)
		if hintType(k) == "" {
			invalid = append(invalid, k)
		}
	}
	sort.Strings(names)
	if len(invalid) > 0 {
		sort.Strings(invalid)
		return nil, pyErr("ValueError", "The hints \"%s\" are invalid. Valid hints are: \"%s\"", strings.Join(invalid, ", "), validHintNames())
	}
	out := make([]parsedHint, 0, len(names))
	for _, name := range names {
		expr := hints[name]
		h := parsedHint{name: name, typ: hintType(name)}
		op, values, err := hintOperatorAndValues(expr, name)
		if err != nil {
			return nil, err
		}
		spec := pyStr(expr)
		switch {
		case name == "size" && op == "<range-in>":
		case h.typ == "str":
			if _, ok := expr.(string); !ok {
				return nil, pyErr("ValueError", "Root device hint \"%s\" is not a string value. Hint expression: %s", name, pyStr(expr))
			}
			if spec, err = normalizeHintExpression(expr, name); err != nil {
				return nil, err
			}
		case h.typ == "int":
			for _, v := range values {
				i, ok := pyfmt.Int(v)
				if !ok {
					return nil, pyErr("ValueError", "Root device hint \"%s\" is not an integer value. Current value: %s", name, pyStr(expr))
				}
				if i <= 0 {
					return nil, pyErr("ValueError", "Root device hint \"%s\" should be a positive integer. Current value: %s", name, pyStr(expr))
				}
			}
		case h.typ == "bool":
			b, ok := boolFromString(expr)
			if !ok {
				return nil, pyErr("ValueError", "Root device hint \"%s\" is not a Boolean value. Current value: %s", name, pyStr(expr))
			}
			h.boolean = b
			out = append(out, h)
			continue
		}
		tokens, err := parseSpec(spec)
		if err != nil {
			return nil, err
		}
		if len(tokens) <= 1 {
			if h.typ == "str" {
				spec = "s== " + spec
			} else {
				spec = "== " + spec
			}
		}
		h.spec = spec
		out = append(out, h)
	}
	return out, nil
}

func validHintNames() string {
	names := make([]string, len(hintTypes))
	for i, kv := range hintTypes {
		names[i] = kv.Key
	}
	return strings.Join(names, ", ")
}

// hintOperatorAndValues is upstream _extract_hint_operator_and_values:
// the lower-cased expression's operator and the values around it.
func hintOperatorAndValues(expr any, name string) (string, []string, error) {
	s := strings.ToLower(strings.TrimSpace(pyStr(expr)))
	if s == "" {
		return "", nil, pyErr("ValueError", "Root device hint \"%s\" expression is empty", name)
	}
	tokens, err := parseSpec(s)
	if err != nil {
		return "", nil, err
	}
	if len(tokens) <= 1 {
		return "", []string{s}, nil
	}
	op := tokens[0]
	var values []string
	for _, v := range strings.Split(s, op) {
		if v != "" {
			values = append(values, strings.TrimSpace(v))
		}
	}
	return op, values, nil
}

// normalizeHintExpression is upstream _normalize_hint_expression: the
// values URL-quoted, joined by the operator.
func normalizeHintExpression(expr any, name string) (string, error) {
	op, values, err := hintOperatorAndValues(expr, name)
	if err != nil {
		return "", err
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = " " + urlQuote(v) + " "
	}
	return strings.TrimSpace(op + strings.Join(parts, op)), nil
}

// urlQuote is Python's urllib.parse.quote with its default safe "/".
func urlQuote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.-~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// boolFromString is oslo strutils.bool_from_string(v, strict=True).
func boolFromString(v any) (bool, bool) {
	if b, ok := v.(bool); ok {
		return b, true
	}
	switch strings.ToLower(strings.TrimSpace(pyStr(v))) {
	case "1", "t", "true", "on", "y", "yes":
		return true, true
	case "0", "f", "false", "off", "n", "no":
		return false, true
	}
	return false, false
}

// findDevices is upstream find_devices_by_hints: the disks matching every
// hint (only the first when first is set). A disk lacking a string
// attribute a hint names, or with a non-Boolean rotational, is skipped.
func findDevices(r *hookRun, disks []map[string]any, raw any, first bool) ([]map[string]any, error) {
	hints, err := parseRootDeviceHints(raw)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, d := range disks {
		ok, err := diskMatchesHints(r, d, hints)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, d)
			if first {
				break
			}
		}
	}
	return out, nil
}

func diskMatchesHints(r *hookRun, disk map[string]any, hints []parsedHint) (bool, error) {
	for _, h := range hints {
		dv := disk[h.name]
		var value any
		switch {
		case h.typ == "bool":
			b, ok := boolFromString(dv)
			if !ok {
				r.log.Warn("Device attribute is not a valid Boolean, skipping device", "attr", h.name, "device", pyStr(disk["name"]))
				return false, nil
			}
			if b != h.boolean {
				return false, nil
			}
			continue
		case h.typ == "str":
			s, err := normalizeHintExpression(dv, h.name)
			if pyErrClass(err, "ValueError") {
				r.log.Warn("Device attribute has an empty value, skipping device", "attr", h.name, "device", pyStr(disk["name"]))
				return false, nil
			}
			if err != nil {
				return false, err
			}
			value = s
		case h.name == "size":
			f, ok := num(dv)
			if !ok {
				return false, pyErr("TypeError", "unsupported operand type(s) for /: '%s' and 'int'", pyType(dv))
			}
			value = f / gib
			if strings.HasPrefix(h.spec, "<range-in>") {
				value = pyfmt.Float(f / gib)
			}
		default:
			value = dv
		}
		ok, err := specMatch(value, h.spec)
		if err != nil {
			return false, err
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// specOps are oslo.utils specs_matcher's unary operators in the order
// its grammar tries them.
var specOps = []string{"==", "=", "!=", "<in>", ">=", "<=", ">", "<", "s==", "s!=", "s<=", "s<", "s>=", "s>"}

func isSpace(c rune) bool { return unicode.IsSpace(c) }

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// specAtom reads a non-keyword run of non-space characters.
func specAtom(s string, i int) (string, int, bool) {
	i = skipSpace(s, i)
	if i >= len(s) {
		return "", i, false
	}
	rest := s[i:]
	for _, op := range append(specOps, "<all-in>", "<or>", "<range-in>") {
		if strings.HasPrefix(rest, op) {
			return "", i, false
		}
	}
	end := strings.IndexFunc(rest, isSpace)
	if end < 0 {
		end = len(rest)
	}
	return rest[:end], i + end, true
}

// parseSpec is specs_matcher's grammar: the operator (if any) and its
// operands, from the start of s.
func parseSpec(s string) ([]string, error) {
	i := skipSpace(s, 0)
	// disjunction: one or more "<or> atom"
	var or []string
	for j := i; ; {
		j = skipSpace(s, j)
		if !strings.HasPrefix(s[j:], "<or>") {
			break
		}
		a, k, ok := specAtom(s, j+len("<or>"))
		if !ok {
			break
		}
		or, j = append(or, a), k
	}
	if len(or) > 0 {
		return append([]string{"<or>"}, or...), nil
	}
	if strings.HasPrefix(s[i:], "<all-in>") {
		var atoms []string
		for j := i + len("<all-in>"); ; {
			a, k, ok := specAtom(s, j)
			if !ok {
				break
			}
			atoms, j = append(atoms, a), k
		}
		if len(atoms) > 0 {
			return append([]string{"<all-in>"}, atoms...), nil
		}
	}
	if strings.HasPrefix(s[i:], "<range-in>") {
		tokens := []string{"<range-in>"}
		for j := i + len("<range-in>"); len(tokens) < 5; {
			a, k, ok := specAtom(s, j)
			if !ok {
				break
			}
			tokens, j = append(tokens, a), k
		}
		if len(tokens) == 5 {
			return tokens, nil
		}
	}
	for _, op := range specOps {
		if strings.HasPrefix(s[i:], op) {
			if a, _, ok := specAtom(s, i+len(op)); ok {
				return []string{op, a}, nil
			}
			break
		}
	}
	if a, _, ok := specAtom(s, i); ok {
		return []string{a}, nil
	}
	return nil, pyErr("ParseException", "Expected an operator or a value, found %s (at char %d), (line:1, col:%d)", pyRepr(s[i:]), i, i+1)
}

// pyFloat is Python's float() of a spec operand or device value.
func pyFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case string:
		t := strings.TrimSpace(x)
		f, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
		if err != nil || strings.HasPrefix(strings.ToLower(strings.TrimLeft(t, "+-")), "0x") {
			return 0, pyErr("ValueError", "could not convert string to float: %s", pyRepr(x))
		}
		return f, nil
	}
	return 0, pyErr("TypeError", "float() argument must be a string or a real number, not '%s'", pyType(v))
}

// specMatch is specs_matcher.match(value, spec): value is a string or,
// for the size hint, a float.
func specMatch(value any, spec string) (bool, error) {
	tokens, err := parseSpec(spec)
	if err != nil {
		tokens = []string{spec}
	}
	if len(tokens) == 1 {
		return value == any(tokens[0]), nil
	}
	op, args := tokens[0], tokens[1:]
	numeric := func(cmp func(a, b float64) bool) (bool, error) {
		a, err := pyFloat(value)
		if err != nil {
			return false, err
		}
		b, err := pyFloat(args[0])
		if err != nil {
			return false, err
		}
		return cmp(a, b), nil
	}
	str := func(sym string, cmp func(c int) bool) (bool, error) {
		s, ok := value.(string)
		if !ok {
			switch sym {
			case "==":
				return false, nil
			case "!=":
				return true, nil
			}
			return false, pyErr("TypeError", "'%s' not supported between instances of '%s' and 'str'", sym, pyTypeOf(value))
		}
		return cmp(strings.Compare(s, args[0])), nil
	}
	switch op {
	case "=", ">=":
		return numeric(func(a, b float64) bool { return a >= b })
	case "!=":
		return numeric(func(a, b float64) bool { return a != b })
	case "<=":
		return numeric(func(a, b float64) bool { return a <= b })
	case "<":
		return numeric(func(a, b float64) bool { return a < b })
	case "==":
		return numeric(func(a, b float64) bool { return a == b })
	case ">":
		return numeric(func(a, b float64) bool { return a > b })
	case "s!=":
		return str("!=", func(c int) bool { return c != 0 })
	case "s<":
		return str("<", func(c int) bool { return c < 0 })
	case "s<=":
		return str("<=", func(c int) bool { return c <= 0 })
	case "s==":
		return str("==", func(c int) bool { return c == 0 })
	case "s>":
		return str(">", func(c int) bool { return c > 0 })
	case "s>=":
		return str(">=", func(c int) bool { return c >= 0 })
	case "<in>":
		s, ok := value.(string)
		if !ok {
			return false, pyErr("TypeError", "argument of type '%s' is not iterable", pyTypeOf(value))
		}
		return strings.Contains(s, args[0]), nil
	case "<or>":
		for _, a := range args {
			if value == any(a) {
				return true, nil
			}
		}
		return false, nil
	case "<all-in>":
		return false, allInError(value)
	case "<range-in>":
		return rangeIn(value, args)
	}
	return false, nil
}

func pyTypeOf(v any) string {
	if _, ok := v.(float64); ok {
		return "float"
	}
	return pyType(v)
}

// allInError is what <all-in> raises for the values hints compare: it
// evaluates the device value as a Python literal list, which neither a
// URL-quoted string nor a size ever is.
func allInError(value any) error {
	if s, ok := value.(string); ok {
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return pyErr("TypeError", "<all-in> must compare with a list literal string, EG \"['aes', 'mmx']\"")
		}
		return pyErr("ValueError", "malformed node or string: %s", pyRepr(s))
	}
	return pyErr("ValueError", "malformed node or string: %s", pyfmt.Float(value.(float64)))
}

// rangeIn is specs_matcher's <range-in> over "[ low high ]"-style
// bounds ("(" and ")" exclusive).
func rangeIn(value any, args []string) (bool, error) {
	s, ok := value.(string)
	if !ok {
		return false, pyErr("ValueError", "malformed node or string: %s", pyfmt.Float(value.(float64)))
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return false, pyErr("ValueError", "malformed node or string: %s", pyRepr(s))
	}
	if len(args) != 4 {
		return false, pyErr("TypeError", "<range-in> operator has to be followed by 2 space separated numeric value surrounded by brackets \"range_in [ 10 20 ] \"")
	}
	lo, err := pyFloat(args[1])
	if err != nil {
		return false, err
	}
	hi, err := pyFloat(args[2])
	if err != nil {
		return false, err
	}
	if lo > hi {
		return false, pyErr("TypeError", "<range-in> operator's first argument has to be smaller or equal to the second argument EG\"range_in  ( 10 20 ] \"")
	}
	var lower, upper bool
	switch args[0] {
	case "[":
		lower = x >= lo
	case "(":
		lower = x > lo
	default:
		return false, pyErr("TypeError", "The first element should be an opening bracket (\"(\" or \"[\")")
	}
	switch args[3] {
	case "]":
		upper = x <= hi
	case ")":
		upper = x < hi
	default:
		return false, pyErr("TypeError", "The last element should be a closing bracket (\")\" or \"]\")")
	}
	return lower && upper, nil
}
