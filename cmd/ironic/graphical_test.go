package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/openkeel/ironic/testing/await"
)

// fakeDocker is a Docker-compatible CLI for the container console
// provider: "run" starts a real VNC server (TigerVNC's Xvnc, loopback,
// no authentication) as the console container would, "port" answers as
// docker does with an unspecified address, "rm" stops it, and every call
// is recorded with the APP_INFO its environment carried.
const fakeDocker = `#!/bin/sh
state="$FAKE_DOCKER_STATE"
echo "$* | APP_INFO=${APP_INFO-<unset>}" >> "$state/calls"
cmd="$1"; shift
case "$cmd" in
version) echo "fake-docker 1.0" ;;
run)
  name=""
  while [ $# -gt 0 ]; do
    case "$1" in --name) name="$2"; shift ;; esac
    shift
  done
  [ -n "$APP_INFO" ] || { echo "APP_INFO missing" >&2; exit 1; }
  Xvnc ":$FAKE_DOCKER_DISPLAY" -rfbport "$FAKE_DOCKER_PORT" -interface 127.0.0.1 -SecurityTypes None \
    -geometry 640x480 -desktop "$name" -nolisten tcp >"$state/$name.log" 2>&1 &
  echo $! > "$state/$name.pid"
  echo "$name" ;;
port) [ -f "$state/$1.pid" ] || { echo "no such container: $1" >&2; exit 1; }
  echo "0.0.0.0:$FAKE_DOCKER_PORT" ;;
rm) [ "$1" = "--force" ] && shift
  [ -f "$state/$1.pid" ] || exit 1
  kill "$(cat "$state/$1.pid")"; rm -f "$state/$1.pid" ;;
logs) cat "$state/$1.log" 2>/dev/null ;;
ps) for f in "$state"/*.pid; do [ -f "$f" ] && basename "$f" .pid; done ;;
*) echo "unknown command $cmd" >&2; exit 1 ;;
esac
`

