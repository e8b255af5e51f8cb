package wire

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/cluster"
)

// ourConf is the reference instance's configuration
// (../shared/tools/reference-ironic.sh, write_conf), so that both answer
// from the same drivers and interfaces, with the behaviour master added
// since 21.4 turned off where an option allows it. %[1]s is the state directory,
// %[2]d the API port, %[3]d the http_root port.
const ourConf = `[DEFAULT]
host = refironic
auth_strategy = noauth
rpc_transport = none
state_path = %[1]s
tempdir = %[1]s/tmp
enabled_hardware_types = fake-hardware,ipmi,redfish
enabled_bios_interfaces = fake,no-bios,redfish
enabled_boot_interfaces = fake,ipxe,pxe,redfish-virtual-media
enabled_console_interfaces = fake,no-console
enabled_deploy_interfaces = fake,direct,ramdisk
enabled_inspect_interfaces = fake,no-inspect,redfish
enabled_management_interfaces = fake,ipmitool,redfish
enabled_network_interfaces = noop
enabled_power_interfaces = fake,ipmitool,redfish
enabled_raid_interfaces = fake,no-raid,agent,redfish
enabled_rescue_interfaces = fake,no-rescue
enabled_storage_interfaces = fake,noop
enabled_vendor_interfaces = fake,no-vendor,ipmitool,redfish
default_network_interface = noop

[api]
host_ip = 127.0.0.1
port = %[2]d

[database]
connection = sqlite:///%[1]s/ironic.sqlite

[conductor]
automated_clean = true
# The recordings are Debian's Ironic 21.4, which predates master's step
# flow records in node history (on by default in master); without this
# the history scenario would show master's extra entries.
record_step_flows_in_history = false

[dhcp]
dhcp_provider = none

[deploy]
http_root = %[1]s/httpboot
http_url = http://127.0.0.1:%[3]d

[pxe]
tftp_root = %[1]s/tftpboot
tftp_master_path = %[1]s/tftpboot/master_images
images_path = %[1]s/images
instance_master_path = %[1]s/master_images
`

// TestWire replays every scenario against this service, each on a fresh
// all-in-one, and fails on every difference from the expected answers
// that known_differences.yaml does not list, and on every listed one that
// no longer occurs.
func TestWire(t *testing.T) {
	corpus, err := LoadCorpus(".")
	if err != nil {
		t.Fatal(err)
	}
	known := loadKnown(t, corpus)
	bin := cluster.Binary(t)

	var mu sync.Mutex
	occurred := map[string]bool{}
	// completed are the scenarios replayed to their end: a run of some
	// (go test -run) or one stopped early says nothing of the others'
	// known differences.
	completed := map[string]bool{}
	steps, differing := 0, 0
	t.Run("scenario", func(t *testing.T) {
		for _, sc := range corpus {
			t.Run(sc.Name, func(t *testing.T) {
				t.Parallel()
				rec, err := LoadRecording(".", sc.Name)
				if err != nil {
					t.Fatal(err)
				}
				checkRecording(t, sc, rec)
				host, showLog := startOurs(t, bin)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				for _, o := range Run(ctx, host, sc) {
					key := sc.Name + "/" + o.Step.ID
					problems := stepProblems(o, rec)
					if o.Err != nil {
						showLog()
					}
					mu.Lock()
					steps++
					if len(problems) > 0 {
						occurred[key] = true
						differing++
					}
					mu.Unlock()
					if len(problems) == 0 {
						continue
					}
					report := fmt.Sprintf("%s (%s):\n    %s", key, describe(o.Step), strings.Join(problems, "\n    "))
					if reason, ok := known[key]; ok {
						t.Logf("known difference (%s): %s", reason, report)
						continue
					}
					t.Error(report)
				}
				mu.Lock()
				completed[sc.Name] = true
				mu.Unlock()
			})
		}
	})
	for _, key := range sortedKeys(known) {
		scenario, _, _ := strings.Cut(key, "/")
		if completed[scenario] && !occurred[key] {
			t.Errorf("%s answers as expected now: remove it from known_differences.yaml (%s)", key, known[key])
		}
	}
	t.Logf("%d scenarios, %d steps, %d steps differ (%d listed as known)", len(corpus), steps, differing, len(known))
}

