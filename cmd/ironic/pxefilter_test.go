package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/internal/store"
	"github.com/openkeel/ironic/internal/store/sqldb"
	"github.com/openkeel/ironic/testing/await"
)

// pxeFilterTools returns the programs the dnsmasq test runs, or skips it
// (fails it in CI, whose machine has them) when one is missing or no
// network namespace can be made.
func pxeFilterTools(t *testing.T) map[string]string {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs the PXE filter's dnsmasq test: "+format, args...)
		}
		t.Skipf(format, args...)
	}
	if os.Geteuid() != 0 {
		skip("not root: no network namespace for dnsmasq")
	}
	tools := map[string]string{}
	for _, name := range []string{"unshare", "nsenter", "ip", "socat", "dnsmasq"} {
		p, err := exec.LookPath(name)
		if err != nil {
			p = "/usr/sbin/" + name
			if _, serr := os.Stat(p); serr != nil {
				skip("%s not found", name)
			}
		}
		tools[name] = p
	}
	if out, err := exec.Command(tools["unshare"], "-n", "--", "true").CombinedOutput(); err != nil {
		skip("unshare -n: %v %s", err, out)
	}
	return tools
}

// dnsmasqProc is a real dnsmasq serving DHCP on the loopback of its own
// network namespace, its log (--log-dhcp) captured.
type dnsmasqProc struct {
	cmd   *exec.Cmd
	log   *safeBuffer
	tools map[string]string
	// sent paces the probes: the condition is polled far more often than
	// a DHCP request is worth sending.
	sent time.Time
}

// giaddr is the relay address the probes claim: dnsmasq answers relayed
// requests on the loopback, which broadcast ones cannot reach.
const giaddr = "127.0.0.1"

func startDnsmasq(t *testing.T, tools map[string]string, hostsdir, dir string) *dnsmasqProc {
	t.Helper()
	args := []string{
		"-C", "/dev/null", "--keep-in-foreground", "--log-facility=-", "--port=0", "--interface=lo",
		// Every 127/8 address answers a ping on the loopback: without
		// --no-ping dnsmasq would find them all in use and offer none.
		"--no-ping",
		"--dhcp-range=127.0.0.50,127.0.0.150,255.0.0.0", "--dhcp-hostsdir=" + hostsdir, "--log-dhcp",
		"--dhcp-leasefile=" + filepath.Join(dir, "dnsmasq.leases"), "--pid-file=", "--user=root",
	}
	cmd := exec.Command(tools["unshare"], append([]string{"-n", "--", "sh", "-c", `ip link set lo up && exec "$@"`, "sh", tools["dnsmasq"]}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	d := &dnsmasqProc{cmd: cmd, log: &safeBuffer{mu: make(chan struct{}, 1)}, tools: tools}
	cmd.Stdout, cmd.Stderr = d.log, d.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		<-done
		// Shown with -v or on failure: the record of what dnsmasq read
		// and how it answered.
		t.Logf("dnsmasq log:\n%s", d.log)
	})
	await.Until(t, 30*time.Second, "dnsmasq to serve DHCP", func() bool { return strings.Contains(d.log.String(), "DHCP, IP range") })
	return d
}

// discover sends a relayed DHCPDISCOVER for mac from inside dnsmasq's
// namespace.
func (d *dnsmasqProc) discover(t *testing.T, mac string) {
	t.Helper()
	hw, err := net.ParseMAC(mac)
	if err != nil {
		t.Fatal(err)
	}
	var p bytes.Buffer
	p.Write([]byte{1, 1, 6, 1}) // BOOTREQUEST, Ethernet, 6-byte address, one relay hop
	binary.Write(&p, binary.BigEndian, uint32(0x1ec0ffee))
	p.Write(make([]byte, 4+4+4+4))           // secs, flags, ciaddr, yiaddr, siaddr
	p.Write(net.ParseIP(giaddr).To4())       // giaddr
	p.Write(append(hw, make([]byte, 10)...)) // chaddr
	p.Write(make([]byte, 64+128))            // sname, file
	p.Write([]byte{99, 130, 83, 99, 53, 1, 1, 255})
	cmd := exec.Command(d.tools["nsenter"], "-t", fmt.Sprint(d.cmd.Process.Pid), "-n", d.tools["socat"], "-u", "-", "UDP4-SENDTO:"+giaddr+":67")
	cmd.Stdin = &p
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("send DHCPDISCOVER: %v %s", err, out)
	}
}

// answer returns how dnsmasq took the last DHCPDISCOVER of mac:
// "ignored" when a hostsdir entry told it to, "offered" when it sent a
// DHCPOFFER, "" when neither is logged yet.
func (d *dnsmasqProc) answer(mac string) string {
	var last string
	for _, line := range strings.Split(d.log.String(), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasSuffix(line, "DHCPDISCOVER(lo) "+mac+" ignored"):
			last = "ignored"
		case strings.Contains(line, "DHCPOFFER(lo) ") && strings.HasSuffix(line, " "+mac):
			last = "offered"
		}
	}
	return last
}

