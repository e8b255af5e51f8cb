package compat

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// netnsEnv marks the test binary re-executed inside a network namespace
// that has only loopback.
const netnsEnv = "IRONIC_COMPAT_NETNS"

// nsMode says where this process runs the suites.
type nsMode int

const (
	// hostNetwork: no namespace could be made (not root, no unshare); every
	// suite runs here, in the machine's network.
	hostNetwork nsMode = iota
	// insideNetns: the re-executed child; only loopback exists.
	insideNetns
	// outerOfNetns: the parent whose child already ran the loopback suites;
	// it runs only what needs the host network (MariaDB).
	outerOfNetns
)

// mode is decided once by TestMain before any test runs.
var mode nsMode

// TestMain runs the client suites inside a loopback-only network namespace
// when it can, so that a bug contacting a node's BMC (gophercloud's
// 192.168.122.1 and the like) can never send traffic off the machine. The
// binary re-executes itself under `unshare -n`; MariaDB at 127.0.0.1:3306
// is the host's loopback, not the namespace's, so suites that need it run
// afterwards in this outer process.
func TestMain(m *testing.M) {
	if os.Getenv(netnsEnv) != "" {
		mode = insideNetns
		os.Exit(m.Run())
	}
	unshare, why := netnsUsable()
	if why != "" {
		if os.Getenv("CI") != "" {
			fmt.Fprintf(os.Stderr, "FAIL: compat: CI needs the loopback-only network namespace: %s\n", why)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "compat: suites run in the host network, not a loopback-only namespace: %s\n", why)
		mode = hostNetwork
		os.Exit(m.Run())
	}
	child := exec.Command(unshare, append([]string{"-n", "--", "sh", "-c", `ip link set lo up && exec "$@"`, "sh", os.Args[0]}, os.Args[1:]...)...)
	child.Env = append(os.Environ(), netnsEnv+"=1")
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	fmt.Fprintln(os.Stderr, "compat: running the loopback suites in a new network namespace (unshare -n)")
	childErr := child.Run()
	if childErr != nil {
		fmt.Fprintf(os.Stderr, "compat: the namespace run failed: %v\n", childErr)
	}
	mode = outerOfNetns
	code := m.Run()
	if childErr != nil && code == 0 {
		code = 1
	}
	os.Exit(code)
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

// inLoopbackNetns marks a suite whose nodes carry BMC addresses that point
// off the machine: the outer process leaves it to the namespace child.
func inLoopbackNetns(t *testing.T) {
	t.Helper()
	if mode == outerOfNetns {
		t.Skip("ran inside the loopback-only network namespace (the child's output above)")
	}
}

// outsideNetns marks a suite that needs the host network (MariaDB): the
// namespace child leaves it to the outer process.
func outsideNetns(t *testing.T) {
	t.Helper()
	if mode == insideNetns {
		t.Skip("needs the host network (MariaDB on the host's 127.0.0.1); runs in the outer process")
	}
}

// The namespace really has only loopback: no other interface, and an
// address off the machine cannot be reached, while loopback can.
func TestLoopbackOnlyNamespace(t *testing.T) {
	if mode != insideNetns {
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
