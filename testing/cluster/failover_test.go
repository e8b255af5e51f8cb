package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc/hashring"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/await"
)

const version = "1.80"

// failoverConfig shortens the intervals so that a dead conductor is
// noticed within seconds: it is offline after heartbeat_timeout, the rings
// are rebuilt within hash_ring_reset_interval, and the survivors' periodic
// tasks run every 2 s. Deploys take 10 s (a long fake step holding the
// node's lock).
const failoverConfig = `[DEFAULT]
hash_ring_reset_interval = 1
[conductor]
heartbeat_interval = 1
heartbeat_timeout = 6
check_provision_state_interval = 2
sync_local_state_interval = 2
[fake]
deploy_delay = 10
`

// A conductor killed while deploying loses its nodes to the others: its
// locks are released, the deploys it was running fail as upstream fails
// them, its active nodes are taken over; a conductor restarted under the
// same host clears its own locks and fails what it was doing. Nothing
// stays reserved.
func TestConductorFailover(t *testing.T) {
	url := storetest.MySQLURL(t)
	ctx := context.Background()
	c := Start(t, Options{Conductors: 3, Database: url, Config: failoverConfig})
	db, err := sqldb.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := store.New(db)
	hosts := make([]string, len(c.Conductors))
	for i, p := range c.Conductors {
		hosts[i] = p.Host
	}
	await.UntilReason(t, 30*time.Second, "all conductors online", func() (bool, string) {
		online, err := st.GetOnlineConductors(ctx, 6*time.Second)
		slices.Sort(online)
		want := slices.Sorted(slices.Values(hosts))
		return err == nil && slices.Equal(online, want), fmt.Sprint(online, err)
	})

	nodes := createNodes(t, c, 300)
	ring, err := hashring.New(hosts, 5, "md5")
	if err != nil {
		t.Fatal(err)
	}
	owner := map[string]string{}
	for _, u := range nodes {
		owner[u], _ = ring.Primary(u)
	}

	provision(t, c, nodes, "manage")
	waitStates(t, st, nodes, "manageable", 60*time.Second)
	// Each node was verified by the conductor the hash ring gives it.
	for _, u := range nodes {
		n, err := st.GetNodeByUUID(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		hist, err := st.ListNodeHistory(ctx, n.ID, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hist {
			if h.Conductor != nil && *h.Conductor != owner[u] {
				t.Fatalf("node %s worked on by %s, the ring gives it to %s", u, *h.Conductor, owner[u])
			}
		}
	}
	provision(t, c, nodes, "provide")
	waitStates(t, st, nodes, "available", 60*time.Second)

	// Phase A: 60 nodes deployed and active.
	setA, setB, setC := nodes[:60], nodes[60:120], nodes[120:180]
	provision(t, c, setA, "active")
	waitStates(t, st, setA, "active", 60*time.Second)

	// Phase B: conductor 0 dies while its nodes of set B are deploying.
	dead := c.Conductors[0]
	deadRow, err := st.GetConductor(ctx, dead.Host, nil)
	if err != nil {
		t.Fatal(err)
	}
	provision(t, c, setB, "active")
	waitStates(t, st, setB, "deploying", 10*time.Second)
	killedAt := time.Now()
	dead.Kill()
	var lostB, keptB, lostA []string
	for _, u := range setB {
		if owner[u] == dead.Host {
			lostB = append(lostB, u)
		} else {
			keptB = append(keptB, u)
		}
	}
	for _, u := range setA {
		if owner[u] == dead.Host {
			lostA = append(lostA, u)
		}
	}
	if len(lostB) == 0 || len(lostA) == 0 {
		t.Fatalf("the dead conductor owned %d deploying and %d active nodes; the test needs some of each", len(lostB), len(lostA))
	}
	waitStates(t, st, lostB, "deploy failed", 30*time.Second)
	t.Logf("deploys of the dead conductor failed %v after the kill", time.Since(killedAt).Round(time.Second))
	// The state is saved under the lock, which is released just after.
	noReservations(t, st, lostB)
	for _, u := range lostB {
		n, _ := st.GetNodeByUUID(ctx, u)
		if n.LastError == nil || !strings.Contains(*n.LastError, "conductor take over") {
			t.Errorf("node %s last_error %v", u, n.LastError)
		}
	}
	waitStates(t, st, keptB, "active", 60*time.Second)
	await.UntilReason(t, 30*time.Second, "active nodes of the dead conductor taken over", func() (bool, string) {
		for _, u := range lostA {
			n, err := st.GetNodeByUUID(ctx, u)
			if err != nil || n.ConductorAffinity == nil || *n.ConductorAffinity == deadRow.ID {
				return false, fmt.Sprintf("%s affinity %v %v", u, n.ConductorAffinity, err)
			}
		}
		return true, ""
	})

	// Phase C: conductor 1 dies while deploying and comes back at once
	// under the same host, before anybody noticed.
	restarted := c.Conductors[1]
	provision(t, c, setC, "active")
	waitStates(t, st, setC, "deploying", 10*time.Second)
	restarted.Kill()
	restarted.Restart(t)
	survivors, err := hashring.New(hosts[1:], 5, "md5")
	if err != nil {
		t.Fatal(err)
	}
	var lostC, keptC []string
	for _, u := range setC {
		if o, _ := survivors.Primary(u); o == restarted.Host {
			lostC = append(lostC, u)
		} else {
			keptC = append(keptC, u)
		}
	}
	if len(lostC) == 0 {
		t.Fatal("the restarted conductor owned none of set C")
	}
	waitStates(t, st, lostC, "deploy failed", 30*time.Second)
	for _, u := range lostC {
		n, _ := st.GetNodeByUUID(ctx, u)
		want := fmt.Sprintf("The deploying state can't be resumed by conductor %s. Moving to fail state.", restarted.Host)
		if n.LastError == nil || *n.LastError != want {
			t.Errorf("node %s last_error %v, want %q", u, n.LastError, want)
		}
	}
	waitStates(t, st, keptC, "active", 60*time.Second)

	noReservations(t, st, nil)
}

// noReservations waits until none of the nodes (all nodes when nil) is
// reserved. A task saves the node's final state while it still holds the
// lock and releases it right after, so the state alone does not mean the
// lock is gone; a lock held for seconds longer is a leak.
func noReservations(t *testing.T, st store.Store, nodes []string) {
	t.Helper()
	await.UntilReason(t, 5*time.Second, "no reservations left", func() (bool, string) {
		reserved, err := st.ListNodes(context.Background(), store.NodeFilter{Reserved: ptr(true)}, store.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, n := range reserved {
			if nodes == nil || slices.Contains(nodes, n.UUID) {
				return false, fmt.Sprintf("%s reserved by %s", n.UUID, *n.Reservation)
			}
		}
		return true, ""
	})
}

func ptr[T any](v T) *T { return &v }

// createNodes enrols n fake-hardware nodes through the API, 8 at a time.
func createNodes(t *testing.T, c *Cluster, n int) []string {
	t.Helper()
	uuids := make([]string, n)
	var wg sync.WaitGroup
	errc := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			body := fmt.Sprintf(`{"driver": "fake-hardware", "name": "node-%03d"}`, i)
			status, data, err := c.Do(context.Background(), "POST", "/v1/nodes", version, []byte(body))
			if err != nil || status != 201 {
				errc <- fmt.Errorf("create node %d: %d %s %v", i, status, data, err)
				return
			}
			var out struct{ UUID string }
			if err := json.Unmarshal(data, &out); err != nil {
				errc <- err
				return
			}
			uuids[i] = out.UUID
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	return uuids
}

// provision asks for target on every node, 8 requests at a time.
func provision(t *testing.T, c *Cluster, nodes []string, target string) {
	t.Helper()
	var wg sync.WaitGroup
	errc := make(chan error, len(nodes))
	sem := make(chan struct{}, 8)
	for _, u := range nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			body := fmt.Sprintf(`{"target": %q}`, target)
			status, data, err := c.Do(context.Background(), "PUT", "/v1/nodes/"+u+"/states/provision", version, []byte(body))
			if err != nil || status != 202 {
				errc <- fmt.Errorf("%s on %s: %d %s %v", target, u, status, data, err)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

// waitStates waits until every node is in state.
func waitStates(t *testing.T, st store.Store, nodes []string, state string, within time.Duration) {
	t.Helper()
	await.UntilReason(t, within, fmt.Sprintf("%d nodes in %q", len(nodes), state), func() (bool, string) {
		for _, u := range nodes {
			n, err := st.GetNodeByUUID(context.Background(), u)
			if err != nil {
				return false, err.Error()
			}
			if n.ProvisionState != state {
				return false, describe(n)
			}
		}
		return true, ""
	})
}

func describe(n *model.Node) string {
	res, lastErr := "", ""
	if n.Reservation != nil {
		res = *n.Reservation
	}
	if n.LastError != nil {
		lastErr = *n.LastError
	}
	return fmt.Sprintf("node %s in %q (target %q, reserved by %q, last_error %q)", n.UUID, n.ProvisionState, n.TargetProvisionState, res, lastErr)
}
