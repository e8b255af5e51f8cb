package apiutil

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/openkeel/ironic/internal/api/collection"
	"github.com/openkeel/ironic/internal/api/microversion"
	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/store"
)

// ListSpec is what sets one plain collection listing apart from another:
// the resources the API writes itself (deploy templates, runbooks,
// inspection rules, conductors) share upstream's get_all argument
// handling (marker, limit, sort_key, sort_dir, fields, detail) and differ
// only in these.
type ListSpec struct {
	// Extra are the query parameters the listing takes besides the
	// common ones.
	Extra []string
	// CheckMarker refuses a malformed marker before any other argument
	// is read; nil takes any marker.
	CheckMarker func(marker *string) error
	// Schema, when set, is the request schema the arguments are checked
	// against (the Extra ones as strings).
	Schema *RequestSchema
	// Check runs once the arguments are parsed and before fields and the
	// sort key are checked against the version; nil checks nothing.
	Check func(q Query, fields []string, v microversion.Version) error
	// DefaultFields are the fields a listing without detail returns.
	DefaultFields []string
	// InvalidSortKeys are the fields a listing cannot be sorted by.
	InvalidSortKeys []string
}

// ListArgs are a listing's checked arguments.
type ListArgs struct {
	Query Query
	// Marker is the raw marker, nil when absent; the caller looks it up.
	Marker *string
	// Fields are the fields to return (ReturnFields applied).
	Fields  []string
	Detail  *bool
	Limit   int
	SortKey string
	SortDir string
}

var listParams = []string{"marker", "limit", "sort_key", "sort_dir", "fields", "detail"}

// ParseList reads and checks a listing's arguments in upstream's order,
// so that a request with several faults is refused for the same one.
func (s ListSpec) ParseList(r *http.Request, v microversion.Version, maxLimit int) (*ListArgs, error) {
	q, err := ParseQuery(r, append(append([]string{}, listParams...), s.Extra...)...)
	if err != nil {
		return nil, err
	}
	marker := q.Get("marker")
	if s.CheckMarker != nil {
		if err := s.CheckMarker(marker); err != nil {
			return nil, err
		}
	}
	limit, err := collection.Integer("limit", q.Get("limit"))
	if err != nil {
		return nil, err
	}
	rawFields := q.Get("fields")
	fields := collection.StringList(rawFields)
	rawDetail := q.Get("detail")
	detail, err := collection.Boolean("detail", rawDetail)
	if err != nil {
		return nil, err
	}
	if s.Schema != nil {
		kwargs := map[string]any{}
		for _, k := range append([]string{"marker", "sort_key", "sort_dir"}, s.Extra...) {
			if v := q.Get(k); v != nil {
				kwargs[k] = *v
			}
		}
		if limit != nil {
			kwargs["limit"] = *limit
		}
		if rawFields != nil {
			kwargs["fields"] = AnyList(fields)
		}
		if detail != nil {
			kwargs["detail"] = *detail
		}
		if err := s.Schema.Validate(kwargs); err != nil {
			return nil, err
		}
	}
	if s.Check != nil {
		if err := s.Check(q, fields, v); err != nil {
			return nil, err
		}
	}
	sortKey := "id"
	if k := q.Get("sort_key"); k != nil {
		sortKey = *k
	}
	if err := collection.CheckAllowedFields(fields, v); err != nil {
		return nil, err
	}
	if err := collection.CheckAllowedFields([]string{sortKey}, v); err != nil {
		return nil, err
	}
	fields, err = collection.ReturnFields(fields, rawFields, detail, rawDetail, s.DefaultFields, collection.DetailAllowed(v), nil)
	if err != nil {
		return nil, err
	}
	a, err := Paging(limit, maxLimit, sortKey, q.Get("sort_dir"), fields, detail)
	if err != nil {
		return nil, err
	}
	if err := collection.ValidateSortKey(sortKey, s.InvalidSortKeys); err != nil {
		return nil, err
	}
	a.Query, a.Marker = q, marker
	return a, nil
}

