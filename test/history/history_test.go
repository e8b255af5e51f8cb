// Package history runs concurrent clients against real running servers
// and checks that what they saw is linearizable (testing/history): no
// acknowledged write is lost or undone by another, every refusal is one the
// node's state at that moment explains. It runs on the all-in-one binary
// over SQLite, on an API and two conductors over MariaDB, and on the same
// with a conductor killed and restarted while the clients run.
//
// Knobs, from the environment: IRONIC_HISTORY_CLIENTS (16),
// IRONIC_HISTORY_NODES (4, 8 for the run with a killed conductor), IRONIC_HISTORY_DURATION (8s per run),
// IRONIC_HISTORY_SEED (random, logged), IRONIC_HISTORY_CHECK_TIMEOUT (45s;
// a check that cannot decide within it fails), IRONIC_HISTORY_DIR (where
// the visualization of a failed check is written; the system's temporary
// folder). The MariaDB runs need IRONIC_TEST_MYSQL_DSN.
package history

import (
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/cluster"
	"github.com/openkeel/ironic/testing/history"
)

// splitConfig makes a dead conductor noticed within seconds, as the
// cluster's failover test does: the API rebuilds its ring every second
// and a conductor silent for 6 s is dropped from it.
const splitConfig = `[DEFAULT]
hash_ring_reset_interval = 1
[conductor]
heartbeat_interval = 1
heartbeat_timeout = 6
`

func TestHistoryAllInOneSQLite(t *testing.T) {
	c := cluster.StartAllInOne(t, cluster.Options{})
	checkHistory(t, c.URL(), 4, false, nil)
}

func TestHistorySplitMariaDB(t *testing.T) {
	url := storetest.MySQLURL(t)
	c := cluster.Start(t, cluster.Options{Conductors: 2, Database: url, Config: splitConfig})
	checkHistory(t, c.URL(), 4, false, nil)
}

// A conductor killed with SIGKILL a third into the run and restarted at
// two thirds: what it was doing either happened or did not, what it had
// acknowledged stays, and what it left in verifying or cleaning is failed
// when it comes back.
func TestHistorySplitMariaDBConductorKilled(t *testing.T) {
	url := storetest.MySQLURL(t)
	c := cluster.Start(t, cluster.Options{Conductors: 2, Database: url, Config: splitConfig})
	victim := c.Conductors[0]
	// Twice the nodes: calls cut by the kill have unknown outcomes, each
	// a branch of the check's search, and fewer clients per node keep it
	// decidable within the check's time on a loaded machine.
	checkHistory(t, c.URL(), 8, true, func(ctx context.Context, d time.Duration) {
		if !sleep(ctx, d/3) {
			return
		}
		victim.Kill()
		t.Logf("%s killed", victim.Name)
		if !sleep(ctx, d/3) {
			return
		}
		victim.Restart(t)
		t.Logf("%s restarted", victim.Name)
	})
}

// sleep waits d unless ctx ends first. The fault schedule is relative to
// the workload's own bounded duration, not a race with it: the check holds
// whenever the kill lands.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// checkHistory enrols the nodes, runs the workload against base while
// faults (when given) runs in the test's goroutine, and checks the history.
func checkHistory(t *testing.T, base string, nodeCount int, crashes bool, faults func(context.Context, time.Duration)) {
	w := history.Workload{
		BaseURL:  base,
		Clients:  history.EnvInt(t, "IRONIC_HISTORY_CLIENTS", 16),
		Duration: history.EnvDuration(t, "IRONIC_HISTORY_DURATION", 8*time.Second),
		Seed:     uint64(history.EnvInt(t, "IRONIC_HISTORY_SEED", int(rand.Uint32()))),
		Timeout:  30 * time.Second,
	}
	t.Logf("%d clients for %v, seed %d (IRONIC_HISTORY_SEED)", w.Clients, w.Duration, w.Seed)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nodes, err := history.CreateNodes(ctx, base, history.EnvInt(t, "IRONIC_HISTORY_NODES", nodeCount))
	if err != nil {
		t.Fatal(err)
	}
	var hist []porcupine.Operation
	var stats history.Stats
	var wg sync.WaitGroup
	wg.Go(func() { hist, stats = w.Run(ctx, nodes) })
	if faults != nil {
		faults(ctx, w.Duration)
	}
	wg.Wait()
	t.Logf("%d operations recorded; answers: %s", len(hist), stats)
	dir := os.Getenv("IRONIC_HISTORY_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	start := time.Now()
	res, err := history.Check(history.Model{Crashes: crashes}, hist, history.EnvDuration(t, "IRONIC_HISTORY_CHECK_TIMEOUT", 45*time.Second), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checked in %v: %s", time.Since(start).Round(time.Millisecond), res.Verdict)
	switch res.Verdict {
	case porcupine.Illegal:
		t.Errorf("the history of %d operations on %d nodes is not linearizable (%d nodes fail).\nVisualization: %s\n%s",
			len(hist), len(nodes), len(res.Violations), res.Visualization, strings.Join(res.Violations, "\n"))
	case porcupine.Unknown:
		// Not a violation, but not a proof either: a check that cannot
		// decide must say so rather than pass.
		t.Errorf("the check of %d operations ran out of time without deciding; a shorter IRONIC_HISTORY_DURATION or more IRONIC_HISTORY_NODES keep it decidable", len(hist))
	}
}
