// Package oslo_test runs a split deployment over rpc_transport = oslo: one
// `ironic api` and two `ironic conductor` processes on MariaDB, talking
// oslo.messaging through the machine's RabbitMQ.
package oslo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/cluster"
)

const version = "1.80"

// transportURL is the machine's RabbitMQ; CI starts it and sets this.
func transportURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("IRONIC_TEST_TRANSPORT_URL")
	if u == "" {
		t.Skip("IRONIC_TEST_TRANSPORT_URL is not set (e.g. rabbit://guest:guest@127.0.0.1:5672/)")
	}
	return u
}

// The node life cycle through an API whose every conductor call goes over
// oslo.messaging: enrol, manage, provide, deploy, power off and on,
// undeploy, with the nodes spread over both conductors by the hash ring,
// each conductor consuming its own queue on the control exchange.
func TestFleetOverOslo(t *testing.T) {
	transport := transportURL(t)
	db := storetest.MySQLURL(t)
	// A control exchange of the test's own: several runs can share the
	// broker (the conductors' hosts, hence their queues, differ by port).
	exchange := "ironic-test-" + uuid.NewString()[:8]
	var c *cluster.Cluster
	// Registered before the cluster's own cleanup, this runs after its
	// processes have stopped: their queues and exchange outlive them,
	// as upstream's, and are removed from the shared broker.
	t.Cleanup(func() {
		if c != nil {
			removeQueues(transport, exchange, c)
		}
	})
	c = cluster.Start(t, cluster.Options{Conductors: 2, Database: db, Config: fmt.Sprintf(`[DEFAULT]
rpc_transport = oslo
transport_url = %s
control_exchange = %s
rpc_response_timeout = 30
`, transport, exchange),
		// Were the API to call over JSON-RPC, it would speak TLS to
		// conductors that do not: every call would fail.
		APIConfig: func(int) string { return "[json_rpc]\nclient_use_ssl = true\n" },
	})

	const n = 12
	nodes := make([]string, n)
	for i := range nodes {
		var out struct{ UUID string }
		do(t, c, "POST", "/v1/nodes", fmt.Sprintf(`{"driver": "fake-hardware", "name": "oslo-%02d"}`, i), 201, &out)
		nodes[i] = out.UUID
	}
	for _, step := range []struct{ target, state string }{
		{"manage", "manageable"},
		{"provide", "available"},
		{"active", "active"},
	} {
		provision(t, c, nodes, step.target)
		waitState(t, c, nodes, "provision_state", step.state)
	}
	for _, power := range []struct{ target, state string }{{"power off", "power off"}, {"power on", "power on"}} {
		for _, u := range nodes {
			do(t, c, "PUT", "/v1/nodes/"+u+"/states/power", fmt.Sprintf(`{"target": %q}`, power.target), 202, nil)
		}
		waitState(t, c, nodes, "power_state", power.state)
	}
	provision(t, c, nodes, "deleted")
	waitState(t, c, nodes, "provision_state", "available")

	// The ring spread the nodes over both conductors.
	served := map[string]int{}
	for _, u := range nodes {
		var node struct{ Conductor string }
		do(t, c, "GET", "/v1/nodes/"+u, "", 200, &node)
		served[node.Conductor]++
	}
	for _, p := range c.Conductors {
		if served[p.Host] == 0 {
			t.Errorf("conductor %s served no node: %v", p.Host, served)
		}
	}
	// Each conductor consumes its own queue on the broker.
	conn, err := amqp.Dial(strings.Replace(transport, "rabbit://", "amqp://", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, p := range c.Conductors {
		ch, err := conn.Channel()
		if err != nil {
			t.Fatal(err)
		}
		q, err := ch.QueueDeclarePassive(rpc.ManagerTopic+"."+p.Host, false, false, false, false, nil)
		if err != nil {
			t.Fatalf("queue of %s: %v", p.Host, err)
		}
		if q.Consumers != 1 {
			t.Errorf("queue %s has %d consumers, want 1", q.Name, q.Consumers)
		}
		ch.Close()
	}
}

// removeQueues deletes the conductors' queues and the exchange.
func removeQueues(transport, exchange string, c *cluster.Cluster) {
	conn, err := amqp.Dial(strings.Replace(transport, "rabbit://", "amqp://", 1))
	if err != nil {
		return
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return
	}
	for _, p := range c.Conductors {
		_, _ = ch.QueueDelete(rpc.ManagerTopic+"."+p.Host, false, false, false)
	}
	_ = ch.ExchangeDelete(exchange, false, false)
}

// do sends one API request, checks its status and decodes its body into
// out (when not nil).
func do(t *testing.T, c *cluster.Cluster, method, path, body string, want int, out any) {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	status, data, err := c.Do(ctx, method, path, version, b)
	if err != nil || status != want {
		t.Fatalf("%s %s: %d %s %v (want %d)", method, path, status, data, err, want)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// provision asks for target on every node at once.
func provision(t *testing.T, c *cluster.Cluster, nodes []string, target string) {
	t.Helper()
	var wg sync.WaitGroup
	errc := make(chan error, len(nodes))
	for _, u := range nodes {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			status, data, err := c.Do(ctx, "PUT", "/v1/nodes/"+u+"/states/provision", version, []byte(fmt.Sprintf(`{"target": %q}`, target)))
			if err != nil || status != 202 {
				errc <- fmt.Errorf("%s on %s: %d %s %v", target, u, status, data, err)
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

// waitState waits until field reads state on every node.
func waitState(t *testing.T, c *cluster.Cluster, nodes []string, field, state string) {
	t.Helper()
	await.UntilReason(t, 120*time.Second, fmt.Sprintf("%d nodes with %s %q", len(nodes), field, state), func() (bool, string) {
		for _, u := range nodes {
			status, data, err := c.Do(context.Background(), "GET", "/v1/nodes/"+u, version, nil)
			if err != nil || status != 200 {
				return false, fmt.Sprintf("GET %s: %d %v", u, status, err)
			}
			var node map[string]any
			if err := json.Unmarshal(data, &node); err != nil {
				return false, err.Error()
			}
			if node[field] != state {
				return false, fmt.Sprintf("node %s: %s %v, last_error %v", u, field, node[field], node["last_error"])
			}
		}
		return true, ""
	})
}
