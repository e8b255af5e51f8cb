package runbook

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/storetest"
)

type env struct {
	t *testing.T
	h http.Handler
}

func newEnv(t *testing.T) *env {
	m := map[string]api.HandlerFunc{}
	Register(m, Deps{Store: store.New(storetest.Backends(t)[0].DB), Authorize: apitest.Allow[*model.Runbook]})
	return &env{t: t, h: apitest.Handler(t, nil, m)}
}

type resp struct {
	status int
	header http.Header
	body   string
}

func (e *env) do(method, path, version, body string) resp {
	e.t.Helper()
	r := apitest.Do(e.t, e.h, method, path, version, body)
	return resp{r.Status, r.Header, string(r.Body)}
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	return apitest.JSON(t, []byte(r.body))
}

// fault is the message of a handler fault or a routing error.
func (r resp) fault(t *testing.T) string {
	t.Helper()
	return apitest.Fault(t, []byte(r.body))
}

func keys(m map[string]any) []string { return apitest.Keys(m) }

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }
