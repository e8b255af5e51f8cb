// Package sshd runs a throw-away OpenSSH server on 127.0.0.1 that stands
// in for a ramdisk reached over SSH (the ansible deploy interface): its
// own configuration, host key and authorized client key in a temporary
// directory, on a free port, stopped when the test ends.
package sshd

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// Server is a running sshd.
type Server struct {
	// Port is where it listens on 127.0.0.1.
	Port int
	// User is the account clients log in as (the test's own).
	User string
	// KeyFile is the private key the server authorizes.
	KeyFile string
	// log collects sshd's own log, shown when the test fails.
	log bytes.Buffer
}

// Start starts sshd, or skips the test when OpenSSH's server or
// ssh-keygen is missing.
func Start(t *testing.T) *Server {
	t.Helper()
	sshdPath, err := exec.LookPath("sshd")
	if err != nil {
		if _, statErr := os.Stat("/usr/sbin/sshd"); statErr != nil {
			t.Skip("sshd not installed (Debian openssh-server)")
		}
		sshdPath = "/usr/sbin/sshd"
	}
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed")
	}
	u, err := user.Current()
	if err != nil {
		t.Fatalf("current user: %v", err)
	}
	dir := t.TempDir()
	s := &Server{User: u.Username, KeyFile: filepath.Join(dir, "client_key")}
	hostKey := filepath.Join(dir, "host_key")
	for _, k := range []string{hostKey, s.KeyFile} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", k).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen %s: %v: %s", k, err, out)
		}
	}
	pub, err := os.ReadFile(s.KeyFile + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	authorized := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authorized, pub, 0o600); err != nil {
		t.Fatal(err)
	}
	s.Port = freePort(t)
	cfg := filepath.Join(dir, "sshd_config")
	// StrictModes off: the temporary directory's modes are the test's.
	// No PAM, no DNS: nothing of the host's login setup is involved.
	conf := fmt.Sprintf(`ListenAddress 127.0.0.1:%d
HostKey %s
AuthorizedKeysFile %s
PidFile %s
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
UseDNS no
Subsystem sftp internal-sftp
`, s.Port, hostKey, authorized, filepath.Join(dir, "sshd.pid"))
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	// sshd insists on its privilege separation directory.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil && os.Geteuid() == 0 {
		t.Fatalf("privilege separation directory: %v", err)
	}
	cmd := exec.Command(sshdPath, "-D", "-e", "-f", cfg)
	cmd.Stdout, cmd.Stderr = &s.log, &s.log
	// A session child still holding the log pipe (a client's lingering
	// master connection) must not hold the test's end.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("sshd log:\n%s", s.log.String())
		}
	})
	await.Until(t, 20*time.Second, "sshd listening", func() bool {
		select {
		case <-exited:
			t.Fatalf("sshd exited: %s", s.log.String())
		default:
		}
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)))
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	})
	return s
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
