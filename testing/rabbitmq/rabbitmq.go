// Package rabbitmq runs a private RabbitMQ broker for one test: Debian's
// rabbitmq-server as a node of its own (its own node name, AMQP and
// distribution ports on 127.0.0.1, database and logs in the test's
// temporary folder), which the test may stop, start and restart under load
// without touching the machine's broker or other tests. Its output is
// shown when the test fails.
package rabbitmq

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
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

// Options of a private broker.
type Options struct {
	// TLS makes the AMQP listener TLS only, with a certificate for
	// 127.0.0.1 and localhost signed by a CA of the test's own (CAFile).
	TLS bool
}

// Broker is a private RabbitMQ node.
type Broker struct {
	t        testing.TB
	o        Options
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
	return StartWith(t, Options{})
}

// StartWith is Start with options.
func StartWith(t testing.TB, o Options) *Broker {
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
	b := &Broker{t: t, o: o, dir: dir, port: freePort(t), distPort: freePort(t)}
	if o.TLS {
		b.writeTLS()
	}
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
func (b *Broker) URL() string {
	if b.o.TLS {
		return fmt.Sprintf("rabbit://guest:guest@127.0.0.1:%d/?ssl=1", b.port)
	}
	return fmt.Sprintf("rabbit://guest:guest@127.0.0.1:%d/", b.port)
}

// CAFile is the PEM file of the CA that signed a TLS broker's
// certificate.
func (b *Broker) CAFile() string { return filepath.Join(b.dir, "ca.pem") }

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
		// Erlang's distribution and epmd on loopback only, as the AMQP
		// listener.
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}",
	)
	if !b.o.TLS {
		// A TLS node's listener is in its configuration file: these
		// would add a plain one on the same port.
		cmd.Env = append(cmd.Env, "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1", fmt.Sprintf("RABBITMQ_NODE_PORT=%d", b.port))
	}
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
	dial := amqp.Dial
	if b.o.TLS {
		url = strings.Replace(url, "amqp://", "amqps://", 1)
		roots := x509.NewCertPool()
		pem, err := os.ReadFile(b.CAFile())
		if err != nil || !roots.AppendCertsFromPEM(pem) {
			b.t.Fatalf("read CA %s: %v", b.CAFile(), err)
		}
		dial = func(u string) (*amqp.Connection, error) { return amqp.DialTLS(u, &tls.Config{RootCAs: roots}) }
	}
	await.UntilReason(b.t, bootTimeout, "rabbitmq "+b.node+" to accept connections", func() (bool, string) {
		select {
		case <-done:
			b.t.Fatalf("rabbitmq-server exited while booting:\n%s", tail(b.Output(), 40))
		default:
		}
		conn, err := dial(url)
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

// writeTLS writes a CA, a server certificate and key for 127.0.0.1 and
// localhost, and the node's configuration file that serves AMQP over TLS
// only with them.
func (b *Broker) writeTLS() {
	b.t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.t.Fatal(err)
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "openkeel test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		b.t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		b.t.Fatal(err)
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		b.t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		b.t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"ca.pem":     {Type: "CERTIFICATE", Bytes: caDER},
		"server.pem": {Type: "CERTIFICATE", Bytes: leafDER},
		"server.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(b.dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			b.t.Fatal(err)
		}
	}
	conf := fmt.Sprintf(`listeners.tcp = none
listeners.ssl.default = 127.0.0.1:%d
ssl_options.cacertfile = %[2]s/ca.pem
ssl_options.certfile = %[2]s/server.pem
ssl_options.keyfile = %[2]s/server.key
ssl_options.verify = verify_none
ssl_options.fail_if_no_peer_cert = false
`, b.port, b.dir)
	if err := os.WriteFile(filepath.Join(b.dir, "rabbitmq.conf"), []byte(conf), 0o600); err != nil {
		b.t.Fatal(err)
	}
}
