package apiutil

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/openkeel/ironic/internal/errs"
)

// The request schemas upstream applies, one file each, named after the
// upstream schema (schemas/README.md lists them). They are data, compiled
// once on first use.
//
//go:embed schemas/*.json
var schemaFiles embed.FS

// SchemaNames lists the embedded schemas (file names without ".json").
func SchemaNames() []string {
	entries, _ := fs.ReadDir(schemaFiles, "schemas")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".json"))
	}
	return out
}

// SchemaDocument returns the embedded schema name as decoded JSON.
func SchemaDocument(name string) (any, error) {
	raw, err := schemaFiles.ReadFile(path.Join("schemas", name+".json"))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	return doc, nil
}

// Schema is a compiled request schema.
type Schema struct {
	name string
	doc  any
	// ordered is the document in its source key order (*Dict objects),
	// "$schema" kept, for printing parts of it as jsonschema does.
	ordered    any
	compiled   *jsonschema.Schema
	properties []string
}

// Properties lists the top-level properties the schema declares (what
// patched_validate_with_schema keeps of a patched object).
func (s *Schema) Properties() []string { return s.properties }

var (
	schemaMu    sync.Mutex
	schemaCache = map[string]*Schema{}
)

// LoadSchema compiles the embedded schema name (cached; the cache is a
// registry filled on first use, never changed afterwards).
func LoadSchema(name string) (*Schema, error) {
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s, ok := schemaCache[name]; ok {
		return s, nil
	}
	rawText, err := schemaFiles.ReadFile(path.Join("schemas", name+".json"))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s, err := compileSchema(name, rawText)
	if err != nil {
		return nil, err
	}
	schemaCache[name] = s
	return s, nil
}

// compileSchema compiles the schema document rawText, called name in
// errors.
func compileSchema(name string, rawText []byte) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(rawText))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(rawText))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	stripDraft(doc)
	c := jsonschema.NewCompiler()
	// Upstream validates with jsonschema.validate, which picks the
	// validator from $schema; the drafts it names behave alike for these
	// schemas, and some name no known draft ("json-schema.org/schema#").
	c.DefaultDraft(jsonschema.Draft7)
	url := "mem:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile schema %s: %w", name, err)
	}
	ordered, err := DecodeOrdered(rawText)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s := &Schema{name: name, doc: raw, ordered: ordered, compiled: compiled}
	if m, ok := doc.(map[string]any); ok {
		if props, ok := m["properties"].(map[string]any); ok {
			s.properties = sortedKeys(props)
		}
	}
	return s, nil
}

// MustSchema is LoadSchema for schemas the product ships: a failure is a
// build defect.
func MustSchema(name string) *Schema {
	s, err := LoadSchema(name)
	if err != nil {
		panic(err)
	}
	return s
}

func stripDraft(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "$schema")
		// Draft 4 "id" inside a draft 7 document would be read as a base
		// URI by the compiler; upstream's validator ignores it.
		if id, ok := x["id"].(string); ok && strings.HasPrefix(id, "http") {
			delete(x, "id")
		}
		for k, c := range x {
			if k == "properties" || k == "definitions" {
				if m, ok := c.(map[string]any); ok {
					for _, sub := range m {
						stripDraft(sub)
					}
					continue
				}
			}
			stripDraft(c)
		}
	case []any:
		for _, c := range x {
			stripDraft(c)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Validate is args.schema: value (decoded with json.Number numbers) must
// satisfy the schema, else 400 InvalidParameterValue "Schema error for
// <arg>: <message>" with the message Python's jsonschema writes for the
// error upstream reports. A nil value passes, as upstream: an argument
// left out is not checked.
func (s *Schema) Validate(arg string, value any) error {
	if value == nil {
		return nil
	}
	return s.ValidateBody(arg, value)
}

// ValidateBody is Validate for a whole request body (from DecodeBody),
// where nil is the JSON null the client sent, not an argument left out.
// Upstream's args.schema lets None through and its controllers then fail
// on it with a 500; null gets the schema's own 400 here ("Schema error
// for <arg>: None is not of type 'object'"), as every other non-object
// body does.
func (s *Schema) ValidateBody(arg string, value any) error {
	err := s.compiled.Validate(normalize(value))
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return fmt.Errorf("validate %s against %s: %w", arg, s.name, err)
	}
	best := s.bestError(ve)
	msg := "Schema error for " + arg + ": " + s.pyMessage(best, value)
	// A generic anyOf/oneOf message is followed by the best error of its
	// branches, as upstream's args.schema digs for a root cause.
	cause := ""
	for cur := best; isCombinator(cur) && len(cur.Causes) > 0; {
		cur = s.bestOf(cur.Causes)
		cause = s.pyMessage(cur, value)
	}
	if cause != "" {
		msg += ". Possible root cause: " + cause
	}
	return errs.InvalidParameterValue(msg)
}

