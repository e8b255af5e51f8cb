package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/openkeel/ironic/testing/await"
)

// waitOutput waits until the process has written want, failing with its
// output if it exits first.
func waitOutput(t *testing.T, p *process, want string) {
	t.Helper()
	await.UntilReason(t, time.Minute, fmt.Sprintf("output %q", want), func() (bool, string) {
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("ironic exited (%v):\n%s", err, p.out)
		default:
		}
		return strings.Contains(p.out.String(), want), p.out.String()
	})
}

// Issue 20: one enabled_hardware_types line is all the all-in-one needs
// for real hardware types; fake-hardware nodes keep the interfaces they
// had; cinder storage is enabled as upstream's stock list has it, and an
// implementation that is not enabled is refused as upstream refuses it.
func TestAllInOneOneHardwareTypesLine(t *testing.T) {
	types := []string{"fake-hardware", "redfish"}
	if _, err := exec.LookPath("ipmitool"); err == nil {
		types = append(types, "ipmi")
	}
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[DEFAULT]\nenabled_hardware_types = %s\n[api]\nport = %d\n", strings.Join(types, ","), port))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHealthy(t, p, base+"/healthcheck")
	c := &apiClient{t: t, base: base, version: "latest"}
	want := map[string]map[string]any{
		"fake-hardware": {"boot_interface": "fake", "deploy_interface": "fake", "management_interface": "fake",
			"network_interface": "noop", "power_interface": "fake", "storage_interface": "noop", "vendor_interface": "fake"},
		"redfish": {"boot_interface": "ipxe", "deploy_interface": "autodetect", "management_interface": "redfish",
			"network_interface": "noop", "power_interface": "redfish", "storage_interface": "noop", "vendor_interface": "redfish"},
		"ipmi": {"boot_interface": "ipxe", "deploy_interface": "autodetect", "management_interface": "ipmitool",
			"network_interface": "noop", "power_interface": "ipmitool", "storage_interface": "noop", "vendor_interface": "ipmitool"},
	}
	for _, hw := range types {
		code, node := c.do("POST", "/v1/nodes", map[string]any{"driver": hw, "name": "node-" + hw})
		if code != http.StatusCreated {
			t.Fatalf("enrol a %s node: %d %v\n%s", hw, code, node, p.out)
		}
		for field, v := range want[hw] {
			if node[field] != v {
				t.Errorf("%s node: %s = %v, want %v", hw, field, node[field], v)
			}
		}
	}
	// Upstream's stock storage list enables cinder: a node may ask for it.
	code, body := c.do("POST", "/v1/nodes", map[string]any{"driver": "redfish", "storage_interface": "cinder"})
	if code != http.StatusCreated || body["storage_interface"] != "cinder" {
		t.Errorf("a cinder storage node: %d %v", code, body)
	}
	// An implementation that is not enabled is refused as upstream does.
	code, body = c.do("POST", "/v1/nodes", map[string]any{"driver": "redfish", "storage_interface": "external"})
	msg, _ := body["error_message"].(string)
	if code != http.StatusBadRequest || !strings.Contains(msg, "Could not find the following interface in the 'ironic.hardware.interfaces.storage' entrypoint: external.") {
		t.Errorf("an external storage node: %d %v", code, body)
	}
	terminate(t, p)
}

// Issue 20: a conductor given no enabled_* option (upstream's stock
// lists, cinder storage among them since issue 26) starts with every one
// of them, and `status upgrade check` finds nothing to say of them.
func TestConductorStockInterfaces(t *testing.T) {
	if _, err := exec.LookPath("ipmitool"); err != nil {
		t.Skip("upstream's stock enabled_vendor_interfaces names ipmitool, which probes the program")
	}
	dir := t.TempDir()
	conf := writeConf(t, dir, fmt.Sprintf("[DEFAULT]\nauth_strategy = noauth\n[database]\nconnection = sqlite:///%s/db.sqlite\n"+
		"[json_rpc]\nhost_ip = 127.0.0.1\nport = %d\n", dir, freePort(t)))
	if out, code := runIronic(t, dir, "ironic", "--config-file", conf, "dbsync", "upgrade"); code != 0 {
		t.Fatalf("dbsync: %d\n%s", code, out)
	}
	out, code := runIronic(t, dir, "ironic", "--config-file", conf, "status", "upgrade", "check")
	if code != 0 || !regexp.MustCompile(`Check: Hardware Types +\|\n\| Result: Success`).MatchString(out) {
		t.Errorf("status upgrade check: exit %d, want 0 with the hardware types a success\n%s", code, out)
	}
	p := startIronic(t, dir, "ironic-conductor", "--config-file", conf)
	waitOutput(t, p, "successfully started conductor")
	if log := p.out.String(); strings.Contains(log, "level=WARN") && strings.Contains(log, "cinder") {
		t.Errorf("a warning about cinder at start:\n%s", log)
	}
	terminate(t, p)
}

