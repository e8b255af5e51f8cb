package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// walkthrough returns the lines of the shell block that follows marker in
// the document at path.
func walkthrough(t *testing.T, path, marker string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf("%s has no %q", path, marker)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatalf("%s: no ```sh block after the marker", path)
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("%s: the walk-through block does not end", path)
	}
	return strings.Split(strings.TrimSpace(block), "\n")
}

// The laptop walk-through of docs/operators.md works as written with the
// baremetal CLI: enrol, a port on the node's UUID, then manage, provide
// and deploy each waited for with --wait. The test builds and starts the
// binary itself, on a free port, in place of the block's first two lines.
func TestOperatorsWalkthrough(t *testing.T) {
	if _, err := exec.LookPath("baremetal"); err != nil {
		t.Skip("the baremetal CLI (python3-ironicclient) is not installed")
	}
	lines := walkthrough(t, "../../docs/operators.md", "<!-- cmd/ironic/walkthrough_test.go runs this block")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "make build") || !strings.HasPrefix(lines[1], "./bin/ironic &") {
		t.Fatalf("the walk-through no longer begins by building and starting the binary:\n%s", strings.Join(lines, "\n"))
	}
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[api]\nport = %d\n", port))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	endpoint := fmt.Sprintf("127.0.0.1:%d", port)
	waitHealthy(t, p, "http://"+endpoint+"/healthcheck")
	script := "set -eux\n" + strings.ReplaceAll(strings.Join(lines[2:], "\n"), "127.0.0.1:6385", endpoint) + "\n"
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	// The CLI must not find a clouds.yaml or OS_* settings of the machine.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("walk-through: %v\n%s\nironic:\n%s", err, out, p.out)
	}
	if !strings.Contains(string(out), "| provision_state | active |") {
		t.Errorf("the node did not end active:\n%s", out)
	}
	terminate(t, p)
}