// normalize turns *Dict values into maps the validator understands.
func normalize(v any) any {
	switch x := v.(type) {
	case *Dict:
		m := make(map[string]any, x.Len())
		for _, k := range x.keys {
			m[k] = normalize(x.vals[k])
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, c := range x {
			m[k] = normalize(c)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = normalize(c)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = c
		}
		return out
	case float64:
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64))
	case int:
		return json.Number(strconv.Itoa(x))
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	}
	return v
}

// leaves flattens an error tree down to the errors of single keywords,
// keeping anyOf/oneOf errors whole (their causes are their branches).
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		return []*jsonschema.ValidationError{e}
	}
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// keywordRank orders errors at the same depth as upstream's schemas list
// their keywords (type, then properties' checks, then required, then
// additionalProperties).
func keywordRank(k jsonschema.ErrorKind) int {
	switch k.(type) {
	case *kind.Type:
		return 0
	case *kind.Enum, *kind.Const, *kind.Pattern, *kind.MinLength, *kind.MaxLength,
		*kind.Minimum, *kind.Maximum, *kind.MinItems, *kind.MaxItems:
		return 1
	case *kind.Required:
		return 2
	case *kind.AdditionalProperties:
		return 3
	case *kind.AnyOf, *kind.OneOf:
		return 5
	}
	return 4
}

// rank is keywordRank in the keyword order of this schema's objects.
// Upstream builds LOCAL_LINK_CONN_SCHEMA by adding "required" to copies
// of a base schema that already ends with additionalProperties, so there
// an unexpected key is reported before a missing one.
func (s *Schema) rank(k jsonschema.ErrorKind) int {
	r := keywordRank(k)
	if s.name == "local_link_connection" {
		switch k.(type) {
		case *kind.Required:
			return keywordRank(&kind.AdditionalProperties{})
		case *kind.AdditionalProperties:
			return keywordRank(&kind.Required{})
		}
	}
	return r
}

// bestError is jsonschema's best_match: the shallowest error, anyOf and
// oneOf last, ties in keyword order; an anyOf/oneOf error is replaced by
// its branch of the instance's type when exactly one branch accepts the
// type.
func (s *Schema) bestError(root *jsonschema.ValidationError) *jsonschema.ValidationError {
	all := leaves(root)
	slices.SortStableFunc(all, func(a, b *jsonschema.ValidationError) int {
		if d := len(a.InstanceLocation) - len(b.InstanceLocation); d != 0 {
			return d
		}
		return s.rank(a.ErrorKind) - s.rank(b.ErrorKind)
	})
	best := all[0]
	for {
		switch best.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf:
		default:
			return best
		}
		var typed []*jsonschema.ValidationError
		for _, c := range best.Causes {
			ls := leaves(c)
			if !slices.ContainsFunc(ls, func(l *jsonschema.ValidationError) bool {
				_, isType := l.ErrorKind.(*kind.Type)
				return isType && len(l.InstanceLocation) == len(best.InstanceLocation)
			}) {
				typed = append(typed, c)
			}
		}
		if len(typed) != 1 {
			return best
		}
		best = s.bestError(typed[0])
	}
}

func isCombinator(e *jsonschema.ValidationError) bool {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		return true
	}
	return false
}

