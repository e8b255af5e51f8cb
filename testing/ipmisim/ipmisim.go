// Package ipmisim runs OpenIPMI's ipmi_sim (Debian package openipmi) as a
// simulated BMC on 127.0.0.1 for tests that drive the real ipmitool. Each
// Start gets its own UDP port, user, password and state directory; chassis
// power and boot device are kept by a small control script in that
// directory, so tests can read them, or change the power behind the
// driver's back.
package ipmisim

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CipherSuite is the IPMI 2.0 cipher suite ipmi_sim accepts (AES-128
// with SHA1). Naming it spares ipmitool the "Get Channel Cipher Suites"
// round trip ipmi_sim does not answer, which costs a second per command.
const CipherSuite = "3"

// BMC is one running ipmi_sim.
type BMC struct {
	// Address is always 127.0.0.1.
	Address  string
	Port     int
	Username string
	Password string
	dir      string
	cmd      *exec.Cmd
	log      *bytes.Buffer
}

// Options shape the simulated BMC; zero values pick defaults.
type Options struct {
	Username string
	Password string
	// PoweredOn starts the chassis powered on.
	PoweredOn bool
	// Sensors are the BMC's sensors (sensors.go); none by default.
	Sensors []Sensor
}

// Require skips the test when ipmi_sim or ipmitool is missing, unless the
// CI environment variable is set, where their absence is a failure.
func Require(t testing.TB) {
	t.Helper()
	for _, bin := range []string{"ipmi_sim", "ipmitool"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (Debian packages openipmi and ipmitool); CI must provide it", bin)
			}
			t.Skipf("%s is not installed (Debian packages openipmi and ipmitool)", bin)
		}
	}
}

// controlScript answers ipmi_sim's chassis_control calls
// ("<prog> <mc> get power", "<prog> <mc> set power 1 boot pxe" ...)
// from files in its own directory.
const controlScript = `#!/bin/sh
d=$(dirname "$0")
shift
op=$1; shift
echo "$op $*" >> "$d/control.log"
case $op in
get)
  for p in "$@"; do
    case $p in
      power) echo "power:$(cat "$d/power")";;
      boot) echo "boot:$(cat "$d/boot")";;
      *) echo "Invalid parameter: $p"; exit 1;;
    esac
  done;;
set)
  while [ $# -gt 0 ]; do
    p=$1; v=$2; shift 2
    case $p in
      power) echo "$v" > "$d/power";;
      shutdown) echo 0 > "$d/power";;
      reset) ;;
      boot) echo "$v" > "$d/boot";;
      *) echo "Invalid parameter: $p"; exit 1;;
    esac
  done;;
*) exit 1;;
esac
`

