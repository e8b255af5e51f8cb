package container

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/errs"
	"github.com/openkeel/ironic/internal/model"
	"github.com/openkeel/ironic/testing/await"
)

// standIn puts the stand-in systemctl, podman and journalctl
// (testdata/systemd) first on PATH and returns their state directory
// and the quadlet directory; whatever the stand-in systemctl started is
// ended when the test ends.
func standIn(t *testing.T) (state, units string) {
	t.Helper()
	bin, err := filepath.Abs("testdata/systemd")
	if err != nil {
		t.Fatal(err)
	}
	state, units = t.TempDir(), t.TempDir()
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("STANDIN_DIR", state)
	t.Setenv("STANDIN_UNIT_DIR", units)
	t.Cleanup(func() {
		pids, _ := filepath.Glob(filepath.Join(state, "*.pid"))
		for _, p := range pids {
			b, _ := os.ReadFile(p)
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	return state, units
}

func freeLocalPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func calls(t *testing.T, state string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, "calls"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(state, "calls"))
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestSystemdStartStop: Start writes the node's quadlet from our
// template (image, published port, APP, APP_INFO as JSON, READ_ONLY),
// readable by its owner only, reloads systemd, starts the unit, reads the
// port from podman and returns once the container, started in the
// background, answers RFB; Stop stops the unit, removes the quadlet and
// reloads.
func TestSystemdStartStop(t *testing.T) {
	state, units := standIn(t)
	port := freeLocalPort(t)
	p, err := New(Options{Provider: "systemd", Image: "quay.io/x/console:1", SystemdPublishPort: "127.0.0.1:" + itoa(port) + ":5900",
		SystemdUnitDir: units, WaitForReady: 20})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(calls(t, state), "|"); got != "systemctl --version|podman --version" {
		t.Errorf("probe calls %s", got)
	}
	n := &model.Node{UUID: "6f7f2c9e-1e55-4b0e-9d43-7e1f7c3e0a01"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	host, gotPort, err := p.Start(ctx, n, "redfish-graphical", map[string]any{"address": "https://bmc", "password": "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if host != "127.0.0.1" || gotPort != port {
		t.Errorf("started at %s:%d, want 127.0.0.1:%d", host, gotPort, port)
	}
	quadlet := filepath.Join(units, "ironic-console-"+n.UUID+".container")
	b, err := os.ReadFile(quadlet)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Description=A VNC server which displays a console for node " + n.UUID, "Image=quay.io/x/console:1",
		"PublishPort=127.0.0.1:" + itoa(port) + ":5900", "Environment=APP=redfish-graphical",
		`Environment=APP_INFO='{"address":"https://bmc","password":"s3cret"}'`, "Environment=READ_ONLY=False", "WantedBy=default.target"} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("quadlet lacks %q:\n%s", want, b)
		}
	}
	if st, _ := os.Stat(quadlet); st.Mode().Perm() != 0o600 {
		t.Errorf("quadlet mode %v", st.Mode())
	}
	want := "systemctl --user daemon-reload|systemctl --user start ironic-console-" + n.UUID + ".service|podman port systemd-ironic-console-" + n.UUID
	if got := strings.Join(calls(t, state), "|"); got != want {
		t.Errorf("start calls\n got %s\nwant %s", got, want)
	}

	if err := p.Stop(ctx, n); err != nil {
		t.Fatal(err)
	}
	want = "journalctl --user --no-pager -u ironic-console-" + n.UUID + ".service|systemctl --user stop ironic-console-" + n.UUID + ".service|systemctl --user daemon-reload"
	if got := strings.Join(calls(t, state), "|"); got != want {
		t.Errorf("stop calls\n got %s\nwant %s", got, want)
	}
	if _, err := os.Stat(quadlet); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("quadlet left after stop: %v", err)
	}
	await.Until(t, 10*time.Second, "console container gone", func() bool { return !rfbAnswers(ctx, net.JoinHostPort(host, itoa(port))) })
}

// A unit that fails to start fails Start with ConsoleContainerError and
// systemctl's message, after its status and journal were read, and
// leaves no quadlet behind.
func TestSystemdStartFails(t *testing.T) {
	state, units := standIn(t)
	if err := os.WriteFile(filepath.Join(state, "fail-start"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Provider: "systemd", Image: "i", SystemdPublishPort: "127.0.0.1::5900", SystemdUnitDir: units})
	if err != nil {
		t.Fatal(err)
	}
	calls(t, state)
	n := &model.Node{UUID: "7f7f2c9e-1e55-4b0e-9d43-7e1f7c3e0a01"}
	_, _, err = p.Start(context.Background(), n, "fake", map[string]any{})
	if err == nil || !errs.Is(err, errs.ClassConsoleContainerError) || !strings.Contains(err.Error(), "Console container error with provider 'systemd', reason: systemctl --user start") ||
		!strings.Contains(err.Error(), "failed because the control process exited with error code") {
		t.Fatalf("start: %v", err)
	}
	unit := "ironic-console-" + n.UUID + ".service"
	want := "systemctl --user daemon-reload|systemctl --user start " + unit + "|systemctl --user status " + unit + "|journalctl --user --no-pager -u " + unit
	if got := strings.Join(calls(t, state), "|"); got != want {
		t.Errorf("calls\n got %s\nwant %s", got, want)
	}
	if left, _ := filepath.Glob(filepath.Join(units, "*")); len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
}

// StopAll stops the unit of each of our quadlets and reloads once;
// files that are not ours stay.
func TestSystemdStopAll(t *testing.T) {
	state, units := standIn(t)
	for _, f := range []string{"ironic-console-a.container", "ironic-console-b.container", "other.container"} {
		if err := os.WriteFile(filepath.Join(units, f), []byte("[Container]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p, err := New(Options{Provider: "systemd", Image: "i", SystemdUnitDir: units})
	if err != nil {
		t.Fatal(err)
	}
	calls(t, state)
	if err := p.StopAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(calls(t, state), "|")
	want := "journalctl --user --no-pager -u ironic-console-a.service|systemctl --user stop ironic-console-a.service|" +
		"journalctl --user --no-pager -u ironic-console-b.service|systemctl --user stop ironic-console-b.service|systemctl --user daemon-reload"
	if got != want {
		t.Errorf("calls\n got %s\nwant %s", got, want)
	}
	if left, _ := filepath.Glob(filepath.Join(units, "*")); len(left) != 1 || filepath.Base(left[0]) != "other.container" {
		t.Errorf("files left: %v", left)
	}
}

// The provider is refused without systemctl or podman, with a template
// it cannot render, and without the user's quadlet directory when it
// must use upstream's.
func TestSystemdRefusals(t *testing.T) {
	state, _ := standIn(t)
	bad := filepath.Join(t.TempDir(), "bad.template")
	if err := os.WriteFile(bad, []byte("Image={{ image }}\nSecret={{ password }}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{Provider: "systemd", Image: "i", SystemdTemplate: bad})
	if err == nil || !strings.Contains(err.Error(), "Parsing "+bad+` failed: unknown template variable "password"`) {
		t.Errorf("bad template: %v", err)
	}
	uid := strconv.Itoa(os.Getuid())
	if _, err := os.Stat("/etc/containers/systemd/users/" + uid); err != nil {
		p, err := New(Options{Provider: "systemd", Image: "i"})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = p.Start(context.Background(), &model.Node{UUID: "u"}, "fake", nil)
		if err == nil || !strings.Contains(err.Error(), "Directory /etc/containers/systemd/users/"+uid+" must exist and be writable by user "+uid) {
			t.Errorf("no quadlet directory: %v", err)
		}
	}
	calls(t, state)
	t.Setenv("PATH", t.TempDir())
	if _, err := New(Options{Provider: "systemd", Image: "i"}); err == nil || !errs.Is(err, errs.ClassConsoleContainerError) || !strings.Contains(err.Error(), "systemctl --version") {
		t.Errorf("no systemctl: %v", err)
	}
}