// stepProblems lists how the outcome misses its expected answer.
func stepProblems(o Outcome, rec *Recording) []string {
	var out []string
	if o.Err != nil {
		out = append(out, o.Err.Error())
	}
	want, subset, ok := Expected(o.Step, rec)
	if !ok {
		return append(out, "no recorded answer: run test/wire/record.sh")
	}
	if subset {
		return append(out, Subset(want, o.Response)...)
	}
	return append(out, Diff(want, o.Response)...)
}

// checkRecording fails when the recording and the scenario's steps part
// ways (a step added, renamed or removed since the last recording).
func checkRecording(t *testing.T, sc *Scenario, rec *Recording) {
	t.Helper()
	if sc.Source != "" {
		if len(rec.Steps) > 0 {
			t.Errorf("%s is written by hand (%s) but has a recording", sc.Name, sc.Source)
		}
		return
	}
	if len(rec.Steps) == 0 {
		t.Fatalf("%s has no recording: run test/wire/record.sh %s", sc.Name, sc.Name)
	}
	ids := map[string]bool{}
	for _, st := range sc.Steps {
		ids[st.ID] = true
	}
	for _, r := range rec.Steps {
		if !ids[r.ID] {
			t.Errorf("recorded step %s/%s is not in the corpus: run test/wire/record.sh", sc.Name, r.ID)
		}
	}
}

// knownDifference is one entry of known_differences.yaml.
type knownDifference struct {
	Step   string `yaml:"step"`
	Reason string `yaml:"reason"`
}

// loadKnown reads known_differences.yaml as scenario/step → reason, and
// fails on an entry that names no step of the corpus.
func loadKnown(t *testing.T, corpus []*Scenario) map[string]string {
	t.Helper()
	b, err := os.ReadFile("known_differences.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var list []knownDifference
	if err := yaml.Unmarshal(b, &list); err != nil {
		t.Fatalf("known_differences.yaml: %v", err)
	}
	steps := map[string]bool{}
	for _, sc := range corpus {
		for _, st := range sc.Steps {
			steps[sc.Name+"/"+st.ID] = true
		}
	}
	out := map[string]string{}
	for _, k := range list {
		switch {
		case !steps[k.Step]:
			t.Errorf("known_differences.yaml names %s, which the corpus does not have", k.Step)
		case k.Reason == "":
			t.Errorf("known_differences.yaml: %s has no reason", k.Step)
		case out[k.Step] != "":
			t.Errorf("known_differences.yaml lists %s twice", k.Step)
		}
		out[k.Step] = k.Reason
	}
	return out
}

// startOurs runs `ironic all-in-one` configured as the reference instance,
// on a new SQLite database, and returns its host:port once it answers,
// and a function that has the test show the server's log when it ends.
func startOurs(t *testing.T, bin string) (string, func()) {
	t.Helper()
	dir := t.TempDir()
	// The directories the reference script makes for its instance.
	for _, sub := range []string{"tmp", "httpboot", "tftpboot/master_images", "images", "master_images"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	port := freePort(t)
	confPath := filepath.Join(dir, "ironic.conf")
	if err := os.WriteFile(confPath, []byte(fmt.Sprintf(ourConf, dir, port, freePort(t))), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "ironic.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config-file", confPath, "all-in-one")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		logFile.Close()
		close(done)
	}()
	var show atomic.Bool
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if show.Load() {
			b, _ := os.ReadFile(logPath)
			t.Logf("--- ironic output (last 4 KiB):\n%s", tail(string(b), 4096))
		}
	})
	host := fmt.Sprintf("127.0.0.1:%d", port)
	exited := false
	await.Until(t, 60*time.Second, "ironic to answer on "+host, func() bool {
		select {
		case <-done:
			exited = true
			return true
		default:
		}
		resp, err := http.Get("http://" + host + "/v1")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode < 500
	})
	if exited {
		b, _ := os.ReadFile(logPath)
		t.Fatalf("ironic exited early:\n%s", b)
	}
	return host, func() { show.Store(true) }
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