// Paging checks a listing's limit (against maxLimit) and sort direction,
// in that order, and gathers them with the sort key, the fields to return
// and ?detail.
func Paging(limit *int, maxLimit int, sortKey string, sortDir *string, fields []string, detail *bool) (*ListArgs, error) {
	lim, err := collection.ValidateLimit(limit, maxLimit)
	if err != nil {
		return nil, err
	}
	dir, err := collection.ValidateSortDir(sortDir)
	if err != nil {
		return nil, err
	}
	return &ListArgs{Fields: fields, Detail: detail, Limit: lim, SortKey: sortKey, SortDir: dir}, nil
}

// Options are the store's paging options for a; the marker is left to
// the caller, which looks it up first.
func (a *ListArgs) Options() store.ListOptions {
	return store.ListOptions{Limit: a.Limit, SortKey: a.SortKey, SortDir: a.SortDir}
}

// ListErr maps a store listing's failure (what names the resource) to
// upstream's answer: a bad sort or filter value is the client's fault.
func ListErr(err error, what string) error {
	if errors.Is(err, store.ErrInvalidParameter) {
		return errs.InvalidParameterValue(err.Error())
	}
	return fmt.Errorf("list %s: %w", what, err)
}

// Page is a listing's answer: the converted items under key and, when
// the page is full, the link to the next one (resource is its path; lead
// are parameters the link carries before the sort ones). convert may
// answer a nil item to leave a record out; the page then counts the
// items it shows, while the link still starts after the last record.
func Page[T any](a *ListArgs, publicURL, key, resource string, list []T,
	convert func(T) (*Dict, error), lastKey func(T) string, lead ...collection.Param) (*Dict, error) {
	items := make([]*Dict, 0, len(list))
	for _, x := range list {
		d, err := convert(x)
		if err != nil {
			return nil, err
		}
		if d != nil {
			items = append(items, d)
		}
	}
	out := NewDict()
	out.Set(key, items)
	last := ""
	if len(list) > 0 {
		last = lastKey(list[len(list)-1])
	}
	params := append(append([]collection.Param{}, lead...), collection.Param{Key: "sort_key", Value: a.SortKey}, collection.Param{Key: "sort_dir", Value: a.SortDir})
	if a.Detail != nil {
		params = append(params, collection.Param{Key: "detail", Value: *a.Detail})
	}
	if next := collection.Next(publicURL, resource, len(items), a.Limit, last, a.Fields, params...); next != "" {
		out.Set("next", next)
	}
	return out, nil
}

// MarkerOptions are a's store options with marker, which must name a
// record (notFound(marker) otherwise; what names the resource in other
// errors); nil starts at the beginning.
func MarkerOptions[T any](ctx context.Context, a *ListArgs, marker *string, get func(context.Context, string) (T, error),
	notFound func(string) error, what string) (store.ListOptions, error) {
	opts := a.Options()
	if marker == nil {
		return opts, nil
	}
	if _, err := Found(ctx, *marker, get, notFound, what+" marker"); err != nil {
		return opts, err
	}
	opts.Marker = *marker
	return opts, nil
}

// ListedErr maps a store listing's failure: a marker gone meanwhile is
// notFound(marker), anything else ListErr's answer.
func ListedErr(err error, marker string, notFound func(string) error, what string) error {
	if errors.Is(err, store.ErrMarkerNotFound) {
		return notFound(marker)
	}
	return ListErr(err, what)
}

// FieldsArgs are the request schema arguments of a ?fields query:
// nothing when it is absent.
func FieldsArgs(raw *string, fields []string) map[string]any {
	kwargs := map[string]any{}
	if raw != nil {
		kwargs["fields"] = AnyList(fields)
	}
	return kwargs
}

// AnyList is l as the []any a JSON document holds.
func AnyList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// CheckFields refuses requested fields the rendered object d does not
// have (check_for_invalid_fields); no ?fields checks nothing.
func CheckFields(d *Dict, fields []string) error {
	if fields == nil {
		return nil
	}
	return collection.CheckInvalidFields(fields, d.Keys())
}

// Checked is the rendered record d once the requested fields are checked
// against it (CheckFields), sanitized by sanitize.
func Checked(d *Dict, fields []string, sanitize func(*Dict)) (*Dict, error) {
	if err := CheckFields(d, fields); err != nil {
		return nil, err
	}
	sanitize(d)
	return d, nil
}
