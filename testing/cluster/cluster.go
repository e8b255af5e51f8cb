// Package cluster runs a real openkeel-ironic deployment for tests: the
// ironic binary as one API process and several conductor processes that
// talk JSON-RPC on loopback and share one database, with methods to kill
// and restart conductors. Process output goes to files in the test's
// temporary folder and is shown when the test fails.
package cluster

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Binary builds cmd/ironic once per test binary and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ironic-cluster-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "ironic")
		out, err := exec.Command("go", "build", "-o", buildPath, "github.com/openkeel/ironic/cmd/ironic").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// Options describe a cluster.
type Options struct {
	// Conductors is how many conductor processes run.
	Conductors int
	// Database is the [database]/connection URL all processes share.
	Database string
	// Config is ironic.conf text added to every process's file (sections
	// may repeat: later values win, as in oslo.config).
	Config string
	// APIs is how many API processes run, one when zero. The first is
	// the cluster's API; all are in APIs.
	APIs int
	// ConductorConfig and APIConfig, when set, give ironic.conf text added
	// after Config to conductor i's or API i's file: a conductor group, a
	// database connection of its own (processes spread over the nodes of
	// a Galera cluster).
	ConductorConfig, APIConfig func(i int) string
}

// Cluster is a running deployment.
type Cluster struct {
	t          testing.TB
	dir        string
	bin        string
	opts       Options
	apiPort    int
	API        *Process
	APIs       []*Process
	Conductors []*Process
}

// Process is one ironic process of the cluster.
type Process struct {
	Name string
	// Host is [DEFAULT]/host: for a conductor "127.0.0.1:<json-rpc port>",
	// the entry of the hash ring and the address the API calls.
	Host string
	args []string
	conf string
	// dir is the working directory: relative paths of a mode's defaults
	// land in the test's folder, not in the package under test.
	dir  string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	// url is an API process's base URL.
	url string
}

// Start runs dbsync, the conductors and the API, and waits until the API
// answers and every conductor has registered.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	c := &Cluster{t: t, dir: t.TempDir(), bin: Binary(t), opts: opts}
	common := fmt.Sprintf(`[DEFAULT]
auth_strategy = noauth
rpc_transport = json-rpc
enabled_hardware_types = fake-hardware
enabled_bios_interfaces = fake,no-bios
enabled_boot_interfaces = fake
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake
enabled_firmware_interfaces = fake,no-firmware
enabled_inspect_interfaces = fake,no-inspect
enabled_management_interfaces = fake
enabled_network_interfaces = noop
enabled_power_interfaces = fake
enabled_raid_interfaces = fake,no-raid
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = noop
enabled_vendor_interfaces = fake,no-vendor
[json_rpc]
auth_strategy = noauth
host_ip = 127.0.0.1
[database]
connection = %s
%s
`, opts.Database, opts.Config)
	dbsync := c.newProcess("dbsync", "", common, "dbsync", "upgrade")
	dbsync.start(t)
	<-dbsync.done
	if code := dbsync.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("dbsync upgrade: exit %d\n%s", code, dbsync.Output())
	}
	for i := 0; i < opts.Conductors; i++ {
		port := freePort(t)
		host := fmt.Sprintf("127.0.0.1:%d", port)
		conf := common + fmt.Sprintf("[DEFAULT]\nhost = %s\n[json_rpc]\nport = %d\n", host, port)
		if opts.ConductorConfig != nil {
			conf += opts.ConductorConfig(i) + "\n"
		}
		p := c.newProcess(fmt.Sprintf("conductor-%d", i), host, conf, "conductor")
		c.Conductors = append(c.Conductors, p)
		p.start(t)
	}
	for i := range max(opts.APIs, 1) {
		port := freePort(t)
		conf := common + fmt.Sprintf("[api]\nhost_ip = 127.0.0.1\nport = %d\n", port)
		if opts.APIConfig != nil {
			conf += opts.APIConfig(i) + "\n"
		}
		name := "api"
		if i > 0 {
			name = fmt.Sprintf("api-%d", i)
		}
		p := c.newProcess(name, "", conf, "api")
		p.url = fmt.Sprintf("http://127.0.0.1:%d", port)
		if i == 0 {
			c.API, c.apiPort = p, port
		}
		c.APIs = append(c.APIs, p)
		p.start(t)
	}
	t.Cleanup(func() {
		for _, p := range append(append([]*Process(nil), c.APIs...), c.Conductors...) {
			p.stop()
		}
		if t.Failed() {
			for _, p := range append(append([]*Process(nil), c.APIs...), c.Conductors...) {
				t.Logf("--- %s output (last 40 lines):\n%s", p.Name, tail(p.Output(), 40))
			}
		}
	})
	for _, p := range c.APIs {
		c.WaitAPI(p)
	}
	c.waitConductors()
	return c
}

