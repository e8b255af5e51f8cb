package redfishbmc

import (
	"encoding/json"
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
	var pw struct{ PowerSupplies []struct{ LastPowerOutputWatts float64 } }
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
