package conductor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/rpc"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store/migrations"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/ipa"
)

// sqliteCommits counts, per SQLite file, the transactions that SQLite
// commits with a write in them (its commit hook): what a write costs
// (a journal write and, by default, an fsync), whichever store call made
// it. Read transactions and rolled-back ones are not counted.
var sqliteCommits = struct {
	mu     sync.Mutex
	byPath map[string]*atomic.Int64
}{byPath: map[string]*atomic.Int64{}}

// The hook is the driver's, for every connection any test opens: it is
// registered before any test runs, and counts only the files countedDB
// names.
func init() {
	sqlite.RegisterConnectionHook(func(conn sqlite.ExecQuerierContext, dsn string) error {
		sqliteCommits.mu.Lock()
		var n *atomic.Int64
		for path, c := range sqliteCommits.byPath {
			if strings.Contains(dsn, path) {
				n = c
			}
		}
		sqliteCommits.mu.Unlock()
		if n == nil {
			return nil
		}
		h, ok := conn.(sqlite.HookRegisterer)
		if !ok {
			return errors.New("the sqlite driver's connection takes no commit hook")
		}
		h.RegisterCommitHook(func() int32 { n.Add(1); return 0 })
		return nil
	})
}

// countedDB is a fresh migrated SQLite database whose write commits are
// counted.
func countedDB(t *testing.T) (*sqldb.DB, *atomic.Int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ironic.sqlite")
	n := &atomic.Int64{}
	sqliteCommits.mu.Lock()
	sqliteCommits.byPath[path] = n
	sqliteCommits.mu.Unlock()
	t.Cleanup(func() {
		sqliteCommits.mu.Lock()
		delete(sqliteCommits.byPath, path)
		sqliteCommits.mu.Unlock()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sqldb.Open(ctx, "sqlite:///"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := migrations.Upgrade(ctx, db); err != nil {
		t.Fatal(err)
	}
	return db, n
}

// TestWriteTransactionsPerHeartbeat counts what one agent heartbeat
// commits, so that the count cannot grow unnoticed (issue 29: on SQLite
// every write transaction is a journal write, and the heartbeat rate is
// bound by them). The node is not locked before the heartbeat; the count
// runs until the heartbeat's worker has let the node go.
func TestWriteTransactionsPerHeartbeat(t *testing.T) {
	db, commits := countedDB(t)
	e, logs := newAgentEnv(t, db, false)
	ctx := context.Background()
	a := ipa.New(t)
	heartbeat := func(n *model.Node, token string) {
		t.Helper()
		if err := e.api.Heartbeat(ctx, "", rpc.HeartbeatArgs{NodeID: n.UUID, CallbackURL: a.URL(), AgentToken: token, AgentVersion: ipa.Version}); err != nil {
			t.Fatalf("heartbeat: %v", err)
		}
	}
	// count is the write commits of one heartbeat, once its worker is
	// done (done tells from the node and the log).
	count := func(n *model.Node, token string, done func(*model.Node) bool) int64 {
		t.Helper()
		e.clock.Advance(time.Second) // a new agent_last_heartbeat
		before := commits.Load()
		heartbeat(n, token)
		await.Until(t, 10*time.Second, "the heartbeat's worker to finish", func() bool {
			cur := e.get(n)
			return cur.Reservation == nil && done(cur)
		})
		return commits.Load() - before
	}
	recorded := func(prev *model.Node) func(*model.Node) bool {
		last := prev.DriverInternalInfo["agent_last_heartbeat"]
		return func(cur *model.Node) bool { return cur.DriverInternalInfo["agent_last_heartbeat"] != last }
	}
	waiting := func(mut func(*model.Node)) (*model.Node, string) {
		n := e.node(states.DeployWait, func(n *model.Node) {
			n.DeployInterface = "direct"
			n.TargetProvisionState = states.Active
			n.DriverInternalInfo = map[string]any{
				"agent_url":   a.URL(),
				"deploy_step": map[string]any{"interface": "deploy", "step": "write_image", "priority": 80, "args": map[string]any{}},
			}
			if mut != nil {
				mut(n)
			}
		})
		return n, lookup(t, e, n)
	}

	// Deploy wait, fast track off, the agent still running the step: the
	// heartbeat asks the agent and records its fields.
	running, token := waiting(nil)
	a.WithToken(token).Handle("deploy.execute_deploy_step", ipa.Async(1<<30, nil))
	postCommand(t, a, token, "deploy.execute_deploy_step")
	if got := count(running, token, recorded(e.get(running))); got != 2 {
		t.Errorf("heartbeat in deploy wait, step running: %d write transactions, want 2 (the reservation; the agent's fields with the release)", got)
	}
	if cur := e.get(running); cur.ProvisionState != states.DeployWait || a.Count("deploy.execute_deploy_step") != 1 {
		t.Fatalf("the running step's heartbeat moved the node: %s, %v", cur.ProvisionState, commandNames(a))
	}

	// The flow's steps are polled by the conductor: the heartbeat only
	// records the agent's fields, in the transaction that finds the node
	// free, without taking its lock.
	polled, token := waiting(func(n *model.Node) { n.DriverInternalInfo["deployment_polling"] = true })
	if got := count(polled, token, recorded(e.get(polled))); got != 1 {
		t.Errorf("heartbeat with the steps polled: %d write transactions, want 1", got)
	}
	if got := e.get(polled); got.DriverInternalInfo["agent_url"] != a.URL() || got.DriverInternalInfo["agent_version"] != ipa.Version || got.ProvisionState != states.DeployWait {
		t.Errorf("heartbeat with the steps polled left %s, %v", got.ProvisionState, got.DriverInternalInfo)
	}

	// Fast track keeps an idle agent's node manageable: the same.
	idle := e.node(states.Manageable, func(n *model.Node) {
		n.DeployInterface = "direct"
		n.DriverInfo = map[string]any{"fast_track": true}
	})
	token = lookup(t, e, idle)
	if got := count(idle, token, recorded(e.get(idle))); got != 1 {
		t.Errorf("fast-track heartbeat in manageable: %d write transactions, want 1", got)
	}

	// A state the agent has no business in: nothing is written.
	active := e.node(states.Active, func(n *model.Node) { n.DeployInterface = "direct" })
	token = lookup(t, e, active)
	dropped := strings.Count(logs.String(), "heartbeat from node in unsupported provision state")
	if got := count(active, token, func(*model.Node) bool {
		return strings.Count(logs.String(), "heartbeat from node in unsupported provision state") > dropped
	}); got != 2 {
		t.Errorf("heartbeat in active: %d write transactions, want 2", got)
	}
}

// postCommand starts an agent command as the conductor would, so that
// the agent's command log holds it.
func postCommand(t *testing.T, a *ipa.Agent, token, name string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"name": name, "params": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(a.URL()+"/v1/commands/?agent_token="+token, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("start %s on the agent: %s", name, resp.Status)
	}
}

// TestWriteTransactionsPerNodeUpdate counts what a PATCH's update_node
// commits on a node nobody holds (issue 29): the reservation, then the
// edit written with the release.
func TestWriteTransactionsPerNodeUpdate(t *testing.T) {
	db, commits := countedDB(t)
	e := newEnv(t, db)
	n := e.node(states.Manageable, func(n *model.Node) { n.Extra = map[string]any{"a": 1.0} })
	before := commits.Load()
	saved, err := e.update(n, false, func(n *model.Node) { n.Extra["b"] = "x" })
	if err != nil {
		t.Fatal(err)
	}
	if got := commits.Load() - before; got != 2 {
		t.Errorf("update_node: %d write transactions, want 2", got)
	}
	read := e.get(n)
	if !reflect.DeepEqual(saved.Extra, read.Extra) || read.Extra["b"] != "x" || read.Reservation != nil {
		t.Errorf("update_node answered extra %v; a read gives %v, reservation %v", saved.Extra, read.Extra, read.Reservation)
	}
	// The answer shows the lock's holder, as upstream's (saved under it).
	if model.Deref(saved.Reservation) != testHost {
		t.Errorf("update_node answered reservation %v, want %s", saved.Reservation, testHost)
	}
}
