// Package rabbitmq runs a private RabbitMQ broker for one test: Debian's
// rabbitmq-server as a node of its own (its own node name, AMQP and
// distribution ports on 127.0.0.1, database and logs in the test's
// temporary folder), which the test may stop, start and restart under load
// without touching the machine's broker or other tests. Its output is
// shown when the test fails.
package rabbitmq

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/openkeel/ironic/testing/await"
)

// server is the broker's start script itself: /usr/sbin/rabbitmq-server
// would switch to the rabbitmq user, who cannot write the test's folder.
const server = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// bootTimeout bounds a start: an idle machine boots a node in seconds, a
// loaded two-core one in half a minute.
const bootTimeout = 120 * time.Second

// Broker is a private RabbitMQ node.
type Broker struct {
	t        testing.TB
	dir      string
	node     string
	port     int
	distPort int

	cmd  *exec.Cmd
	done chan struct{}
}

// Start boots a broker and stops it when the test ends; the test is
// skipped where rabbitmq-server is not installed.
func Start(t testing.TB) *Broker {
	t.Helper()
	if _, err := os.Stat(server); err != nil {
		t.Skipf("rabbitmq-server is not installed (%s): apt-get install rabbitmq-server", server)
	}
	dir := t.TempDir()
	for _, d := range []string{"mnesia", "log", "home"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "enabled_plugins"), []byte("[].\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := &Broker{t: t, dir: dir, port: freePort(t), distPort: freePort(t)}
	b.node = fmt.Sprintf("openkeel-test-%d@localhost", b.port)
	t.Cleanup(func() {
		b.Stop()
		if t.Failed() {
			t.Logf("rabbitmq %s output:\n%s", b.node, tail(b.Output(), 40))
		}
	})
	b.Boot()
	return b
}

// URL is the broker's oslo.messaging transport URL.
func (b *Broker) URL() string { return fmt.Sprintf("rabbit://guest:guest@127.0.0.1:%d/", b.port) }

// Port is the broker's AMQP port.
func (b *Broker) Port() int { return b.port }

// Boot starts the node (again, after Stop: same name, ports and data) and
// waits until it accepts AMQP connections.
func (b *Broker) Boot() {
	b.t.Helper()
	out, err := os.OpenFile(filepath.Join(b.dir, "output.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.t.Fatal(err)
	}
	cmd := exec.Command(server)
	cmd.Dir = b.dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(),
		"HOME="+filepath.Join(b.dir, "home"),
		"RABBITMQ_NODENAME="+b.node,
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		fmt.Sprintf("RABBITMQ_NODE_PORT=%d", b.port),
		fmt.Sprintf("RABBITMQ_DIST_PORT=%d", b.distPort),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(b.dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(b.dir, "log"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(b.dir, "enabled_plugins"),
		"RABBITMQ_FEATURE_FLAGS_FILE="+filepath.Join(b.dir, "feature_flags"),
		"RABBITMQ_PID_FILE="+filepath.Join(b.dir, "pid"),
		// No file of the machine's broker applies.
		"RABBITMQ_CONFIG_FILE="+filepath.Join(b.dir, "rabbitmq"),
		"RABBITMQ_CONF_ENV_FILE="+filepath.Join(b.dir, "rabbitmq-env.conf"),
		"RABBITMQ_ADVANCED_CONFIG_FILE="+filepath.Join(b.dir, "advanced.config"),
		"ERL_EPMD_ADDRESS=127.0.0.1",
	)
	if err := cmd.Start(); err != nil {
		out.Close()
		b.t.Fatalf("start rabbitmq-server: %v", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(done)
	}()
	b.cmd, b.done = cmd, done
	url := fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", b.port)
	await.UntilReason(b.t, bootTimeout, "rabbitmq "+b.node+" to accept connections", func() (bool, string) {
		select {
		case <-done:
			b.t.Fatalf("rabbitmq-server exited while booting:\n%s", tail(b.Output(), 40))
		default:
		}
		conn, err := amqp.Dial(url)
		if err != nil {
			return false, err.Error()
		}
		conn.Close()
		return true, ""
	})
}

// Stop shuts the node down as its service manager would (SIGTERM, which
// RabbitMQ answers with a clean stop: connections are closed, transient
// queues are lost, durable ones kept) and waits until it has exited.
func (b *Broker) Stop() {
	if b.cmd == nil {
		return
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.done
	}
	b.cmd = nil
}

// Restart stops the node and boots it again.
func (b *Broker) Restart() {
	b.t.Helper()
	b.Stop()
	b.Boot()
}

// Output is what the node printed so far.
func (b *Broker) Output() string {
	data, _ := os.ReadFile(filepath.Join(b.dir, "output.log"))
	return string(data)
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
