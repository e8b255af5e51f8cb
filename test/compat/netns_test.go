package compat

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/openkeel/ironic/internal/store/storetest"
)

// netnsEnv marks the test binary re-executed inside a network namespace
// that has only loopback.
const netnsEnv = "IRONIC_COMPAT_NETNS"

// inNetns is true in the re-executed child, where only loopback exists.
var inNetns bool

// TestMain runs every suite inside a loopback-only network namespace when
// it can, so that a bug contacting a node's BMC (gophercloud's
// 192.168.122.1 and the like) can never send traffic off the machine. The
// binary re-executes itself under `unshare -n` and passes the child's
// result on. MariaDB on the host's 127.0.0.1 is out of the namespace's
// reach, so a relay on a Unix socket (a file, which every namespace sees)
// carries the MariaDB connections of the api + conductor deployment.
func TestMain(m *testing.M) {
	if os.Getenv(netnsEnv) != "" {
		inNetns = true
		os.Exit(m.Run())
	}
	unshare, why := netnsUsable()
	if why != "" {
		if os.Getenv("CI") != "" {
			fmt.Fprintf(os.Stderr, "FAIL: compat: CI needs the loopback-only network namespace: %s\n", why)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "compat: suites run in the host network, not a loopback-only namespace: %s\n", why)
		os.Exit(m.Run())
	}
	env := append(os.Environ(), netnsEnv+"=1")
	stop := func() {}
	if dsn := os.Getenv(storetest.MySQLEnv); dsn != "" {
		relayed, stopRelay, err := relayMySQL(dsn)
		if err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: compat: MariaDB relay for the namespace: %v\n", err)
			os.Exit(1)
		}
		stop = stopRelay
		env = append(env, storetest.MySQLEnv+"="+relayed)
	}
	child := exec.Command(unshare, append([]string{"-n", "--", "sh", "-c", `ip link set lo up && exec "$@"`, "sh", os.Args[0]}, os.Args[1:]...)...)
	child.Env = env
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	fmt.Fprintln(os.Stderr, "compat: running the suites in a new network namespace (unshare -n)")
	code := 0
	if err := child.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "compat: the namespace run failed: %v\n", err)
		code = 1
	}
	stop()
	os.Exit(code)
}

// relayMySQL returns dsn rewritten to reach the same server through a
// Unix socket this process relays to the DSN's TCP address. A DSN that
// already names a Unix socket is returned as it is.
func relayMySQL(dsn string) (string, func(), error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", storetest.MySQLEnv, err)
	}
	if cfg.Net == "unix" {
		return dsn, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "compat-mysql-")
	if err != nil {
		return "", nil, err
	}
	sock := filepath.Join(dir, "mysql.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	target := cfg.Addr
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go relay(c, target)
		}
	}()
	stop := func() {
		ln.Close()
		os.RemoveAll(dir)
	}
	cfg.Net, cfg.Addr = "unix", sock
	return cfg.FormatDSN(), stop, nil
}

// relay copies both ways between c and a new connection to addr until
// either side closes.
func relay(c net.Conn, addr string) {
	defer c.Close()
	up, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer up.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, c); done <- struct{}{} }()
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
}

// netnsUsable returns unshare's path, or why no namespace can be made.
func netnsUsable() (string, string) {
	if os.Geteuid() != 0 {
		return "", "not root"
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return "", "unshare (util-linux) not found"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "", "ip (iproute2) not found"
	}
	// Root in a container may still lack CAP_SYS_ADMIN.
	if out, err := exec.Command(unshare, "-n", "--", "sh", "-c", "ip link set lo up").CombinedOutput(); err != nil {
		return "", fmt.Sprintf("unshare -n refused: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return unshare, ""
}

// The namespace really has only loopback: no other interface, and an
// address off the machine cannot be reached, while loopback can.
func TestLoopbackOnlyNamespace(t *testing.T) {
	if !inNetns {
		t.Skip("only meaningful inside the namespace child")
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			t.Fatalf("interface %s in the namespace", i.Name)
		}
		if i.Flags&net.FlagUp == 0 {
			t.Fatalf("loopback %s is down", i.Name)
		}
	}
	_, err = net.DialTimeout("tcp", "192.168.122.1:623", 5*time.Second)
	if !errors.Is(err, syscall.ENETUNREACH) {
		t.Fatalf("dial 192.168.122.1: %v, want network unreachable", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("loopback dial: %v", err)
	}
	c.Close()
}
