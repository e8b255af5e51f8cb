package main

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
	"syscall"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// binary builds the ironic command once per test run.
var binaryPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ironic-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binaryPath = filepath.Join(dir, "ironic")
	out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// process is a started ironic with its combined output captured.
type process struct {
	cmd  *exec.Cmd
	out  *safeBuffer
	done chan error
}

type safeBuffer struct {
	mu  chan struct{}
	buf bytes.Buffer
}

func (b *safeBuffer) Write(p []byte) (int, error) {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.Write(p)
}

func (b *safeBuffer) String() string {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.String()
}

func startIronic(t *testing.T, dir, name string, args ...string) *process {
	t.Helper()
	path := binaryPath
	if name != "ironic" {
		path = filepath.Join(dir, name)
		if _, err := os.Lstat(path); os.IsNotExist(err) {
			if err := os.Symlink(binaryPath, path); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	p := &process{cmd: cmd, out: &safeBuffer{mu: make(chan struct{}, 1)}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// waitHealthy polls the health check until it answers 200 or the process dies.
func waitHealthy(t *testing.T, p *process, url string) {
	t.Helper()
	await.UntilReason(t, 30*time.Second, url+" healthy", func() (bool, string) {
		select {
		case err := <-p.done:
			t.Fatalf("ironic exited early (%v):\n%s", err, p.out)
		default:
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%s never became healthy:\n%s", url, p.out)
	})
}

func terminate(t *testing.T, p *process) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.out)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit within 30 s of SIGTERM:\n%s", p.out)
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

// The README's promise: `ironic` with no configuration at all serves on
// 127.0.0.1:6385 with an embedded database under ./ironic-data.
func TestAllInOneWithoutConfig(t *testing.T) {
	if ln, err := net.Listen("tcp", "127.0.0.1:6385"); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("127.0.0.1:6385 is in use on this machine (%v)", err)
		}
		t.Fatalf("127.0.0.1:6385 is in use in CI: %v", err)
	} else {
		ln.Close()
	}
	dir := t.TempDir()
	p := startIronic(t, dir, "ironic")
	waitHealthy(t, p, "http://127.0.0.1:6385/healthcheck")
	terminate(t, p)
	if _, err := os.Stat(filepath.Join(dir, "ironic-data", "ironic.sqlite")); err != nil {
		t.Fatalf("embedded database not created: %v", err)
	}
}

// writeConf writes an ironic.conf with text and a free port for the
// conductor's http_root server, so that processes of parallel tests do
// not compete for the all-in-one default (6386); text may override it.
func writeConf(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "ironic.conf")
	text = fmt.Sprintf("[deploy]\nhttp_url = http://127.0.0.1:%d\n", freePort(t)) + text
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigFileAndGracefulStop(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf(`[api]
host_ip = 127.0.0.1
port = %d
[database]
connection = sqlite:///%s/data/x.sqlite
`, port, dir))
	p := startIronic(t, dir, "ironic", "--config-file", conf, "all-in-one")
	waitHealthy(t, p, fmt.Sprintf("http://127.0.0.1:%d/healthcheck", port))
	terminate(t, p)
	if _, err := os.Stat(filepath.Join(dir, "data", "x.sqlite")); err != nil {
		t.Fatalf("configured database not used: %v", err)
	}
}

func TestUnixSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "api.sock")
	conf := writeConf(t, dir, fmt.Sprintf("[api]\nunix_socket = %s\n", sock))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	await.UntilReason(t, 30*time.Second, "a healthy answer on "+sock, func() (bool, string) {
		resp, err := client.Get("http://ironic/healthcheck")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("no answer on %s:\n%s", sock, p.out)
	})
	terminate(t, p)
}

func TestBadConfigValueNamesOption(t *testing.T) {
	dir := t.TempDir()
	conf := writeConf(t, dir, "[api]\nport = not-a-port\n")
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	err := <-p.done
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit = %v, want status 1\n%s", err, p.out)
	}
	if out := p.out.String(); !strings.Contains(out, "[api]/port") {
		t.Fatalf("message does not name [api]/port:\n%s", out)
	}
}

func runIronic(t *testing.T, dir, name string, args ...string) (string, int) {
	t.Helper()
	p := startIronic(t, dir, name, args...)
	err := <-p.done
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return p.out.String(), code
}

