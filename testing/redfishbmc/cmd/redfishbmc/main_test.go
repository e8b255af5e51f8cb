package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary is the command when this variable is set, so that the
// test runs the emulator as a process without building it separately.
const asMain = "REDFISHBMC_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestEmulatorAsAProcess(t *testing.T) {
	const password = "Pr0cess-S3cret"
	cfg := map[string]any{
		"listen": "127.0.0.1:0", "username": "admin", "password": password, "control": true,
		"systems": []any{map[string]any{"id": "sys-1", "power": "Off"}, map[string]any{"id": "sys-2", "power": "On"}},
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bmc.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-config", path)
	cmd.Env = append(os.Environ(), asMain+"=1")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})

	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var base string
	select {
	case line := <-lines:
		var ok bool
		if base, ok = strings.CutPrefix(strings.TrimSpace(line), "URL "); !ok || !strings.HasPrefix(base, "http://127.0.0.1:") {
			t.Fatalf("first line %q; stderr:\n%s", line, stderr.String())
		}
	case err := <-done:
		t.Fatalf("emulator exited: %v\n%s", err, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("no URL announced; stderr:\n%s", stderr.String())
	}

	get := func(user, pass, path string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(user, pass)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var doc map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&doc)
		return resp.StatusCode, doc
	}
	if code, doc := get("admin", password, "/redfish/v1/Systems/sys-2"); code != http.StatusOK || doc["PowerState"] != "On" {
		t.Fatalf("sys-2: %d %v", code, doc)
	}
	req, err := http.NewRequest(http.MethodPost, base+"/redfish/v1/Systems/sys-1/Actions/ComputerSystem.Reset",
		strings.NewReader(`{"ResetType": "On"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("admin", password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("reset: %d", resp.StatusCode)
	}
	if code, doc := get("admin", password, "/redfish/v1/Systems/sys-1"); code != http.StatusOK || doc["PowerState"] != "On" {
		t.Fatalf("sys-1 after reset: %d %v", code, doc)
	}
	if code, _ := get("admin", "wrong", "/redfish/v1/Systems/sys-1"); code != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d", code)
	}
	// Faults reach the process through its control API.
	resp, err = http.Post(base+"/emulator/faults", "application/json",
		strings.NewReader(`{"method": "GET", "path": "/Systems/sys-2", "status": 500}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("inject fault: %d", resp.StatusCode)
	}
	if code, _ := get("admin", password, "/redfish/v1/Systems/sys-2"); code != http.StatusInternalServerError {
		t.Fatalf("injected fault answered %d", code)
	}
	if code, _ := get("admin", password, "/redfish/v1/Systems/sys-2"); code != http.StatusOK {
		t.Fatalf("after the fault: %d", code)
	}

	args, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(args, []byte(password)) {
		t.Fatalf("password on the command line: %q", args)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running after SIGTERM")
	}
	logs := stderr.String()
	if !strings.Contains(logs, "POST /redfish/v1/Systems/sys-1/Actions/ComputerSystem.Reset") || strings.Contains(logs, password) {
		t.Fatalf("request log:\n%s", logs)
	}
}

func TestEmulatorRefusesMissingConfig(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-config", filepath.Join(t.TempDir(), "none.json"))
	cmd.Env = append(os.Environ(), asMain+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(string(out), "read configuration") {
		t.Fatalf("exit %v, output %s", err, out)
	}
}