// expect probes mac until dnsmasq answers as want: the filter syncs every
// second and dnsmasq re-reads a changed file when it sees it, so the new
// answer comes after a few probes at most.
func (d *dnsmasqProc) expect(t *testing.T, mac, want string) {
	t.Helper()
	await.UntilReason(t, 30*time.Second, fmt.Sprintf("dnsmasq to answer %s as %s", mac, want), func() (bool, string) {
		if time.Since(d.sent) > 200*time.Millisecond {
			d.discover(t, mac)
			d.sent = time.Now()
		}
		got := d.answer(mac)
		return got == want, "last answer: " + got
	})
}

// The PXE filter against a real dnsmasq: while a node is on in-band
// inspection its MAC and unknown MACs get answers and other enrolled MACs
// are ignored; once inspection ends every MAC is ignored; with
// auto-discovery unknown MACs are answered until a port enrols them.
// About 15 s.
func TestPXEFilterDrivesDnsmasq(t *testing.T) {
	tools := pxeFilterTools(t)
	dir := t.TempDir()
	hostsdir := filepath.Join(dir, "hostsdir")
	if err := os.Mkdir(hostsdir, 0o755); err != nil {
		t.Fatal(err)
	}
	conn := fmt.Sprintf("sqlite:///%s/db.sqlite", dir)
	confText := fmt.Sprintf("[database]\nconnection = %s\n[pxe_filter]\ndhcp_hostsdir = %s\nsync_period = 1\n", conn, hostsdir)
	conf := writeConf(t, dir, confText)
	if out, code := runIronic(t, dir, "ironic", "--config-file", conf, "dbsync", "upgrade"); code != 0 {
		t.Fatalf("dbsync upgrade: %d\n%s", code, out)
	}
	ctx := context.Background()
	db, err := sqldb.Open(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := store.New(db)
	const inspected, active, stranger = "52:54:00:aa:00:01", "52:54:00:aa:00:02", "52:54:00:aa:00:03"
	enrol := func(uuid, state, mac string) *model.Node {
		t.Helper()
		n, err := st.CreateNode(ctx, &model.Node{UUID: uuid, Driver: "fake-hardware", ProvisionState: state, InspectInterface: "agent"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreatePort(ctx, &model.Port{UUID: "f" + uuid[1:], Address: &mac, NodeID: &n.ID}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	node := enrol("11111111-1111-4111-8111-111111111111", states.InspectWait, inspected)
	enrol("22222222-2222-4222-8222-222222222222", states.Active, active)

	filter := startIronic(t, dir, "ironic-pxe-filter", "--config-file", conf)
	await.Until(t, 30*time.Second, "the filter's first sync", func() bool {
		_, err := os.Stat(filepath.Join(hostsdir, "unknown_hosts_filter"))
		return err == nil
	})
	dns := startDnsmasq(t, tools, hostsdir, dir)

	dns.expect(t, inspected, "offered")
	dns.expect(t, stranger, "offered")
	dns.expect(t, active, "ignored")

	// Inspection ends: the node's MAC and unknown ones are ignored.
	node.ProvisionState = states.Manageable
	if _, err := st.UpdateNode(ctx, node, "provision_state"); err != nil {
		t.Fatal(err)
	}
	dns.expect(t, inspected, "ignored")
	dns.expect(t, stranger, "ignored")
	terminate(t, filter)

	// Discovery: unknown MACs are answered, enrolled ones are not; once the
	// stranger is enrolled it is ignored too.
	conf = writeConf(t, dir, confText+"[auto_discovery]\nenabled = true\n")
	discovery := startIronic(t, dir, "ironic-pxe-filter", "--config-file", conf)
	dns.expect(t, stranger, "offered")
	dns.expect(t, inspected, "ignored")
	enrol("33333333-3333-4333-8333-333333333333", states.Enroll, stranger)
	dns.expect(t, stranger, "ignored")
	dns.expect(t, "52:54:00:aa:00:04", "offered")
	for _, p := range []*process{filter, discovery} {
		if out := p.out.String(); strings.Contains(out, "level=ERROR") {
			t.Errorf("the filter logged errors:\n%s", out)
		}
	}
}

// As upstream's prepare_host, the filter refuses to start without an
// existing hostsdir: it cannot create one dnsmasq's user may read.
func TestPXEFilterNeedsItsHostsdir(t *testing.T) {
	dir := t.TempDir()
	base := fmt.Sprintf("[database]\nconnection = sqlite:///%s/db.sqlite\n", dir)
	conf := writeConf(t, dir, base)
	if out, code := runIronic(t, dir, "ironic", "--config-file", conf, "dbsync", "upgrade"); code != 0 {
		t.Fatalf("dbsync upgrade: %d\n%s", code, out)
	}
	for _, c := range []struct{ conf, want string }{
		{base, "[pxe_filter]dhcp_hostsdir option is required"},
		{base + "[pxe_filter]\ndhcp_hostsdir = " + filepath.Join(dir, "missing") + "\n", "[pxe_filter]dhcp_hostsdir does not exist"},
	} {
		conf := writeConf(t, dir, c.conf)
		if out, code := runIronic(t, dir, "ironic", "--config-file", conf, "pxe-filter"); code != 1 || !strings.Contains(out, c.want) {
			t.Errorf("pxe-filter exited %d, want 1 with %q:\n%s", code, c.want, out)
		}
	}
}
