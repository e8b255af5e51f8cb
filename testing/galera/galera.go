// Package galera runs a real three-node MariaDB Galera cluster for tests:
// Debian's mariadbd with the galera-4 provider, every node on 127.0.0.1
// with its own free ports (SQL, group communication, IST, SST) and its own
// data directory. The first node bootstraps the cluster, the others join
// it by a full state transfer (rsync SST); a node stopped or killed and
// started again rejoins by an incremental one (IST) from the survivors'
// write-set cache.
//
//	gc := galera.Start(t, galera.Options{})
//	url := gc.Nodes[0].URL("ironic")  // mysql+pymysql://root@127.0.0.1:P/ironic
//	gc.Nodes[1].Kill(t)                // SIGKILL, as a crashed machine
//	gc.Nodes[1].Start(t)               // rejoins by IST
//	gc.WaitSynced(t, 3)
//
// The test is skipped, saying why, when the packages are missing, and
// fails instead when IRONIC_TEST_GALERA_REQUIRED=1 (CI sets it). The
// servers' error logs are shown when the test fails; every process group
// is killed and every directory removed at the end of the test.
package galera

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// RequiredEnv names the variable that turns a skip for missing packages
// into a failure.
const RequiredEnv = "IRONIC_TEST_GALERA_REQUIRED"

// What the cluster needs from Debian: mariadb-server (mariadbd,
// mariadb-install-db, the wsrep_sst_rsync script), galera-4 (the
// provider) and rsync (the state transfer).
var required = []struct{ path, pkg string }{
	{"/usr/sbin/mariadbd", "mariadb-server"},
	{"/usr/bin/mariadb-install-db", "mariadb-server"},
	{"/usr/bin/wsrep_sst_rsync", "mariadb-server"},
	{"/usr/lib/galera/libgalera_smm.so", "galera-4"},
	{"/usr/bin/rsync", "rsync"},
}

// Missing names what is not installed, empty when the cluster can run.
func Missing() []string {
	var out []string
	for _, r := range required {
		if _, err := os.Stat(r.path); err != nil {
			out = append(out, fmt.Sprintf("%s (%s)", r.path, r.pkg))
		}
	}
	return out
}

// Skip skips the test when the packages are missing, or fails it when
// RequiredEnv is set.
func Skip(t testing.TB) {
	t.Helper()
	missing := Missing()
	if len(missing) == 0 {
		return
	}
	msg := "Galera cluster unavailable: missing " + strings.Join(missing, ", ")
	if os.Getenv(RequiredEnv) == "1" {
		t.Fatalf("%s (%s=1)", msg, RequiredEnv)
	}
	t.Skip(msg)
}

// Options describe a cluster.
type Options struct {
	// Nodes is the number of servers, 3 when zero.
	Nodes int
	// Args are extra mariadbd options for every node.
	Args []string
}

// Cluster is a running Galera cluster.
type Cluster struct {
	t     testing.TB
	dir   string
	Nodes []*Node
}

