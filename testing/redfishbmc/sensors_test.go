package redfishbmc

import (
	"bytes"
	"encoding/json"
	"log"
	"net/http"
	"testing"
)

func getResource(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

// Thermal and Power report what the test sets, the CPU drifting at each
// read when asked; a system's Status.Health follows SetSystemHealth.
func TestSensorsAndHealth(t *testing.T) {
	b := New(t).System("sys-1").DriftSensors(0.5)
	type thermal struct {
		Fans         []struct{ Reading float64 }
		Temperatures []struct {
			ReadingCelsius float64
			Status         struct{ Health string }
		}
	}
	var th thermal
	getResource(t, b.URL()+"/redfish/v1/Chassis/1U/Thermal", &th)
	getResource(t, b.URL()+"/redfish/v1/Chassis/1U/Thermal", &th)
	if th.Temperatures[0].ReadingCelsius != 45.5 || th.Fans[0].Reading != 2400 {
		t.Errorf("second read %+v", th)
	}
	b.SetSensors(Sensors{CPUCelsius: 80, FanRPM: 100, PSUOutputWatts: 500, CPUHealth: "Critical", FanHealth: "Warning", PSUHealth: "OK"})
	getResource(t, b.URL()+"/redfish/v1/Chassis/1U/Thermal", &th)
	if th.Temperatures[0].ReadingCelsius != 81 || th.Temperatures[0].Status.Health != "Critical" || th.Fans[0].Reading != 100 {
		t.Errorf("after SetSensors %+v", th)
	}
	var pw struct {
		PowerSupplies []struct{ LastPowerOutputWatts float64 }
	}
	getResource(t, b.URL()+"/redfish/v1/Chassis/1U/Power", &pw)
	if pw.PowerSupplies[0].LastPowerOutputWatts != 500 {
		t.Errorf("power %+v", pw)
	}
	var sys struct{ Status map[string]string }
	getResource(t, b.URL()+SystemPath("sys-1"), &sys)
	if sys.Status["Health"] != "OK" {
		t.Errorf("default health %v", sys.Status)
	}
	b.SetSystemHealth("sys-1", "Warning")
	getResource(t, b.URL()+SystemPath("sys-1"), &sys)
	if sys.Status["Health"] != "Warning" {
		t.Errorf("health %v", sys.Status)
	}
	b.SetSystemHealth("sys-1", "")
	sys.Status = nil
	getResource(t, b.URL()+SystemPath("sys-1"), &sys)
	if _, ok := sys.Status["Health"]; ok || sys.Status["State"] != "Enabled" {
		t.Errorf("health left out: %v", sys.Status)
	}
}

// A process-run emulator takes sensor readings and system health through
// its control API.
func TestSensorsControlAPI(t *testing.T) {
	b, err := Build(Config{Control: true, Systems: []SystemConfig{{ID: "sys-1"}}}, log.New(&bytes.Buffer{}, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	url, err := b.Serve("")
	if err != nil {
		t.Fatal(err)
	}
	ctl := call{t: t, base: url}
	resp, _ := ctl.do(http.MethodPut, "/emulator/sensors", map[string]any{"cpu_celsius": 77, "fan_rpm": 900, "cpu_health": "Warning", "fan_health": "OK", "psu_health": "OK"})
	wantStatus(t, resp, http.StatusNoContent)
	if s := b.SensorReadings(); s.CPUCelsius != 77 || s.FanRPM != 900 || s.CPUHealth != "Warning" {
		t.Errorf("sensors %+v", s)
	}
	resp, _ = ctl.do(http.MethodPut, "/emulator/systems/sys-1/health", map[string]any{"health": "Critical"})
	wantStatus(t, resp, http.StatusNoContent)
	var sys struct{ Status map[string]string }
	getResource(t, url+SystemPath("sys-1"), &sys)
	if sys.Status["Health"] != "Critical" {
		t.Errorf("health %v", sys.Status)
	}
	resp, _ = ctl.do(http.MethodPut, "/emulator/systems/sys-1/health", map[string]any{"health": "Broken"})
	wantStatus(t, resp, http.StatusBadRequest)
	resp, _ = ctl.do(http.MethodPut, "/emulator/systems/nope/health", map[string]any{"health": "OK"})
	wantStatus(t, resp, http.StatusNotFound)
}
