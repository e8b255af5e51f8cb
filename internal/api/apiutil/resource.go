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

// ByUUIDOrName is the lookup upstream's objects do for an identifier that
// may be a UUID or a logical name (Port.get, get_rpc_portgroup,
// DeployTemplate.get, Runbook.get): by UUID, else by name, else
// InvalidUuidOrName; notFound(ident) when there is no such record. what
// names the resource in other errors.
func ByUUIDOrName[T any](ctx context.Context, ident string, byUUID, byName func(context.Context, string) (T, error),
	notFound func(ident string) error, what string) (T, error) {
	var zero T
	get := byName
	switch {
	case collection.IsUUIDLike(ident):
		get = byUUID
	case !IsValidLogicalName(ident):
		return zero, errs.New(errs.ClassInvalidUuidOrName, map[string]any{"name": ident})
	}
	return Found(ctx, ident, get, notFound, what)
}

// Found is get(ctx, key) with the store's not-found answered as
// notFound(key) and other failures wrapped with what.
func Found[T any](ctx context.Context, key string, get func(context.Context, string) (T, error),
	notFound func(key string) error, what string) (T, error) {
	v, err := get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return v, notFound(key)
	}
	if err != nil {
		return v, fmt.Errorf("get %s %s: %w", what, key, err)
	}
	return v, nil
}

// WriteErrors are the errors a resource answers for the store's refusals
// of a write; a nil one leaves that refusal to the generic wrapping.
type WriteErrors struct {
	// DuplicateName answers a name another record holds.
	DuplicateName func() error
	// Duplicate answers any other unique key another record holds.
	Duplicate func() error
	// Gone answers a record deleted meanwhile.
	Gone func() error
}

// Map is the answer to err, the store's failure to write the record
// what (as "<verb> <resource> <uuid>" for a failure that is ours).
func (e WriteErrors) Map(err error, what string) error {
	var dup *store.DuplicateError
	switch {
	case errors.As(err, &dup) && dup.Field == "name" && e.DuplicateName != nil:
		return e.DuplicateName()
	case errors.As(err, &dup) && e.Duplicate != nil:
		return e.Duplicate()
	case errors.Is(err, store.ErrNotFound) && e.Gone != nil:
		return e.Gone()
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Listing is a plain collection listing the API serves from the store
// (deploy templates, runbooks, inspection rules, conductors): its
// arguments (ListSpec), the marker's lookup, one page, then each record
// converted with the requested fields.
type Listing[T any] struct {
	ListSpec
	// Key names the items in the answer; Resource is the path the next
	// link points to; What names the records in errors.
	Key, Resource, What string
	// Get looks the marker up, NotFound answers one that names no record
	// (also when the record is gone by the time the page is read).
	Get      func(ctx context.Context, marker string) (T, error)
	NotFound func(marker string) error
	// List reads one page.
	List func(ctx context.Context, opts store.ListOptions) ([]T, error)
	// MarkerOf is the value a record gives the next link's marker.
	MarkerOf func(T) string
	// Lead, when set, are the parameters the next link carries before the
	// sort ones.
	Lead func(a *ListArgs) []collection.Param
}

// Page answers the listing r asks for at version v.
func (l *Listing[T]) Page(r *http.Request, v microversion.Version, maxLimit int, publicURL string,
	convert func(x T, fields []string) (*Dict, error)) (*Dict, error) {
	a, err := l.ParseList(r, v, maxLimit)
	if err != nil {
		return nil, err
	}
	opts, err := MarkerOptions(r.Context(), a, a.Marker, l.Get, l.NotFound, l.What)
	if err != nil {
		return nil, err
	}
	list, err := l.List(r.Context(), opts)
	if err != nil {
		return nil, ListedErr(err, opts.Marker, l.NotFound, l.What+"s")
	}
	var lead []collection.Param
	if l.Lead != nil {
		lead = l.Lead(a)
	}
	return Page(a, publicURL, l.Key, l.Resource, list, func(x T) (*Dict, error) { return convert(x, a.Fields) }, l.MarkerOf, lead...)
}

// SaveChanged writes the changed fields of x with update when any
// changed, answering a refusal with refused(err); x as saved.
func SaveChanged[T any](ctx context.Context, x T, changed []string, update func(context.Context, T, ...string) (T, error),
	refused func(error) error) (T, error) {
	if len(changed) == 0 {
		return x, nil
	}
	saved, err := update(ctx, x, changed...)
	if err != nil {
		return x, refused(err)
	}
	return saved, nil
}