// StartAllInOne runs the binary as one all-in-one process (API and
// conductor, in-process RPC) and waits until it answers. The database is
// opts.Database, or an SQLite file in the test's folder when empty (the
// all-in-one mode migrates it itself); opts.Conductors is ignored. The
// process is the cluster's API; Conductors is empty.
func StartAllInOne(t testing.TB, opts Options) *Cluster {
	t.Helper()
	c := &Cluster{t: t, dir: t.TempDir(), bin: Binary(t), opts: opts}
	if opts.Database == "" {
		opts.Database = "sqlite:///" + filepath.Join(c.dir, "ironic.sqlite")
	}
	c.apiPort = freePort(t)
	// The mode's own defaults put its state under ./ironic-data and serve
	// http_root on a fixed port: both are moved into the test's folder and
	// a free port so that runs side by side do not meet.
	conf := fmt.Sprintf(`[api]
host_ip = 127.0.0.1
port = %d
[database]
connection = %s
[deploy]
http_root = %s
http_url = http://127.0.0.1:%d
%s
`, c.apiPort, opts.Database, filepath.Join(c.dir, "httpboot"), freePort(t), opts.Config)
	c.API = c.newProcess("all-in-one", "", conf, "all-in-one")
	c.API.url = c.URL()
	c.APIs = []*Process{c.API}
	c.API.start(t)
	t.Cleanup(func() {
		c.API.stop()
		if t.Failed() {
			t.Logf("--- %s output (last 40 lines):\n%s", c.API.Name, tail(c.API.Output(), 40))
		}
	})
	c.WaitAPI(c.API)
	return c
}

func (c *Cluster) newProcess(name, host, conf string, args ...string) *Process {
	path := filepath.Join(c.dir, name+".conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return &Process{Name: name, Host: host, conf: path, dir: c.dir, log: filepath.Join(c.dir, name+".log"),
		args: append([]string{"--config-file", path}, args...)}
}

// URL is the API's base URL.
func (c *Cluster) URL() string { return fmt.Sprintf("http://127.0.0.1:%d", c.apiPort) }

// URL is an API process's base URL, empty for a conductor.
func (p *Process) URL() string { return p.url }

// WaitAPI waits until the API process p answers, after Start or a
// Restart.
func (c *Cluster) WaitAPI(p *Process) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(p.URL() + "/v1")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("%s never answered:\n%s", p.Name, p.Output())
}

// waitConductors waits until every conductor says it has started, which
// it does once it has registered itself and its hardware types: before,
// the API has no conductor to send a node to and answers 503. The log is
// read rather than the API, which may want credentials.
func (c *Cluster) waitConductors() {
	deadline := time.Now().Add(60 * time.Second)
	for _, p := range c.Conductors {
		for !strings.Contains(p.Output(), "successfully started conductor") {
			if time.Now().After(deadline) {
				c.t.Fatalf("%s never started:\n%s", p.Name, tail(p.Output(), 20))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func (p *Process) start(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(buildPath, p.args...)
	p.cmd.Dir = p.dir
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func() {
		p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
}

// Kill ends the process with SIGKILL, as a crash or a lost machine would:
// no clean-up of its own runs.
func (p *Process) Kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Restart starts the process again with the same configuration and host.
func (p *Process) Restart(t testing.TB) {
	t.Helper()
	p.start(t)
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and waits, then kills what is left after 30 s.
func (p *Process) stop() {
	if p.cmd == nil || p.Exited() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.Kill()
	}
}

// Output is what the process has written so far.
func (p *Process) Output() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
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

// Do sends one API request at a microversion and returns the status and
// body.
func (c *Cluster) Do(ctx context.Context, method, path, version string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.URL()+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes(), err
}
