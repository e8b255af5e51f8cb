package galera

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"
)

// The cluster replicates a write made on one node to the others (the
// joiners received their data by SST); a node killed with SIGKILL misses
// writes, and started again catches up by IST, not a full copy.
func TestClusterReplicatesAndRejoinsByIST(t *testing.T) {
	gc := Start(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := gc.Nodes[0].Exec(ctx, "CREATE DATABASE t", "CREATE TABLE t.kv (k INT PRIMARY KEY, v VARCHAR(16))",
		"INSERT INTO t.kv VALUES (1, 'one')"); err != nil {
		t.Fatal(err)
	}
	for _, n := range gc.Nodes {
		if got := read(t, n, 1); got != "one" {
			t.Errorf("%s reads %q, want one", n.Name, got)
		}
	}

	victim := gc.Nodes[1]
	victim.Kill(t)
	gc.WaitSynced(t, 2)
	if err := gc.Nodes[2].Exec(ctx, "INSERT INTO t.kv VALUES (2, 'two')"); err != nil {
		t.Fatal(err)
	}
	victim.Start(t)
	gc.WaitSynced(t, 3)
	if got := read(t, victim, 2); got != "two" {
		t.Errorf("%s after its restart reads %q, want two", victim.Name, got)
	}
	if !rejoinedBy(victim, "IST received") {
		t.Errorf("%s did not rejoin by IST:\n%s", victim.Name, victim.Tail(60))
	}

}

// rejoinedBy reports whether the node's log since its last start says
// what.
func rejoinedBy(n *Node, what string) bool {
	log := n.Tail(2000)
	return strings.Contains(log[max(0, strings.LastIndex(log, "Starting MariaDB")):], what)
}

func read(t *testing.T, n *Node, k int) string {
	t.Helper()
	db, err := sql.Open("mysql", n.DSN("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow("SELECT v FROM kv WHERE k = ?", k).Scan(&v); err != nil {
		t.Fatalf("read %d on %s: %v", k, n.Name, err)
	}
	return v
}
