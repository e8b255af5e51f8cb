package scenarios

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// fakeConf is fake hardware with direct deploy: nothing boots by itself,
// the test starts the ramdisk (the fake-ipa process) when the node waits
// for it. The conductor checks callback timeouts every second, and
// cleaning and deployment wait at most 10 s for the ramdisk.
const fakeConf = `[DEFAULT]
enabled_hardware_types = fake-hardware
enabled_power_interfaces = fake
enabled_management_interfaces = fake
enabled_boot_interfaces = fake
enabled_deploy_interfaces = direct
enabled_inspect_interfaces = no-inspect
enabled_rescue_interfaces = no-rescue
enabled_network_interfaces = noop
enabled_bios_interfaces = no-bios
enabled_raid_interfaces = no-raid
enabled_firmware_interfaces = no-firmware
enabled_console_interfaces = no-console
enabled_vendor_interfaces = no-vendor
enabled_storage_interfaces = noop
[conductor]
check_provision_state_interval = 1
clean_callback_timeout = 10
deploy_callback_timeout = 10
`

// ramdisk is a running fake-ipa process.
type ramdisk struct {
	cmd  *exec.Cmd
	out  *logBuffer
	done chan error
}

// startRamdisk runs fake-ipa for mac against s with args; it is stopped
// (SIGINT, which it must obey) when the test ends.
func (s *ironic) startRamdisk(t *testing.T, mac string, args ...string) *ramdisk {
	t.Helper()
	cmd := exec.Command(fakeIPAPath, append([]string{"-api-url", s.base, "-mac", mac, "-tls", "-heartbeat-interval", "300ms"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &ramdisk{cmd: cmd, out: &logBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = r.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "IPA_URL=https://127.0.0.1:") {
		_ = cmd.Process.Kill()
		t.Fatalf("fake-ipa did not announce its URL: %q %v", line, err)
	}
	go func() { r.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("fake-ipa exited with %v:\n%s", err, r.out.String())
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-r.done
			t.Errorf("fake-ipa ignored SIGINT")
		}
	})
	return r
}

// fakeNode enrolls a fake-hardware node with a port for mac and starts
// its automated cleaning.
func (s *ironic) fakeNode(name, mac string) string {
	s.t.Helper()
	id := s.must(http.StatusCreated, "POST", "/v1/nodes", map[string]any{"name": name, "driver": "fake-hardware", "deploy_interface": "direct"})["uuid"].(string)
	s.must(http.StatusCreated, "POST", "/v1/ports", map[string]any{"node_uuid": id, "address": mac})
	s.provision(id, map[string]any{"target": "manage"}, "manageable", 60*time.Second)
	s.must(http.StatusAccepted, "PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "provide"})
	return id
}

// The IPA fixture as a process, against the binary: an agent that does
// its job cleans the node; one that looks its node up but never calls
// back fails cleaning at the callback timeout with upstream's message;
// one whose step fails fails cleaning naming the step; one that sends a
// wrong token is refused and changes nothing.
func TestScenarioAgentProcess(t *testing.T) {
	s := startIronic(t, fakeConf)
	const (
		good, silent, failing, forger = "52:54:00:00:a1:01", "52:54:00:00:a2:01", "52:54:00:00:a3:01", "52:54:00:00:a4:01"
	)
	ids := map[string]string{}
	for name, mac := range map[string]string{"good": good, "silent": silent, "failing": failing, "forger": forger} {
		ids[name] = s.fakeNode(name, mac)
	}
	for _, id := range ids {
		s.waitState(id, "clean wait", 30*time.Second)
	}
	goodAgent := s.startRamdisk(t, good)
	s.startRamdisk(t, silent, "-no-heartbeat")
	s.startRamdisk(t, failing, "-fail-step", "erase_devices_metadata")
	forged := s.startRamdisk(t, forger, "-wrong-token")

	n := s.waitState(ids["good"], "available", 60*time.Second)
	if n["power_state"] != "power off" || n["last_error"] != nil {
		t.Errorf("cleaned node: power %v last_error %v", n["power_state"], n["last_error"])
	}

	n = s.waitState(ids["failing"], "clean failed", 60*time.Second)
	if le, _ := n["last_error"].(string); !strings.HasPrefix(le, "Clean step deploy.erase_devices_metadata failed on node "+ids["failing"]+". ") || !strings.Contains(le, "step erase_devices_metadata failed as fake-ipa was told to") {
		t.Errorf("failed step: last_error %q", le)
	}

	// The forger's heartbeats are refused at the API; its node stays as
	// it was, with no agent recorded, until it times out like the silent one.
	await.UntilReason(t, 20*time.Second, "the forged heartbeat refused", func() (bool, string) {
		out := forged.out.String()
		return strings.Contains(out, "Invalid or missing agent token received."), "fake-ipa -wrong-token was never refused:\n" + out
	})
	_, internal := s.call("GET", "/v1/nodes/"+ids["forger"]+"?fields=driver_internal_info", nil)
	if dii, _ := internal["driver_internal_info"].(map[string]any); dii["agent_url"] != nil {
		t.Errorf("a refused heartbeat recorded agent_url %v", dii["agent_url"])
	}

	// The good agent stays up, but its node is done with it: deployed, the
	// node waits for a new ramdisk, and the old one, whose token was wiped
	// at the end of cleaning, cannot stand in for it. The deployment
	// times out.
	files := newFiles(t)
	url, sum := files.put(t, "disk.img", []byte(strings.Repeat("image ", 512)))
	s.must(http.StatusOK, "PATCH", "/v1/nodes/"+ids["good"], []map[string]any{
		{"op": "add", "path": "/instance_info", "value": map[string]any{"image_source": url, "image_os_hash_algo": "sha256", "image_os_hash_value": sum}},
	})
	refusedBefore := strings.Count(goodAgent.out.String(), "Invalid or missing agent token received.")
	s.must(http.StatusAccepted, "PUT", "/v1/nodes/"+ids["good"]+"/states/provision", map[string]any{"target": "active"})
	n = s.waitState(ids["good"], "deploy failed", 60*time.Second)
	if n["last_error"] != "Timeout reached while waiting for callback for node "+ids["good"] {
		t.Errorf("deployment without a ramdisk: last_error %v", n["last_error"])
	}
	if strings.Count(goodAgent.out.String(), "Invalid or missing agent token received.") == refusedBefore {
		t.Errorf("the stale agent was never refused during the deployment:\n%s", goodAgent.out.String())
	}

	const timedOut = "Timeout reached while cleaning the node. Please check if the ramdisk responsible for the cleaning is running on the node. Failed on step {}."
	for _, name := range []string{"silent", "forger"} {
		n = s.waitState(ids[name], "clean failed", 60*time.Second)
		if n["last_error"] != timedOut || n["maintenance"] == true {
			t.Errorf("%s agent: last_error %v maintenance %v", name, n["last_error"], n["maintenance"])
		}
	}
}
