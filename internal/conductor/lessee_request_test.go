package conductor_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/rpc/jsonrpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// Issue 23 item 7: with [conductor]/automatic_lessee_source = request a
// deployed node is leased to the caller's project, which reaches the
// conductor in the RPC request context: in-process as in all-in-one, and
// over JSON-RPC as from a separate `ironic api` (the "context" argument
// upstream's RequestContext.to_dict sends). A call without a project
// records no lessee, as upstream.
func TestAutomaticLesseeFromRequest(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *sqldb.DB) {
		e := newEnv(t, db, withConf("conductor", "automatic_lessee_source", "request"))
		srv := httptest.NewServer(jsonrpc.NewServer(e.api, jsonrpc.ServerOptions{Logger: slog.New(slog.DiscardHandler)}))
		t.Cleanup(srv.Close)
		client, err := jsonrpc.NewClient(jsonrpc.ClientOptions{AuthStrategy: "noauth", Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		topic := rpc.ManagerTopic + "." + strings.TrimPrefix(srv.URL, "http://")
		caller := func(project string) context.Context {
			return rpc.WithRequestContext(context.Background(), &rpc.RequestContext{ProjectID: project, RequestID: "req-" + project})
		}
		// instance_info's project is not the source here.
		forInstance := func(n *model.Node) { n.InstanceInfo = map[string]any{"project_id": "from-instance"} }
		for _, tc := range []struct {
			name    string
			api     rpc.ConductorAPI
			topic   string
			project string
		}{
			{"json-rpc", client, topic, "tenant-split"},
			{"in-process", e.api, "", "tenant-local"},
			{"no project", client, topic, ""},
		} {
			n := e.node(states.Available, forInstance)
			if err := tc.api.DoNodeDeploy(caller(tc.project), tc.topic, n.UUID, false, nil, nil); err != nil {
				t.Fatalf("%s: deploy: %v", tc.name, err)
			}
			got := e.waitState(n, states.Active)
			if deref(got.Lessee) != tc.project {
				t.Errorf("%s: lessee %q, want %q", tc.name, deref(got.Lessee), tc.project)
			}
		}
	})
}
