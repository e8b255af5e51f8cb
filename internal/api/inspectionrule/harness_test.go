package inspectionrule

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

type env struct {
	t *testing.T
	h http.Handler
}

func newEnv(t *testing.T) *env {
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: store.New(storetest.Backends(t)[0].DB)})
	return &env{t: t, h: apitest.Handler(t, nil, m)}
}

type resp = apitest.Response

func (e *env) do(method, path, version, body string) resp {
	e.t.Helper()
	return apitest.Do(e.t, e.h, method, path, version, body)
}

func keys(m map[string]any) []string { return apitest.Keys(m) }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
