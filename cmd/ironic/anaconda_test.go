package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/anaconda"
	"github.com/openkeel/ironic/testing/await"
	"github.com/openkeel/ironic/testing/redfishbmc"
)

// anacondaEnv is an all-in-one ironic deploying redfish nodes (the
// Redfish emulator's systems) with the anaconda deploy interface over
// iPXE: an image server with the OS
// image and the installer's kernel, ramdisk and stage2; the service
// serves [deploy]/http_root at http_url itself.
type anacondaEnv struct {
	t        *testing.T
	c        *apiClient
	bmc      *redfishbmc.BMC
	httpRoot string
	// web is [deploy]/http_url, images the image server's URL.
	web, images string
}

func startAnaconda(t *testing.T) *anacondaEnv {
	t.Helper()
	dir := t.TempDir()
	httpRoot := filepath.Join(dir, "http")
	if err := os.MkdirAll(httpRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	// The all-in-one serves http_root at http_url itself.
	web := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	images := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/os.tar.gz", "/vmlinuz", "/initrd.img", "/squashfs.img":
			fmt.Fprintf(w, "content of %s", r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(images.Close)
	port := freePort(t)
	api := fmt.Sprintf("http://127.0.0.1:%d", port)
	conf := filepath.Join(dir, "ironic.conf")
	text := fmt.Sprintf(`[DEFAULT]
enabled_hardware_types = redfish
enabled_power_interfaces = redfish
enabled_management_interfaces = redfish
enabled_boot_interfaces = ipxe
enabled_deploy_interfaces = anaconda
enabled_inspect_interfaces = no-inspect
enabled_console_interfaces = no-console
enabled_vendor_interfaces = no-vendor
enabled_bios_interfaces = no-bios
enabled_raid_interfaces = no-raid
enabled_firmware_interfaces = no-firmware
enabled_network_interfaces = noop
enabled_storage_interfaces = noop
enabled_rescue_interfaces = no-rescue
[api]
port = %d
[conductor]
automated_clean = false
[deploy]
http_root = %s
http_url = %s
[pxe]
tftp_root = %s
[service_catalog]
endpoint_override = %s
[anaconda]
insecure_heartbeat = true
`, port, httpRoot, web, filepath.Join(dir, "tftp"), api)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	waitHealthy(t, p, api+"/healthcheck")
	t.Cleanup(func() { terminate(t, p) })
	return &anacondaEnv{t: t, bmc: redfishbmc.New(t).System("ks-1").System("ks-err").System("ks-nostage2").System("ks-bootdev"), c: &apiClient{t: t, base: api, version: "1.80"}, httpRoot: httpRoot, web: web, images: images.URL}
}

// node enrols an available redfish node (the emulator's system of the
// same name) that deploys with anaconda over iPXE, with a port to boot
// from.
func (e *anacondaEnv) node(name, mac string, instanceInfo map[string]any) {
	e.t.Helper()
	status, n := e.c.do("POST", "/v1/nodes", map[string]any{
		"name": name, "driver": "redfish", "boot_interface": "ipxe", "deploy_interface": "anaconda",
		"driver_info": map[string]any{"deploy_kernel": e.images + "/vmlinuz", "deploy_ramdisk": e.images + "/initrd.img",
			"redfish_address": e.bmc.URL(), "redfish_system_id": redfishbmc.SystemPath(name)},
		"instance_info": instanceInfo,
	})
	if status != http.StatusCreated {
		e.t.Fatalf("create %s: %d %v", name, status, n)
	}
	if status, p := e.c.do("POST", "/v1/ports", map[string]any{"node_uuid": n["uuid"], "address": mac}); status != http.StatusCreated {
		e.t.Fatalf("port: %d %v", status, p)
	}
	for _, step := range []struct{ target, state string }{{"manage", "manageable"}, {"provide", "available"}} {
		if status, body := e.c.do("PUT", "/v1/nodes/"+name+"/states/provision", map[string]any{"target": step.target}); status != http.StatusAccepted {
			e.t.Fatalf("%s: %d %v", step.target, status, body)
		}
		e.c.waitState(name, step.state)
	}
}

func (e *anacondaEnv) instanceInfo() map[string]any {
	return map[string]any{
		"image_source": e.images + "/os.tar.gz", "kernel": e.images + "/vmlinuz", "ramdisk": e.images + "/initrd.img",
		"stage2": e.images + "/squashfs.img", "root_gb": "10",
	}
}

// deploy asks for active and waits for the node to wait for the
// installer; it answers the node.
func (e *anacondaEnv) deploy(name string, body map[string]any) map[string]any {
	e.t.Helper()
	body["target"] = "active"
	if status, out := e.c.do("PUT", "/v1/nodes/"+name+"/states/provision", body); status != http.StatusAccepted {
		e.t.Fatalf("deploy: %d %v", status, out)
	}
	var n map[string]any
	await.Until(e.t, 60*time.Second, name+" waiting for the installer", func() bool {
		_, n = e.c.do("GET", "/v1/nodes/"+name, nil)
		if n["provision_state"] == "deploy failed" {
			e.t.Fatalf("deploy failed: %v", n["last_error"])
		}
		return n["provision_state"] == "wait call-back" && n["reservation"] == nil
	})
	return n
}

// untilStarted is the installation's wait: the conductor has recorded the
// installer's start and released the node.
func (e *anacondaEnv) untilStarted(name string) func(context.Context) error {
	return func(context.Context) error {
		await.Until(e.t, 30*time.Second, "start heartbeat processed", func() bool {
			_, n := e.c.do("GET", "/v1/nodes/"+name, nil)
			dii, _ := n["driver_internal_info"].(map[string]any)
			return dii["agent_status"] == "start" && n["reservation"] == nil
		})
		return nil
	}
}

// A node deploys with the anaconda interface end to end: the installer
// stand-in boots the node's iPXE boot_anaconda entry, fetches the
// kernel, ramdisk, stage2 and kickstart over HTTP, runs the kickstart's
// curl heartbeats against the API (start, then end), writes the
// configuration drive, and the node goes active, booting from its disk,
// with the installer's files and records gone.
func TestAnacondaDeployReachesActive(t *testing.T) {
	e := startAnaconda(t)
	e.node("ks-1", "52:54:00:12:34:56", e.instanceInfo())
	n := e.deploy("ks-1", map[string]any{"configdrive": map[string]any{
		"meta_data": map[string]any{"hostname": "ks-1.example"}, "user_data": "#cloud-config\n",
	}})
	uuid := n["uuid"].(string)
	dii, _ := n["driver_internal_info"].(map[string]any)
	if dii["stage2"] != e.images+"/squashfs.img" || !strings.HasPrefix(fmt.Sprint(dii["ks_template"]), "file://") {
		t.Errorf("driver_internal_info stage2 %v ks_template %v", dii["stage2"], dii["ks_template"])
	}
	ks, err := os.ReadFile(filepath.Join(e.httpRoot, uuid, "ks.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"liveimg --url " + e.images + "/os.tar.gz", "/usr/bin/curl --insecure -X POST",
		e.c.base + "/v1/heartbeat/" + uuid, "/var/lib/cloud/seed/config_drive/openstack/latest/meta_data.json"} {
		if !strings.Contains(string(ks), want) {
			t.Errorf("kickstart lacks %q:\n%s", want, ks)
		}
	}

	inst := anaconda.New(t).WithInstall(e.untilStarted("ks-1"))
	run, err := inst.Boot(context.Background(), filepath.Join(e.httpRoot, uuid, "config"))
	if err != nil {
		t.Fatalf("installer: %v", err)
	}
	if run.KickstartURL != e.web+"/"+uuid+"/ks.cfg" || run.Stage2URL != e.web+"/"+uuid {
		t.Errorf("boot entry inst.ks=%s inst.stage2=%s", run.KickstartURL, run.Stage2URL)
	}
	if run.Liveimg != e.images+"/os.tar.gz" {
		t.Errorf("installed from %s", run.Liveimg)
	}
	if got := fmt.Sprint(run.Heartbeats); got != "[{%pre 202} {%post 202}]" {
		t.Errorf("heartbeats %s", got)
	}
	active := e.c.waitState("ks-1", "active")
	if active["last_error"] != nil || active["power_state"] != "power on" {
		t.Errorf("active node: last_error %v power %v", active["last_error"], active["power_state"])
	}
	dii, _ = active["driver_internal_info"].(map[string]any)
	for _, k := range []string{"stage2", "ks_template", "agent_secret_token"} {
		if _, ok := dii[k]; ok {
			t.Errorf("driver_internal_info keeps %s after the deployment", k)
		}
	}
	if _, bd := e.c.do("GET", "/v1/nodes/ks-1/management/boot_device", nil); bd["boot_device"] != "disk" || bd["persistent"] != true {
		t.Errorf("boot device %v", bd)
	}
	if _, err := os.Stat(filepath.Join(e.httpRoot, uuid)); !os.IsNotExist(err) {
		t.Errorf("the installer's files are left in the HTTP root: %v", err)
	}
	meta, err := os.ReadFile(filepath.Join(inst.Root(), "/var/lib/cloud/seed/config_drive/openstack/latest/meta_data.json"))
	if err != nil || !strings.Contains(string(meta), `"hostname": "ks-1.example"`) || !strings.Contains(string(meta), uuid) {
		t.Errorf("config drive meta_data %s, %v", meta, err)
	}
}

// An installation that fails sends the %onerror heartbeat, and the node
// fails its deployment with the installer's message; a BMC refusing the
// disk boot device after the installation fails it with upstream's
// reboot_to_instance error; a node whose image names no stage2 fails at
// the deploy step with upstream's error.
func TestAnacondaDeployFailures(t *testing.T) {
	e := startAnaconda(t)
	e.node("ks-err", "52:54:00:12:34:57", e.instanceInfo())
	n := e.deploy("ks-err", map[string]any{})
	inst := anaconda.New(t).WithInstall(e.untilStarted("ks-err")).FailInstall()
	run, err := inst.Boot(context.Background(), filepath.Join(e.httpRoot, n["uuid"].(string), "config"))
	if err != nil {
		t.Fatalf("installer: %v", err)
	}
	if got := fmt.Sprint(run.Heartbeats); got != "[{%pre 202} {%onerror 202}]" {
		t.Errorf("heartbeats %s", got)
	}
	failed := e.waitFailed("ks-err")
	if failed["last_error"] != "Error: Deploying using anaconda. Check console for more information." {
		t.Errorf("last_error %v", failed["last_error"])
	}

	// The BMC refuses the boot device once the installer is done: the
	// deployment fails with upstream's reboot_to_instance error.
	e.node("ks-bootdev", "52:54:00:12:34:59", e.instanceInfo())
	n = e.deploy("ks-bootdev", map[string]any{})
	started := e.untilStarted("ks-bootdev")
	inst = anaconda.New(t).WithInstall(func(ctx context.Context) error {
		if err := started(ctx); err != nil {
			return err
		}
		e.bmc.FailNextMatching(redfishbmc.Match{Method: http.MethodPatch, Path: redfishbmc.SystemPath("ks-bootdev")}, 1, http.StatusBadRequest, "")
		return nil
	})
	if _, err := inst.Boot(context.Background(), filepath.Join(e.httpRoot, n["uuid"].(string), "config")); err != nil {
		t.Fatalf("installer: %v", err)
	}
	failed = e.waitFailed("ks-bootdev")
	prefix := "An error occurred after deployment, while preparing to reboot the node " + n["uuid"].(string) + ": "
	if le, _ := failed["last_error"].(string); !strings.HasPrefix(le, prefix) {
		t.Errorf("last_error %q, want the prefix %q", le, prefix)
	}

	ii := e.instanceInfo()
	delete(ii, "stage2")
	e.node("ks-nostage2", "52:54:00:12:34:58", ii)
	if status, out := e.c.do("PUT", "/v1/nodes/ks-nostage2/states/provision", map[string]any{"target": "active"}); status != http.StatusAccepted {
		t.Fatalf("deploy: %d %v", status, out)
	}
	failed = e.waitFailed("ks-nostage2")
	want := "'stage2_id' is missing from the properties of the OS image " + e.images + "/os.tar.gz. The anaconda deploy interface requires this to be set with the OS image or in instance_info['stage2']. "
	if le, _ := failed["last_error"].(string); !strings.Contains(le, want) {
		t.Errorf("last_error %q, want it to contain %q", le, want)
	}
}

// waitFailed waits for deploy failed (whose target stays active).
func (e *anacondaEnv) waitFailed(name string) map[string]any {
	e.t.Helper()
	var n map[string]any
	await.Until(e.t, 60*time.Second, name+" deploy failed", func() bool {
		_, n = e.c.do("GET", "/v1/nodes/"+name, nil)
		return n["provision_state"] == "deploy failed" && n["reservation"] == nil
	})
	return n
}