// bestOf is best_match over sibling errors (a combinator's branches): the
// best error of each branch, the shallowest and strongest first, the
// earlier branch on a tie.
func (s *Schema) bestOf(branches []*jsonschema.ValidationError) *jsonschema.ValidationError {
	cands := make([]*jsonschema.ValidationError, len(branches))
	for i, b := range branches {
		cands[i] = s.bestError(b)
	}
	slices.SortStableFunc(cands, func(a, b *jsonschema.ValidationError) int {
		if d := len(a.InstanceLocation) - len(b.InstanceLocation); d != 0 {
			return d
		}
		if ac, bc := isCombinator(a), isCombinator(b); ac != bc {
			if ac {
				return 1
			}
			return -1
		}
		return 0
	})
	return cands[0]
}

// at returns the value at an instance location.
func at(v any, loc []string) any {
	for _, p := range loc {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case *Dict:
			v, _ = x.Get(p)
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// pyMessage is the message Python's jsonschema gives for e.
func (s *Schema) pyMessage(e *jsonschema.ValidationError, root any) string {
	inst := at(root, e.InstanceLocation)
	r := PyRepr(inst)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		return PyRepr(k.Missing[0]) + " is a required property"
	case *kind.AdditionalProperties:
		props := orderedExtras(inst, k.Properties)
		quoted := make([]string, len(props))
		for i, p := range props {
			quoted[i] = PyRepr(p)
		}
		verb := "was"
		if len(props) > 1 {
			verb = "were"
		}
		return fmt.Sprintf("Additional properties are not allowed (%s %s unexpected)", strings.Join(quoted, ", "), verb)
	case *kind.Type:
		var want []string
		for _, w := range s.declaredTypes(e.SchemaURL, k.Want) {
			want = append(want, PyRepr(w))
		}
		return r + " is not of type " + strings.Join(want, ", ")
	case *kind.Enum:
		return r + " is not one of " + PyRepr(k.Want)
	case *kind.Const:
		return PyRepr(k.Want) + " was expected"
	case *kind.Pattern:
		return r + " does not match " + PyRepr(k.Want)
	// Recent jsonschema releases (master's; 4.26 checked) word a bound of
	// one (zero) as emptiness; 21.4's said "is too short" ("is too long").
	case *kind.MaxLength:
		return r + sizeWord(k.Want, "max")
	case *kind.MinLength:
		return r + sizeWord(k.Want, "min")
	case *kind.MaxItems:
		return r + sizeWord(k.Want, "max")
	case *kind.MinItems:
		return r + sizeWord(k.Want, "min")
	case *kind.Minimum:
		return r + " is less than the minimum of " + k.Want.RatString()
	case *kind.Maximum:
		return r + " is greater than the maximum of " + k.Want.RatString()
	case *kind.AnyOf:
		return r + " is not valid under any of the given schemas"
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return r + " is valid under each of " + s.validBranches(e.SchemaURL, k.Subschemas)
		}
		return r + " is not valid under any of the given schemas"
	case *kind.FalseSchema:
		return "False schema does not allow " + r
	}
	return e.Error()
}

// sizeWord is jsonschema's wording of a failed length or item-count
// bound.
func sizeWord(bound int, which string) string {
	switch {
	case which == "min" && bound == 1:
		return " should be non-empty"
	case which == "min":
		return " is too short"
	case bound == 0:
		return " is expected to be empty"
	}
	return " is too long"
}

// validBranches prints the oneOf branches at schemaURL that all accept
// an instance as jsonschema does: those after the first, then the first.
func (s *Schema) validBranches(schemaURL string, valid []int) string {
	branches, _ := at(s.ordered, append(fragmentTokens(schemaURL), "oneOf")).([]any)
	order := append(slices.Clone(valid[1:]), valid[0])
	reprs := make([]string, 0, len(order))
	for _, i := range order {
		if i < len(branches) {
			reprs = append(reprs, PyRepr(branches[i]))
		} else {
			reprs = append(reprs, strconv.Itoa(i))
		}
	}
	return strings.Join(reprs, ", ")
}

// orderedExtras lists the unexpected properties in the instance's order
// where it has one.
func orderedExtras(inst any, props []string) []string {
	if d, ok := inst.(*Dict); ok {
		var out []string
		for _, k := range d.keys {
			if slices.Contains(props, k) {
				out = append(out, k)
			}
		}
		return out
	}
	out := slices.Clone(props)
	sort.Strings(out)
	return out
}

