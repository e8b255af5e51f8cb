package runbook

import (
	"log/slog"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

// env is the router of one test.
type env = apitest.Client

func newEnv(t *testing.T) *env {
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: store.New(storetest.Backends(t)[0].DB), Authorize: apitest.Allow[*model.Runbook], Scope: apitest.SystemScope})
	return &env{T: t, H: apitest.Handler(t, nil, m)}
}

type resp = apitest.Response

func keys(m map[string]any) []string { return apitest.Keys(m) }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