func TestDBSyncUnderUpstreamName(t *testing.T) {
	dir := t.TempDir()
	conf := writeConf(t, dir, fmt.Sprintf("[database]\nconnection = sqlite:///%s/db.sqlite\n", dir))
	if out, code := runIronic(t, dir, "ironic-dbsync", "--config-file", conf, "create_schema"); code != 0 {
		t.Fatalf("create_schema: %d\n%s", code, out)
	}
	out, code := runIronic(t, dir, "ironic", "dbsync", "version", "--config-file", conf)
	if code != 0 || !strings.Contains(out, ourSchemaLine(t)) {
		t.Fatalf("version: %d\n%s", code, out)
	}
	if out, code := runIronic(t, dir, "ironic-dbsync", "--config-file", conf, "upgrade"); code != 0 {
		t.Fatalf("upgrade is not idempotent: %d\n%s", code, out)
	}
	if out, code := runIronic(t, dir, "ironic-dbsync", "--config-file", conf, "create_schema"); code != 1 || !strings.Contains(out, "already has a schema") {
		t.Fatalf("create_schema on a migrated database: %d\n%s", code, out)
	}
}

func TestAPIRefusesUnmigratedDatabase(t *testing.T) {
	dir := t.TempDir()
	conf := writeConf(t, dir, fmt.Sprintf("[api]\nport = %d\n[database]\nconnection = sqlite:///%s/db.sqlite\n", freePort(t), dir))
	out, code := runIronic(t, dir, "ironic-api", "--config-file", conf)
	if code != 1 || !strings.Contains(out, "dbsync upgrade") {
		t.Fatalf("ironic-api on an empty database: %d\n%s", code, out)
	}
}

func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"version"}, 0, "openkeel-ironic "},
		{[]string{"--help"}, 0, "usage: ironic"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"dbsync"}, 2, "dbsync needs one of"},
		{[]string{"dbsync", "sideways"}, 2, `unknown dbsync command "sideways"`},
		{[]string{"--no-such-flag"}, 2, "no-such-flag"},
	} {
		out, code := runIronic(t, dir, "ironic", tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("ironic %v: exit %d, output:\n%s\nwant exit %d containing %q", tc.args, code, out, tc.code, tc.want)
		}
	}
}

func TestDatabasePasswordNotLogged(t *testing.T) {
	dir := t.TempDir()
	// max_retries = 0: oslo.db's ten tries ten seconds apart are not
	// what this test is about.
	conf := writeConf(t, dir, "[database]\nconnection = mysql+pymysql://ironic:s3cr3t-pw@127.0.0.1:1/ironic\nmax_retries = 0\n")
	out, code := runIronic(t, dir, "ironic-api", "--config-file", conf)
	if code == 0 {
		t.Fatalf("started against an unreachable database:\n%s", out)
	}
	if strings.Contains(out, "s3cr3t-pw") {
		t.Fatalf("password in output:\n%s", out)
	}
}

// `ironic status upgrade check` (also as ironic-status) prints
// oslo.upgradecheck's table and exits with the worst result.
func TestStatusUpgradeCheck(t *testing.T) {
	dir := t.TempDir()
	conf := writeConf(t, dir, fmt.Sprintf("[database]\nconnection = sqlite:///%s/db.sqlite\n[DEFAULT]\nenabled_hardware_types = fake-hardware\n"+
		"enabled_bios_interfaces = no-bios\nenabled_boot_interfaces = fake\nenabled_console_interfaces = no-console\n"+
		"enabled_deploy_interfaces = fake\nenabled_firmware_interfaces = no-firmware\nenabled_inspect_interfaces = no-inspect\n"+
		"enabled_management_interfaces = fake\nenabled_network_interfaces = noop\nenabled_power_interfaces = fake\n"+
		"enabled_raid_interfaces = no-raid\nenabled_rescue_interfaces = no-rescue\nenabled_storage_interfaces = noop\n"+
		"enabled_vendor_interfaces = no-vendor\n", dir))
	out, code := runIronic(t, dir, "ironic-status", "--config-file", conf, "upgrade", "check")
	if code != 2 || !strings.Contains(out, "| Check: Database Schema") || !strings.Contains(out, "| Result: Failure") {
		t.Fatalf("unmigrated database: exit %d\n%s", code, out)
	}
	if out, code := runIronic(t, dir, "ironic", "--config-file", conf, "dbsync", "upgrade"); code != 0 {
		t.Fatalf("dbsync: %d\n%s", code, out)
	}
	out, code = runIronic(t, dir, "ironic", "--config-file", conf, "status", "upgrade", "check")
	if code != 0 || strings.Contains(out, "Failure") || strings.Count(out, "| Result: Success") != 5 || !strings.HasPrefix(out, "+---") {
		t.Fatalf("ready: exit %d\n%s", code, out)
	}
	if out, code := runIronic(t, dir, "ironic", "status"); code != 2 || !strings.Contains(out, "status needs `upgrade check`") {
		t.Fatalf("usage: %d\n%s", code, out)
	}
}
