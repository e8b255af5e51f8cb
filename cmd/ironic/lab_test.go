package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The laptop lab of docs/operators.md works as written: the script
// starts the all-in-one, `ironic lab bmc` and `ironic lab agent`, drives
// a Redfish node's power through the emulator and cleans and deploys a
// node through the agent, with the baremetal CLI. Only the addresses
// (free ports instead of 6385, 6386 and 8000) and the binary's path
// differ.
func TestLaptopLabWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a dozen baremetal CLI commands")
	}
	for _, tool := range []string{"baremetal", "curl", "sha256sum"} {
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
	err = cmd.Wait()
	out, _ := os.ReadFile(outPath)
	if err != nil {
		logs := ""
		for _, name := range []string{"ironic.log", "bmc.log", "agent.log"} {
			data, _ := os.ReadFile(filepath.Join(dir, name))
			logs += "\n--- " + name + "\n" + string(data)
		}
		t.Fatalf("lab walk-through: %v\n%s%s", err, out, logs)
	}
	for _, want := range []string{"| power_state | power on |", "| provision_state | active |"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
