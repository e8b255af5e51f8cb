// Package model holds Ironic's persistent records as plain Go values: one
// struct per table of upstream's schema (ironic/db/sqlalchemy/models.py),
// every column under its upstream name.
//
// Conventions, chosen so a record survives a round trip through a database
// that Python Ironic also reads:
//   - Nullable columns whose NULL means something different from the empty
//     value (a name, an owner, a tri-state flag, a timestamp) are pointers.
//   - State, driver and interface columns are plain strings: upstream never
//     stores "" there, so the store maps "" to NULL and back (states.NoState).
//   - JSON columns (upstream's JsonEncodedDict / JsonEncodedList) are
//     map[string]any or slices. The store writes nil as {} or [], as
//     oslo.db's JsonEncodedType does, and reads NULL as nil.
//   - Times are UTC. The database keeps no zone (naive UTC DATETIME) and
//     MySQL keeps whole seconds only.
package model

// Ptr returns a pointer to v, for filling optional fields.
func Ptr[T any](v T) *T { return &v }

// Deref returns *p, or the zero value when p is nil.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
