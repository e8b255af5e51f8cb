// Package scenarios runs the operator scenarios of the specification
// (seed 001) end to end: the real ironic binary, machines of the virtual
// bare-metal lab (testing/vbm: a Redfish BMC emulator and an IPA fixture
// per machine), and an image server, all processes or servers on
// 127.0.0.1, driven through the REST API as an operator or Nova would.
package scenarios

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openkeel/ironic/internal/image"
	"github.com/openkeel/ironic/testing/await"
)

// The ironic binary and the IPA fixture's process, built once.
var binaryPath, fakeIPAPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ironic-scenarios-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binaryPath, fakeIPAPath = filepath.Join(dir, "ironic"), filepath.Join(dir, "fake-ipa")
	for bin, pkg := range map[string]string{binaryPath: "../../cmd/ironic", fakeIPAPath: "../../testing/ipa/cmd/fake-ipa"} {
		out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ironic is a started all-in-one service.
type ironic struct {
	t    *testing.T
	base string
	// http is the conductor's [deploy]/http_url, served from http_root.
	http string
	dir  string
	out  *logBuffer
}

// startIronic runs the binary with conf (ironic.conf text; [api]/port,
// the database and http_root/http_url are added) and waits for it. The
// power state is read every second, not every 5 s, while a machine powers
// itself off after standby.power_off: the lab's take a fraction of one.
func startIronic(t *testing.T, conf string) *ironic {
	t.Helper()
	dir := t.TempDir()
	apiPort, httpPort := freePort(t), freePort(t)
	text := fmt.Sprintf(`[DEFAULT]
use_json = true
debug = true
[api]
host_ip = 127.0.0.1
port = %d
[database]
connection = sqlite:///%s/ironic.sqlite
[deploy]
http_root = %s/httpboot
http_url = http://127.0.0.1:%d
[service_catalog]
endpoint_override = http://127.0.0.1:%d
[agent]
certificates_path = %s/certificates
deploy_logs_local_path = %s/deploy-logs
post_deploy_get_power_state_retry_interval = 1
[pxe]
images_path = %s/images
instance_master_path = %s/master_images
`, apiPort, dir, dir, httpPort, apiPort, dir, dir, dir, dir) + conf
	path := filepath.Join(dir, "ironic.conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binaryPath, "--config-file", path, "all-in-one")
	cmd.Dir = dir
	out := &logBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			// The full log is long; it is kept for reading after the run.
			path := filepath.Join(os.TempDir(), "ironic-"+strings.ReplaceAll(t.Name(), "/", "_")+".log")
			if err := os.WriteFile(path, []byte(out.String()), 0o600); err == nil {
				t.Logf("ironic output: %s", path)
			}
		}
	})
	s := &ironic{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", apiPort), http: fmt.Sprintf("http://127.0.0.1:%d", httpPort), dir: dir, out: out}
	await.UntilReason(t, 30*time.Second, "a healthy ironic", func() (bool, string) {
		select {
		case err := <-done:
			t.Fatalf("ironic exited (%v):\n%s", err, out.String())
		default:
		}
		if resp, err := http.Get(s.base + "/healthcheck"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true, ""
			}
		}
		return false, "ironic never became healthy:\n" + out.String()
	})
	return s
}

// call sends a request at microversion 1.80 and decodes the answer.
func (s *ironic) call(method, path string, body any) (int, map[string]any) {
	s.t.Helper()
	return s.callAt("1.80", method, path, body)
}

// callAt is call at another microversion.
func (s *ironic) callAt(version, method, path string, body any) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", version)
	req.Header.Set("Content-Type", "application/json")
	// A bounded wait turns an API call that never answers into a failure
	// naming the request, not a test binary killed by go test's timeout.
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			s.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
	}
	return resp.StatusCode, out
}

// must sends a request that has to answer want.
func (s *ironic) must(want int, method, path string, body any) map[string]any {
	s.t.Helper()
	status, out := s.call(method, path, body)
	if status != want {
		s.t.Fatalf("%s %s: %d %v, want %d", method, path, status, out, want)
	}
	return out
}

// provision asks for target and waits for the node to settle in want.
func (s *ironic) provision(node string, body map[string]any, want string, timeout time.Duration) map[string]any {
	s.t.Helper()
	s.must(http.StatusAccepted, "PUT", "/v1/nodes/"+node+"/states/provision", body)
	return s.waitState(node, want, timeout)
}

// waitState polls the node until its provision state is want, unlocked,
// with no target (a wait or failure state keeps the target of its flow),
// failing early on a failure state that is not wanted.
func (s *ironic) waitState(node, want string, timeout time.Duration) map[string]any {
	s.t.Helper()
	var n map[string]any
	await.UntilReason(s.t, timeout, fmt.Sprintf("node %s in %s", node, want), func() (bool, string) {
		n = s.must(http.StatusOK, "GET", "/v1/nodes/"+node, nil)
		state, _ := n["provision_state"].(string)
		if state == want && n["reservation"] == nil && (n["target_provision_state"] == nil || strings.HasSuffix(want, "failed") || strings.HasSuffix(want, "wait")) {
			return true, ""
		}
		if state != want && strings.HasSuffix(state, "failed") {
			s.t.Fatalf("node %s is %s (waiting for %s): last_error %v", node, state, want, n["last_error"])
		}
		return false, fmt.Sprintf("node %s still %v → %v after %v (waiting for %s); last_error %v", node, n["provision_state"], n["target_provision_state"], timeout, want, n["last_error"])
	})
	return n
}

// files serves a directory of images on 127.0.0.1 and counts downloads
// (GETs; the conductor's HEAD validating an image URL is no download).
type files struct {
	srv   *httptest.Server
	dir   string
	mu    sync.Mutex
	count map[string]int
}

func newFiles(t *testing.T) *files {
	t.Helper()
	f := &files{dir: t.TempDir(), count: map[string]int{}}
	fs := http.FileServer(http.Dir(f.dir))
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			f.mu.Lock()
			f.count[r.URL.Path]++
			f.mu.Unlock()
		}
		fs.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// put stores data under name and returns its URL and sha256.
func (f *files) put(t *testing.T, name string, data []byte) (string, string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return f.srv.URL + "/" + name, hex.EncodeToString(sum[:])
}

// downloads tells how many times name was fetched.
func (f *files) downloads(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count["/"+name]
}

// agentImages serves a deploy kernel, ramdisk and an EFI system
// partition image, and returns the [conductor] options naming them.
func agentImages(t *testing.T, f *files) string {
	t.Helper()
	kernel, _ := f.put(t, "ipa.kernel", []byte("vmlinuz of the agent ramdisk"))
	ramdisk, _ := f.put(t, "ipa.initramfs", []byte("initramfs of the agent ramdisk"))
	esp := filepath.Join(t.TempDir(), "esp.img")
	if err := image.CreateVFATImage(context.Background(), esp, map[string]image.FileEntry{"EFI/BOOT/BOOTX64.EFI": {Data: []byte("grub efi")}}, nil, 1024); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(esp)
	if err != nil {
		t.Fatal(err)
	}
	bootloader, _ := f.put(t, "esp.img", data)
	return fmt.Sprintf(`[conductor]
deploy_kernel = %s
deploy_ramdisk = %s
rescue_kernel = %s
rescue_ramdisk = %s
bootloader = %s
`, kernel, ramdisk, kernel, ramdisk, bootloader)
}
