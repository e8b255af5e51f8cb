package tcpproxy_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/api"
	"github.com/openkeel/ironic/internal/api/apitest"
	"github.com/openkeel/ironic/internal/api/node"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/store/migrations"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/tcpproxy"
)

const version = "1.80"

// oneConductor routes every node to the harness's conductor.
type oneConductor struct{}

func (oneConductor) GetTopicFor(context.Context, *model.Node) (string, error) {
	return apitest.Topic, nil
}

func (oneConductor) GetConductorFor(context.Context, *model.Node) (string, error) {
	return apitest.Host, nil
}

// While MariaDB is gone, reads and writes answer 503 with Retry-After and
// Ironic's fault body, never 500; once it is back they answer 200 again
// without a restart.
func TestDatabaseOutageAnswers503(t *testing.T) {
	raw := storetest.MySQLURL(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	proxy := tcpproxy.New(t, u.Host)
	u.Host = proxy.Addr()
	ctx := context.Background()
	db, err := sqldb.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := migrations.Upgrade(ctx, db); err != nil {
		t.Fatal(err)
	}
	env := apitest.NewEnv(t, apitest.Options{DB: db})
	handlers := map[string]api.HandlerFunc{}
	node.Register(handlers, node.Deps{Store: env.Store, Conductor: env.Local, Topics: oneConductor{},
		Config: env.Config, Logger: env.Logger, Authorize: apitest.Allow[*model.Node]})
	h := apitest.Handler(t, env.Config, handlers)
	if r := apitest.Do(t, h, "POST", "/v1/nodes", version, `{"driver": "fake-hardware", "name": "node-0"}`); r.Status != 201 {
		t.Fatalf("create node: %d %s", r.Status, r.Body)
	}

	proxy.Cut()
	const fault = `{"error_message": "{\"faultcode\": \"Server\", \"faultstring\": \"Resource temporarily unavailable, please retry.\", \"debuginfo\": null}"}`
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/nodes/node-0", ""},
		{"GET", "/v1/nodes", ""},
		{"PATCH", "/v1/nodes/node-0", `[{"op": "add", "path": "/extra/during", "value": "outage"}]`},
		{"POST", "/v1/nodes", `{"driver": "fake-hardware", "name": "node-1"}`},
	} {
		r := apitest.Do(t, h, c.method, c.path, version, c.body)
		if r.Status != 503 || r.Header.Get("Retry-After") != "2" || string(r.Body) != fault {
			t.Errorf("%s %s while the database is cut: %d Retry-After %q %s; want 503, Retry-After 2, TemporaryFailure",
				c.method, c.path, r.Status, r.Header.Get("Retry-After"), r.Body)
		}
	}

	proxy.Restore()
	if r := apitest.Do(t, h, "PATCH", "/v1/nodes/node-0", version, `[{"op": "add", "path": "/extra/after", "value": "outage"}]`); r.Status != 200 {
		t.Fatalf("PATCH after restore: %d %s", r.Status, r.Body)
	}
	r := apitest.Do(t, h, "GET", "/v1/nodes/node-0", version, "")
	if r.Status != 200 {
		t.Fatalf("GET after restore: %d %s", r.Status, r.Body)
	}
	extra, _ := apitest.JSON(t, r.Body)["extra"].(map[string]any)
	if extra["after"] != "outage" || extra["during"] != nil {
		t.Errorf("extra after the outage = %v: want the PATCH acknowledged after it and none of the refused one", extra)
	}
	if strings.Contains(string(r.Body), "node-1") {
		t.Errorf("refused create left a node")
	}
	if proxy.Accepted() < 2 {
		t.Errorf("the API reconnected %d times; want fresh connections after the restore", proxy.Accepted())
	}
}
