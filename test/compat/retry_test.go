package compat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
)

// lockedFault is upstream's NodeLocked faultstring; the host is the
// conductor's, which the test reads from the server rather than assumes.
var lockedFault = regexp.MustCompile(`^Node ([0-9a-f-]{36}) is locked by host (\S+), please retry after the current operation is completed\.$`)

// python-ironicclient and openstacksdk retry 409 (NodeLocked) by default:
// a power request while a slow fake deploy holds the node's lock waits the
// lock out and succeeds; with retries turned off each client raises with
// the server's faultstring, the one a plain HTTP client reads.
func TestClientsRetryNodeLocked(t *testing.T) {
	requireTool(t, "python3-ironicclient", debianPython, "-c", "import ironicclient")
	requireTool(t, "python3-openstacksdk", debianPython, "-c", "import openstack")
	forEachDeployment(t, clientsRetryNodeLocked)
}

func clientsRetryNodeLocked(t *testing.T, d deployment) {
	// A deploy that outlasts any client start-up: the clients without
	// retries must meet the lock however slow the machine is.
	s, c, uuids := lockableNodes(t, d, 300, 1)
	fs := lockNode(t, c, uuids[0], "active")
	t.Log(runPython(t, "retry_check.py", s.URL, "fail", "409", uuids[0], fs, uuids[0], fs))
	if st := c.get("/v1/nodes/" + uuids[0])["provision_state"]; st != "deploying" {
		t.Fatalf("the lock ended before the clients ran: %v", st)
	}
	// Graceful shutdown would wait the long deploy out.
	s.kill()

	// With retries each client must meet the lock at least once, however
	// long it takes to start on a loaded machine: rather than a deploy
	// timed to outlast the clients' start-up and end within their retry
	// budget, another conductor holds each node's lock in the database
	// until that node's client has been refused, then lets go. One node
	// per client.
	s, c, uuids = lockableNodes(t, d, 0, 2)
	release := map[string]func(){"ironicclient": holdLock(t, s, uuids[0]), "openstacksdk": holdLock(t, s, uuids[1])}
	faults := []string{lockedFaultOf(t, c, uuids[0], otherConductor), lockedFaultOf(t, c, uuids[1], otherConductor)}
	t.Log(runRetryCheck(t, s.URL, "409", uuids[0], faults[0], uuids[1], faults[1], func(client string) { release[client]() }))
	for _, u := range uuids {
		// The retried call got through once the other conductor let go.
		waitField(t, c, "/v1/nodes/"+u, "power_state", "power on")
		waitField(t, c, "/v1/nodes/"+u, "reservation", nil)
	}
	t.Logf("raw client made %d calls", c.calls.n.Load())
}

// lockableNodes starts a server whose fake deploy sleeps delay seconds
// twice and makes n nodes available on it. The conductor tries a lock
// once: its own retries (3 × 1 s by default) would only slow every 409
// down, they change nothing the clients see.
func lockableNodes(t *testing.T, d deployment, delay, n int) (*server, *raw, []string) {
	t.Helper()
	s := d.start(t, fmt.Sprintf("[fake]\ndeploy_delay = %d\n[conductor]\nnode_locked_retry_attempts = 1\n", delay))
	c := newRaw(t, s.URL, "1.81")
	var uuids []string
	for i := range n {
		uuids = append(uuids, availableNode(t, c, fmt.Sprintf("locked-%d", i)))
	}
	return s, c, uuids
}

// lockNode starts a slow deploy (or rebuild) and returns once the node is
// reserved, with the faultstring a power request now gets.
func lockNode(t *testing.T, c *raw, uuid, target string) string {
	t.Helper()
	if st, body, _ := c.do("PUT", "/v1/nodes/"+uuid+"/states/provision", map[string]any{"target": target}); st != http.StatusAccepted {
		t.Fatalf("%s: %d %v", target, st, body)
	}
	eventually(t, func() (bool, string) {
		r := c.get("/v1/nodes/" + uuid)["reservation"]
		return r != nil, fmt.Sprint(r)
	})
	return lockedFaultOf(t, c, uuid, "")
}

// lockedFaultOf checks that a power request for the reserved node uuid is
// refused with NodeLocked, naming host when it is not empty, and returns
// the faultstring.
func lockedFaultOf(t *testing.T, c *raw, uuid, host string) string {
	t.Helper()
	st, body, _ := c.do("PUT", "/v1/nodes/"+uuid+"/states/power", map[string]any{"target": "power off"})
	fs := faultstring(t, body)
	m := lockedFault.FindStringSubmatch(fs)
	if st != http.StatusConflict || m == nil || m[1] != uuid || (host != "" && m[2] != host) {
		t.Fatalf("power off of a reserved node: %d %q", st, fs)
	}
	return fs
}

// otherConductor is the host holding the locks taken by holdLock: not a
// registered conductor, so no conductor takes its nodes over as a dead
// one's while the test holds them.
const otherConductor = "conductor-elsewhere"

// holdLock reserves the node in the server's database as another
// conductor's task would, through the store's own ReserveNode, and returns
// the function releasing it. It is the test's hook on the lock: the
// refusals last exactly until the test ends them.
func holdLock(t *testing.T, s *server, uuid string) func() {
	t.Helper()
	ctx := context.Background()
	db, err := sqldb.Open(ctx, s.database)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := store.New(db)
	n, err := st.GetNodeByUUID(ctx, uuid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ReserveNode(ctx, otherConductor, n.ID); err != nil {
		t.Fatalf("reserve %s as %s: %v", uuid, otherConductor, err)
	}
	return func() {
		t.Helper()
		if err := st.ReleaseNode(ctx, otherConductor, n.ID); err != nil {
			t.Fatalf("release %s: %v", uuid, err)
		}
	}
}

// runRetryCheck runs retry_check.py in retry mode for status against
// base (node a with fault fa for ironicclient, b with fb for the SDK) and
// calls refused with each client's name ("ironicclient",
// "openstacksdk") as soon as that client has been refused once: the test
// ends the refusals only then, so each client is known to have retried.
// It returns the script's output.
func runRetryCheck(t *testing.T, base, status, a, fa, b, fb string, refused func(client string)) string {
	t.Helper()
	cmd := exec.Command(debianPython, filepath.Join(".", "retry_check.py"), base, "retry", status, a, fa, b, fb)
	cmd.Env = append(os.Environ(), "OS_CLOUD=", "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	lines := bufio.NewScanner(stdout)
	seen := map[string]bool{}
	for len(seen) < 2 && lines.Scan() {
		out.WriteString(lines.Text() + "\n")
		if name, ok := strings.CutSuffix(lines.Text(), " refused"); ok && !seen[name] {
			seen[name] = true
			refused(name)
		}
	}
	// A client never refused leaves the loop at the script's end; the
	// script's own checks then say which one.
	rest, _ := io.ReadAll(stdout)
	out.Write(rest)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("retry_check.py retry %s: %v\n%s%s", status, err, out.String(), stderr.String())
	}
	return strings.TrimSpace(out.String())
}
