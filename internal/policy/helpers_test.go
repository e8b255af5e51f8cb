package policy

import (
	"io"
	"log/slog"
	"testing"
)

func newTestEnforcer(t *testing.T, o Options) *Enforcer {
	t.Helper()
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}
