package scenarios

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/vbm"
)

// available enrolls m with a port for each of its NICs and brings it to
// available through manage and provide (automated cleaning by the agent).
func (s *scenario) available(m *vbm.Machine, name string) string {
	s.t.Helper()
	id := s.enroll(m, name, vbm.BMCPassword)
	for i, mac := range m.MACs {
		s.must(http.StatusCreated, "POST", "/v1/ports", map[string]any{"node_uuid": id, "address": mac, "pxe_enabled": i == 0})
	}
	s.provision(id, map[string]any{"target": "manage"}, "manageable", 60*time.Second)
	s.provision(id, map[string]any{"target": "provide"}, "available", 120*time.Second)
	return id
}

// Scenario 2 of seed 001, as Nova's ironic driver drives it: reserve the
// node for an instance, set instance_info, validate, deploy with a config
// drive over virtual media. The deploy ISO is built and published on the
// conductor's HTTP server, with the API URL and a pre-generated token in
// its kernel parameters; the conductor caches the image and the agent
// downloads it from the conductor (image_download_source = local),
// verifying the checksum it is given. The node ends active booting from
// disk persistently, the media ejected, the ISO and the image
// unpublished; tear down cleans it back to available.
func TestScenario2NovaDeploy(t *testing.T) {
	s := newScenario(t, "[agent]\nimage_download_source = local\n")
	m := s.lab.Machine("node-2", "52:54:00:00:02:01")
	id := s.available(m, "node-2")

	img := []byte(strings.Repeat("a whole disk image ", 4096))
	url, sum := s.files.put(t, "disk.img", img)
	instance := "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
	s.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, []map[string]any{
		{"op": "add", "path": "/instance_uuid", "value": instance},
		{"op": "add", "path": "/instance_info", "value": map[string]any{
			"image_source": url, "image_os_hash_algo": "sha256", "image_os_hash_value": sum,
			"image_disk_format": "raw", "root_gb": 10, "display_name": "vm-1",
		}},
	})
	// Nova's reservation: a second instance cannot take the node.
	if status, _ := s.call("PATCH", "/v1/nodes/"+id, []map[string]any{{"op": "replace", "path": "/instance_uuid", "value": "0c5a4f8e-4f6b-4a87-9e8b-3b8c6f6f2a11"}}); status != http.StatusConflict {
		t.Errorf("second instance_uuid: %d, want 409", status)
	}
	v := s.must(http.StatusOK, "GET", "/v1/nodes/"+id+"/validate", nil)
	for _, iface := range []string{"boot", "deploy", "power", "management"} {
		if r, _ := v[iface].(map[string]any); r["result"] != true {
			t.Errorf("validate %s: %v", iface, r)
		}
	}
	configdrive := map[string]any{
		"meta_data": map[string]any{"uuid": instance, "hostname": "vm-1"},
		"user_data": "#cloud-config\nhostname: vm-1\n",
	}
	status, out := s.callAt("1.56", "PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{"target": "active", "configdrive": configdrive})
	if status != http.StatusAccepted {
		t.Fatalf("deploy: %d %v", status, out)
	}
	n := s.waitState(id, "active", 120*time.Second)
	if n["power_state"] != "power on" {
		t.Errorf("power state when active: %v", n["power_state"])
	}

	// The agent was sent the conductor's copy of the image with the
	// checksum to verify, and what it wrote (after verifying) is the image.
	imageURL := s.http + "/agent_images/" + id
	info := writeImageInfo(t, m)
	if urls, _ := info["urls"].([]any); len(urls) != 1 || urls[0] != imageURL {
		t.Errorf("write_image urls %v, want [%s]", info["urls"], imageURL)
	}
	if info["os_hash_algo"] != "sha256" || info["os_hash_value"] != sum {
		t.Errorf("write_image checksum %v %v, want sha256 %s", info["os_hash_algo"], info["os_hash_value"], sum)
	}
	written := m.Written()
	if len(written) != 1 || written[0].URL != imageURL || written[0].SHA256 != sum || written[0].Size != int64(len(img)) || !written[0].Configdrive {
		t.Fatalf("images written: %+v (want %s from %s with a config drive)", written, sum, imageURL)
	}
	if got := s.files.downloads("disk.img"); got != 1 {
		t.Errorf("image downloaded from its source %d times, want 1 (by the conductor)", got)
	}

	snap := m.BMC.Snapshot(m.ID)
	if snap.BootTarget != "Hdd" || snap.BootEnabled != "Continuous" {
		t.Errorf("boot device when active: %s (%s), want Hdd persistent", snap.BootTarget, snap.BootEnabled)
	}
	boots := m.Boots()
	if last := boots[len(boots)-1]; last.Device.Target != "Hdd" {
		t.Errorf("last boot from %s, want the disk", last.Device.Target)
	}
	var ramdisk *vbm.Boot
	for i := range boots {
		if boots[i].Params != nil {
			ramdisk = &boots[i]
		}
	}
	iso := s.http + "/redfish/boot-" + id + ".iso"
	if ramdisk == nil {
		t.Fatalf("the deploy ramdisk never booted: %+v", boots)
	}
	if ramdisk.Device.Target != "Cd" || ramdisk.Device.Media != iso {
		t.Errorf("deploy ramdisk booted from %s %q, want Cd %q", ramdisk.Device.Target, ramdisk.Device.Media, iso)
	}
	if ramdisk.Params["ipa-api-url"] != s.base {
		t.Errorf("ipa-api-url %q, want %q", ramdisk.Params["ipa-api-url"], s.base)
	}
	if ramdisk.Params["ipa-agent-token"] == "" {
		t.Errorf("no pre-generated agent token in the ISO's kernel parameters: %v", ramdisk.Params)
	}
	if inserted, image := virtualCD(t, m); inserted || image != "" {
		t.Errorf("virtual media when active: inserted %v image %q", inserted, image)
	}
	// Both published files go once the deployment no longer needs them.
	for _, u := range []string{iso, imageURL} {
		if got := httpStatus(t, u); got != http.StatusNotFound {
			t.Errorf("GET %s when active: %d, want 404", u, got)
		}
	}
	shown := s.must(http.StatusOK, "GET", "/v1/nodes/"+id+"?fields=instance_info,driver_internal_info", nil)
	if ii := shown["instance_info"].(map[string]any); ii["configdrive"] != nil && ii["configdrive"] != "******" {
		t.Errorf("configdrive shown: %v", ii["configdrive"])
	}
	if dii := fmt.Sprint(shown["driver_internal_info"]); strings.Contains(dii, ramdisk.Params["ipa-agent-token"]) {
		t.Errorf("agent token shown in driver_internal_info")
	}

	s.provision(id, map[string]any{"target": "deleted"}, "available", 120*time.Second)
	n = s.must(http.StatusOK, "GET", "/v1/nodes/"+id, nil)
	if n["instance_uuid"] != nil || n["power_state"] != "power off" {
		t.Errorf("after tear down: instance_uuid %v power %v", n["instance_uuid"], n["power_state"])
	}
}