// Issue 20: misspelt sections and options are warned about at start-up
// with the name probably meant, and listed by `status upgrade check`.
func TestUnknownOptionsWarned(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	conf := writeConf(t, dir, fmt.Sprintf("[api]\nport = %d\nprot = 1\n[apii]\nhost_ip = 127.0.0.1\n[conductor]\nheartbeat_intervall = 5\n"+
		"[database]\nconnection = sqlite:///%s/db.sqlite\n", port, dir))
	p := startIronic(t, dir, "ironic", "--config-file", conf)
	waitHealthy(t, p, fmt.Sprintf("http://127.0.0.1:%d/healthcheck", port))
	terminate(t, p)
	log := p.out.String()
	for _, want := range []string{
		`level=WARN msg="ignoring unknown configuration option" mode=all-in-one option=[api]/prot file=` + conf + ` did_you_mean=[api]/port`,
		`level=WARN msg="ignoring unknown configuration section" mode=all-in-one section=[apii] file=` + conf + ` did_you_mean=[api]`,
		`option=[conductor]/heartbeat_intervall file=` + conf + ` did_you_mean=[conductor]/heartbeat_interval`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	out, code := runIronic(t, dir, "ironic", "--config-file", conf, "status", "upgrade", "check")
	if code != 1 || !strings.Contains(out, "| Check: Configuration Options") ||
		!strings.Contains(out, "unknown option [api]/prot in "+conf+" is ignored; did you mean [api]/port?") ||
		!strings.Contains(out, "unknown section [apii] in "+conf+" is ignored; did you mean [api]?") {
		t.Errorf("status upgrade check: exit %d, want 1 listing the unknown names\n%s", code, out)
	}
}

// Issue 20: the commands that only read create no file, not even the
// all-in-one's ./ironic-data when run without a configuration.
func TestReadOnlyCommandsCreateNothing(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"dbsync", "version"}, {"status", "upgrade", "check"}} {
		out, code := runIronic(t, dir, "ironic", args...)
		if args[0] == "dbsync" && (code != 0 || !strings.Contains(out, "openkeel-ironic schema 0 (Ironic alembic None)")) {
			t.Errorf("ironic %v: exit %d\n%s", args, code, out)
		}
		if args[0] == "status" && (code != 2 || !strings.Contains(out, "there is no database at ironic-data/ironic.sqlite")) {
			t.Errorf("ironic %v: exit %d\n%s", args, code, out)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 0 {
			t.Errorf("ironic %v created %s", args, entries[0].Name())
		}
	}
}

// The all-in-one enables fake first, then upstream's stock list, and the
// ipmitool implementations only when the program is installed.
func TestAllInOneInterfaces(t *testing.T) {
	got := allInOneInterfaces(false)
	want := map[string]string{
		"enabled_bios_interfaces":     "fake,no-bios,redfish",
		"enabled_boot_interfaces":     "fake,ipxe,pxe,redfish-virtual-media",
		"enabled_console_interfaces":  "fake,no-console",
		"enabled_deploy_interfaces":   "fake,autodetect,direct,ramdisk,bootc",
		"enabled_firmware_interfaces": "fake,no-firmware",
		"enabled_inspect_interfaces":  "fake,no-inspect,redfish",
		"enabled_network_interfaces":  "flat,noop",
		"enabled_raid_interfaces":     "fake,agent,no-raid,redfish",
		"enabled_rescue_interfaces":   "fake,no-rescue",
		"enabled_storage_interfaces":  "cinder,noop",
		"enabled_vendor_interfaces":   "fake,redfish,no-vendor",
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("allInOneInterfaces(false) =\n%s", g)
	}
	if got := allInOneInterfaces(true)["enabled_vendor_interfaces"]; got != "fake,ipmitool,redfish,no-vendor" {
		t.Errorf("with ipmitool installed: enabled_vendor_interfaces = %q", got)
	}
}
