package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The laptop lab of docs/operators.md works as written: the script
// starts the all-in-one and `ironic lab bmc`, and takes a Redfish node
// with virtual media boot through manage, agent inspection, cleaning,
// deployment and undeployment with the baremetal CLI. Every ramdisk is an
// `ironic lab agent` process the emulator's machine started from the ISO
// the conductor built, and stopped when the machine went off. Only the
// addresses (free ports instead of 6385, 6386 and 8000) and the binary's
// path differ. Three to four minutes on a 2-core machine, most of it the
// dozen CLI commands starting (seven at a load average of 30).
func TestLaptopLabWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a dozen baremetal CLI commands")
	}
	for _, tool := range []string{"baremetal", "curl", "sha256sum", "truncate", "xorriso"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	lines := walkthrough(t, "../../docs/operators.md", "<!-- cmd/ironic/lab_test.go runs this block")
	script := strings.Join(lines, "\n") + "\n"
	api := freePort(t)
	for from, to := range map[string]string{
		"./bin/ironic":   binaryPath,
		"port = 6385":    fmt.Sprintf("port = %d", api),
		"127.0.0.1:6385": fmt.Sprintf("127.0.0.1:%d", api),
		"127.0.0.1:6386": fmt.Sprintf("127.0.0.1:%d", freePort(t)),
		"127.0.0.1:8000": fmt.Sprintf("127.0.0.1:%d", freePort(t)),
	} {
		if !strings.Contains(script, from) {
			t.Fatalf("the lab walk-through no longer names %s", from)
		}
		script = strings.ReplaceAll(script, from, to)
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", "-c", "set -eux\n"+script)
	cmd.Dir = dir
	// The CLI must not find a clouds.yaml or OS_* settings of the machine.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	// Its own process group, so that what the script started in the
	// background is stopped with it when it fails half-way.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A file, not a pipe: the background processes inherit it, and a
	// pipe would keep Wait waiting for them.
	outPath := filepath.Join(t.TempDir(), "script.out")
	f, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	// --wait waits for ever: a flow that stalls ends the script here,
	// with the logs, instead of at the test binary's timeout.
	deadline := time.AfterFunc(labDeadline, func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	err = cmd.Wait()
	deadline.Stop()
	out, _ := os.ReadFile(outPath)
	if err != nil {
		logs := ""
		for _, name := range []string{"ironic.log", "bmc.log"} {
			data, _ := os.ReadFile(filepath.Join(dir, name))
			logs += "\n--- " + name + "\n" + string(data)
		}
		t.Fatalf("lab walk-through: %v\n%s%s", err, out, logs)
	}
	checkLabOutput(t, string(out), filepath.Join(dir, "bmc.log"))
}

// labDeadline bounds the walk-through: ten times what it takes when all
// goes well would hide nothing, a hung --wait would take the suite's.
const labDeadline = 8 * time.Minute

// checkLabOutput looks for what the walk-through shows and what the
// emulator's machines did: inspection filled the properties from the
// emulated hardware, the node was deployed and powered on, then
// undeployed to available, and the agents were the machine's ramdisk.
func checkLabOutput(t *testing.T, out, bmcLog string) {
	t.Helper()
	for _, want := range []*regexp.Regexp{
		// 16 GiB, 8 threads, a 100 GiB disk less the partition margin.
		regexp.MustCompile(`'memory_mb': 16384`),
		regexp.MustCompile(`'cpus': 8`),
		regexp.MustCompile(`'local_gb': 99`),
		regexp.MustCompile(`\|\s*power_state\s*\|\s*power on\s*\|`),
		regexp.MustCompile(`\|\s*provision_state\s*\|\s*active\s*\|`),
		regexp.MustCompile(`\|\s*provision_state\s*\|\s*available\s*\|`),
	} {
		if !want.MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(bmcLog)
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	// Inspection, cleaning, deployment and cleaning at teardown each
	// boot the ISO; deployment ends with the agent powering the machine
	// off, then a boot from the disk.
	for want, n := range map[string]int{
		"machine lab-0: booting the ramdisk of": 4,
		"[lab-0] ironic lab agent":              1,
		"inspection data sent":                  1,
		"powered off after standby.power_off":   1,
		"machine lab-0: boots from its disk":    1,
	} {
		if got := strings.Count(log, want); got < n {
			t.Errorf("bmc.log has %q %d times, want at least %d:\n%s", want, got, n, log)
		}
	}
}
