package apiutil

import (
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
	var extra []string
	for k := range vals {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return Query{}, errs.InvalidParameterValue("Unexpected arguments: " + strings.Join(extra, ", "))
	}
	return Query{values: vals}, nil
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
