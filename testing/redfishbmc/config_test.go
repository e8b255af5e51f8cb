package redfishbmc

import (
	"bytes"
	"encoding/json"
	"log"
	"net/http"
	"strings"
	"testing"
)

func TestBuildFromConfigAndServe(t *testing.T) {
	var raw Config
	if err := json.Unmarshal([]byte(`{
		"username": "admin", "password": "S3cr3t", "sessions": true, "vendor": "Contoso",
		"systems": [
			{"id": "sys-1", "power": "On", "cpu": {"arch": "x86", "cores": 2, "threads": 4, "model": "Xeon", "maxspeedmhz": 2400},
			 "model": "R640", "serial_number": "SN-42",
			 "memory_gib": 8, "disks_gib": [100], "nics": [{"mac": "52:54:00:00:00:01", "speed_mbps": 10000}],
			 "bios": {"ProcTurboMode": "Enabled"}},
			{"id": "sys-2"}
		]}`), &raw); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	b, err := Build(raw, log.New(&logs, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	url, err := b.Serve("")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("URL %s", url)
	}
	if _, err := b.Serve(""); err == nil {
		t.Fatal("a second Serve succeeded")
	}
	c := call{t: t, base: url, user: "admin", pass: "S3cr3t"}
	resp, doc := c.do(http.MethodGet, "/redfish/v1/Systems", nil)
	wantStatus(t, resp, http.StatusOK)
	if doc["Members@odata.count"] != float64(2) {
		t.Fatalf("systems %v", doc)
	}
	resp, doc = c.do(http.MethodGet, "/redfish/v1/Systems/sys-1", nil)
	wantStatus(t, resp, http.StatusOK)
	summary, _ := doc["MemorySummary"].(map[string]any)
	if doc["PowerState"] != On || doc["Manufacturer"] != "OpenKeel" || summary["TotalSystemMemoryGiB"] != float64(8) ||
		doc["Model"] != "R640" || doc["SerialNumber"] != "SN-42" {
		t.Fatalf("sys-1 %v", doc)
	}
	resp, doc = c.do(http.MethodGet, "/redfish/v1/Systems/sys-1/Processors/1", nil)
	wantStatus(t, resp, http.StatusOK)
	if doc["InstructionSet"] != "x86-64" || doc["MaxSpeedMHz"] != float64(2400) {
		t.Fatalf("cpu %v", doc)
	}
	resp, doc = c.do(http.MethodGet, "/redfish/v1/Systems/sys-1/EthernetInterfaces/1", nil)
	wantStatus(t, resp, http.StatusOK)
	if doc["MACAddress"] != "52:54:00:00:00:01" || doc["SpeedMbps"] != float64(10000) {
		t.Fatalf("nic %v", doc)
	}
	resp, doc = c.do(http.MethodGet, "/redfish/v1/Systems/sys-1/Bios", nil)
	wantStatus(t, resp, http.StatusOK)
	if attrs, _ := doc["Attributes"].(map[string]any); attrs["ProcTurboMode"] != "Enabled" {
		t.Fatalf("bios %v", doc)
	}
	resp, _ = c.do(http.MethodPost, "/redfish/v1/Systems/sys-2/Actions/ComputerSystem.Reset", map[string]any{"ResetType": "On"})
	if resp.StatusCode/100 != 2 || b.Power("sys-2") != On {
		t.Fatalf("reset: %d, power %s", resp.StatusCode, b.Power("sys-2"))
	}
	resp, _ = call{t: t, base: url, user: "admin", pass: "wrong"}.do(http.MethodGet, "/redfish/v1/Systems/sys-1", nil)
	wantStatus(t, resp, http.StatusUnauthorized)
	if !strings.Contains(logs.String(), "GET /redfish/v1/Systems/sys-1") || strings.Contains(logs.String(), "S3cr3t") {
		t.Fatalf("request log:\n%s", logs.String())
	}
	resp, doc = c.do(http.MethodGet, "/redfish/v1", nil)
	wantStatus(t, resp, http.StatusOK)
	if doc["Vendor"] != "Contoso" {
		t.Fatalf("service root %v", doc)
	}
}

func TestBuildRefusesBadConfigs(t *testing.T) {
	for name, c := range map[string]Config{
		"no system": {},
		"no id":     {Systems: []SystemConfig{{}}},
		"duplicate": {Systems: []SystemConfig{{ID: "a"}, {ID: "a"}}},
		"bad power": {Systems: []SystemConfig{{ID: "a", Power: "Sleeping"}}},
		"bad MAC":   {Systems: []SystemConfig{{ID: "a", NICs: []NICConfig{{MAC: "52:54"}}}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Build(c, log.New(&bytes.Buffer{}, "", 0)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// The control API does, from outside the process, what tests do through
// the BMC's methods: faults, session expiry, failing tasks, power changed
// behind the client's back.
func TestControlAPI(t *testing.T) {
	b, err := Build(Config{Username: "admin", Password: "pw", Sessions: true, Control: true,
		Systems: []SystemConfig{{ID: "sys-1"}}}, log.New(&bytes.Buffer{}, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	url, err := b.Serve("")
	if err != nil {
		t.Fatal(err)
	}
	ctl := call{t: t, base: url}
	bmc := call{t: t, base: url, user: "admin", pass: "pw"}

	resp, _ := ctl.do(http.MethodPost, "/emulator/faults", map[string]any{"method": "GET", "path": "/Systems/sys-1", "count": 2, "status": 503})
	wantStatus(t, resp, http.StatusNoContent)
	for range 2 {
		resp, _ = bmc.do(http.MethodGet, "/redfish/v1/Systems/sys-1", nil)
		wantStatus(t, resp, http.StatusServiceUnavailable)
	}
	resp, _ = bmc.do(http.MethodGet, "/redfish/v1/Systems/sys-1", nil)
	wantStatus(t, resp, http.StatusOK)

	resp, _ = ctl.do(http.MethodPost, "/emulator/faults", map[string]any{"status": 500, "count": 100})
	wantStatus(t, resp, http.StatusNoContent)
	resp, _ = bmc.do(http.MethodGet, "/redfish/v1", nil)
	wantStatus(t, resp, http.StatusInternalServerError)
	resp, _ = ctl.do(http.MethodDelete, "/emulator/faults", nil)
	wantStatus(t, resp, http.StatusNoContent)
	resp, _ = bmc.do(http.MethodGet, "/redfish/v1", nil)
	wantStatus(t, resp, http.StatusOK)

	resp, _ = ctl.do(http.MethodPost, "/emulator/faults", map[string]any{"status": 500, "drop": true})
	wantStatus(t, resp, http.StatusBadRequest)

	resp, _ = ctl.do(http.MethodPut, "/emulator/systems/sys-1/power", map[string]any{"state": "On"})
	wantStatus(t, resp, http.StatusNoContent)
	if b.Power("sys-1") != On {
		t.Fatalf("power %s", b.Power("sys-1"))
	}
	resp, doc := ctl.do(http.MethodGet, "/emulator/systems/sys-1", nil)
	wantStatus(t, resp, http.StatusOK)
	if doc["PowerState"] != On {
		t.Fatalf("snapshot %v", doc)
	}
	resp, _ = ctl.do(http.MethodPut, "/emulator/systems/nope/power", map[string]any{"state": "On"})
	wantStatus(t, resp, http.StatusNotFound)
	resp, _ = ctl.do(http.MethodPut, "/emulator/systems/sys-1/power", map[string]any{"state": "Sleeping"})
	wantStatus(t, resp, http.StatusBadRequest)

	resp, doc = bmc.do(http.MethodPost, "/redfish/v1/SessionService/Sessions", map[string]any{"UserName": "admin", "Password": "pw"})
	wantStatus(t, resp, http.StatusCreated)
	token := call{t: t, base: url, token: resp.Header.Get("X-Auth-Token")}
	resp, _ = token.do(http.MethodGet, "/redfish/v1/Systems/sys-1", nil)
	wantStatus(t, resp, http.StatusOK)
	resp, _ = ctl.do(http.MethodPost, "/emulator/sessions/expire", nil)
	wantStatus(t, resp, http.StatusNoContent)
	resp, _ = token.do(http.MethodGet, "/redfish/v1/Systems/sys-1", nil)
	wantStatus(t, resp, http.StatusUnauthorized)

	resp, _ = ctl.do(http.MethodPost, "/emulator/tasks/fail-next", map[string]any{"message": "flash failed"})
	wantStatus(t, resp, http.StatusNoContent)
	b.mu.Lock()
	failures := append([]string(nil), b.taskFailures...)
	b.mu.Unlock()
	if len(failures) != 1 || failures[0] != "flash failed" {
		t.Fatalf("task failures %v", failures)
	}

	resp, doc = ctl.do(http.MethodGet, "/emulator/stats", nil)
	wantStatus(t, resp, http.StatusOK)
	if doc["sessions_created"] != float64(1) || doc["requests"] == float64(0) {
		t.Fatalf("stats %v", doc)
	}
}

func TestControlAPIOffByDefault(t *testing.T) {
	b := New(t).System("sys-1")
	resp, _ := call{t: t, base: b.URL()}.do(http.MethodDelete, "/emulator/faults", nil)
	wantStatus(t, resp, http.StatusNotFound)
}
