package scenarios

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/vbm"
)

// redfishConf enables what seed 001 calls the configuration OpenKeel
// ships: redfish, virtual media, direct deploy, agent inspection and
// rescue.
const redfishConf = `[DEFAULT]
enabled_hardware_types = redfish
enabled_power_interfaces = redfish
enabled_management_interfaces = redfish
enabled_boot_interfaces = redfish-virtual-media
enabled_deploy_interfaces = direct
enabled_inspect_interfaces = agent
enabled_rescue_interfaces = agent
enabled_network_interfaces = noop
enabled_bios_interfaces = no-bios
enabled_raid_interfaces = no-raid
enabled_firmware_interfaces = no-firmware
enabled_console_interfaces = no-console
enabled_vendor_interfaces = no-vendor
enabled_storage_interfaces = noop
`

type scenario struct {
	*ironic
	lab   *vbm.Lab
	files *files
}

func newScenario(t *testing.T, extra string) *scenario {
	t.Helper()
	f := newFiles(t)
	lab := vbm.New(t, vbm.Options{HeartbeatInterval: 300 * time.Millisecond})
	s := startIronic(t, redfishConf+agentImages(t, f)+extra)
	return &scenario{ironic: s, lab: lab, files: f}
}

// enroll creates a redfish node for m.
func (s *scenario) enroll(m *vbm.Machine, name, password string) string {
	s.t.Helper()
	n := s.must(http.StatusCreated, "POST", "/v1/nodes", map[string]any{
		"name": name, "driver": "redfish",
		"driver_info": map[string]any{
			"redfish_address":   m.BMC.URL(),
			"redfish_system_id": "/redfish/v1/Systems/" + m.ID,
			"redfish_username":  vbm.BMCUsername,
			"redfish_password":  password,
		},
	})
	return n["uuid"].(string)
}

// Scenario 1 of seed 001: enrolment with BMC verification, a wrong
// password sending the node back to enroll, in-band inspection through
// the agent, and automated cleaning to available.
func TestScenario1EnrolInspectClean(t *testing.T) {
	s := newScenario(t, "[inspector]\nhooks = $default_hooks,memory,cpus,root-device\n")
	m := s.lab.Machine("node-1", "52:54:00:00:01:01", "52:54:00:00:01:02")

	bad := s.enroll(m, "bad-creds", "wrong-password")
	n := s.provision(bad, map[string]any{"target": "manage"}, "enroll", 60*time.Second)
	if msg, _ := n["last_error"].(string); msg == "" {
		t.Errorf("verification with a wrong password left no last_error")
	}
	s.must(http.StatusNoContent, "DELETE", "/v1/nodes/"+bad, nil)

	id := s.enroll(m, "node-1", vbm.BMCPassword)
	n = s.provision(id, map[string]any{"target": "manage"}, "manageable", 60*time.Second)
	if n["power_state"] != "power off" {
		t.Errorf("power state after manage: %v", n["power_state"])
	}

	n = s.provision(id, map[string]any{"target": "inspect"}, "manageable", 90*time.Second)
	props, _ := n["properties"].(map[string]any)
	if props["memory_mb"] != float64(16384) || props["cpu_arch"] != "x86_64" || props["cpus"] != float64(4) || props["local_gb"] != float64(99) {
		t.Errorf("properties after inspection: %v", props)
	}
	ports := s.must(http.StatusOK, "GET", "/v1/ports?node="+id, nil)["ports"].([]any)
	if len(ports) == 0 {
		t.Fatalf("inspection created no port")
	}
	status, inv := s.callAt("1.81", "GET", "/v1/nodes/"+id+"/inventory", nil)
	if status != http.StatusOK {
		t.Fatalf("inventory: %d %v", status, inv)
	}
	if got := fmt.Sprint(inv["inventory"].(map[string]any)["hostname"]); got != "vbm-node-1" {
		t.Errorf("stored inventory hostname %q", got)
	}
	if boots := m.Boots(); len(boots) == 0 || boots[0].Params["ipa-inspection-callback-url"] == "" {
		t.Errorf("inspection boot without a callback URL: %+v", boots)
	}

	n = s.provision(id, map[string]any{"target": "provide"}, "available", 120*time.Second)
	if n["power_state"] != "power off" {
		t.Errorf("power state after cleaning: %v", n["power_state"])
	}
	ran := map[string]bool{}
	for _, c := range m.Agent.Commands() {
		if c.Method == "clean.execute_clean_step" {
			step, _ := c.Params["step"].(map[string]any)
			ran[fmt.Sprint(step["step"])] = true
		}
	}
	if !ran["erase_devices_metadata"] {
		t.Errorf("cleaning did not run erase_devices_metadata on the agent: %v", ran)
	}
	if dev := m.BMC.StartBoot(m.ID); dev.Media != "" {
		t.Errorf("virtual media still inserted after cleaning: %s", dev.Media)
	}
	if strings.Contains(s.out.String(), vbm.BMCPassword) {
		t.Errorf("the BMC password is in the service's logs")
	}
}
