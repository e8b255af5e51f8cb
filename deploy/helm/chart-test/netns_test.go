package charttest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// netns is a network namespace that has only loopback, held open by a
// sleeping process. The chart binds the API and the conductors to every
// address ("::") and each conductor serves http_root on all addresses: in
// the namespace "every address" is loopback, so nothing a test starts
// there can be reached from, or send to, anything off the machine.
type netns struct {
	t       *testing.T
	dir     string
	nsenter string
	socat   string
	holder  *proc
	// exposed are the clients of expose by port: one relay per port.
	exposed map[int]*http.Client
}

// required reports whether a test may not skip for want of a tool: in CI
// (.ci/run sets IRONIC_SPEC_REQUIRED) everything it needs is installed.
func required() bool {
	return os.Getenv("CI") != "" || os.Getenv("IRONIC_SPEC_REQUIRED") == "1"
}

// skipOrFail skips the test, or fails it where skipping would hide it.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if required() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// newNetns makes the namespace, or skips (fails in CI) when this machine
// cannot: not root, or no unshare, nsenter, ip or socat.
func newNetns(t *testing.T) *netns {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "a loopback-only network namespace needs root")
	}
	tools := map[string]string{}
	for _, name := range []string{"unshare", "nsenter", "ip", "socat"} {
		p, err := exec.LookPath(name)
		if err != nil {
			skipOrFail(t, "%s not found (util-linux, iproute2, socat): %v", name, err)
		}
		tools[name] = p
	}
	n := &netns{t: t, dir: shortTempDir(t), nsenter: tools["nsenter"], socat: tools["socat"], exposed: map[int]*http.Client{}}
	cmd := exec.Command(tools["unshare"], "-n", "--", "sh", "-c", "ip link set lo up && echo ready && exec sleep 86400")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		skipOrFail(t, "unshare -n: %v", err)
	}
	n.holder = watch("netns", cmd, "")
	t.Cleanup(n.holder.stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		n.holder.stop()
		skipOrFail(t, "unshare -n refused to make a network namespace: %q %v", line, err)
	}
	return n
}

// shortTempDir is a temporary folder with a short path: a Unix socket's
// path must fit in 108 bytes, which t.TempDir's may not.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "okchart")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// command runs name inside the namespace (nsenter execs it: the process
// is name itself, so signals reach it).
func (n *netns) command(name string, args ...string) *exec.Cmd {
	return exec.Command(n.nsenter, append([]string{"-t", strconv.Itoa(n.holder.cmd.Process.Pid), "-n", "--", name}, args...)...)
}

// start runs cmd, logging to log, and stops it when the test ends.
func (n *netns) start(name string, cmd *exec.Cmd, log string) *proc {
	n.t.Helper()
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		n.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Start()
	f.Close()
	if err != nil {
		n.t.Fatalf("start %s: %v", name, err)
	}
	p := watch(name, cmd, log)
	n.t.Cleanup(p.stop)
	return p
}

// expose makes port of the namespace's loopback reachable from the test
// through a Unix socket, and returns a client that sends every request
// there. Asking twice for one port returns the same client.
func (n *netns) expose(port int) *http.Client {
	n.t.Helper()
	if c, ok := n.exposed[port]; ok {
		return c
	}
	sock := filepath.Join(n.dir, fmt.Sprintf("in-%d.sock", port))
	n.start("socat-in", n.command(n.socat, "UNIX-LISTEN:"+sock+",fork", fmt.Sprintf("TCP:127.0.0.1:%d", port)), filepath.Join(n.dir, "socat.log"))
	n.waitFile(sock)
	c := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}},
	}
	n.exposed[port] = c
	return c
}

// importTCP makes hostAddr, a TCP address of the machine, reachable inside
// the namespace as 127.0.0.1:port.
func (n *netns) importTCP(hostAddr string, port int) {
	n.t.Helper()
	sock := filepath.Join(n.dir, fmt.Sprintf("out-%d.sock", port))
	log := filepath.Join(n.dir, "socat.log")
	n.start("socat-out", exec.Command(n.socat, "UNIX-LISTEN:"+sock+",fork", "TCP:"+hostAddr), log)
	n.waitFile(sock)
	n.start("socat-out-ns", n.command(n.socat, fmt.Sprintf("TCP-LISTEN:%d,bind=127.0.0.1,reuseaddr,fork", port), "UNIX-CONNECT:"+sock), log)
	n.waitListen(port)
}

// waitListen waits until something listens on TCP port in the namespace,
// read from the namespace's socket table (/proc/<pid>/net/tcp of a
// process inside it).
func (n *netns) waitListen(port int) {
	n.t.Helper()
	table := fmt.Sprintf("/proc/%d/net/tcp", n.holder.cmd.Process.Pid)
	want := fmt.Sprintf(":%04X", port)
	await.UntilReason(n.t, 10*time.Second, fmt.Sprintf("a listener on port %d in the namespace", port), func() (bool, string) {
		b, err := os.ReadFile(table)
		if err != nil {
			n.t.Fatalf("read the namespace's sockets: %v", err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			// sl local_address rem_address st …; st 0A is LISTEN.
			f := strings.Fields(line)
			if len(f) > 3 && strings.HasSuffix(f[1], want) && f[3] == "0A" {
				return true, ""
			}
		}
		log, _ := os.ReadFile(filepath.Join(n.dir, "socat.log"))
		return false, fmt.Sprintf("nothing listens on port %d in the namespace:\n%s", port, log)
	})
}

func (n *netns) waitFile(path string) {
	n.t.Helper()
	await.UntilReason(n.t, 10*time.Second, "socat to create "+path, func() (bool, string) {
		if _, err := os.Stat(path); err == nil {
			return true, ""
		}
		b, _ := os.ReadFile(filepath.Join(n.dir, "socat.log"))
		return false, fmt.Sprintf("socat never created %s:\n%s", path, b)
	})
}

// proc is a started process.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func watch(name string, cmd *exec.Cmd, log string) *proc {
	p := &proc{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	return p
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop asks the process to end (SIGTERM, as the kubelet does) and kills
// it after 30 s.
func (p *proc) stop() {
	if p.exited() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// output is the end of what the process wrote.
func (p *proc) output(lines int) string {
	b, _ := os.ReadFile(p.log)
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