// Start runs an ipmi_sim on a free UDP port of 127.0.0.1 and stops it when
// the test ends.
func Start(t testing.TB, o Options) *BMC {
	t.Helper()
	Require(t)
	if o.Username == "" {
		o.Username = "admin"
	}
	if o.Password == "" {
		o.Password = "sim-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	dir := t.TempDir()
	b := &BMC{Address: "127.0.0.1", Username: o.Username, Password: o.Password, dir: dir, log: &bytes.Buffer{}}
	power := "0"
	if o.PoweredOn {
		power = "1"
	}
	must(t, os.WriteFile(filepath.Join(dir, "power"), []byte(power+"\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "boot"), []byte("default\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "chassis_control"), []byte(controlScript), 0o700))
	for _, sn := range o.Sensors {
		must(t, os.WriteFile(b.sensorFile(sn.Number), []byte(strconv.Itoa(int(sn.Raw))+"\n"), 0o600))
	}
	must(t, os.WriteFile(filepath.Join(dir, "sim.emu"), []byte(
		"mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr\n"+
			b.sensorEmu(o.Sensors)+"mc_enable 0x20\n"), 0o600))
	must(t, os.MkdirAll(filepath.Join(dir, "state"), 0o700))

	// A UDP port can be taken between probing and ipmi_sim binding it, so
	// a start that does not answer is retried on another port.
	for attempt := 0; attempt < 5; attempt++ {
		b.Port = freeUDPPort(t)
		must(t, os.WriteFile(filepath.Join(dir, "lan.conf"), []byte(b.lanConf()), 0o600))
		b.log.Reset()
		cmd := exec.Command("ipmi_sim", "-c", filepath.Join(dir, "lan.conf"), "-f", filepath.Join(dir, "sim.emu"),
			"-s", filepath.Join(dir, "state"), "-n")
		cmd.Stdout, cmd.Stderr = b.log, b.log
		if err := cmd.Start(); err != nil {
			t.Fatalf("start ipmi_sim: %v", err)
		}
		b.cmd = cmd
		if b.waitReady() {
			t.Cleanup(b.stop)
			return b
		}
		b.stop()
	}
	t.Fatalf("ipmi_sim did not answer on 127.0.0.1; its output:\n%s", b.log.String())
	return nil
}

func (b *BMC) lanConf() string {
	var s strings.Builder
	s.WriteString("name \"ipmisim\"\nset_working_mc 0x20\n  startlan 1\n")
	fmt.Fprintf(&s, "    addr 127.0.0.1 %d\n", b.Port)
	s.WriteString("    priv_limit admin\n")
	for _, p := range []string{"callback", "user", "operator", "admin"} {
		fmt.Fprintf(&s, "    allowed_auths_%s none md2 md5 straight\n", p)
	}
	s.WriteString("    guid a123456789abcdefa123456789abcdef\n  endlan\n")
	fmt.Fprintf(&s, "  chassis_control \"%s 0x20\"\n", filepath.Join(b.dir, "chassis_control"))
	fmt.Fprintf(&s, "  user 2 true \"%s\" \"%s\" admin 10 none md2 md5 straight\n", b.Username, b.Password)
	return s.String()
}

// waitReady polls "power status" with ipmitool until the BMC answers.
func (b *BMC) waitReady() bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b.cmd.ProcessState != nil {
			return false
		}
		if _, err := b.Ipmitool("power", "status"); err == nil {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// Ipmitool runs ipmitool against the BMC with its credentials (from a
// password file, never the command line) and returns stdout.
func (b *BMC) Ipmitool(args ...string) (string, error) {
	pw := filepath.Join(b.dir, "ipmitool.pw")
	if err := os.WriteFile(pw, []byte(b.Password), 0o600); err != nil {
		return "", fmt.Errorf("write password file: %w", err)
	}
	full := append([]string{"-I", "lanplus", "-H", b.Address, "-p", strconv.Itoa(b.Port), "-U", b.Username,
		"-f", pw, "-L", "ADMINISTRATOR", "-C", CipherSuite, "-R", "1", "-N", "1"}, args...)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("ipmitool", full...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("ipmitool %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// PoweredOn reports the simulated chassis power.
func (b *BMC) PoweredOn(t testing.TB) bool {
	t.Helper()
	return b.read(t, "power") == "1"
}

// SetPower changes the chassis power directly, as if someone pressed the
// button.
func (b *BMC) SetPower(t testing.TB, on bool) {
	t.Helper()
	v := "0"
	if on {
		v = "1"
	}
	must(t, os.WriteFile(filepath.Join(b.dir, "power"), []byte(v+"\n"), 0o600))
}

// BootDevice is the device of the last Set System Boot Options parameter
// 5, in ipmi_sim's names: none, pxe, default (disk), cdrom or bios.
func (b *BMC) BootDevice(t testing.TB) string {
	t.Helper()
	return b.read(t, "boot")
}

// ControlLog lists the chassis operations ipmi_sim asked for, one per
// line ("set power 1", "get boot" ...).
func (b *BMC) ControlLog(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(b.dir, "control.log"))
	if os.IsNotExist(err) {
		return nil
	}
	must(t, err)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func (b *BMC) read(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(b.dir, name))
	must(t, err)
	return strings.TrimSpace(string(data))
}

func (b *BMC) stop() {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	_ = b.cmd.Process.Kill()
	_ = b.cmd.Wait()
	b.cmd = nil
}

func freeUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	must(t, err)
	port := c.LocalAddr().(*net.UDPAddr).Port
	must(t, c.Close())
	return port
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