// declaredTypes is the "type" keyword at schemaURL in the order the
// schema lists it (the validator reports the types sorted).
func (s *Schema) declaredTypes(schemaURL string, fallback []string) []string {
	_, frag, ok := strings.Cut(schemaURL, "#")
	if !ok {
		return fallback
	}
	v := s.doc
	for _, p := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if p == "" {
			continue
		}
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(x) {
				return fallback
			}
			v = x[i]
		default:
			return fallback
		}
	}
	if m, ok := v.(map[string]any); ok {
		v = m["type"]
	}
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return fallback
}

// Message is str(ValidationError) of the error upstream reports when
// value does not satisfy the schema, "" when it does: jsonschema's
// message, then the failing keyword with the sub-schema that holds it and
// the instance it failed on, each pretty-printed as jsonschema does
// (pprint at width 72, the schema in its source order). It is for the
// callers that print the whole exception ("Invalid clean_steps: %s",
// "Invalid configdrive format: %s").
func (s *Schema) Message(value any) string {
	err := s.compiled.Validate(normalize(value))
	if err == nil {
		return ""
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return err.Error()
	}
	best := s.bestError(ve)
	msg := s.pyMessage(best, value)
	kw := best.ErrorKind.KeywordPath()
	if len(kw) == 0 {
		return msg
	}
	// An error found below a combinator (anyOf, oneOf) is reported
	// relative to it, as jsonschema's context errors are.
	schemaBase, instBase := []string(nil), []string(nil)
	if c := combinatorAbove(ve, best); c != nil {
		schemaBase = append(fragmentTokens(c.SchemaURL), c.ErrorKind.KeywordPath()...)
		instBase = c.InstanceLocation
	}
	schemaLoc := fragmentTokens(best.SchemaURL)
	sub := at(s.ordered, schemaLoc)
	inst := at(value, best.InstanceLocation)
	return msg + "\n\nFailed validating " + PyRepr(kw[0]) + " in " +
		indexPath("schema", s.ordered, schemaBase, schemaLoc[len(schemaBase):]) + ":\n    " +
		indentLines(PPrint(sub), "    ") + "\n\nOn " +
		indexPath("instance", value, instBase, best.InstanceLocation[len(instBase):]) + ":\n    " +
		indentLines(PPrint(inst), "    ")
}

// combinatorAbove is the innermost anyOf/oneOf error strictly above e in
// the tree of root, nil when there is none.
func combinatorAbove(root, e *jsonschema.ValidationError) *jsonschema.ValidationError {
	var walk func(n *jsonschema.ValidationError, above *jsonschema.ValidationError) (*jsonschema.ValidationError, bool)
	walk = func(n, above *jsonschema.ValidationError) (*jsonschema.ValidationError, bool) {
		if n == e {
			return above, true
		}
		if isCombinator(n) {
			above = n
		}
		for _, c := range n.Causes {
			if a, ok := walk(c, above); ok {
				return a, true
			}
		}
		return nil, false
	}
	a, _ := walk(root, nil)
	return a
}

// fragmentTokens are the JSON pointer tokens of a schema URL's fragment.
func fragmentTokens(url string) []string {
	_, frag, _ := strings.Cut(url, "#")
	var out []string
	for _, p := range strings.Split(frag, "/") {
		if p != "" {
			out = append(out, strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~"))
		}
	}
	return out
}

// indexPath is jsonschema's format_as_index: word followed by the
// indices of rel (taken below base in doc), list indices as ints and
// keys as quoted strings.
func indexPath(word string, doc any, base, rel []string) string {
	var b strings.Builder
	b.WriteString(word)
	cur := at(doc, base)
	for _, p := range rel {
		if _, isList := cur.([]any); isList {
			b.WriteString("[" + p + "]")
		} else {
			b.WriteString("[" + PyRepr(p) + "]")
		}
		cur = at(cur, []string{p})
	}
	return b.String()
}

// indentLines is textwrap.indent of every line but the first (which the
// caller has placed).
func indentLines(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}