// writeImageInfo returns the image_info of the write_image deploy step the
// agent was sent (the only one).
func writeImageInfo(t *testing.T, m *vbm.Machine) map[string]any {
	t.Helper()
	var infos []map[string]any
	for _, c := range m.Agent.Commands() {
		step, _ := c.Params["step"].(map[string]any)
		if c.Method != "deploy.execute_deploy_step" || step["step"] != "write_image" {
			continue
		}
		args, _ := step["args"].(map[string]any)
		info, _ := args["image_info"].(map[string]any)
		infos = append(infos, info)
	}
	if len(infos) != 1 {
		t.Fatalf("write_image sent %d times: %v", len(infos), infos)
	}
	return infos[0]
}

// virtualCD reads the machine's virtual CD from its BMC, as a client of
// the Redfish API.
func virtualCD(t *testing.T, m *vbm.Machine) (bool, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, m.BMC.URL()+"/redfish/v1/Managers/BMC/VirtualMedia/Cd", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(vbm.BMCUsername, vbm.BMCPassword)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var vm struct {
		Inserted bool
		Image    string
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("virtual media: HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&vm); err != nil {
		t.Fatalf("virtual media: %v", err)
	}
	return vm.Inserted, vm.Image
}

// httpStatus is the status of a GET of u.
func httpStatus(t *testing.T, u string) int {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Scenario 3 of seed 001: rescue an active node (the agent sets the
// rescue password, hashed), unrescue it; then a service step on the
// active node runs on the agent.
func TestScenario3RescueAndService(t *testing.T) {
	s := newScenario(t, "")
	m := s.lab.Machine("node-3", "52:54:00:00:03:01")
	id := s.available(m, "node-3")
	url, sum := s.files.put(t, "disk3.img", []byte(strings.Repeat("image three ", 1000)))
	s.must(http.StatusOK, "PATCH", "/v1/nodes/"+id, []map[string]any{
		{"op": "add", "path": "/instance_info", "value": map[string]any{
			"image_source": url, "image_os_hash_algo": "sha256", "image_os_hash_value": sum,
		}},
	})
	s.provision(id, map[string]any{"target": "active"}, "active", 120*time.Second)

	const password = "r3scue-me"
	s.provision(id, map[string]any{"target": "rescue", "rescue_password": password}, "rescue", 120*time.Second)
	var finalize map[string]any
	for _, c := range m.Agent.Commands() {
		if c.Method == "rescue.finalize_rescue" {
			finalize = c.Params
		}
	}
	if finalize == nil {
		t.Fatal("rescue.finalize_rescue never sent")
	}
	if pw, _ := finalize["rescue_password"].(string); pw == password || !strings.HasPrefix(pw, "$") || finalize["hashed"] != true {
		t.Errorf("finalize_rescue params %v: want a hashed password", finalize)
	}
	s.provision(id, map[string]any{"target": "unrescue"}, "active", 120*time.Second)

	status, out := s.callAt("1.87", "PUT", "/v1/nodes/"+id+"/states/provision", map[string]any{
		"target": "service", "service_steps": []map[string]any{{"interface": "deploy", "step": "burnin_cpu", "args": map[string]any{}}},
	})
	if status != http.StatusAccepted {
		t.Fatalf("service: %d %v", status, out)
	}
	s.waitState(id, "active", 120*time.Second)
	ran := false
	for _, c := range m.Agent.Commands() {
		if step, _ := c.Params["step"].(map[string]any); c.Method == "service.execute_service_step" && step["step"] == "burnin_cpu" {
			ran = true
		}
	}
	if !ran {
		t.Errorf("the service step did not run on the agent")
	}
}