// A fake-graphical console through the all-in-one: enabling it runs the
// console container (a real VNC server behind a Docker-compatible CLI),
// GET .../states/console answers the noVNC URL, the built-in proxy joins
// a websocket client to the VNC server with that URL's token, and
// disabling removes the container and the token.
func TestGraphicalConsoleThroughNoVNCProxy(t *testing.T) {
	if _, err := exec.LookPath("Xvnc"); err != nil {
		if os.Getenv("IRONIC_SPEC_REQUIRED") == "1" {
			t.Fatal("Xvnc (tigervnc-standalone-server) is required in CI")
		}
		t.Skip("Xvnc (tigervnc-standalone-server) not installed")
	}
	dir := t.TempDir()
	state := filepath.Join(dir, "docker")
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	docker := filepath.Join(dir, "fake-docker")
	if err := os.WriteFile(docker, []byte(fakeDocker), 0o755); err != nil {
		t.Fatal(err)
	}
	// Debian's noVNC is the web client the browser part loads.
	web := "/usr/share/novnc"
	chromium, chromiumErr := exec.LookPath("chromium")
	if _, err := os.Stat(filepath.Join(web, "vnc_lite.html")); err != nil || chromiumErr != nil {
		if os.Getenv("IRONIC_SPEC_REQUIRED") == "1" {
			t.Fatalf("Debian's novnc and chromium are required in CI (%v, %v)", err, chromiumErr)
		}
		chromium = ""
		web = filepath.Join(dir, "novnc")
		if err := os.Mkdir(web, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(web, "vnc_lite.html"), []byte("<title>noVNC</title>"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	apiPort, vncPort, rfbPort := freePort(t), freePort(t), freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf(`[DEFAULT]
host = console-test-conductor
my_ip = 127.0.0.1
enabled_console_interfaces = fake-graphical,fake,no-console
[api]
port = %d
[vnc]
enabled = true
host_ip = 127.0.0.1
port = %d
public_url = http://127.0.0.1:%d/vnc_lite.html
novnc_web = %s
container_provider = container
container_executable = %s
console_image = registry.example.org/ironic-console:latest
`, apiPort, vncPort, vncPort, web, docker))
	t.Setenv("FAKE_DOCKER_STATE", state)
	t.Setenv("FAKE_DOCKER_PORT", fmt.Sprint(rfbPort))
	t.Setenv("FAKE_DOCKER_DISPLAY", fmt.Sprint(100+rfbPort%800))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	t.Cleanup(func() {
		// Whatever happened, no VNC server outlives the test.
		pids, _ := filepath.Glob(filepath.Join(state, "*.pid"))
		for _, f := range pids {
			var pid int
			if b, err := os.ReadFile(f); err == nil {
				if _, err := fmt.Sscan(string(b), &pid); err == nil && pid > 0 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", apiPort)
	waitHealthy(t, p, base+"/healthcheck")
	c := &apiClient{t: t, base: base, version: "1.115"}

	status, n := c.do("POST", "/v1/nodes", map[string]any{"name": "console-1", "driver": "fake-hardware", "console_interface": "fake-graphical"})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, n)
	}
	uuid := n["uuid"].(string)
	if status, body := c.do("GET", "/v1/nodes/console-1/states/console", nil); status != http.StatusOK ||
		body["console_enabled"] != false || body["console_info"] != nil {
		t.Fatalf("console before enabling: %d %v", status, body)
	}
	setConsole := func(enabled bool) {
		t.Helper()
		if status, body := c.do("PUT", "/v1/nodes/console-1/states/console", map[string]any{"enabled": enabled}); status != http.StatusAccepted {
			t.Fatalf("console enabled=%v: %d %v", enabled, status, body)
		}
		await.UntilReason(t, 60*time.Second, "console_enabled", func() (bool, string) {
			_, n := c.do("GET", "/v1/nodes/console-1", nil)
			return n["console_enabled"] == enabled, fmt.Sprintf("console_enabled %v, last_error %v", n["console_enabled"], n["last_error"])
		})
	}
	setConsole(true)

	status, body := c.do("GET", "/v1/nodes/console-1/states/console", nil)
	info, _ := body["console_info"].(map[string]any)
	if status != http.StatusOK || body["console_enabled"] != true || info["type"] != "vnc" {
		t.Fatalf("console info: %d %v", status, body)
	}
	u, err := url.Parse(info["url"].(string))
	if err != nil || u.Host != fmt.Sprintf("127.0.0.1:%d", vncPort) || u.Path != "/vnc_lite.html" {
		t.Fatalf("console URL %v (%v)", info["url"], err)
	}
	// The URL's path parameter is where noVNC opens its websocket.
	wsPath := u.Query().Get("path")
	if !strings.HasPrefix(wsPath, "websockify?node="+uuid+"&token=") {
		t.Fatalf("websocket path %q", wsPath)
	}
	calls, _ := os.ReadFile(filepath.Join(state, "calls"))
	run := ""
	for _, l := range strings.Split(string(calls), "\n") {
		if strings.HasPrefix(l, "run ") {
			run = l
		}
	}
	for _, want := range []string{
		"--name ironic-console-" + uuid, "--label org.openstack.ironic.conductor=console-test-conductor",
		"--env APP=fake", "--env APP_INFO --env READ_ONLY=False", "registry.example.org/ironic-console:latest | APP_INFO={}",
	} {
		if !strings.Contains(run, want) {
			t.Errorf("container run %q lacks %q", run, want)
		}
	}

	wsURL := fmt.Sprintf("ws://127.0.0.1:%d/%s", vncPort, wsPath)
	name := rfbDesktopName(t, wsURL)
	if name != "ironic-console-"+uuid {
		t.Errorf("VNC desktop %q, want the node's console container", name)
	}
	if chromium != "" {
		// The URL as the API answered it, opened by a browser: noVNC's
		// page loads from the proxy and connects through its websocket.
		status := browserConsole(t, chromium, info["url"].(string))
		if status != "Connected to ironic-console-"+uuid {
			t.Errorf("noVNC page status %q", status)
		}
	}
	// A browser on another site may not use the token.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"https://evil.example.com"}}}); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Origin: %v %v, want 403", resp, err)
	}

	setConsole(false)
	if status, body := c.do("GET", "/v1/nodes/console-1/states/console", nil); status != http.StatusOK || body["console_info"] != nil {
		t.Fatalf("console after disabling: %d %v", status, body)
	}
	if pids, _ := filepath.Glob(filepath.Join(state, "*.pid")); len(pids) != 0 {
		t.Errorf("console containers left after disabling: %v", pids)
	}
	if _, resp, err := websocket.Dial(ctx, wsURL, nil); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("old token after disabling: %v %v, want 403", resp, err)
	}
	terminate(t, p)
	calls, _ = os.ReadFile(filepath.Join(state, "calls"))
	if !strings.Contains(string(calls), "ps --all --quiet --filter label=org.openstack.ironic.conductor=console-test-conductor") {
		t.Errorf("the conductor did not clear its console containers at start and stop:\n%s", calls)
	}
	if strings.Contains(string(p.out.String()), "APP_INFO={") {
		t.Errorf("console app info logged")
	}
}

// browserConsole opens url in headless Chromium, waits for noVNC's page
// to report its connection and returns the status it shows, keeping a
// screenshot (IRONIC_TEST_ARTIFACTS, or the test's temporary folder).
func browserConsole(t *testing.T, chromium, url string) string {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(800, 600))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	// The browser lives as long as the context of its first action,
	// which must have no deadline; the wait for the page has one.
	if err := chromedp.Do(bctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('status').textContent.startsWith('Connected')`,
		chromedp.WithPollingInterval(100*time.Millisecond)))
	status, _ := chromedp.Run(bctx, chromedp.Text(chromedp.ID("status")))
	if err != nil {
		t.Fatalf("noVNC page at %s: %v (status %q)", url, err, status)
	}
	shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	out := os.Getenv("IRONIC_TEST_ARTIFACTS")
	if out == "" {
		out = t.TempDir()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "graphical-console.png"), shot, 0o644); err != nil {
		t.Errorf("screenshot: %v", err)
	}
	return strings.TrimSpace(status)
}

// rfbDesktopName opens the proxy's websocket as noVNC does and reads the
// VNC server's desktop name from its ServerInit.
func rfbDesktopName(t *testing.T, wsURL string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{"binary"}})
	if err != nil {
		t.Fatalf("websocket %s: %v %v", wsURL, resp, err)
	}
	c := websocket.NetConn(ctx, ws, websocket.MessageBinary)
	defer c.Close()
	read := func(n int) []byte {
		b := make([]byte, n)
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatalf("read %d bytes: %v", n, err)
		}
		return b
	}
	if v := read(12); string(v) != "RFB 003.008\n" {
		t.Fatalf("version %q", v)
	}
	_, _ = c.Write([]byte("RFB 003.008\n"))
	if types := read(2); types[0] != 1 || types[1] != 1 {
		t.Fatalf("security types %v", types)
	}
	_, _ = c.Write([]byte{1})
	if res := read(4); binary.BigEndian.Uint32(res) != 0 {
		t.Fatalf("security result %v", res)
	}
	_, _ = c.Write([]byte{1})
	init := read(24)
	return string(read(int(binary.BigEndian.Uint32(init[20:]))))
}
