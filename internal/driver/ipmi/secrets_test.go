package ipmi

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/driver"
	"github.com/openkeel/ironic/internal/states"
	"github.com/openkeel/ironic/testing/ipmisim"
)

// spyScript stands in for ipmitool: it runs the real one in the
// background and, as soon as the child has become ipmitool, copies the
// child's /proc cmdline and environ, so the test sees what any local user
// could read while the command runs.
const spyScript = `#!/bin/sh
real=%q
out=%q
"$real" "$@" &
child=$!
while kill -0 "$child" 2>/dev/null; do
  if [ "$(tr '\0' '\n' < /proc/$child/cmdline 2>/dev/null | head -n 1)" = "$real" ]; then
    cp /proc/$child/cmdline "$out/$child.cmdline" 2>/dev/null
    cp /proc/$child/environ "$out/$child.environ" 2>/dev/null
    break
  fi
done
wait "$child"
`

// spiedProcess is what the spy saw of one running ipmitool.
type spiedProcess struct {
	pid           string
	argv, environ []string
}

func installSpy(t *testing.T) (binary, outDir string) {
	t.Helper()
	real, err := exec.LookPath("ipmitool")
	must(t, err)
	real, err = filepath.EvalSymlinks(real)
	must(t, err)
	dir := t.TempDir()
	outDir = filepath.Join(dir, "seen")
	must(t, os.Mkdir(outDir, 0o700))
	binary = filepath.Join(dir, "ipmitool")
	must(t, os.WriteFile(binary, []byte(fmt.Sprintf(spyScript, real, outDir)), 0o700))
	return binary, outDir
}

func spied(t *testing.T, outDir string) []spiedProcess {
	t.Helper()
	entries, err := os.ReadDir(outDir)
	must(t, err)
	var out []spiedProcess
	for _, e := range entries {
		pid, ok := strings.CutSuffix(e.Name(), ".cmdline")
		if !ok {
			continue
		}
		argv, err := os.ReadFile(filepath.Join(outDir, e.Name()))
		must(t, err)
		env, _ := os.ReadFile(filepath.Join(outDir, pid+".environ"))
		if len(argv) == 0 || len(env) == 0 {
			continue // the process ended while being copied
		}
		out = append(out, spiedProcess{pid: pid,
			argv: strings.Split(strings.TrimRight(string(argv), "\x00"), "\x00"), environ: strings.Split(string(env), "\x00")})
	}
	return out
}

// silentBMC is a UDP port on 127.0.0.1 that never answers, so ipmitool
// keeps running until its own timeout and can be observed for sure.
func silentBMC(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c.LocalAddr().(*net.UDPAddr).Port
}

// TestPasswordStaysSecret drives the real ipmitool against ipmi_sim (and a
// BMC that does not answer) and looks for the BMC password everywhere a
// local user or an operator could see it: the argv and environment of the
// running ipmitool processes, every log record down to debug, and the
// errors returned.
func TestPasswordStaysSecret(t *testing.T) {
	for _, inEnv := range []bool{false, true} {
		t.Run(fmt.Sprintf("store_cred_in_env=%v", inEnv), func(t *testing.T) {
			const password = "Zq81-secret-pw"
			b := ipmisim.Start(t, ipmisim.Options{Password: password})
			binary, outDir := installSpy(t)
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			o := DefaultOptions()
			o.Binary = binary
			o.TempDir = t.TempDir()
			o.MinCommandInterval = time.Second
			o.CommandRetryTimeout = 2 * time.Second
			o.PowerStateChangeTimeout = 20 * time.Second
			o.StoreCredInEnv = inEnv
			o.Log = logger
			r := driver.NewRegistry()
			must(t, Register(r, o))
			power, _ := r.Implementation(driver.KindPower, "ipmitool")
			mgmt, _ := r.Implementation(driver.KindManagement, "ipmitool")
			vendor, _ := r.Implementation(driver.KindVendor, "ipmitool")
			ifaces := &driver.Interfaces{HardwareType: "ipmi", Power: power.(driver.PowerInterface),
				Management: mgmt.(driver.ManagementInterface), Vendor: vendor.(driver.VendorInterface)}
			task := simTask(b, ifaces, &logs)
			task.Log = logger
			ctx := context.Background()

			must(t, ifaces.Power.SetPowerState(ctx, task, states.PowerOn, 0))
			task.Node.Properties["capabilities"] = "boot_mode:bios"
			must(t, ifaces.Management.SetBootDevice(ctx, task, "pxe", true))
			_, err := ifaces.Management.GetBootDevice(ctx, task)
			must(t, err)

			// Failures put ipmitool's command line and output in the log
			// and in the returned errors.
			var failures []error
			_, err = ifaces.Vendor.VendorRoutes()["send_raw"].Func(ctx, task, "POST", map[string]any{"raw_bytes": "0x2c 0x41 0x04"})
			failures = append(failures, err)
			silent := simTask(b, ifaces, &logs)
			silent.Log = logger
			silent.Node.DriverInfo["ipmi_port"] = float64(silentBMC(t))
			_, err = ifaces.Power.GetPowerState(ctx, silent)
			failures = append(failures, err)
			for _, err := range failures {
				if err == nil {
					t.Fatal("a command that must fail succeeded")
				}
				if text := fmt.Sprintf("%v %+v %#v", err, err, err); strings.Contains(text, password) {
					t.Errorf("password in error: %s", text)
				}
			}

			procs := spied(t, outDir)
			// The silent BMC keeps each of its ipmitool runs alive for
			// seconds, so at least those must have been seen.
			silentPort := fmt.Sprint(silent.Node.DriverInfo["ipmi_port"])
			sawSilent := false
			for _, p := range procs {
				argv := strings.Join(p.argv, " ")
				if strings.Contains(argv, password) {
					t.Errorf("password in the argv of ipmitool %s: %q", p.pid, argv)
				}
				if !strings.Contains(argv, " -H ") {
					continue // a probe of ipmitool's options, run without credentials
				}
				if strings.Contains(argv, "-p "+silentPort) {
					sawSilent = true
				}
				envHas := false
				for _, kv := range p.environ {
					if strings.Contains(kv, password) {
						envHas = true
						if kv != "IPMI_PASSWORD="+password {
							t.Errorf("password in environment variable %q", kv)
						}
					}
				}
				if envHas != inEnv {
					t.Errorf("ipmitool %s: password in its environment is %v with store_cred_in_env=%v (%q)", p.pid, envHas, inEnv, argv)
				}
				if inEnv != strings.Contains(argv, " -E ") || inEnv == strings.Contains(argv, " -f ") {
					t.Errorf("ipmitool %s: password flag does not match store_cred_in_env=%v: %q", p.pid, inEnv, argv)
				}
			}
			t.Logf("observed %d running ipmitool processes", len(procs))
			if !sawSilent {
				t.Fatalf("no running ipmitool observed for the silent BMC (saw %d processes)", len(procs))
			}
			if os.Getenv("IPMI_PASSWORD") != "" {
				t.Error("IPMI_PASSWORD leaked into the conductor's own environment")
			}
			if !strings.Contains(logs.String(), "IPMI error") {
				t.Fatalf("the failures were not logged, so the log check proves nothing:\n%s", logs.String())
			}
			if strings.Contains(logs.String(), password) {
				t.Errorf("password in the log:\n%s", logs.String())
			}
			if entries, _ := filepath.Glob(filepath.Join(o.TempDir, "*")); len(entries) != 0 {
				t.Errorf("password files left in the temp dir: %q", entries)
			}
		})
	}
}
