package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/fakeclock"
)

type env struct {
	s     Store
	db    *sqldb.DB
	clock *fakeclock.Clock
	ctx   context.Context
}

// eachBackend runs fn on a fresh migrated database per backend with a
// store on a fake clock.
func eachBackend(t *testing.T, fn func(t *testing.T, e env)) {
	t.Helper()
	storetest.ForEachBackend(t, func(t *testing.T, db *sqldb.DB) {
		clk := fakeclock.New(time.Date(2026, 8, 20, 12, 0, 0, 0, time.UTC))
		fn(t, env{s: New(db, WithClock(clk.Now)), db: db, clock: clk, ctx: context.Background()})
	})
}

func mustNode(t *testing.T, e env, n model.Node) *model.Node {
	t.Helper()
	if n.Driver == "" {
		n.Driver = "fake-hardware"
	}
	got, err := e.s.CreateNode(e.ctx, &n)
	if err != nil {
		t.Fatalf("CreateNode: %v", err)
	}
	return got
}

func wantErr[T error](t *testing.T, err error, sentinel error) T {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("error = %v (%T), want %T", err, err, target)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("errors.Is(%v, %v) = false", err, sentinel)
	}
	return target
}
