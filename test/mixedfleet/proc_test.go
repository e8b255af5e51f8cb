package mixedfleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/store/storetest"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/service"
)

// debianPython runs Debian's Ironic scripts: they need the system
// interpreter, not a python3 that PATH may put first.
const debianPython = "/usr/bin/python3"

// requiredEnv makes a missing Debian Ironic or MariaDB a failure.
const requiredEnv = "IRONIC_TEST_MIXED_REQUIRED"

// apiVersion is the microversion the test speaks: 21.4's highest, which
// is also the highest our pinned API serves.
const apiVersion = "1.82"

// requireDebianIronic skips the test when Debian's Ironic or a MariaDB
// server is missing, or fails it when IRONIC_TEST_MIXED_REQUIRED=1.
func requireDebianIronic(t *testing.T) {
	t.Helper()
	missing := func(why string) {
		if os.Getenv(requiredEnv) == "1" {
			t.Fatalf("%s=1 but %s", requiredEnv, why)
		}
		t.Skip(why)
	}
	for _, p := range []string{debianPython, "/usr/bin/ironic-api", "/usr/bin/ironic-conductor", "/usr/bin/ironic-dbsync"} {
		if _, err := os.Stat(p); err != nil {
			missing(fmt.Sprintf("Debian's Ironic 21.4 is not installed (apt-get install ironic-api ironic-conductor): %v", err))
		}
	}
	if os.Getenv(storetest.MySQLEnv) == "" {
		missing(storetest.MySQLEnv + " is not set: the mixed fleet shares a MariaDB database")
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// run runs a command to its end in dir and fails the test, showing its
// output, when it does not succeed.
func run(t *testing.T, dir string, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", argv, err, out)
	}
}

// proc is a service the test started (testing/service).
type proc = service.Process

func start(t *testing.T, dir, name string, argv ...string) *proc {
	t.Helper()
	return service.Start(t, dir, name, argv...)
}

// api is a client of one of the fleet's APIs (Debian's or ours).
type api struct {
	t    *testing.T
	name string
	base string
}

// call sends a request at apiVersion and decodes the answer's JSON.
func (a api) call(method, path string, body any) (int, map[string]any) {
	a.t.Helper()
	return a.callAt(apiVersion, method, path, body)
}

// callAt sends a request at microversion version.
func (a api) callAt(version, method, path string, body any) (int, map[string]any) {
	a.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.base+path, r)
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s %s: %v", a.name, method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

// must sends a request that has to answer want.
func (a api) must(method, path string, body any, want int) map[string]any {
	a.t.Helper()
	code, out := a.call(method, path, body)
	if code != want {
		a.t.Fatalf("%s %s %s: %d, want %d: %v", a.name, method, path, code, want, out)
	}
	return out
}

// waitUp waits until the API answers, failing early if p exits.
func (a api) waitUp(p *proc) {
	a.t.Helper()
	await.UntilReason(a.t, 120*time.Second, a.name+" to answer", func() (bool, string) {
		if p.Exited() {
			a.t.Fatalf("%s exited during start-up", p.Name)
		}
		resp, err := http.Get(a.base + "/v1")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}

// waitConductor waits until the API sees the conductor host alive.
func (a api) waitConductor(host string, p *proc) {
	a.t.Helper()
	await.UntilReason(a.t, 120*time.Second, a.name+" to see conductor "+host+" alive", func() (bool, string) {
		if p.Exited() {
			a.t.Fatalf("%s exited during start-up", p.Name)
		}
		code, out := a.call(http.MethodGet, "/v1/conductors/"+host, nil)
		return code == http.StatusOK && out["alive"] == true, fmt.Sprintf("%d %v", code, out)
	})
}

// node reads a node.
func (a api) node(ident string) map[string]any {
	a.t.Helper()
	return a.must(http.MethodGet, "/v1/nodes/"+ident, nil, http.StatusOK)
}

// waitNode waits until the node's field has the value want, failing at
// once on a last_error.
func (a api) waitNode(ident, field, want string) {
	a.t.Helper()
	await.UntilReason(a.t, 120*time.Second, fmt.Sprintf("%s: node %s %s %q", a.name, ident, field, want), func() (bool, string) {
		n := a.node(ident)
		if e, _ := n["last_error"].(string); e != "" {
			a.t.Fatalf("%s: node %s: last_error %s", a.name, ident, e)
		}
		got := fmt.Sprint(n[field])
		return got == want, fmt.Sprintf("%s %s (target %v)", field, got, n["target_provision_state"])
	})
}

// provision asks for a provision state target and waits for state.
func (a api) provision(ident, target, state string) {
	a.t.Helper()
	a.must(http.MethodPut, "/v1/nodes/"+ident+"/states/provision", map[string]any{"target": target}, http.StatusAccepted)
	a.waitNode(ident, "provision_state", state)
}

// power asks for a power state and waits for it.
func (a api) power(ident, target string) {
	a.t.Helper()
	a.must(http.MethodPut, "/v1/nodes/"+ident+"/states/power", map[string]any{"target": target}, http.StatusAccepted)
	a.waitNode(ident, "power_state", target)
}

// enrol creates a fake-hardware node and edits it, as an operator enrols
// one: the edit goes to the conductor as update_node.
func (a api) enrol(name string) {
	a.t.Helper()
	// An API answers 503 (TemporaryFailure) until its hash ring has
	// taken in a conductor that just registered; clients retry it.
	var n map[string]any
	await.UntilReason(a.t, 60*time.Second, a.name+": enrol "+name+", retrying 503s", func() (bool, string) {
		code, out := a.call(http.MethodPost, "/v1/nodes", map[string]any{"name": name, "driver": "fake-hardware", "extra": map[string]any{"rack": "r1"}})
		if code == http.StatusServiceUnavailable {
			return false, fmt.Sprintf("%d %v", code, out)
		}
		if code != http.StatusCreated {
			a.t.Fatalf("%s POST /v1/nodes: %d, want 201: %v", a.name, code, out)
		}
		n = out
		return true, ""
	})
	if n["boot_interface"] != "fake" || n["provision_state"] != "enroll" {
		a.t.Fatalf("%s: enrolled node %s: %v", a.name, name, n)
	}
	n = a.must(http.MethodPatch, "/v1/nodes/"+name, []map[string]any{
		{"op": "add", "path": "/extra/row", "value": "a"},
		{"op": "replace", "path": "/description", "value": "enrolled through " + a.name},
	}, http.StatusOK)
	if extra, _ := n["extra"].(map[string]any); extra["rack"] != "r1" || extra["row"] != "a" || !strings.HasPrefix(fmt.Sprint(n["description"]), "enrolled") {
		a.t.Fatalf("%s: patched node %s: extra %v description %v", a.name, name, n["extra"], n["description"])
	}
	// A port: create_port and update_port carry a Port object.
	p := a.must(http.MethodPost, "/v1/ports", map[string]any{"node_uuid": n["uuid"], "address": macOf(name), "extra": map[string]any{"switch": "s1"}}, http.StatusCreated)
	p = a.must(http.MethodPatch, "/v1/ports/"+fmt.Sprint(p["uuid"]), []map[string]any{{"op": "add", "path": "/extra/port", "value": "eth0"}}, http.StatusOK)
	if extra, _ := p["extra"].(map[string]any); extra["switch"] != "s1" || extra["port"] != "eth0" || p["address"] != macOf(name) {
		a.t.Fatalf("%s: patched port of %s: %v", a.name, name, p)
	}
}

// macOf is a MAC address of the node's own.
func macOf(name string) string {
	var sum byte
	for _, c := range []byte(name) {
		sum = sum*31 + c
	}
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", len(name), sum, name[len(name)-1])
}

// deploy takes an enrolled node to active: manage, provide (automated
// cleaning runs), deploy.
func (a api) deploy(name string) {
	a.t.Helper()
	a.provision(name, "manage", "manageable")
	a.provision(name, "provide", "available")
	a.provision(name, "active", "active")
}

// lifecycle is the whole life the issue asks for: enrol, manage, provide,
// deploy, power off and on, undeploy.
func (a api) lifecycle(name string) {
	a.t.Helper()
	a.enrol(name)
	a.deploy(name)
	a.power(name, "power off")
	a.power(name, "power on")
	a.provision(name, "deleted", "available")
}