// Node is one mariadbd of the cluster.
type Node struct {
	c *Cluster
	// Name is the node's wsrep_node_name, "node1"….
	Name string
	// Port is the SQL port on 127.0.0.1.
	Port            int
	gcomm, ist, sst int
	dir, log        string
	args            []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts the cluster and waits until every node is synced in one
// primary component. It skips the test when the packages are missing
// (see Skip).
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	Skip(t)
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	// Not t.TempDir: the server runs as the mysql user when the test runs
	// as root, and a test's temporary folder is private to its owner.
	dir, err := os.MkdirTemp("", "galera-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{t: t, dir: dir}
	t.Cleanup(c.close)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range opts.Nodes {
		n := &Node{c: c, Name: fmt.Sprintf("node%d", i+1), Port: freePort(t), gcomm: freePort(t),
			ist: freePort(t), sst: freePort(t)}
		n.dir = filepath.Join(dir, n.Name)
		n.log = filepath.Join(dir, n.Name+".err")
		c.Nodes = append(c.Nodes, n)
	}
	var peers []string
	for _, n := range c.Nodes {
		peers = append(peers, fmt.Sprintf("127.0.0.1:%d", n.gcomm))
	}
	for _, n := range c.Nodes {
		n.args = append(n.serverArgs("gcomm://"+strings.Join(peers, ",")), opts.Args...)
	}
	// Only the first node gets a database of its own; the others receive
	// theirs by state transfer when they join, as a real joiner does.
	first := c.Nodes[0]
	if out, err := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+first.dir, "--user="+runAs(),
		"--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	for _, n := range c.Nodes[1:] {
		if err := os.Mkdir(n.dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	chownTree(t, dir)
	start := time.Now()
	first.launch(t, "--wsrep-new-cluster")
	first.WaitSynced(t)
	// One joiner at a time: each takes a full copy (rsync SST) from a
	// donor, and a donor serves one joiner at once.
	for _, n := range c.Nodes[1:] {
		n.launch(t)
		n.WaitSynced(t)
	}
	c.WaitSynced(t, len(c.Nodes))
	t.Logf("galera: %d nodes synced in %v ", len(c.Nodes), time.Since(start).Round(time.Millisecond))
	return c
}

// serverArgs are the options of one node. Galera needs row-based
// replication, InnoDB and interleaved auto-increment locks; durability
// comes from the other nodes, so the log is not flushed at every commit.
func (n *Node) serverArgs(clusterAddress string) []string {
	args := []string{
		"--no-defaults",
		"--datadir=" + n.dir,
		"--bind-address=127.0.0.1",
		"--port=" + strconv.Itoa(n.Port),
		"--socket=" + filepath.Join(n.dir, "mysqld.sock"),
		"--pid-file=" + filepath.Join(n.dir, "mysqld.pid"),
		"--log-error=" + n.log,
		"--skip-name-resolve",
		"--max-connections=600",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_general_ci",
		"--innodb-buffer-pool-size=128M",
		"--innodb-log-file-size=64M",
		"--innodb-flush-log-at-trx-commit=0",
		"--binlog-format=ROW",
		"--default-storage-engine=InnoDB",
		"--innodb-autoinc-lock-mode=2",
		"--wsrep-on=ON",
		"--wsrep-provider=/usr/lib/galera/libgalera_smm.so",
		"--wsrep-cluster-name=ironic-test",
		"--wsrep-node-name=" + n.Name,
		fmt.Sprintf("--wsrep-node-address=127.0.0.1:%d", n.gcomm),
		"--wsrep-cluster-address=" + clusterAddress,
		fmt.Sprintf("--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:%d;ist.recv_addr=127.0.0.1:%d;gcache.size=128M",
			n.gcomm, n.ist),
		"--wsrep-sst-method=rsync",
		fmt.Sprintf("--wsrep-sst-receive-address=127.0.0.1:%d", n.sst),
		"--wsrep-slave-threads=2",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user="+runAs())
	}
	return args
}

// runAs is the account the servers run under. As root it is mysql:
// the rsync daemon of the state transfer, started as root, would switch to
// nobody and could not write the joiner's data directory.
func runAs() string {
	if os.Geteuid() != 0 {
		u, err := user.Current()
		if err == nil {
			return u.Username
		}
		return strconv.Itoa(os.Geteuid())
	}
	return "mysql"
}

// chownTree gives dir to the server's account when the test runs as root.
func chownTree(t testing.TB, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	u, err := user.Lookup("mysql")
	if err != nil {
		t.Fatalf("galera: running as root needs the mysql account (mariadb-server creates it): %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	err = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		t.Fatalf("galera: chown %s: %v", dir, err)
	}
}

func (n *Node) launch(t testing.TB, extra ...string) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	cmd := exec.Command("/usr/sbin/mariadbd", append(append([]string(nil), n.args...), extra...)...)
	// The server's own group: the state-transfer scripts and the rsync
	// daemon it starts die with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := os.OpenFile(n.log+".out", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("galera: start %s: %v", n.Name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(done)
	}()
	n.cmd, n.done = cmd, done
}

// Start starts a stopped or killed node again; it rejoins the cluster
// through the nodes still running (IST when their write-set cache still
// holds what it missed). It waits until the node is synced.
func (n *Node) Start(t testing.TB) {
	t.Helper()
	if n.Running() {
		t.Fatalf("galera: %s is running", n.Name)
	}
	n.launch(t)
	n.WaitSynced(t)
}

// Stop shuts the node down cleanly: it leaves the cluster, which shrinks.
func (n *Node) Stop(t testing.TB) {
	t.Helper()
	n.signal(t, syscall.SIGTERM, 2*time.Minute)
}

// Kill ends the node's process group with SIGKILL, as a crashed machine:
// the others notice it gone, and connections to it break.
func (n *Node) Kill(t testing.TB) {
	t.Helper()
	n.signal(t, syscall.SIGKILL, time.Minute)
}

func (n *Node) signal(t testing.TB, sig syscall.Signal, wait time.Duration) {
	t.Helper()
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
	select {
	case <-done:
	case <-time.After(wait):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Errorf("galera: %s did not end within %v of %v; killed", n.Name, wait, sig)
	}
	// Whatever the server started in its group (an SST script, rsync).
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// Wipe empties a stopped node's data directory, as a replaced disk: the
// next Start rejoins by a full state transfer (SST).
func (n *Node) Wipe(t testing.TB) {
	t.Helper()
	if n.Running() {
		t.Fatalf("galera: wipe %s while it runs", n.Name)
	}
	entries, err := os.ReadDir(n.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(n.dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// Running reports whether the node's server process is alive.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// Addr is the node's SQL address.
func (n *Node) Addr() string { return fmt.Sprintf("127.0.0.1:%d", n.Port) }

// DSN is a go-sql-driver DSN for database db on this node.
func (n *Node) DSN(db string) string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", n.Addr(), db
	cfg.Timeout = 5 * time.Second
	return cfg.FormatDSN()
}

// URL is an oslo.db connection URL for database db on this node.
func (n *Node) URL(db string) string {
	return fmt.Sprintf("mysql+pymysql://root@%s/%s?charset=utf8mb4", n.Addr(), db)
}

// Status reads the node's wsrep state: wsrep_local_state_comment
// ("Synced", "Joining", "Donor/Desynced"…), wsrep_cluster_size and
// wsrep_cluster_status ("Primary").
func (n *Node) Status(ctx context.Context) (state string, size int, primary bool, err error) {
	db, err := sql.Open("mysql", n.DSN(""))
	if err != nil {
		return "", 0, false, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment','wsrep_cluster_size','wsrep_cluster_status','wsrep_ready')")
	if err != nil {
		return "", 0, false, err
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return "", 0, false, err
		}
		switch name {
		case "wsrep_local_state_comment":
			state = value
		case "wsrep_cluster_size":
			size, _ = strconv.Atoi(value)
		case "wsrep_cluster_status":
			primary = value == "Primary"
		}
	}
	return state, size, primary, rows.Err()
}

// WaitSynced waits until the node is synced in the primary component.
func (n *Node) WaitSynced(t testing.TB) {
	t.Helper()
	n.waitFor(t, 3*time.Minute, func(state string, _ int, primary bool) bool {
		return state == "Synced" && primary
	})
}

// WaitSynced waits until every running node is synced in a primary
// component of size members.
func (c *Cluster) WaitSynced(t testing.TB, size int) {
	t.Helper()
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		n.waitFor(t, 3*time.Minute, func(state string, got int, primary bool) bool {
			return state == "Synced" && primary && got == size
		})
	}
}

// waitFor polls the node's status (every 100 ms: a connection each time)
// until ok holds, and fails the test with the last status and the tail of
// the node's log after within or when the server exits.
func (n *Node) waitFor(t testing.TB, within time.Duration, ok func(state string, size int, primary bool) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		qctx, qcancel := context.WithTimeout(ctx, 5*time.Second)
		state, size, primary, err := n.Status(qctx)
		qcancel()
		if err == nil && ok(state, size, primary) {
			return
		}
		last = fmt.Sprintf("state %q, cluster size %d, primary %v, error %v", state, size, primary, err)
		if !n.Running() {
			t.Fatalf("galera: %s exited while waiting (%s)\n%s", n.Name, last, n.Tail(30))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("galera: %s not ready within %v: %s\n%s", n.Name, within, last, n.Tail(30))
		case <-tick.C:
		}
	}
}

// Tail is the last lines of the node's error log.
func (n *Node) Tail(lines int) string {
	b, _ := os.ReadFile(n.log)
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// Grep is the lines of the node's error log that contain any of what.
func (n *Node) Grep(what ...string) string {
	b, _ := os.ReadFile(n.log)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		for _, w := range what {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// Exec runs statements on the node, for set-up (CREATE DATABASE).
func (n *Node) Exec(ctx context.Context, stmts ...string) error {
	db, err := sql.Open("mysql", n.DSN(""))
	if err != nil {
		return err
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s on %s: %w", s, n.Name, err)
		}
	}
	return nil
}

// close kills every node, shows their logs when the test failed and
// removes the data.
func (c *Cluster) close() {
	for _, n := range c.Nodes {
		n.mu.Lock()
		cmd, done := n.cmd, n.done
		n.mu.Unlock()
		if cmd == nil {
			continue
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	if c.t.Failed() {
		for _, n := range c.Nodes {
			c.t.Logf("--- galera %s error log (last 30 lines):\n%s", n.Name, n.Tail(30))
		}
	}
	if err := os.RemoveAll(c.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		c.t.Errorf("galera: remove %s: %v", c.dir, err)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
