package apiutil

import (
	"context"
	"errors"
	"testing"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/store"
)

func TestByUUIDOrName(t *testing.T) {
	const u = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	var asked string
	get := func(by string) func(context.Context, string) (string, error) {
		return func(_ context.Context, key string) (string, error) {
			asked = by
			if key == "gone" || key == u {
				return "", store.ErrNotFound
			}
			return by + ":" + key, nil
		}
	}
	notFound := func(ident string) error { return errs.NodeNotFound(ident) }
	for _, c := range []struct {
		ident, by, got, err string
	}{
		{u, "uuid", "", "Node " + u + " could not be found."},
		{"name-1", "name", "name:name-1", ""},
		{"gone", "name", "", "Node gone could not be found."},
		{"bad name!", "", "", "Expected a logical name or UUID but received bad name!."},
	} {
		asked = ""
		got, err := ByUUIDOrName(context.Background(), c.ident, get("uuid"), get("name"), notFound, "thing")
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if got != c.got || msg != c.err || asked != c.by {
			t.Errorf("%s: %q %q by %q", c.ident, got, msg, asked)
		}
	}
}

func TestWriteErrors(t *testing.T) {
	named := errors.New("named")
	dup := errors.New("dup")
	gone := errors.New("gone")
	e := WriteErrors{DuplicateName: func() error { return named }, Duplicate: func() error { return dup },
		Gone: func() error { return gone }}
	other := errors.New("disk full")
	for _, c := range []struct {
		err, want error
	}{
		{&store.DuplicateError{Field: "name"}, named},
		{&store.DuplicateError{Field: "uuid"}, dup},
		{store.ErrNotFound, gone},
	} {
		if got := e.Map(c.err, "update x"); got != c.want {
			t.Errorf("%v: %v", c.err, got)
		}
	}
	if got := e.Map(other, "update x"); !errors.Is(got, other) || got.Error() != "update x: disk full" {
		t.Errorf("other: %v", got)
	}
	// A resource without a name answers every duplicate alike.
	if got := (WriteErrors{Duplicate: func() error { return dup }}).Map(&store.DuplicateError{Field: "name"}, "x"); got != dup {
		t.Errorf("unnamed: %v", got)
	}
}

func TestStepInteger(t *testing.T) {
	for v, want := range map[any]int{"7": 7, float64(8): 8, 9: 9, int64(10): 10} {
		if got := StepInteger(v); got != want {
			t.Errorf("%#v: %d", v, got)
		}
	}
}
