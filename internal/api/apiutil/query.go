package apiutil

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/openkeel/ironic/internal/errs"
)

// Query is a request's query string checked against the arguments a
// handler declares, as upstream's args.validate does for keyword
// arguments.
type Query struct {
	values url.Values
}

// ParseQuery refuses query parameters the handler does not take with 400
// "Unexpected arguments: a, b" (upstream lists a set; ours is sorted).
func ParseQuery(r *http.Request, allowed ...string) (Query, error) {
	vals := r.URL.Query()
	if err := UnexpectedArgs(vals, allowed); err != nil {
		return Query{}, err
	}
	return Query{values: vals}, nil
}

// UnexpectedArgs is args.validate's refusal of keyword arguments the
// handler does not take: 400 "Unexpected arguments: a, b" naming those
// of args not in allowed (upstream lists a set; ours is sorted), nil when
// there are none.
func UnexpectedArgs[V any](args map[string]V, allowed []string) error {
	var extra []string
	for k := range args {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	return errs.InvalidParameterValue("Unexpected arguments: " + strings.Join(extra, ", "))
}

// StringArg is args.string for a keyword argument: nil when absent or
// null, 400 when not a string.
func StringArg(args map[string]any, name string) (*string, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, errs.InvalidParameterValue(fmt.Sprintf("Expected string for %s: %s", name, PyRepr(v)))
	}
	return &s, nil
}

// Get returns a parameter's value, nil when absent.
func (q Query) Get(name string) *string {
	v, ok := q.values[name]
	if !ok || len(v) == 0 {
		return nil
	}
	s := v[len(v)-1]
	return &s
}
