package compat

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// debianPython is the interpreter the Debian client packages install for;
// a pyenv or venv python on PATH would not see them.
const debianPython = "/usr/bin/python3"

// requireTool skips when a Debian client package is missing, unless CI is
// set: there the packages are part of the image and missing ones fail.
func requireTool(t *testing.T, pkg string, probe ...string) {
	t.Helper()
	if out, err := exec.Command(probe[0], probe[1:]...).CombinedOutput(); err != nil {
		msg := fmt.Sprintf("Debian package %s not usable (%v): %s", pkg, err, out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// runPython runs one of this folder's check scripts against base, with
// further arguments, and returns its output.
func runPython(t *testing.T, script, base string, args ...string) string {
	t.Helper()
	cmd := exec.Command(debianPython, append([]string{filepath.Join(".", script), base}, args...)...)
	cmd.Env = append(os.Environ(), "OS_CLOUD=", "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return strings.TrimSpace(string(out))
}

// python-ironicclient: default 1.9, negotiation from our version headers
// (list of versions, latest, a refused pinned version after our 406) and
// faultstrings in its exceptions.
func TestIronicclientLibrary(t *testing.T) {
	requireTool(t, "python3-ironicclient", debianPython, "-c", "import ironicclient")
	eachServer(t, "", func(t *testing.T, s *server) {
		t.Log(runPython(t, "ironicclient_check.py", s.URL))
		// The script deletes what it created; nothing may be left behind.
		if nodes := newRaw(t, s.URL, "1.9").get("/v1/nodes")["nodes"].([]any); len(nodes) != 0 {
			t.Fatalf("nodes left: %v", nodes)
		}
	})
}

// openstacksdk: create, list, update, manage/provide/deploy/undeploy with
// its waits, power, validate, traits, maintenance and errors.
func TestOpenstacksdk(t *testing.T) {
	requireTool(t, "python3-openstacksdk", debianPython, "-c", "import openstack")
	eachServer(t, "", func(t *testing.T, s *server) {
		t.Log(runPython(t, "sdk_check.py", s.URL))
		if nodes := newRaw(t, s.URL, "1.9").get("/v1/nodes")["nodes"].([]any); len(nodes) != 0 {
			t.Fatalf("nodes left: %v", nodes)
		}
	})
}

// bm runs the standalone baremetal CLI against base.
type bm struct {
	t     *testing.T
	base  string
	calls int
}

func (b *bm) run(args ...string) (string, error) {
	b.t.Helper()
	b.calls++
	full := append([]string{"--os-endpoint", b.base, "--os-auth-type", "none"}, args...)
	cmd := exec.Command("baremetal", full...)
	cmd.Env = append(os.Environ(), "OS_CLOUD=", "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (b *bm) ok(args ...string) string {
	b.t.Helper()
	out, err := b.run(args...)
	if err != nil {
		b.t.Fatalf("baremetal %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (b *bm) json(args ...string) map[string]any {
	b.t.Helper()
	var v map[string]any
	out := b.ok(append(args, "-f", "json")...)
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		b.t.Fatalf("baremetal %s: not JSON: %q", strings.Join(args, " "), out)
	}
	return v
}

// The baremetal CLI (python3-ironicclient's OSC plugin, standalone): a
// node's life from create to delete, checked with plain HTTP; failing
// calls print upstream's faultstring.
func TestBaremetalCLI(t *testing.T) {
	requireTool(t, "python3-ironicclient", "baremetal", "--version")
	eachServer(t, "", baremetalCLI)
}

func baremetalCLI(t *testing.T, s *server) {
	b := &bm{t: t, base: s.URL}
	check := newRaw(t, s.URL, "1.78")

	n := b.json("node", "create", "--driver", "fake-hardware", "--name", "cli-0",
		"--driver-info", "ipmi_address=192.168.122.1", "--driver-info", "ipmi_password=pw",
		"--resource-class", "cli", "--property", "cpus=4")
	uuid, _ := n["uuid"].(string)
	seen := check.get("/v1/nodes/cli-0")
	if seen["uuid"] != uuid || seen["provision_state"] != "enroll" || seen["resource_class"] != "cli" {
		t.Fatalf("node seen by raw client: %v", seen)
	}
	if di := seen["driver_info"].(map[string]any); di["ipmi_password"] != "******" {
		t.Fatalf("driver_info: %v", di)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(b.ok("node", "list", "--provision-state", "enroll", "-f", "json")), &list); err != nil || len(list) != 1 || list[0]["UUID"] != uuid {
		t.Fatalf("node list: %v %v", err, list)
	}

	b.ok("node", "set", "cli-0", "--extra", "rack=r1", "--property", "memory_mb=4096", "--description", "from the CLI")
	seen = check.get("/v1/nodes/" + uuid)
	if seen["extra"].(map[string]any)["rack"] != "r1" || seen["properties"].(map[string]any)["memory_mb"] != float64(4096) || seen["description"] != "from the CLI" {
		t.Fatalf("after node set: extra %v properties %v description %v", seen["extra"], seen["properties"], seen["description"])
	}
	b.ok("node", "unset", "cli-0", "--extra", "rack")
	if ex := check.get("/v1/nodes/" + uuid)["extra"].(map[string]any); len(ex) != 0 {
		t.Fatalf("after node unset: %v", ex)
	}

	// Traits, maintenance, ports, validation, drivers and conductors, each
	// change read back by the raw client.
	b.ok("node", "add", "trait", "cli-0", "CUSTOM_CLI", "CUSTOM_GPU")
	if tr := check.get("/v1/nodes/" + uuid + "/traits")["traits"].([]any); len(tr) != 2 {
		t.Fatalf("traits after add: %v", tr)
	}
	b.ok("node", "remove", "trait", "cli-0", "CUSTOM_GPU")
	if tr := check.get("/v1/nodes/" + uuid + "/traits")["traits"].([]any); len(tr) != 1 || tr[0] != "CUSTOM_CLI" {
		t.Fatalf("traits after remove: %v", tr)
	}
	b.ok("node", "maintenance", "set", "cli-0", "--reason", "cabling")
	if n := check.get("/v1/nodes/" + uuid); n["maintenance"] != true || n["maintenance_reason"] != "cabling" {
		t.Fatalf("maintenance: %v %v", n["maintenance"], n["maintenance_reason"])
	}
	b.ok("node", "maintenance", "unset", "cli-0")
	if n := check.get("/v1/nodes/" + uuid); n["maintenance"] != false {
		t.Fatalf("maintenance after unset: %v", n["maintenance"])
	}
	port := b.json("port", "create", "52:54:00:ee:00:01", "--node", uuid, "--physical-network", "physnet1")
	if p := check.get("/v1/ports/" + port["uuid"].(string)); p["node_uuid"] != uuid || p["physical_network"] != "physnet1" {
		t.Fatalf("port seen by raw client: %v", p)
	}
	// A malformed node reference: the CLI shows the API's faultstring.
	out, err := b.run("port", "create", "52:54:00:ee:00:02", "--node", "nosuch")
	status, body, _ := check.do("POST", "/v1/ports", map[string]any{"address": "52:54:00:ee:00:02", "node_uuid": "nosuch"})
	if fs := faultstring(t, body); err == nil || status != http.StatusBadRequest || fs != "Expected UUID for node_uuid: nosuch" || !strings.Contains(out, fs) {
		t.Fatalf("port create --node nosuch: %v %d %q\n%s", err, status, fs, out)
	}
	var validation []map[string]any
	if err := json.Unmarshal([]byte(b.ok("node", "validate", "cli-0", "-f", "json")), &validation); err != nil {
		t.Fatalf("node validate: %v", err)
	}
	results := map[any]any{}
	for _, v := range validation {
		results[v["Interface"]] = v["Result"]
	}
	if results["power"] != true || results["management"] != true || results["deploy"] != true {
		t.Fatalf("node validate: %v", validation)
	}
	var drivers, conductors []map[string]any
	if err := json.Unmarshal([]byte(b.ok("driver", "list", "-f", "json")), &drivers); err != nil || len(drivers) != 1 || drivers[0]["Supported driver(s)"] != "fake-hardware" {
		t.Fatalf("driver list: %v %v", err, drivers)
	}
	if err := json.Unmarshal([]byte(b.ok("conductor", "list", "-f", "json")), &conductors); err != nil || len(conductors) != 1 || conductors[0]["Alive"] != true ||
		conductors[0]["Hostname"] != drivers[0]["Active host(s)"] {
		t.Fatalf("conductor list: %v %v", err, conductors)
	}

	b.ok("node", "manage", "cli-0", "--wait", "60")
	b.ok("node", "provide", "cli-0", "--wait", "60")
	if st := check.get("/v1/nodes/" + uuid)["provision_state"]; st != "available" {
		t.Fatalf("after provide: %v", st)
	}
	b.ok("node", "power", "on", "cli-0")
	eventually(t, func() (bool, string) {
		ps := check.get("/v1/nodes/" + uuid)["power_state"]
		return ps == "power on", fmt.Sprint(ps)
	})
	b.ok("node", "deploy", "cli-0", "--wait", "60", "--config-drive", `{"meta_data": {"hostname": "h"}}`)
	if st := check.get("/v1/nodes/" + uuid); st["provision_state"] != "active" || st["last_error"] != nil {
		t.Fatalf("after deploy: %v %v", st["provision_state"], st["last_error"])
	}

	// A refused call: the CLI prints upstream's faultstring, the same one
	// the raw client reads from the body.
	out, err = b.run("node", "provide", "cli-0")
	if err == nil {
		t.Fatalf("provide of an active node succeeded:\n%s", out)
	}
	status, body, _ = check.do("PUT", "/v1/nodes/cli-0/states/provision", map[string]any{"target": "provide"})
	fs := faultstring(t, body)
	if status != http.StatusBadRequest || fs != fmt.Sprintf(`The requested action "provide" can not be performed on node "%s" while it is in state "active".`, uuid) {
		t.Fatalf("raw provide of an active node: %d %q", status, fs)
	}
	if !strings.Contains(out, fs) {
		t.Fatalf("CLI output lacks the faultstring %q:\n%s", fs, out)
	}
	out, err = b.run("node", "show", "nosuch")
	if err == nil || !strings.Contains(out, "Node nosuch could not be found.") {
		t.Fatalf("node show nosuch: %v\n%s", err, out)
	}

	b.ok("node", "undeploy", "cli-0", "--wait", "60")
	b.ok("node", "power", "off", "cli-0")
	eventually(t, func() (bool, string) {
		st := check.get("/v1/nodes/" + uuid)
		return st["provision_state"] == "available" && st["power_state"] == "power off", fmt.Sprint(st["provision_state"], st["power_state"])
	})

	// At a pinned old version the CLI sees the old shape.
	old := b.json("--os-baremetal-api-version", "1.9", "node", "show", "cli-0")
	if _, has := old["resource_class"]; has || old["name"] != "cli-0" {
		t.Fatalf("node show at 1.9: %v", old)
	}

	b.ok("port", "delete", port["uuid"].(string))
	b.ok("node", "delete", "cli-0")
	if st, _, _ := check.do("GET", "/v1/nodes/"+uuid, nil); st != http.StatusNotFound {
		t.Fatalf("deleted node: %d", st)
	}
	t.Logf("baremetal CLI ran %d commands, raw checks %d calls", b.calls, check.calls.n.Load())
}
