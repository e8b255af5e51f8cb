package drivers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/config"
	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/rpc/ringmgr"
	"github.com/openkeel/ironic/internal/store"
)

type env struct {
	t       testing.TB
	h       http.Handler
	s       store.Store
	cfg     *config.Config
	drivers *driver.Drivers
	cond    rpc.ConductorAPI
}

// newEnv runs the real router with the driver handlers over a fresh
// store and the real in-process conductor (fake-hardware, periodic tasks
// off); conf overrides are section -> name -> value.
func newEnv(t testing.TB, conf map[string]map[string]string) *env {
	t.Helper()
	ae := apitest.NewEnv(t, apitest.Options{Config: conf})
	timeout := time.Duration(ae.Config.Int("conductor", "heartbeat_timeout")) * time.Second
	router := rpc.NewRouter(rpc.RouterOptions{
		Rings:      ringmgr.New(ae.Store, ringmgr.Options{PartitionExponent: 5, Algorithm: "md5", HeartbeatTimeout: timeout}),
		Conductors: ae.Store, HeartbeatTimeout: timeout, TopicPrefix: rpc.ManagerTopic, Host: apitest.Host,
	})
	handlers := map[string]api.HandlerFunc{}
	Register(handlers, Deps{Store: ae.Store, Conductor: ae.Local, Topics: router})
	return &env{t: t, h: ae.Handler(handlers), s: ae.Store, cfg: ae.Config, drivers: ae.Drivers, cond: ae.Local}
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t testing.TB) map[string]any { return apitest.JSON(t, r.body) }

func (r resp) faultstring(t testing.TB) string { return apitest.Faultstring(t, r.body) }

func (e *env) do(method, path, version, body string) resp {
	e.t.Helper()
	r := apitest.Do(e.t, e.h, method, path, version, body)
	return resp{status: r.Status, header: r.Header, body: r.Body}
}

// wantFault checks an error answer's status and faultstring.
func wantFault(t testing.TB, r resp, status int, msg string) {
	t.Helper()
	apitest.WantFault(t, r.status, r.body, status, msg)
}

type constTopic struct{}

func (constTopic) GetTopicForDriver(context.Context, string) (string, error) {
	return "test-topic", nil
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func fmtMap(m map[string]any) string { return fmt.Sprint(m) }
