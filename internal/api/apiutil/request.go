package apiutil

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/errs"
)

// RequestSchema is a schema of upstream's ironic.api.validation (the
// request_body_schema, request_query_schema and request_parameter_schema
// decorators of ironic/api/schemas/v1): Draft 2020-12 with the uuid
// format asserted, reporting "Schema error: <message>" and, when the
// error has branches, ". Possible root cause: <message>".
type RequestSchema struct {
	*Schema
}

var (
	requestMu    sync.Mutex
	requestCache = map[string]*RequestSchema{}
)

// uuidFormat is the "uuid" format check of upstream's validator
// (uuidutils.is_uuid_like); non-strings pass, as formats constrain only
// their own type.
var uuidFormat = &jsonschema.Format{Name: "uuid", Validate: func(v any) error {
	s, ok := v.(string)
	if !ok || collection.IsUUIDLike(s) {
		return nil
	}
	return errors.New("not a uuid")
}}

// LoadRequestSchema compiles the embedded schema name as a request schema
// (cached; the cache is a registry filled on first use).
func LoadRequestSchema(name string) (*RequestSchema, error) {
	requestMu.Lock()
	defer requestMu.Unlock()
	if s, ok := requestCache[name]; ok {
		return s, nil
	}
	doc, err := SchemaDocument(name)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(uuidFormat)
	url := "mem:///request/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("request schema %s: %w", name, err)
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile request schema %s: %w", name, err)
	}
	raw, err := SchemaDocument(name)
	if err != nil {
		return nil, err
	}
	s := &RequestSchema{Schema: &Schema{name: name, doc: raw, compiled: compiled}}
	if m, ok := raw.(map[string]any); ok {
		if props, ok := m["properties"].(map[string]any); ok {
			s.properties = sortedKeys(props)
		}
	}
	requestCache[name] = s
	return s, nil
}

// MustRequestSchema is LoadRequestSchema for schemas the product ships.
func MustRequestSchema(name string) *RequestSchema {
	s, err := LoadRequestSchema(name)
	if err != nil {
		panic(err)
	}
	return s
}

// Validate checks value (unlike args.schema, a nil value is validated
// too: upstream validates whatever the request carried).
func (s *RequestSchema) Validate(value any) error {
	err := s.compiled.Validate(normalize(value))
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("validate against %s: %w", s.name, err)
	}
	top := firstError(ve)
	msg := "Schema error: " + s.message(top, value)
	// As upstream, descend into the branches of a too generic error
	// (anyOf, oneOf) for a likelier cause.
	cause := ""
	for cur := top; isBranching(cur); {
		// best_match over the branches' errors: the shallowest, the
		// first branch winning ties.
		var ls []*jsonschema.ValidationError
		for _, c := range cur.Causes {
			branch := leaves(c)
			sortErrors(branch)
			ls = append(ls, branch...)
		}
		if len(ls) == 0 {
			break
		}
		slices.SortStableFunc(ls, func(a, b *jsonschema.ValidationError) int {
			return len(a.InstanceLocation) - len(b.InstanceLocation)
		})
		cur = ls[0]
		cause = s.message(cur, value)
	}
	if cause != "" {
		msg += ". Possible root cause: " + cause
	}
	return errs.InvalidParameterValue(msg)
}

func isBranching(e *jsonschema.ValidationError) bool {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		return true
	}
	return false
}

// firstError is the error jsonschema's validate() raises: the first one
// iter_errors yields, approximated as the shallowest in keyword order.
func firstError(root *jsonschema.ValidationError) *jsonschema.ValidationError {
	all := leaves(root)
	sortErrors(all)
	return all[0]
}

func sortErrors(all []*jsonschema.ValidationError) {
	slices.SortStableFunc(all, func(a, b *jsonschema.ValidationError) int {
		if d := len(a.InstanceLocation) - len(b.InstanceLocation); d != 0 {
			return d
		}
		return keywordRank(a.ErrorKind) - keywordRank(b.ErrorKind)
	})
}

// message is pyMessage with the format error of upstream's checker.
func (s *RequestSchema) message(e *jsonschema.ValidationError, root any) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Format:
		return PyRepr(at(root, e.InstanceLocation)) + " is not a " + PyRepr(k.Want)
	case *kind.Not:
		// The error sits on the schema holding "not"; Python prints the
		// negated schema.
		var negated any
		if d, ok := s.subschema(e.SchemaURL).(*Dict); ok {
			negated, _ = d.Get("not")
		}
		return PyRepr(at(root, e.InstanceLocation)) + " should not be valid under " + PyRepr(negated)
	}
	return s.pyMessage(e, root)
}

// subschema is the schema at a keyword location, its keys in the order
// the file lists them (Python prints schemas in their source order).
func (s *RequestSchema) subschema(schemaURL string) any {
	raw, err := schemaFiles.ReadFile(path.Join("schemas", s.name+".json"))
	if err != nil {
		return nil
	}
	v, err := DecodeOrdered(raw)
	if err != nil {
		return nil
	}
	_, frag, _ := strings.Cut(schemaURL, "#")
	for _, p := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if p == "" {
			continue
		}
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		switch x := v.(type) {
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
